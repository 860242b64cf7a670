"""Checkpoints pages: the list of exported checkpoints and one checkpoint's page. Thin: reading and
charting live in manifests.py and charts.py; manifests are read on every request (a few kB each). The
default checkpoint is ``simulator.config.checkpoint_choice()``, the one ``execsim model prepare`` merges
and ``execsim model serve`` / ``execsim up`` serve."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from simulator.config import CheckpointChoice, checkpoint_choice
from webapp.checkpoints import conf
from webapp.checkpoints.charts import charts
from webapp.checkpoints.manifests import Checkpoint, discover, find, find_default


def _all() -> tuple[list[Checkpoint], CheckpointChoice, Checkpoint | None]:
    checkpoints = discover(conf.roots())
    choice = checkpoint_choice()
    return checkpoints, choice, find_default(checkpoints, choice.folder, choice.name)


@login_required
@require_GET
def checkpoint_list(request: HttpRequest) -> HttpResponse:
    checkpoints, choice, default = _all()
    return render(
        request,
        "checkpoints/list.html",
        {
            "checkpoints": checkpoints,
            "choice": choice,
            "default": default.name if default else None,
            "folder_missing": choice.folder is not None and not choice.folder.is_dir(),
            "roots": conf.roots(),
        },
    )


@login_required
@require_GET
def checkpoint_detail(request: HttpRequest, name: str) -> HttpResponse:
    checkpoints, choice, default = _all()
    checkpoint = find(checkpoints, name)
    if checkpoint is None:
        raise Http404(f"no checkpoint named {name}")
    return render(
        request,
        "checkpoints/detail.html",
        {
            "c": checkpoint,
            "is_default": checkpoint is default,
            "default_reason": choice.reason,
            "charts": charts(checkpoint.groups) if checkpoint.error is None else [],
        },
    )
