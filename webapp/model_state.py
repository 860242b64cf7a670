"""What the pages say of the model server (the header's status, its page, the Solve button): answering or
not, and, in embedded mode, whether it is still starting and for about how long, or why it could not.

Embedded mode (``execsim up``, webapp.cli) starts the default model's server itself, in the process that
serves the pages: it calls ``starting`` when it begins (preparing the model, then warming up the server,
about 3 minutes on a CPU), then ``ready`` or ``failed``, or ``absent`` when it cannot start one at all.
Production never starts the model (docs/deploy.md: vLLM is a service of its own), so there a server that
does not answer is "not answering", nothing more: the pages cannot tell a warm-up from a crash.

How long a start took is kept in the data directory, so the next start's estimate is this machine's own;
the first one assumes a CPU's 3 minutes.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from django.core.cache import cache

from simulator import config

FIRST_ESTIMATE_SECONDS = 180.0  # the default model's warm-up on a CPU (issue 52)
UP_CACHE_SECONDS = 5  # how long one check of the server is trusted (every page's header asks)

_lock = threading.Lock()
# This process's start of the model: {"since", "expected_s"}, {"failed"} or {"absent"}; empty: none known.
_state: dict[str, Any] = {}


@dataclass(frozen=True)
class ModelState:
    """``name``: "up", "starting", "down" (not answering) or "failed" (embedded mode could not start it);
    ``words``: the header's few words; ``sentence``: what the Solve form says while it waits (and the
    status page); ``detail``: why it could not start, for the status page's signed-in readers."""

    name: str
    words: str
    sentence: str = ""
    detail: str = ""

    @property
    def up(self) -> bool:
        return self.name == "up"


def _warmup_file() -> Path:
    return config.data_dir() / "logs" / "model-warmup.json"


def _last_warmup() -> float | None:
    try:
        seconds = json.loads(_warmup_file().read_text())["seconds"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return float(seconds) if isinstance(seconds, int | float) and 0 < seconds < 86_400 else None


def starting(expected_s: float | None = None) -> None:
    """Embedded mode begins to start the model (expected to take ``expected_s``: by default as long as
    the last start took here, else ``FIRST_ESTIMATE_SECONDS``)."""
    expected = expected_s or _last_warmup() or FIRST_ESTIMATE_SECONDS
    with _lock:
        _state.clear()
        _state.update(since=time.monotonic(), expected_s=expected)


def ready() -> None:
    """The model answers: the time it took since ``starting`` is the next start's estimate."""
    with _lock:
        since = _state.get("since")
        _state.clear()
    if since is None:
        return
    try:
        path = _warmup_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"seconds": round(time.monotonic() - since, 1)}))
    except OSError:
        pass  # only the next estimate is lost


def failed(reason: str) -> None:
    """Embedded mode could not start the model (``reason``: its first line is kept)."""
    with _lock:
        _state.clear()
        _state["failed"] = (reason.strip().splitlines() or ["unknown error"])[0][:300]


def absent(reason: str) -> None:
    """Embedded mode starts no model, for ``reason`` (vLLM is not installed)."""
    with _lock:
        _state.clear()
        _state["absent"] = reason


def forget() -> None:
    """Back to knowing nothing of a start (production's state; tests)."""
    with _lock:
        _state.clear()


def answers(url: str) -> bool:
    """Whether the model server at ``url`` lists its models (checked at most every few seconds)."""
    key = f"execsim:model-up:{url}"
    cached = cache.get(key)
    if cached is not None:
        return bool(cached)
    try:
        up = httpx.get(f"{url}/models", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        up = False
    cache.set(key, int(up), timeout=UP_CACHE_SECONDS)
    return up


def _minutes(seconds: float) -> int:
    return max(1, math.ceil(seconds / 60))


def current(url: str | None = None) -> ModelState:
    """The model server's state now, as the pages say it."""
    if answers(url or config.model_url()):
        return ModelState("up", "up")
    with _lock:
        state = dict(_state)
    wait = "Solve opens as soon as it answers."
    if "since" in state:
        left = state["expected_s"] - (time.monotonic() - state["since"])
        if left > 0:
            words = f"starting (about {_minutes(left)} min)"
        else:
            words = f"still starting ({_minutes(time.monotonic() - state['since'])} min so far)"
        return ModelState("starting", words, f"The model is {words}: {wait}")
    if "failed" in state:
        sentence = "The model could not start, so a run would fail (the model status says why)."
        return ModelState("failed", "could not start", sentence, state["failed"])
    if "absent" in state:
        sentence = f"No model runs here ({state['absent']}), so a run would fail."
        return ModelState("down", "not running", sentence, state["absent"])
    return ModelState("down", "not answering", f"The model is not answering, so a run would fail: {wait}")
