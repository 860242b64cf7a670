"""Checkpoints pages: the list of exported checkpoints and one checkpoint's page. Thin: reading and
charting live in manifests.py and charts.py; manifests are read on every request (a few kB each). The
default checkpoint is ``simulator.config.checkpoint_choice()``, the one ``execsim model prepare`` merges
and ``execsim model serve`` / ``execsim up`` serve. Anyone but staff reads no absolute server path on
them (``paths.hide_paths``): where a checkpoint is, relative to its checkpoints folder."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from simulator.config import CheckpointChoice, checkpoint_choice
from webapp.accounts.roles import is_staff
from webapp.checkpoints import conf
from webapp.checkpoints.charts import charts
from webapp.checkpoints.manifests import Checkpoint, discover, find, find_default
from webapp.checkpoints.paths import hide_paths


def _all() -> tuple[list[Checkpoint], CheckpointChoice, Checkpoint | None]:
    checkpoints = discover(conf.roots())
    choice = checkpoint_choice()
    return checkpoints, choice, find_default(checkpoints, choice.folder, choice.name)


def _shown(request: HttpRequest, context: dict[str, Any]) -> dict[str, Any]:
    """The page's context as ``request.user`` may read it: as it is for staff, else with every absolute
    path relative to its checkpoints folder (``paths.hide_paths``)."""
    return context if is_staff(request.user) else hide_paths(context, conf.roots())


@login_required
@require_GET
def checkpoint_list(request: HttpRequest) -> HttpResponse:
    checkpoints, choice, default = _all()
    context = {
        "checkpoints": checkpoints,
        "choice": choice,
        "default": default.name if default else None,
        "folder_missing": choice.folder is not None and not choice.folder.is_dir(),
        "roots": conf.roots(),
    }
    return render(request, "checkpoints/list.html", _shown(request, context))


@login_required
@require_GET
def checkpoint_detail(request: HttpRequest, name: str) -> HttpResponse:
    checkpoints, choice, default = _all()
    checkpoint = find(checkpoints, name)
    if checkpoint is None:
        raise Http404(f"no checkpoint named {name}")
    is_default = checkpoint is default
    context = _shown(request, {"c": checkpoint, "default_reason": choice.reason})
    shown = context["c"]  # the charts are drawn from what the reader may see
    context.update(is_default=is_default, charts=charts(shown.groups) if shown.error is None else [])
    return render(request, "checkpoints/detail.html", context)
