"""What a training run does differently when ``accelerate launch`` (or ``torchrun``) starts it as
several processes, one per GPU, on one node or several (docs/training.md, "More than one GPU or node").

The launcher sets ``RANK``, ``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE`` in every process; a plain
``execsim train`` run sets none of them and is rank 0 of 1. Every rank reads the same examples and
trains; the Trainer (through accelerate) shards each global batch across the ranks in one seeded order.
Only the main process writes what a run leaves besides the Trainer's own checkpoint files: the
configuration, the run history, the adapter or model, ``summary.json``. The collectives below run only
once the Trainer has started the process group (from a callback's ``on_train_begin`` on); without one
they return this process's own value.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any


class RanksDisagree(RuntimeError):
    """The processes of one run hold different data: they would not train one model."""


def rank() -> int:
    """This process's rank among all processes of the run (0 without a launcher)."""
    return int(os.environ.get("RANK", "0"))


def local_world_size() -> int:
    """How many processes of the run share this machine (and its cores)."""
    return int(os.environ.get("LOCAL_WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """Whether this process writes the run's files (rank 0)."""
    return rank() == 0


def sandbox_workers(cpus: int | None = None, ranks: int | None = None) -> int:
    """Sandbox workers for one rank's rewards: the machine's cores shared by the ranks on it, so N
    ranks that each start a pool of ``cpu_count`` workers do not run N times more programs than cores."""
    cpus = cpus if cpus is not None else os.cpu_count() or 1
    return max(1, cpus // max(1, ranks if ranks is not None else local_world_size()))


def _group() -> bool:
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def gather(value: Any) -> list[Any]:
    """Every rank's ``value`` (picklable), in rank order, on every rank."""
    if not _group():
        return [value]
    import torch.distributed as dist

    values: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(values, value)
    return values


def from_main(value: Any) -> Any:
    """The main process's ``value`` on every rank."""
    return gather(value)[0]


def any_rank(flag: bool) -> bool:
    """True on every rank when it is true on one: a decision (stop now) all ranks must take together,
    or the others wait forever in the next step's gradient exchange."""
    return any(gather(bool(flag)))


def rows_digest(rows: list[dict[str, Any]]) -> str:
    """A sha256 of the rows a rank trains on, as it holds them (order included)."""
    text = json.dumps(rows, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def check_same_rows(digest: str) -> None:
    """Refuse to train when the ranks hold different rows (another file on another node's disk, a
    shuffle seeded by rank): the Trainer shards one order across them, so each must hold the same."""
    digests = gather(digest)
    if len(set(digests)) > 1:
        raise RanksDisagree(
            "the training processes hold different examples (sha256 per rank: "
            + ", ".join(d[:12] for d in digests)
            + "): give every node the same --data file"
        )
