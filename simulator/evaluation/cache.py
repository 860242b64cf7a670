"""A resumable request cache: one JSON line per model request, in the run's --out folder.

Why: an evaluation interrupted at item 400 of 600 must resume without sending any request twice. The
key is the sha256 of (model, messages, sampling parameters, item id), so changing any of them asks
again while an identical rerun reads everything back. Lines are appended and flushed as each answer
arrives; a torn last line (the process killed mid-write) is ignored on load.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def request_key(model: str, messages: list[dict[str, str]], params: dict[str, Any], item: str) -> str:
    blob = json.dumps(
        {"model": model, "messages": messages, "params": params, "item": item},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class RequestCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict) and "key" in record:
                    self.entries[record["key"]] = record
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a")

    def get(self, key: str) -> dict[str, Any] | None:
        return self.entries.get(key)

    def put(self, key: str, record: dict[str, Any]) -> None:
        record = {"key": key, **record}
        self.entries[key] = record
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __len__(self) -> int:
        return len(self.entries)
