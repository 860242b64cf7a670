"""GRPO on the app's default simulate request (`train data --narration none`): the prompt is already
the chat, prefilled answer included, and reaches the model and the reward as such (tiny random model,
real TRL)."""

from __future__ import annotations

from simulator.prompts import simulate
from training.data.examples import write_jsonl


class PromptsSeenDouble:
    """A test double of a reward: records the prompts and prefills it is given, rewards length."""

    __name__ = "prompts_seen"

    def __init__(self) -> None:
        self.prompts: list = []
        self.prefills: list = []

    def __call__(self, completions, prompts, prefill, **kwargs):
        self.prompts += prompts
        self.prefills += prefill
        return [float(len(str(c))) for c in completions]


def test_grpo_keeps_a_chat_prompt_with_its_prefilled_answer(tiny_model_dir, tmp_path):
    from training.rl.train import RLRunConfig, run_grpo

    rows = []
    for i in range(4):
        call, prefill = f"f({i})", simulate.answer_prefill(f"f({i})")
        messages = simulate.call_messages("def f(x):\n    return x * 3", call)
        rows.append({"prompt": [*messages, {"role": "assistant", "content": prefill}], "prefill": prefill})
    data = tmp_path / "rl.jsonl"
    write_jsonl(data, rows)
    reward = PromptsSeenDouble()

    summary = run_grpo(
        RLRunConfig(
            model=str(tiny_model_dir),
            data=str(data),
            out=str(tmp_path / "rl"),
            format="chat",  # wraps plain-text prompts only
            max_steps=1,
            learning_rate=1e-3,
            batch_size=2,
            grad_accum=1,
            num_generations=2,
            max_completion_length=4,
            threads=1,
        ),
        reward_funcs=[reward],
    )

    assert summary["steps"] == 1
    assert reward.prompts and all(p in [row["prompt"] for row in rows] for p in reward.prompts)
    pairs = zip(reward.prompts, reward.prefills, strict=True)
    assert all(p[-1] == {"role": "assistant", "content": f} for p, f in pairs)
