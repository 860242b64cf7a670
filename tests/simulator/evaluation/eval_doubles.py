"""Test doubles for the evaluation tests: a scripted model server behind the real ``ChatClient``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from simulator.llm.client import ChatClient
from simulator.llm.testing import FakeModelServer

Responder = Callable[[dict[str, Any]], "Sequence[str] | str"]


def table_responder(answers: dict[str, list[str]], default: str) -> Responder:
    """Answers a request whose last user message contains ``needle`` with that entry's texts (the
    first n); anything else with ``default``. (A solve request ends with the prefilled assistant turn.)"""

    def respond(body: dict[str, Any]) -> Sequence[str] | str:
        question = last_user(body["messages"])
        n = int(body.get("n", 1))
        for needle, texts in answers.items():
            if needle in question:
                return texts[:n]
        return default

    return respond


def last_user(messages: list[dict[str, str]]) -> str:
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def fake_client(server: FakeModelServer, concurrency: int = 8) -> ChatClient:
    """The project's real client, talking to the fake server in process (no socket, no retries)."""
    return ChatClient(
        "http://fake-model/v1",
        server.model,
        "",
        concurrency=concurrency,
        retries=0,
        transport=server.transport(),
    )


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
