"""Checkpoints pages: the list of exported checkpoints and one checkpoint's page. Thin: reading and
charting live in manifests.py and charts.py; manifests are read on every request (a few kB each)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from webapp.checkpoints import conf
from webapp.checkpoints.charts import charts
from webapp.checkpoints.manifests import Checkpoint, default_checkpoint, discover, find


def _all() -> tuple[list[Checkpoint], str | None, str]:
    checkpoints = discover(conf.roots())
    default, reason = default_checkpoint(checkpoints, conf.configured_default())
    return checkpoints, default, reason


@login_required
@require_GET
def checkpoint_list(request: HttpRequest) -> HttpResponse:
    checkpoints, default, reason = _all()
    return render(
        request,
        "checkpoints/list.html",
        {
            "checkpoints": checkpoints,
            "default": default,
            "default_reason": reason,
            "roots": conf.roots(),
        },
    )


@login_required
@require_GET
def checkpoint_detail(request: HttpRequest, name: str) -> HttpResponse:
    checkpoints, default, reason = _all()
    checkpoint = find(checkpoints, name)
    if checkpoint is None:
        raise Http404(f"no checkpoint named {name}")
    return render(
        request,
        "checkpoints/detail.html",
        {
            "c": checkpoint,
            "is_default": checkpoint.name == default,
            "default_reason": reason,
            "charts": charts(checkpoint.groups) if checkpoint.error is None else [],
        },
    )
