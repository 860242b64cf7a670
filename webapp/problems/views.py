"""Problem pages: list and search, create and edit, import, and the problem page with its Solve form."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import F, Q
from django.forms.utils import ErrorDict
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from simulator.problem import Problem as CoreProblem
from webapp import model_state
from webapp.limits import LimitExceeded, problem_errors
from webapp.pages import page_of
from webapp.params import BadNumber, bounded_int
from webapp.problems.calls import call_of, tuple_warning
from webapp.problems.forms import ImportForm, ProblemForm, TestCaseFormSet
from webapp.problems.importers import import_problems
from webapp.problems.markdown import render_statement
from webapp.problems.models import Problem, TestCase, check_room_for
from webapp.problems.reference import ReferenceCheck, check_reference
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
# What the list's "You" column says, per who ran the program (the model's Solve, or the user's own program
# through Simulate my code) and its standing: (words, class, tooltip).
STANDING_WORDS = {
    ("model", "accepted"): (
        "✓ solved by the model",
        "verdict judge-accepted",
        "a final program the model wrote in a run of yours passed every test for real",
    ),
    ("own", "accepted"): (
        "✓ your program passed",
        "verdict judge-accepted",
        "a program of yours (Simulate my code) passed every test for real",
    ),
    ("model", "tried"): (
        "tried by the model",
        "muted",
        "none of the model's final programs in your runs has passed every test for real yet",
    ),
    ("own", "tried"): (
        "your program tried",
        "muted",
        "none of your own programs (Simulate my code) has passed every test for real yet",
    ),
}


def who_solved(user: Any, problem_ids: list[int]) -> dict[int, list[tuple[str, str, str]]]:
    """Per problem of ``problem_ids`` the user has runs on, what the "You" column says: who solved it (the
    model in a Solve run, the user's own program in a Simulate my code run), else who tried it."""
    by_model = Run.objects.filter(code="").standing(user, problem_ids)
    by_own = Run.objects.exclude(code="").standing(user, problem_ids)
    words: dict[int, list[tuple[str, str, str]]] = {}
    for pk in by_model.keys() | by_own.keys():
        standings = [(who, mine.get(pk, "")) for who, mine in (("model", by_model), ("own", by_own))]
        solved = any(s == "accepted" for _, s in standings)
        shown = [(who, s) for who, s in standings if s == "accepted" or (s == "tried" and not solved)]
        words[pk] = [STANDING_WORDS[said] for said in shown]
    return words


@vary_on_headers("HX-Request")
def problem_list(request: HttpRequest) -> HttpResponse:
    visible = Problem.objects.visible_to(request.user)
    # the problems given a place first (the examples, easiest for the default model first), then the newest
    problems = visible.order_by(F("list_order").asc(nulls_last=True), "-created_at", "-id")
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
    on_page = [p.pk for p in page.object_list]
    said = who_solved(request.user, on_page) if request.user.is_authenticated and standing else {}
    rows = [(problem, standing.get(problem.pk, ""), said.get(problem.pk, [])) for problem in page.object_list]
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
    # numbered as every run of the problem names them (``Run.test_label``): public and private in one count;
    # a call problem's test shown as the call it makes (``add_one(5)``), what its input means
    calls = problem.kind == "call"
    tests = [
        (n, t, call_of(problem.entry_point, t.input) if calls else "")
        for n, t in enumerate(problem.tests.all(), start=1)
    ]
    can_edit = problem.editable_by(request.user)
    return render(
        request,
        "problems/detail.html",
        {
            "problem": problem,
            "statement_html": render_statement(problem.statement, problem.extra),
            "public_tests": [test for test in tests if test[1].public],
            # for its owner and staff (never shown to anyone else, nor to the model)
            "private_tests": [test for test in tests if not test[1].public] if can_edit else [],
            "runs": runs,
            "solve_form": SolveForm(),
            # whether Solve can run now (the header's status, which the page's script follows)
            "model": model_state.current() if request.user.is_authenticated else None,
            "can_edit": can_edit,
        },
    )


def _live_tests(formset: Any) -> list[Any]:
    """The test forms that count, in the page's order: filled in and not removed."""
    return [f for f in formset.forms if getattr(f, "cleaned_data", None) and not f.cleaned_data.get("DELETE")]


def _core_errors(form: ProblemForm, formset: Any) -> tuple[CoreProblem | None, list[tuple[str, str]]]:
    """Validate with the core's own rules (Problem.validate) and the size limits: the problem as the core
    reads it (None when it does not validate), and every error, by field."""
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
        return None, [(e.field, e.message) for e in errors]
    return core, problem_errors(core)


def _check_reference(
    request: HttpRequest, form: ProblemForm, formset: Any, core: CoreProblem
) -> ReferenceCheck | None:
    """Run the form's reference solution, if it has one, on every test (webapp.problems.reference); a
    failed test says so in its own box. None when there is no reference to run."""
    code = form.cleaned_data.get("reference", "")
    if not code.strip():
        return None
    check = check_reference(core, code, request.user.pk)
    live = _live_tests(formset)
    for index, message in (check.failed or {}).items():
        live[index].add_error(None, message)
    return check


def _show_calls(form: ProblemForm, formset: Any) -> None:
    """Give each test form the call it makes and, when its input is one tuple, the warning (what the
    editor's script shows live; here for a page rendered again, and for a browser without scripts)."""
    if form["kind"].value() != "call":
        return
    entry = form["entry_point"].value() or ""
    for f in formset.forms:
        given = f["input"].value() or ""
        if given or f["output"].value():  # a blank test is not one (it is left out on save)
            f.call, f.tuple_warning = call_of(entry, given), tuple_warning(given)


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
    reference = None  # the reference solution's check, when it ran and failed
    if rearranged:
        _quiet(form)
        if formset.management_form.is_valid():
            for f in formset.forms:
                _quiet(f)
    elif data is not None:
        valid = form.is_valid() & formset.is_valid()  # both, so that every error shows at once
        core, errors = _core_errors(form, formset)
        if problem.pk is None:  # a new problem counts against its owner's limit; edits never do
            try:
                check_room_for(request.user, 1)
            except LimitExceeded as exc:
                form.add_error(None, str(exc))
                valid = False
        if valid and not errors and core is not None:
            reference = _check_reference(request, form, formset, core)
            valid = reference is None or reference.passed
        if valid and not errors:
            with transaction.atomic():
                problem = form.save()
                formset.instance = problem
                formset.save()
                # the order is the page's: saved tests and new ones as they stand in the form
                kept = [f.instance.pk for f in _live_tests(formset) if f.instance.pk]
                for order, test_pk in enumerate(kept):
                    TestCase.objects.filter(pk=test_pk, problem=problem).update(order=order)
            passed = len(core.tests) if reference is not None and core is not None else 0
            checked = f" The reference solution passed all {passed} tests." if passed else ""
            messages.success(request, f"Problem saved.{checked}")
            return redirect("problems:detail", pk=problem.pk)
        tests_errors = _attach_errors(form, formset, errors)
    _show_calls(form, formset)
    context = {
        "form": form,
        "formset": formset,
        "problem": problem,
        "tests_errors": tests_errors,
        "reference_check": reference,
    }
    return render(request, "problems/form.html", context)


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
