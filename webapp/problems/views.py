"""Problem pages: list and search, create and edit, import, and the problem page with its Solve form."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Q
from django.forms.utils import ErrorDict
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from simulator.problem import Problem as CoreProblem
from webapp.limits import LimitExceeded, problem_errors
from webapp.pages import page_of
from webapp.params import BadNumber, bounded_int
from webapp.problems.forms import ImportForm, ProblemForm, TestCaseFormSet
from webapp.problems.importers import import_problems
from webapp.problems.markdown import render_statement
from webapp.problems.models import Problem, TestCase, check_room_for
from webapp.runs.forms import SolveForm
from webapp.runs.models import Run


def _get_problem_for_user(request: HttpRequest, pk: int) -> Problem:
    return get_object_or_404(Problem.objects.visible_to(request.user), pk=pk)


def _get_editable_problem(request: HttpRequest, pk: int) -> Problem:
    problem = get_object_or_404(Problem, pk=pk)
    if not problem.editable_by(request.user):
        raise Http404("No such problem")
    return problem


# The problem list's status filter: its value -> the standing it keeps ("new": none, no run yet).
STATUSES = {"solved": "accepted", "tried": "tried", "new": ""}


@vary_on_headers("HX-Request")
def problem_list(request: HttpRequest) -> HttpResponse:
    visible = Problem.objects.visible_to(request.user)
    problems = visible
    query = request.GET.get("q", "").strip()
    if query:
        problems = problems.filter(Q(title__icontains=query) | Q(statement__icontains=query))
    source = request.GET.get("source", "").strip()
    if source:  # where the problems came from: a benchmark's import, the examples, the editor
        problems = problems.filter(source=source)
    status = request.GET.get("status", "") if request.user.is_authenticated else ""
    mine: dict[int, str] | None = None  # the asker's standing on every problem, when a filter needs it
    if status in STATUSES:  # as a judge's list filters: the asker's solved, tried or untouched problems
        mine = Run.objects.standing(request.user)
        if status == "new":
            problems = problems.exclude(pk__in=list(mine))
        else:
            problems = problems.filter(pk__in=[pk for pk, s in mine.items() if s == STATUSES[status]])
    else:
        status = ""
    # htmx search-as-you-type swaps only the results partial (the page includes the same one).
    template = "problems/results.html" if request.headers.get("HX-Request") else "problems/list.html"
    page = page_of(request, problems.select_related("owner"))
    filters = (("q", query), ("source", source), ("status", status))
    kept = urlencode({name: value for name, value in filters if value})
    if mine is not None:
        standing = mine
    elif request.user.is_authenticated:
        standing = Run.objects.standing(request.user, [p.pk for p in page.object_list])
    else:
        standing = {}
    rows = [(problem, standing.get(problem.pk, "")) for problem in page.object_list]
    sources = visible.order_by("source").values_list("source", flat=True).distinct()
    context = {
        "problems": page.object_list,
        "rows": rows,
        "page": page,
        "query": query,
        "source": source,
        "sources": list(sources),
        "status": status,
        "kept": kept,
    }
    response = render(request, template, context)
    if request.headers.get("HX-Request"):  # the address bar shows the filters in use, not "q=&status="
        shown = "&".join(part for part in (kept, f"page={page.number}" if page.number > 1 else "") if part)
        response["HX-Push-Url"] = f"{request.path}?{shown}" if shown else request.path
    return response


def problem_export(request: HttpRequest, pk: int) -> HttpResponse:
    """The problem in the CLI's format (docs/problem-format.md), for ``execsim solve`` or another
    server's import page; its private tests only for those who may edit it, as its page shows them."""
    problem = _get_problem_for_user(request, pk)
    data = problem.to_core().to_dict()
    if not problem.editable_by(request.user):
        data["tests"] = [t for t in data["tests"] if t["public"]]
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="problem-{problem.pk}.json"'
    return response


def problem_detail(request: HttpRequest, pk: int) -> HttpResponse:
    problem = _get_problem_for_user(request, pk)
    runs = Run.objects.visible_to(request.user).filter(problem=problem).select_related("user")
    runs = runs.prefetch_related("executions")[:50]
    # numbered as every run of the problem names them (``Run.test_label``): public and private in one count
    tests = list(enumerate(problem.tests.all(), start=1))
    can_edit = problem.editable_by(request.user)
    return render(
        request,
        "problems/detail.html",
        {
            "problem": problem,
            "statement_html": render_statement(problem.statement, problem.extra),
            "public_tests": [(n, t) for n, t in tests if t.public],
            # for its owner and staff (never shown to anyone else, nor to the model)
            "private_tests": [(n, t) for n, t in tests if not t.public] if can_edit else [],
            "runs": runs,
            "solve_form": SolveForm(),
            "can_edit": can_edit,
        },
    )


def _live_tests(formset: Any) -> list[Any]:
    """The test forms that count, in the page's order: filled in and not removed."""
    return [f for f in formset.forms if getattr(f, "cleaned_data", None) and not f.cleaned_data.get("DELETE")]


def _core_errors(form: ProblemForm, formset: Any) -> list[tuple[str, str]]:
    """Validate with the core's own rules (Problem.validate) and the size limits: every error, by field."""
    cleaned = getattr(form, "cleaned_data", {})
    tests = [
        {
            "input": f.cleaned_data.get("input", ""),
            "output": f.cleaned_data.get("output", ""),
            "public": bool(f.cleaned_data.get("public")),
        }
        for f in _live_tests(formset)
    ]
    data = {**cleaned, "tests": tests}
    data["entry_point"] = data.get("entry_point") or None
    core, errors = CoreProblem.validate(data)
    if core is None:
        return [(e.field, e.message) for e in errors]
    return problem_errors(core)


def _attach_errors(form: ProblemForm, formset: Any, errors: list[tuple[str, str]]) -> list[str]:
    """Put each error at its field (one Django already reported stays as it is); returns the tests' own."""
    live = _live_tests(formset)
    tests_errors = []
    for name, message in errors:
        if name.startswith("tests[") and "]." in name:
            index, sub = int(name[6 : name.index("]")]), name.split(".", 1)[1]
            if index < len(live) and sub in live[index].fields:
                if sub not in live[index].errors:
                    live[index].add_error(sub, message)
                continue
        if name == "tests":
            tests_errors.append(message)
        elif name in form.fields:
            if name not in form.errors:
                form.add_error(name, message)
        else:
            form.add_error(None, f"{name}: {message}")
    return tests_errors


def _rearrange(data: Any, formset_max: int) -> bool:
    """Apply "Add a test" / "Remove this test" (the no-JavaScript path) to the posted data; True if so.
    A form count the formset would refuse anyway is left to it; a test index that names no test of
    the form (``²``, 5,000 digits, past the last) removes nothing."""
    try:
        total = bounded_int(data.get("tests-TOTAL_FORMS"), low=0, high=formset_max, name="the test count")
    except BadNumber:
        return False
    if total is None:
        return False
    if "add_test" in data:
        data["tests-TOTAL_FORMS"] = str(min(total + 1, formset_max))
        return True
    if "remove_test" in data:
        try:
            index = bounded_int(data["remove_test"], low=0, high=max(total - 1, 0), name="the test")
        except BadNumber:
            index = None
        if index is not None and index < total:
            data[f"tests-{index}-DELETE"] = "on"
        return True
    return False


def _quiet(form: Any) -> None:
    """Clean but show no errors: the form re-rendered after Add or Remove has not been submitted yet."""
    form.full_clean()
    form._errors = ErrorDict()


@login_required
@require_http_methods(["GET", "POST"])
def problem_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    problem = _get_editable_problem(request, pk) if pk else Problem(owner=request.user)
    data = request.POST.copy() if request.method == "POST" else None
    rearranged = data is not None and _rearrange(data, TestCaseFormSet.max_num)
    form = ProblemForm(data, instance=problem)
    formset = TestCaseFormSet(data, instance=problem, prefix="tests")
    tests_errors: list[str] = []
    if rearranged:
        _quiet(form)
        if formset.management_form.is_valid():
            for f in formset.forms:
                _quiet(f)
    elif data is not None:
        valid = form.is_valid() & formset.is_valid()  # both, so that every error shows at once
        errors = _core_errors(form, formset)
        if problem.pk is None:  # a new problem counts against its owner's limit; edits never do
            try:
                check_room_for(request.user, 1)
            except LimitExceeded as exc:
                form.add_error(None, str(exc))
                valid = False
        if valid and not errors:
            with transaction.atomic():
                problem = form.save()
                formset.instance = problem
                formset.save()
                # the order is the page's: saved tests and new ones as they stand in the form
                kept = [f.instance.pk for f in _live_tests(formset) if f.instance.pk]
                for order, test_pk in enumerate(kept):
                    TestCase.objects.filter(pk=test_pk, problem=problem).update(order=order)
            messages.success(request, "Problem saved.")
            return redirect("problems:detail", pk=problem.pk)
        tests_errors = _attach_errors(form, formset, errors)
    return render(
        request,
        "problems/form.html",
        {"form": form, "formset": formset, "problem": problem, "tests_errors": tests_errors},
    )


@login_required
@require_http_methods(["GET", "POST"])
def problem_import(request: HttpRequest) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    importable = 0
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        result = import_problems(data["file"].read(), data["format"])
        errors, importable = result.errors, len(result.problems)
        if importable and (not errors or data["skip_bad"]):
            try:
                created = result.save(request.user, source=data["format"], is_public=data["is_public"])
            except LimitExceeded as exc:
                context = {"form": form, "errors": [str(exc)], "importable": 0, **_import_limits()}
                return render(request, "problems/import.html", context)
            report = messages.success if created else messages.info  # nothing new is not a success
            report(request, result.summary(len(created)))
            if errors:
                messages.warning(request, result.skipped())
            if len(created) == 1:
                return redirect("problems:detail", pk=created[0].pk)
            return redirect("problems:list")
    context = {"form": form, "errors": errors, "importable": importable, **_import_limits()}
    return render(request, "problems/import.html", context)


def _import_limits() -> dict[str, int]:
    """What the import page says one may upload: bytes, and records per file."""
    return {
        "max_upload": settings.EXECSIM_MAX_UPLOAD_BYTES,
        "max_records": settings.EXECSIM_MAX_IMPORT_RECORDS,
    }
