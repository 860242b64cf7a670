"""Explorer pages: paste code (or open a candidate of a run) -> a saved trace with a permalink; the
step-through page, its presentation mode, and a read-only view that other sites may frame."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_GET

from webapp.explorer.context import verification_of, viewer_context
from webapp.explorer.forms import ExploreForm
from webapp.explorer.models import Trace
from webapp.explorer.programs import EXAMPLES, traced
from webapp.limits import trace_slot
from webapp.params import bounded_int
from webapp.runs import privacy
from webapp.runs.models import Run


def _save(owner: Any, program: Any, **fields: Any) -> Trace:
    """Run ``program`` traced (capped) and save it; user-code failures are saved too (they are data).
    A model's simulation given with it is verified now and the verification saved with it, so that no
    view of the (public) permalink verifies it again."""
    cap = settings.EXECSIM_EXPLORER_MAX_STEPS
    with trace_slot(owner):  # per-user concurrent traces (LimitExceeded: webapp.errors answers 429)
        result = traced(program, cap)
    exception = result.exception
    saved = Trace.objects.create(
        owner=owner,
        code=program.code,
        mode="stdin" if program.stdin is not None else "call",
        call_input=program.stdin if program.stdin is not None else (program.call or ""),
        status=result.status,
        result={
            "value": result.value,
            "stdout": result.stdout,
            "message": result.message,
            "exception": None
            if exception is None
            else {"type": exception.type, "message": exception.message},
        },
        trace=result.trace.to_dict() if result.trace is not None else {},
        max_steps=cap,
        **fields,
    )
    verification_of(saved)  # of the text as stored (what the pages show), and stored
    return saved


@login_required
def explore_new(request: HttpRequest) -> HttpResponse:
    form = ExploreForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        trace = _save(
            request.user,
            Trace(code=data["code"], mode=data["mode"], call_input=data["call_input"]).program(),
            title=data.get("title", ""),
            model_text=data.get("model_text", ""),
        )
        return redirect("explorer:view", slug=trace.slug)
    example = EXAMPLES.get(request.GET.get("example", ""))
    if example is not None and request.method != "POST":
        title, code, call = example
        form = ExploreForm(initial={"title": title, "code": code, "mode": "call", "call_input": call})
    mine = list(Trace.objects.filter(owner=request.user)[:20])
    # A newcomer (no trace yet) is told what ExecSim and the explorer are, and offered programs to try.
    context = {"form": form, "mine": mine, "welcome": not mine, "examples": EXAMPLES}
    return render(request, "explorer/new.html", context)


@login_required
def explore_run(request: HttpRequest, run_id: Any) -> HttpResponse:
    """Pick a candidate and a test of a run; POST opens (or reopens) its real trace beside the
    simulation the run verified on it. A GET naming ``candidate``, ``test`` (and ``turn``, ``step``),
    as the run page's "see step N" links do, goes straight to a trace already saved, else offers it."""
    run = get_object_or_404(Run.objects.visible_to(request.user), id=run_id)
    source = request.POST if request.method == "POST" else request.GET
    asked = None
    if "candidate" in source and "test" in source:
        try:
            index = {"low": 0, "high": 10_000, "default": 0}  # candidates, tests, turns, steps: small
            candidate = bounded_int(source["candidate"], **index, name="candidate") or 0
            test = bounded_int(source["test"], **index, name="test") or 0
            turn = bounded_int(source.get("turn"), **index, name="turn") or 0
            step = bounded_int(source.get("step"), low=0, high=10_000_000, default=0, name="step") or 0
            program = run.program_of(candidate, test, turn)
            if not privacy.may_see_test(run, request.user, test):
                raise LookupError(f"{run.test_label(test)} is private to the problem's owner and staff")
        except (KeyError, ValueError, LookupError) as exc:  # BadNumber is a ValueError
            messages.error(request, f"Cannot open that trace: {exc}")
            return redirect("explorer:run", run_id=run.id)
        existing = Trace.objects.filter(
            owner=request.user, run=run, candidate=candidate, test=test, code=program.code
        ).first()
        # ?step= is the trace's index (from 0, as claims and data-step carry it); #step-N counts from 1
        at_step = f"#step-{step + 1}" if source.get("step") else ""
        if existing is not None:
            return redirect(reverse("explorer:view", args=[existing.slug]) + at_step)
        if request.method == "POST":
            title = run.problem.title if run.problem else "Simulate my code"
            trace = _save(
                request.user,
                program,
                title=f"{title}: candidate {candidate}, {run.test_label(test)}",
                model_text=run.judged_nlex(candidate, turn).get(test, ""),
                model_name=str(run.provenance.get("model") or run.settings.get("model") or ""),
                run=run,
                candidate=candidate,
                test=test,
            )
            return redirect(reverse("explorer:view", args=[trace.slug]) + at_step)
        asked = {"candidate": candidate, "test": test, "turn": turn, "step": step}
    core = run.core_problem()
    tests = [(i, t) for i, t in enumerate(core.tests) if t.public]
    candidates = [c for c in run.candidates.all() if c.code] if run.kind != "simulate" else []
    context = {"run": run, "tests": tests, "candidates": candidates, "simulate": run.kind == "simulate"}
    return render(request, "explorer/run.html", {**context, "asked": asked})


def _context(request: HttpRequest, trace: Trace) -> dict[str, Any]:
    core = trace.core_trace()
    context = viewer_context(
        core,
        trace.program(),
        model_text=trace.model_text,
        status=trace.status,
        verification=verification_of(trace, core),  # stored: a view does not verify again
    )
    context.update(
        {
            "saved": trace,
            "permalink": request.build_absolute_uri(reverse("explorer:view", args=[trace.slug])),
            "embed_url": request.build_absolute_uri(reverse("explorer:embed", args=[trace.slug])),
            "present": request.GET.get("present") == "1",
            "hide_result": request.GET.get("hide") == "result",
        }
    )
    return context


@require_GET
def explore_view(request: HttpRequest, slug: str) -> HttpResponse:
    """The permalink: anyone holding the (unguessable) link may view it."""
    trace = get_object_or_404(Trace, slug=slug)
    context = _context(request, trace)
    if request.user.is_authenticated:  # "edit and trace again" posts to the paste form (login only)
        fields = ("title", "code", "mode", "call_input")
        context["edit_form"] = ExploreForm(initial={name: getattr(trace, name) for name in fields})
    return render(request, "explorer/view.html", context)


@require_GET
@xframe_options_exempt
def explore_embed(request: HttpRequest, slug: str) -> HttpResponse:
    """Read-only, no navigation, and the one view other sites may put in an iframe."""
    trace = get_object_or_404(Trace, slug=slug)
    context = _context(request, trace)
    context["present"] = False  # presentation opens the permalink in a tab of its own
    return render(request, "explorer/embed.html", context)
