"""Fixtures and test doubles for training tests: an in-process executor standing in for the sandbox,
and a scripted
sampler standing in for a served model. Only for unit tests of training's own logic; tests that need
real execution use ``simulator.execution.run_many`` and skip when it is absent."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

import pytest

from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def in_process_executor_double(programs: list[Program]) -> list[ExecutionResult]:
    """Runs call-shaped programs in this process (NOT sandboxed: trusted test programs only)."""
    results = []
    for program in programs:
        namespace: dict = {}
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, program.timeout_s)
        try:
            exec(compile(program.code, "<program>", "exec"), namespace)
            value = eval(compile(program.call, "<call>", "eval"), namespace)
            results.append(ExecutionResult(status="ok", value=repr(value), value_type=type(value).__name__))
        except _Timeout:
            results.append(ExecutionResult(status="timeout"))
        except SyntaxError:
            results.append(ExecutionResult(status="syntax_error"))
        except Exception as exc:  # noqa: BLE001
            results.append(ExecutionResult(status="runtime_error", message=repr(exc)))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return results


@dataclass
class ScriptedSamplerDouble:
    """Answers each prompt with ``reply(prompt, i)`` for i in range(n); records the prompts it got."""

    reply: object
    name: str = "scripted-sampler-double"
    prompts: list[str] = field(default_factory=list)

    def sample(self, prompts: list[str], *, n: int, temperature: float, max_tokens: int) -> list[list[str]]:
        self.prompts += prompts
        return [[self.reply(p, i) for i in range(n)] for p in prompts]


@pytest.fixture
def executor_double():
    return in_process_executor_double


@pytest.fixture
def sampler_double():
    """The ScriptedSamplerDouble class (construct it with a ``reply(prompt, i)`` function)."""
    return ScriptedSamplerDouble


TINY_CORPUS = (
    "def f(s):\n    return s.upper()\n[PYTHON] [/PYTHON] [THOUGHT] [/THOUGHT]\n"
    "[ANSWER] assert f('ab') == 'AB' [/ANSWER]\n"
    "Line 1: `for v in nums:`; now total = 3, acc = [1, 2]. <output>\n-1\n</output> <answer> <reasoning>\n"
    "Execute the program step by step and complete the assertion with the literal value it returns.\n"
)


def build_tiny_model(path):
    """A randomly initialised 2-layer Llama (hidden 64) with a byte-level BPE tokenizer of ~320 tokens,
    saved as an HF folder: stands in for SmolLM2 so training tests run in seconds, offline."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<|endoftext|>", "<|pad|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator([TINY_CORPUS] * 20, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|endoftext|>", pad_token="<|pad|>")
    # a chat template, so vLLM can serve it (the chain test evaluates the exported folder)
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=1,  # head size 64: one vLLM's CPU attention supports
        num_key_value_heads=1,
        max_position_embeddings=4096,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    pytest.importorskip("trl", reason="the train extra is not installed (pip install -e '.[train]')")
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))
