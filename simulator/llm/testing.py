"""A test double of an OpenAI-compatible model server, for tests only (the product never selects it).

``FakeModelServer`` answers ``GET /v1/models`` and streamed ``POST /v1/chat/completions`` the way vLLM
does: SSE chunks whose choices interleave (each with its ``index``), a final usage chunk, ``[DONE]``;
stop strings cut the reply (excluded, as vLLM does), ``max_tokens`` truncates it with
``finish_reason: "length"`` and ``repetition_detection`` ends it where its last tokens repeat, with
``finish_reason: "repetition"`` (a "token" here is one chunk of ``chunk_chars`` characters).

Replies come from a *responder*: a function of the request body returning one text per sample (a
single string is repeated ``n`` times). It serves two ways:

- ``transport()``: an ``httpx.MockTransport`` for in-process tests of ``ChatClient``;
- ``serve()``: a real HTTP server on 127.0.0.1 in a thread, for tests that start the CLI (point
  ``EXECSIM_MODEL_URL`` at the URL it yields) or need real socket timeouts (``delay_s``).

Other teams' tests (web app tasks, evaluation) can use it the same way, and so does ``bench/web.py``:
the services it starts run the real pipeline against ``serve()``'s URL.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

Responder = Callable[[dict[str, Any]], "Sequence[str] | str"]


class ScriptedFailure(Exception):
    """Raised by a responder to make the fake server answer with an HTTP error."""

    def __init__(self, status: int, message: str = "scripted failure") -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class FakeModelServer:
    """Scripted OpenAI-compatible server (a test double). ``requests`` records every chat body;
    ``failures`` lists HTTP statuses to answer the next chat requests with, one per request."""

    def __init__(
        self,
        responder: Responder,
        *,
        model: str = "fake-model",
        max_model_len: int | None = None,
        chunk_chars: int = 4,
        failures: Sequence[int] = (),
        delay_s: float = 0.0,
        root: str | None = None,
    ) -> None:
        self.responder = responder
        self.model = model
        self.root = root or f"/fake/{model}"  # the folder it says it serves, as vLLM does
        self.max_model_len = max_model_len
        self.chunk_chars = chunk_chars
        self.failures = list(failures)
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    # -- the protocol, independent of how it is served -------------------------------------------

    def models_body(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "id": self.model,
            "object": "model",
            "owned_by": "test-double",
            "root": self.root,
        }
        if self.max_model_len is not None:
            entry["max_model_len"] = self.max_model_len
        return {"object": "list", "data": [entry]}

    def answer(self, body: dict[str, Any]) -> tuple[int, list[bytes], str]:
        """(HTTP status, body pieces, content type) for one chat request."""
        status, pieces = self.chat_events(body)
        return status, pieces, "text/event-stream" if status == 200 else "application/json"

    def chat_events(self, body: dict[str, Any]) -> tuple[int, list[bytes]]:
        """(HTTP status, body pieces) for one chat request; pieces of a 200 are SSE events."""
        with self._lock:
            self.requests.append(body)
            failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            return failure, [_json({"error": {"message": f"scripted failure {failure}", "code": failure}})]
        if body.get("model") != self.model:
            message = f"The model `{body.get('model')}` does not exist."
            return 404, [_json({"error": {"message": message, "type": "NotFoundError", "code": 404}})]
        n = int(body.get("n", 1))
        try:
            replies = self.responder(body)
        except ScriptedFailure as exc:
            return exc.status, [_json({"error": {"message": exc.message, "code": exc.status}})]
        texts = [replies] * n if isinstance(replies, str) else list(replies)
        if len(texts) != n:
            raise AssertionError(f"responder gave {len(texts)} replies for n={n}")
        pieces_by_choice, finish = [], []
        for text in texts:
            text, reason = _apply_stop(text, body.get("stop") or [])
            pieces = [text[i : i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)]
            limit = int(body.get("max_tokens") or 1 << 30)
            looped = _looped_at(pieces[:limit], body.get("repetition_detection"))
            if looped is not None:
                pieces, reason = pieces[:looped], "repetition"
            elif len(pieces) > limit:
                pieces, reason = pieces[:limit], "length"
            pieces_by_choice.append(pieces)
            finish.append(reason)
        events = []
        for step in range(max((len(p) for p in pieces_by_choice), default=0)):
            for index, pieces in enumerate(pieces_by_choice):
                if step < len(pieces):
                    events.append(
                        self._chunk(
                            [{"index": index, "delta": {"content": pieces[step]}, "finish_reason": None}]
                        )
                    )
        for index, reason in enumerate(finish):
            events.append(self._chunk([{"index": index, "delta": {}, "finish_reason": reason}]))
        completion = sum(len(p) for p in pieces_by_choice)
        prompt = sum(len(m.get("content", "")) for m in body.get("messages", [])) // 4
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        events.append(self._chunk([], usage=usage))
        events.append(b"data: [DONE]\n\n")
        return 200, events

    def _chunk(self, choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "model": self.model,
            "choices": choices,
        }
        if usage is not None:
            chunk["usage"] = usage
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    # -- in-process ------------------------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        def handle(request: httpx.Request) -> httpx.Response:
            if request.method == "GET" and request.url.path.endswith("/models"):
                return httpx.Response(200, json=self.models_body())
            if request.method == "POST" and request.url.path.endswith("/chat/completions"):
                status, pieces, kind = self.answer(json.loads(request.content))
                return httpx.Response(status, content=b"".join(pieces), headers={"content-type": kind})
            return httpx.Response(404, json={"detail": "Not Found"})

        return httpx.MockTransport(handle)

    # -- over a socket ---------------------------------------------------------------------------

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Run on 127.0.0.1 (a free port) in a thread; yields the base URL ending in ``/v1``."""
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, [_json(double.models_body())], "application/json")
                else:
                    self._send(404, [_json({"detail": "Not Found"})], "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, [_json({"detail": "Not Found"})], "application/json")
                    return
                self._send(*double.answer(body))

            def _send(self, status: int, pieces: list[bytes], kind: str) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for piece in pieces:
                        if double.delay_s:
                            time.sleep(double.delay_s)
                        self.wfile.write(piece)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-model-server", daemon=True
        )
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/v1"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


def _json(data: Any) -> bytes:
    return json.dumps(data).encode()


def _looped_at(pieces: Sequence[str], params: dict[str, int] | None) -> int | None:
    """The token count at which vLLM's repetition detection would end a reply: the first where the
    last L tokens (``min_pattern_size`` <= L <= ``max_pattern_size``) came ``min_count`` times in a
    row; None when it would not (or is not asked for)."""
    if not params or params.get("max_pattern_size", 0) <= 0:
        return None
    low, high, count = (
        max(params.get("min_pattern_size", 1), 1),
        params["max_pattern_size"],
        params["min_count"],
    )
    for end in range(1, len(pieces) + 1):
        for size in range(low, min(high, end // count) + 1):
            tail = pieces[end - size : end]
            if all(pieces[end - size * m - size : end - size * m] == tail for m in range(1, count)):
                return end
    return None


def _apply_stop(text: str, stops: Sequence[str]) -> tuple[str, str]:
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    return (text[:cut], "stop") if cut >= 0 else (text, "stop")


class PipelineScript:
    """A responder for whole pipeline runs, dispatching on the prompt kind (``prompts.kind_of``):

    - ``solve``: the replies for the k candidates, in order (a list of n texts, or one repeated);
    - ``simulate(code, what)``: the reply to one simulation; ``what`` is the call (``f(1)``) for call
      programs or the stdin text for stdin programs (to a request whose answer is prefilled, the
      part of that reply after the prefill: ``continuation``);
    - ``repair``: replies for successive repair turns (the last one repeats); default: no program.
      An entry is one text (every sample of the turn) or a list of n texts (guided repair samples
      several). To a request whose reply is prefilled (guided repair: the opening fence), a reply
      that begins with the prefill is answered with the rest of it; another is answered as it is.

    ``calls`` counts requests per kind.
    """

    def __init__(
        self,
        solve: Sequence[str] | str,
        simulate: Callable[[str, str], str],
        repair: Sequence[str | Sequence[str]] = ("No change.",),
    ) -> None:
        self.solve = solve
        self.simulate = simulate
        self.repair = list(repair)
        self.calls: dict[str, int] = {}

    def __call__(self, body: dict[str, Any]) -> Sequence[str] | str:
        from simulator.prompts import kind_of

        messages = body["messages"]
        kind = kind_of(messages) or "unknown"
        self.calls[kind] = self.calls.get(kind, 0) + 1
        n = int(body.get("n", 1))
        if kind == "solve":
            return self.solve
        if kind == "repair":
            turn = self.calls[kind] - 1
            replies = self.repair[min(turn, len(self.repair) - 1)]
            prefill = messages[-1]["content"] if messages[-1]["role"] == "assistant" else ""
            return [
                reply[len(prefill) :] if prefill and reply.startswith(prefill) else reply
                for reply in ([replies] * n if isinstance(replies, str) else replies)
            ]
        if kind.startswith("simulate"):
            prefill = messages[-1]["content"] if messages[-1]["role"] == "assistant" else ""
            question = messages[-2 if prefill else -1]["content"]
            code, what = parse_simulate_prompt(question)
            return [continuation(self.simulate(code, what), prefill) for _ in range(n)]
        raise AssertionError(f"the fake model got a prompt it does not know: {messages!r}")


def continuation(reply: str, prefill: str) -> str:
    """What a model that would have written the whole ``reply`` writes after ``prefill``: the text after
    the prefill's last line (``assert f(1) ==``, ``<output>``) in it, else the whole reply."""
    marker = prefill.rstrip("\n").rsplit("\n", 1)[-1]
    if not marker or marker not in reply:
        return reply
    rest = reply.split(marker, 1)[1]
    return rest[1:] if prefill.endswith("\n") and rest.startswith("\n") else rest


def parse_simulate_prompt(user: str) -> tuple[str, str]:
    """(code, call or stdin) from the last user message of a simulate prompt."""
    body = user.split("[PYTHON]\n", 1)[1].split("\n[/PYTHON]", 1)[0]
    call = re.search(r"\nassert (.*) == \?\?$", body)
    if call:
        return body[: call.start()] + "\n", call.group(1)
    stdin = user.split("<input>\n", 1)[1].rsplit("</input>", 1)[0]
    return body + "\n", stdin
