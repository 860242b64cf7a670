"""Cancelling a run: a DB flag (durable, seen by any worker) plus a fast signal the task polls (a Redis
key in production, an in-process set in embedded mode)."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings

_local: set[str] = set()
KEY = "execsim:cancel:{}"


@cache
def _redis() -> Any:
    import redis

    return redis.Redis.from_url(settings.REDIS_URL)


def signal(run_id: Any) -> None:
    _local.add(str(run_id))
    if settings.REDIS_URL:
        _redis().set(KEY.format(run_id), "1", ex=24 * 3600)


def signalled(run_id: Any) -> bool:
    if str(run_id) in _local:
        return True
    if settings.REDIS_URL:
        return bool(_redis().exists(KEY.format(run_id)))
    return False


def clear(run_id: Any) -> None:
    _local.discard(str(run_id))
    if settings.REDIS_URL:
        _redis().delete(KEY.format(run_id))
