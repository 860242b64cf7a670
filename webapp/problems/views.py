"""Problem pages: list and search, create and edit, import, and the problem page with its Solve form."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from simulator.problem import Problem as CoreProblem
from simulator.problem import ProblemError
from webapp.accounts.roles import is_staff
from webapp.limits import problem_errors
from webapp.problems.forms import ImportForm, ProblemForm, TestCaseFormSet
from webapp.problems.importers import import_problems
from webapp.problems.markdown import render_markdown
from webapp.problems.models import Problem
from webapp.runs.forms import SolveForm
from webapp.runs.models import Run


def _get_problem_for_user(request: HttpRequest, pk: int) -> Problem:
    return get_object_or_404(Problem.objects.visible_to(request.user), pk=pk)


def _get_editable_problem(request: HttpRequest, pk: int) -> Problem:
    problem = get_object_or_404(Problem, pk=pk)
    if problem.owner_id != request.user.pk and not is_staff(request.user):
        raise Http404("No such problem")
    return problem


@vary_on_headers("HX-Request")
def problem_list(request: HttpRequest) -> HttpResponse:
    problems = Problem.objects.visible_to(request.user)
    query = request.GET.get("q", "").strip()
    if query:
        problems = problems.filter(Q(title__icontains=query) | Q(statement__icontains=query))
    # htmx search-as-you-type swaps only the results partial (the page includes the same one).
    template = "problems/results.html" if request.headers.get("HX-Request") else "problems/list.html"
    return render(request, template, {"problems": problems[:200], "query": query})


def problem_detail(request: HttpRequest, pk: int) -> HttpResponse:
    problem = _get_problem_for_user(request, pk)
    runs = Run.objects.visible_to(request.user).filter(problem=problem)[:50]
    return render(
        request,
        "problems/detail.html",
        {
            "problem": problem,
            "statement_html": render_markdown(problem.statement),
            "public_tests": [t for t in problem.tests.all() if t.public],
            "runs": runs,
            "solve_form": SolveForm(),
            "can_edit": problem.owner_id == request.user.pk or is_staff(request.user),
        },
    )


def _core_errors(form: ProblemForm, formset: Any) -> list[tuple[str, str]]:
    """Validate with the core's own rules (Problem.from_dict) and the size limits, errors by field."""
    tests = [
        {
            "input": f.cleaned_data.get("input", ""),
            "output": f.cleaned_data.get("output", ""),
            "public": bool(f.cleaned_data.get("public")),
        }
        for f in formset.forms
        if f.cleaned_data and not f.cleaned_data.get("DELETE")
    ]
    data = {**form.cleaned_data, "tests": tests}
    data["entry_point"] = data.get("entry_point") or None
    try:
        core = CoreProblem.from_dict(data)
    except ProblemError as exc:
        return [(exc.field, exc.message)]
    return problem_errors(core)


def _attach_errors(form: ProblemForm, formset: Any, errors: list[tuple[str, str]]) -> None:
    live = [f for f in formset.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
    for name, message in errors:
        if name.startswith("tests[") and "]." in name:
            index, sub = int(name[6 : name.index("]")]), name.split(".", 1)[1]
            if index < len(live) and sub in live[index].fields:
                live[index].add_error(sub, message)
                continue
        if name in form.fields:
            form.add_error(name, message)
        else:
            form.add_error(None, f"{name}: {message}")


@login_required
@require_http_methods(["GET", "POST"])
def problem_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    problem = _get_editable_problem(request, pk) if pk else Problem(owner=request.user)
    form = ProblemForm(request.POST or None, instance=problem)
    formset = TestCaseFormSet(request.POST or None, instance=problem, prefix="tests")
    if request.method == "POST" and form.is_valid() and formset.is_valid():
        errors = _core_errors(form, formset)
        if not errors:
            with transaction.atomic():
                problem = form.save()
                formset.instance = problem
                formset.save()
                for order, test in enumerate(problem.tests.all()):
                    test.order = order
                    test.save(update_fields=["order"])
            messages.success(request, "Problem saved.")
            return redirect("problems:detail", pk=problem.pk)
        _attach_errors(form, formset, errors)
    return render(request, "problems/form.html", {"form": form, "formset": formset, "problem": problem})


@login_required
@require_http_methods(["GET", "POST"])
def problem_import(request: HttpRequest) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        result = import_problems(form.cleaned_data["file"].read(), form.cleaned_data["format"])
        errors = result.errors
        if not errors:
            with transaction.atomic():
                created = [
                    Problem.create_from_core(
                        p,
                        request.user,
                        source=form.cleaned_data["format"],
                        is_public=form.cleaned_data["is_public"],
                    )
                    for p in result.problems
                ]
            messages.success(request, f"Imported {len(created)} problem(s).")
            if len(created) == 1:
                return redirect("problems:detail", pk=created[0].pk)
            return redirect("problems:list")
    return render(
        request,
        "problems/import.html",
        {"form": form, "errors": errors, "max_upload": settings.EXECSIM_MAX_UPLOAD_BYTES},
    )
