"""What a smoke run needs beside the training commands: a randomly initialised model that stands in for
SmolLM2 (no weights to download or carry), and a check that an exported model folder serves.

Used by training/recipes/gpu-smoke.sh (the GPU code paths at toy size) and by the training tests.

    python -m training.smoke model OUT     # a 2-layer Llama (hidden 64) with a ~320-token tokenizer
    python -m training.smoke serve FOLDER  # vLLM when installed; else transformers generate on the device
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

TINY_CORPUS = (
    "def f(s):\n    return s.upper()\n[PYTHON] [/PYTHON] [THOUGHT] [/THOUGHT]\n"
    "[ANSWER] assert f('ab') == 'AB' [/ANSWER]\n"
    "Line 1: `for v in nums:`; now total = 3, acc = [1, 2]. <output>\n-1\n</output> <answer> <reasoning>\n"
    "Execute the program step by step and complete the assertion with the literal value it returns.\n"
)
PROMPT = "def f(s):\n    return s.upper()\n[ANSWER] assert f('ab') =="


def build_tiny_model(path: Path | str) -> Path:
    """A randomly initialised 2-layer Llama (hidden 64) with a byte-level BPE tokenizer of ~320 tokens,
    saved as an HF folder: stands in for SmolLM2 so training runs in seconds, offline."""
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
    # a chat template, so vLLM can serve it and `--format chat` runs can use it
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
    path = Path(path)
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


class AnswerLengthRewardDouble:
    """A test double of a reward that runs nothing: 1 for a completion of 1-20 characters, else 0. A
    smoke run uses it only where the sandbox cannot start, so GRPO's GPU path still runs there."""

    __name__ = "answer_length_double"

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float]:
        from simulator.rewards import completion_text

        return [1.0 if 0 < len(completion_text(c).strip()) <= 20 else 0.0 for c in completions]


def serve_check(folder: Path) -> dict[str, Any]:
    """Serve ``folder`` as the app would and ask it one question: through ExecSim's ModelServer (vLLM)
    when vLLM is installed; otherwise load it with transformers on the GPU (or CPU) and generate, and
    report the vLLM command line ExecSim would start on this machine."""
    from simulator.llm.server import ModelServer, install_commands, serving_dtype, vllm_installed

    server = ModelServer(folder, model_name="smoke", max_model_len=512)
    report: dict[str, Any] = {
        "vllm_installed": vllm_installed(),
        "vllm_command": server.command(),
        "serving_dtype": serving_dtype() or "the model's own",
        "install_command": [" ".join(c) for c in install_commands()],
    }
    started = time.monotonic()
    if report["vllm_installed"]:
        from simulator.llm.client import ChatClient

        async def ask() -> str:
            async with ChatClient(base_url=server.url, model="smoke") as client:
                result = await client.chat([{"role": "user", "content": PROMPT}], max_tokens=16)
                return result.choices[0].text

        with server:
            report["ready_after_s"] = round(server.ready_after_s or 0.0, 1)
            report["reply"] = asyncio.run(ask())
        report["served_by"] = "vllm"
    else:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = torch.bfloat16 if device == "cuda" else torch.float32
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).to(device)
        ids = tokenizer(PROMPT, return_tensors="pt").input_ids.to(device)
        out = model.generate(ids, max_new_tokens=16, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        report["reply"] = tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
        report["served_by"] = f"transformers generate on {device} ({dtype}); vLLM is not installed"
        if device == "cuda":
            report["device_name"] = torch.cuda.get_device_name()
    report["seconds"] = round(time.monotonic() - started, 1)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.smoke", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("model", help="write a randomly initialised tiny Llama").add_argument("out", type=Path)
    sub.add_parser("serve", help="serve an exported folder and ask it once").add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.what == "model":
        print(f"tiny model: {build_tiny_model(args.out)}")
    else:
        print(json.dumps(serve_check(args.folder), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
