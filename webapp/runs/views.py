"""Run pages: start (solve, simulate my code), the live run page, its read-only share link, cancel,
retry, JSON export, history, and the model status fragment polled by every page."""

from __future__ import annotations

import random
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from simulator import config
from simulator.pipeline.settings import SettingsError
from webapp import model_state
from webapp.limits import LimitExceeded, check_can_start_run
from webapp.pages import page_of
from webapp.params import object_id
from webapp.problems.models import Problem
from webapp.runs import cancel as cancel_signal
from webapp.runs import privacy, real, runner
from webapp.runs.forms import SimulateForm, SolveForm
from webapp.runs.models import Run
from webapp.runs.record import DONE_STATUSES, append_final
from webapp.runs.views_context import run_context


def _get_run_for_user(request: HttpRequest, run_id: Any) -> Run:
    return get_object_or_404(Run.objects.visible_to(request.user).select_related("problem"), id=run_id)


def _start(run: Run) -> None:
    transaction.on_commit(lambda: runner.enqueue(run.id))


def _check_can_start_run(user: Any, *, following: Run | None = None) -> None:
    """``limits.check_can_start_run`` with the user's work in progress: their queued and running runs,
    and each Run for real they asked for on a run that has ended (waiting in the queue or running).
    One asked for during its run follows the run, which already counts; ``following`` is such a run
    for a new Run for real, which then adds nothing at once (issue 51, item 9)."""
    runs = {
        str(pk) for pk in Run.objects.filter(user=user, status__in=Run.ACTIVE).values_list("id", flat=True)
    }
    active = len(runs) + len(real.under_way_for(user.pk) - runs)
    check_can_start_run(user, active, adds=0 if following is not None and following.is_active else 1)


@login_required
@require_POST
def solve(request: HttpRequest, pk: int) -> HttpResponse:
    problem = get_object_or_404(Problem.objects.visible_to(request.user), pk=pk)
    form = SolveForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(f"{name}: {' '.join(errs)}" for name, errs in form.errors.items())
        messages.error(request, f"Not started: {errors}")
        return redirect("problems:detail", pk=pk)
    try:
        _check_can_start_run(request.user)
    except LimitExceeded as exc:
        messages.error(request, str(exc))
        return redirect("problems:detail", pk=pk)
    run_settings = form.settings_dict()
    if run_settings.get("seed") is None:
        run_settings["seed"] = random.SystemRandom().randrange(2**31)
    try:
        Run(settings=run_settings).pipeline_settings  # noqa: B018 (validates the settings)
    except SettingsError as exc:
        messages.error(request, f"Not started: {exc.field}: {exc.message}")
        return redirect("problems:detail", pk=pk)
    with transaction.atomic():
        run = Run.objects.create(
            problem=problem, user=request.user, settings=run_settings, seed=run_settings["seed"]
        )
        _start(run)
    return redirect("runs:detail", run_id=run.id)


@login_required
def simulate(request: HttpRequest) -> HttpResponse:
    asked = object_id(request.GET.get("problem"))  # "Try your own program" on a problem's page
    chosen = Problem.objects.visible_to(request.user).filter(pk=asked).first() if asked else None
    # as a judge's editor opens: the problem chosen, its function's signature to fill in
    initial = {"problem": chosen.pk, "code": chosen.to_core().starter_code()} if chosen else {}
    form = SimulateForm(request.POST or None, user=request.user, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            _check_can_start_run(request.user)
        except LimitExceeded as exc:
            form.add_error(None, str(exc))
        else:
            data = form.cleaned_data
            run_settings = {
                "k": 1,
                "turns": 0,
                "real": True,
                "narrate": True,  # this mode shows the narration beside the real run
                "model": data.get("model") or "",
                "annotate": data.get("annotate", False),  # pasted code is private by default
                "seed": random.SystemRandom().randrange(2**31),
            }
            if data.get("max_tokens"):
                run_settings["max_tokens"] = data["max_tokens"]
            problem = data.get("problem")
            with transaction.atomic():
                if problem is not None:  # a solve run whose only candidate is the user's program
                    run = Run.objects.create(
                        problem=problem, user=request.user, settings=run_settings, seed=run_settings["seed"],
                        code=data["code"],
                    )  # fmt: skip
                else:
                    run = Run.objects.create(
                        kind="simulate", user=request.user, settings={**run_settings, "mode": data["mode"]},
                        seed=run_settings["seed"], code=data["code"], code_input=data.get("code_input", ""),
                    )  # fmt: skip
                _start(run)
            return redirect("runs:detail", run_id=run.id)
    model = model_state.current() if request.user.is_authenticated else None
    return render(request, "runs/simulate.html", {"form": form, "model": model})


def _run_page(request: HttpRequest, run: Run, *, readonly: bool) -> HttpResponse:
    # One consistent snapshot: the recorder appends each event under this row lock, so the rows read
    # here and run.last_seq (where the page's WebSocket resumes) agree. Without it an event recorded
    # in between was shown and then replayed again (streamed text appeared twice after a reload).
    with transaction.atomic():
        run = Run.objects.select_for_update(of=("self",)).select_related("problem").get(id=run.id)
        context = run_context(run, readonly=readonly)
    query = f"?last_seq={run.last_seq}" + (f"&token={run.share_token}" if readonly else "")
    context["ws_url"] = f"/ws/runs/{run.id}/{query}"
    context["share_url"] = request.build_absolute_uri(reverse("runs:share", args=[run.share_token]))
    context["hidden_tests"] = privacy.hidden_tests(run, None if readonly else request.user)
    return render(request, "runs/detail.html", context)


@login_required
@require_GET
def run_detail(request: HttpRequest, run_id: Any) -> HttpResponse:
    return _run_page(request, _get_run_for_user(request, run_id), readonly=False)


@require_GET
def run_share(request: HttpRequest, token: str) -> HttpResponse:
    run = get_object_or_404(Run.objects.select_related("problem"), share_token=token)
    return _run_page(request, run, readonly=True)


@login_required
@require_POST
def run_cancel(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = _get_run_for_user(request, run_id)
    if run.status in DONE_STATUSES:
        messages.info(request, "The run had already ended.")
    else:
        Run.objects.filter(id=run.id).update(cancel_requested=True)
        cancel_signal.signal(run.id)
        if run.status == Run.QUEUED and Run.objects.filter(id=run.id, status=Run.QUEUED).exists():
            append_final(run.id, "run_cancelled", reason="cancelled before it started")
        # no flash message: the status panel says "cancelling…" until the run ends, then that it did
    return redirect("runs:detail", run_id=run.id)


@login_required
@require_POST
def run_retry(request: HttpRequest, run_id: Any) -> HttpResponse:
    old = _get_run_for_user(request, run_id)
    if old.status not in DONE_STATUSES:
        messages.error(request, "Only an ended run can be retried.")
        return redirect("runs:detail", run_id=old.id)
    if not privacy.may_start_work(old, request.user):
        messages.error(request, "Not retried: the problem is no longer visible to you.")
        return redirect("runs:detail", run_id=old.id)
    try:
        _check_can_start_run(request.user)
    except LimitExceeded as exc:
        messages.error(request, str(exc))
        return redirect("runs:detail", run_id=old.id)
    with transaction.atomic():
        run = Run.objects.create(
            kind=old.kind,
            problem=old.problem,
            user=request.user,
            settings=old.settings,
            seed=old.seed,
            code=old.code,
            code_input=old.code_input,
            retry_of=old,
        )
        _start(run)
    return redirect("runs:detail", run_id=run.id)


@login_required
@require_POST
def run_real(request: HttpRequest, run_id: Any) -> HttpResponse:
    """Run for real: execute the run's candidates and final program in the sandbox on every test
    (now if the run has ended, else as soon as it ends). Owner and staff only (404 for others).

    The run page's Run for real panel says that it is under way (once asked for, twice as well) and
    its live fragments replace that note when it ends; a flash message would outlive it."""
    run = _get_run_for_user(request, run_id)
    refused = ""
    if run.kind != "solve":
        refused = "Only a solve run has candidates to run for real."
    elif not privacy.may_start_work(run, request.user):
        refused = "Not run: the problem is no longer visible to you."
    elif real.pending(run.id):  # already asked for or under way: the panel says so
        pass
    else:
        try:  # sandbox work like a run: the same limits (issue 51, item 9)
            _check_can_start_run(request.user, following=run)
        except LimitExceeded as exc:
            refused = str(exc)
        else:
            if real.request(run.id, request.user.pk):  # else another click asked for it meanwhile
                run.refresh_from_db(fields=["status"])
                if not run.is_active:  # else the run's final event starts it (webapp.runs.record)
                    runner.enqueue_real(run.id)
    if request.headers.get("HX-Request"):  # the panel in place, and the page's socket (issue 52)
        return _run_real_panel(request, run, refused)
    if refused:
        messages.error(request, refused)
    return redirect(reverse("runs:detail", args=[run.id]) + "#run-real")


def _run_real_panel(request: HttpRequest, run: Run, refused: str) -> HttpResponse:
    """Run for real's answer to the page's own request: its panel as it now is (the progress where
    the results will appear, or why it was refused), and the page's WebSocket, which a page opened
    on an ended run had not (the reader keeps their place: nothing reloads)."""
    run.refresh_from_db()
    context = run_context(run)
    context["hidden_tests"] = privacy.hidden_tests(run, request.user)
    context["real_refused"] = refused
    context["ws_url"] = f"/ws/runs/{run.id}/?last_seq={run.last_seq}"
    panel = render(request, "runs/fragments/run_real.html", context).content.decode()
    if run.is_active:  # the page opened on an active run: it has its socket
        return HttpResponse(panel)
    live = render(request, "runs/fragments/live.html", {**context, "oob": True}).content.decode()
    return HttpResponse(panel + live)


def _export(run: Run, viewer: Any) -> dict[str, Any]:
    """The run as JSON, showing ``viewer`` (None: a share-link reader) only what they may see."""
    hidden, shared, server = privacy.hidden_tests(run, viewer), viewer is None, privacy.server_of(run)
    return {
        "id": str(run.id),
        "kind": run.kind,
        "status": run.status,
        "problem": privacy.problem_for(run.core_problem().to_dict(), hidden),
        "code": run.code or None,
        "input": run.code_input or None,
        "settings": run.settings,
        "seed": run.seed,
        "provenance": privacy.provenance_for(run.provenance, shared),
        "stages": privacy.stages_for(run.stages, hidden, shared, server),
        "totals": privacy.totals_for(run.totals, hidden),
        "final": {"candidate": run.final_candidate, "code": run.final_code},
        "error": privacy.message_for(run.error, shared, server),
        "created_at": run.created_at.isoformat(),
        "events": [privacy.event_for(e.as_event_dict(), hidden, shared, server) for e in run.events.all()],
    }


@require_GET
def run_export(request: HttpRequest, run_id: Any) -> HttpResponse:
    token = request.GET.get("token")
    if token:  # a share link shows what a visitor may see, whoever opens it
        run, viewer = get_object_or_404(Run, id=run_id, share_token=token), None
    elif request.user.is_authenticated:
        run, viewer = _get_run_for_user(request, run_id), request.user
    else:
        return redirect(f"{reverse('login')}?next={request.path}")
    response = JsonResponse(_export(run, viewer), json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="run-{run.id}.json"'
    return response


@login_required
@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    runs = Run.objects.visible_to(request.user).select_related("problem", "user")
    page = page_of(request, runs.prefetch_related("executions"))
    return render(request, "runs/list.html", {"runs": page.object_list, "page": page})


@require_GET
def model_status(request: HttpRequest) -> HttpResponse:
    """The status fragment (the model: up, starting, not answering; queue length); polled by htmx."""
    url = config.model_url()
    state = model_state.current(url)
    context = {
        "model": config.model_name(),
        "model_url": url,
        "up": state.up,
        "state": state,
        "queued": Run.objects.filter(status=Run.QUEUED).count(),
        "running": Run.objects.filter(status=Run.RUNNING).count(),
    }
    if request.headers.get("HX-Request"):  # the header's fragment, polled
        return render(request, "status/model_status.html", context)
    return render(request, "status/page.html", context)  # the header's link: a page of its own
