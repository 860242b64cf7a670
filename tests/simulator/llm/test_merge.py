"""The peft-free LoRA merge: equal to peft's ``merge_and_unload``, refuses what it cannot merge, and
merges again only when the base or the adapter changed.

The base is a tiny randomly initialised Llama (hidden 64, 2 layers) saved by transformers; adapters
are written by peft where it is installed (the comparison test) and by hand otherwise, in the file
format peft writes (``adapter_config.json`` + ``adapter_model.safetensors``).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from safetensors.torch import load_file, save_file  # noqa: E402

from simulator.llm import model_folder  # noqa: E402
from simulator.llm.merge import MergeError, merge_lora, read_adapter_config  # noqa: E402

LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def tiny_llama(folder: Path, dtype: Any = None) -> Path:
    """A 2-layer Llama with random weights, saved as an HF folder (plus a tokenizer file to copy)."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=96,
        max_position_embeddings=64,
        tie_word_embeddings=True,
    )
    model = transformers.LlamaForCausalLM(config)
    if dtype is not None:
        model = model.to(dtype)
    model.save_pretrained(folder)
    (folder / "tokenizer_config.json").write_text('{"model_max_length": 64}\n')
    return folder


def adapter_config(**overrides: Any) -> dict[str, Any]:
    """What peft 0.21 writes for a plain LoRA (the keys that matter, and a few that do not)."""
    return {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": ".data/models/smollm2-135m-instruct",
        "r": 4,
        "lora_alpha": 8,
        "lora_dropout": 0.05,
        "target_modules": LINEAR,
        "fan_in_fan_out": False,
        "use_rslora": False,
        "use_dora": False,
        "bias": "none",
        "modules_to_save": None,
        "rank_pattern": {},
        "alpha_pattern": {},
        "init_lora_weights": True,
        "inference_mode": True,
        "peft_version": "0.21.2",
        **overrides,
    }


def write_adapter(
    folder: Path,
    base: Path,
    *,
    seed: int = 1,
    modules: list[str] | None = None,
    config: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """A LoRA adapter for ``base`` by hand: random A and B (fp32) for every linear layer."""
    config = config or adapter_config()
    r = config["r"]
    weights = load_file(str(base / "model.safetensors"))
    generator = torch.Generator().manual_seed(seed)
    tensors = {}
    for key, weight in weights.items():
        module = key.removesuffix(".weight")
        if modules is not None and module not in modules:
            continue
        if modules is None and module.rsplit(".", 1)[-1] not in LINEAR:
            continue
        out_features, in_features = weight.shape
        prefix = f"base_model.model.{module}"
        tensors[f"{prefix}.lora_A.weight"] = torch.randn(r, in_features, generator=generator) * 0.1
        tensors[f"{prefix}.lora_B.weight"] = torch.randn(out_features, r, generator=generator) * 0.1
    tensors.update(extra or {})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adapter_config.json").write_text(json.dumps(config))
    save_file(tensors, str(folder / "adapter_model.safetensors"), metadata={"format": "pt"})
    return folder


def digests(folder: Path) -> dict[str, str]:
    files = sorted(p for p in folder.iterdir() if p.is_file())
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return tiny_llama(tmp_path / "base")


def test_merge_equals_peft_merge_and_unload(tmp_path: Path, base: Path) -> None:
    peft = pytest.importorskip("peft")
    model = transformers.AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    lora = peft.LoraConfig(r=8, lora_alpha=16, target_modules=LINEAR, init_lora_weights=False)
    torch.manual_seed(1)
    peft_model = peft.get_peft_model(model, lora)  # random A and B: B is not zero
    peft_model.save_pretrained(tmp_path / "adapter")
    ids = torch.tensor([[1, 5, 9, 20, 33, 7]])
    with torch.no_grad():
        adapter_logits = peft_model(ids).logits
    expected = {k: v.clone() for k, v in peft_model.merge_and_unload().state_dict().items()}

    merged = merge_lora(base, tmp_path / "adapter", tmp_path / "merged")

    assert merged.created and merged.modules == 2 * len(LINEAR)
    ours = load_file(str(tmp_path / "merged" / "model.safetensors"))
    assert set(ours) == {k for k in expected if k != "lm_head.weight"}  # tied to the embeddings
    worst = max((ours[k] - expected[k]).abs().max().item() for k in ours)
    assert worst < 1e-5, worst
    changed = [k for k in ours if not torch.equal(ours[k], load_file(str(base / "model.safetensors"))[k])]
    assert len(changed) == 2 * len(LINEAR)
    reloaded = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "merged", dtype=torch.float32)
    with torch.no_grad():
        assert (reloaded(ids).logits - adapter_logits).abs().max().item() < 1e-4


def test_merge_adds_scaled_b_times_a_keeps_the_dtype_and_leaves_the_base_alone(tmp_path: Path) -> None:
    base = tiny_llama(tmp_path / "base", dtype=torch.bfloat16)
    before = digests(base)
    adapter = write_adapter(tmp_path / "adapter", base)

    merged = merge_lora(base, adapter, tmp_path / "merged")

    assert digests(base) == before
    out = tmp_path / "merged"
    assert model_folder.verify(out) and merged.sha256 == model_folder.weights_sha256(out)
    for name in ("config.json", "generation_config.json", "tokenizer_config.json"):
        assert (out / name).read_bytes() == (base / name).read_bytes()
    record = json.loads((out / "merge.json").read_text())
    assert record["scale"] == 2.0 and record["modules"] == 14
    adapter_sha = digests(adapter)["adapter_model.safetensors"]
    assert record["sources"]["adapter/adapter_model.safetensors"] == adapter_sha
    weights, ours = load_file(str(base / "model.safetensors")), load_file(str(out / "model.safetensors"))
    lora = load_file(str(adapter / "adapter_model.safetensors"))
    key = "model.layers.1.mlp.down_proj.weight"
    a = lora["base_model.model.model.layers.1.mlp.down_proj.lora_A.weight"]
    b = lora["base_model.model.model.layers.1.mlp.down_proj.lora_B.weight"]
    assert ours[key].dtype == torch.bfloat16
    assert torch.equal(ours[key], (weights[key].float() + 2.0 * (b @ a)).to(torch.bfloat16))
    assert torch.equal(ours["model.norm.weight"], weights["model.norm.weight"])


def test_rslora_scales_by_alpha_over_the_square_root_of_r(tmp_path: Path, base: Path) -> None:
    rslora = adapter_config(r=4, lora_alpha=8, use_rslora=True)
    adapter = write_adapter(tmp_path / "adapter", base, config=rslora)

    assert read_adapter_config(adapter).scale == 8 / math.sqrt(4)
    merge_lora(base, adapter, tmp_path / "merged")
    assert json.loads((tmp_path / "merged" / "merge.json").read_text())["scale"] == 4.0


def test_a_second_merge_reuses_the_folder_and_a_changed_adapter_or_base_merges_again(
    tmp_path: Path, base: Path
) -> None:
    adapter = write_adapter(tmp_path / "adapter", base, seed=1)
    out = tmp_path / "merged"
    first = merge_lora(base, adapter, out)
    stamp = (out / "model.safetensors").stat().st_mtime_ns

    second = merge_lora(base, adapter, out)

    assert first.created and not second.created and second.sha256 == first.sha256
    assert (out / "model.safetensors").stat().st_mtime_ns == stamp

    write_adapter(adapter, base, seed=2)  # the adapter was retrained
    third = merge_lora(base, adapter, out)
    assert third.created and third.sha256 != first.sha256

    (base / "tokenizer_config.json").write_text('{"model_max_length": 32}\n')  # the base changed
    fourth = merge_lora(base, adapter, out)
    assert fourth.created and (out / "tokenizer_config.json").read_text() == '{"model_max_length": 32}\n'

    (out / "model.safetensors").write_bytes(b"corrupted")  # the merged folder no longer verifies
    assert merge_lora(base, adapter, out).created and model_folder.verify(out)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_an_adapted_layer_the_base_does_not_have_is_refused(tmp_path: Path, base: Path) -> None:
    extra = {
        "base_model.model.model.layers.7.self_attn.q_proj.lora_A.weight": torch.zeros(4, 64),
        "base_model.model.model.layers.7.self_attn.q_proj.lora_B.weight": torch.zeros(64, 4),
    }
    adapter = write_adapter(tmp_path / "adapter", base, extra=extra)

    message = r"1 adapted layer\(s\) match no weight .*layers\.7\.self_attn\.q_proj"
    with pytest.raises(MergeError, match=message):
        merge_lora(base, adapter, tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_a_shape_that_does_not_fit_is_refused(tmp_path: Path, base: Path) -> None:
    extra = {  # trained on a wider model: in-features 128 where the base's q_proj has 64
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": torch.zeros(4, 128),
        "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight": torch.zeros(64, 4),
    }
    adapter = write_adapter(tmp_path / "adapter", base, extra=extra)

    message = r"q_proj: the adapter's B @ A is 64x128 but the base weight .* is 64x64"
    with pytest.raises(MergeError, match=message):
        merge_lora(base, adapter, tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_a_rank_other_than_r_and_a_lone_matrix_are_refused(tmp_path: Path, base: Path) -> None:
    wrong_rank = {"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": torch.zeros(2, 64)}
    adapter = write_adapter(tmp_path / "a1", base, extra=wrong_rank)
    with pytest.raises(MergeError, match=r"expected \[r, in\] and \[out, r\] with r=4"):
        merge_lora(base, adapter, tmp_path / "merged")

    adapter = write_adapter(tmp_path / "a2", base, modules=[])
    lone = {"base_model.model.model.layers.0.mlp.up_proj.lora_A.weight": torch.zeros(4, 64)}
    save_file(lone, str(adapter / "adapter_model.safetensors"))
    with pytest.raises(MergeError, match="up_proj has no lora_B matrix"):
        merge_lora(base, adapter, tmp_path / "merged")


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ({"use_dora": True}, "use_dora=True"),
        ({"fan_in_fan_out": True}, "fan_in_fan_out=True"),
        ({"bias": "lora_only"}, "bias='lora_only'"),
        ({"modules_to_save": ["lm_head"]}, "modules_to_save=['lm_head']"),
        ({"rank_pattern": {"q_proj": 8}}, "rank_pattern="),
        ({"init_lora_weights": "pissa"}, "init_lora_weights='pissa' (it changes the base weights)"),
        ({"a_future_option": 3}, "a_future_option=3"),
    ],
)
def test_unsupported_options_are_refused_by_name(
    tmp_path: Path, base: Path, override: dict[str, Any], named: str
) -> None:
    adapter = write_adapter(tmp_path / "adapter", base, config=adapter_config(**override))

    with pytest.raises(MergeError, match="not supported by this merge: ") as info:
        merge_lora(base, adapter, tmp_path / "merged")
    assert named in str(info.value)
    assert not (tmp_path / "merged").exists()


def test_other_adapter_kinds_and_bad_configs_are_refused(tmp_path: Path, base: Path) -> None:
    adapter = write_adapter(tmp_path / "adapter", base, config=adapter_config(peft_type="IA3"))
    with pytest.raises(MergeError, match="peft_type='IA3'; only LORA"):
        merge_lora(base, adapter, tmp_path / "merged")

    embedding = {"base_model.model.model.embed_tokens.lora_embedding_A": torch.zeros(4, 96)}
    adapter = write_adapter(tmp_path / "adapter", base, extra=embedding)
    with pytest.raises(MergeError, match="embed_tokens.lora_embedding_A is not a LoRA A or B matrix"):
        merge_lora(base, adapter, tmp_path / "merged")

    adapter = write_adapter(tmp_path / "adapter", base, config=adapter_config(target_modules=["q_proj"]))
    with pytest.raises(MergeError, match=r"is adapted but target_modules=\(.q_proj.,\) does not name it"):
        merge_lora(base, adapter, tmp_path / "merged")

    (adapter / "adapter_config.json").write_text(json.dumps(adapter_config(r=0)))
    with pytest.raises(MergeError, match="r=0 is not a positive integer"):
        merge_lora(base, adapter, tmp_path / "merged")


def test_missing_files_are_named(tmp_path: Path, base: Path) -> None:
    adapter = write_adapter(tmp_path / "adapter", base)
    (adapter / "adapter_model.safetensors").unlink()
    with pytest.raises(MergeError, match=r"adapter_model\.safetensors: no such file"):
        merge_lora(base, adapter, tmp_path / "merged")

    with pytest.raises(MergeError, match=r"adapter_config\.json: no such file"):
        merge_lora(base, tmp_path / "nowhere", tmp_path / "merged")

    write_adapter(adapter, base)
    (base / "config.json").unlink()
    with pytest.raises(MergeError, match=r"not an HF model folder \(no config\.json\)"):
        merge_lora(base, adapter, tmp_path / "merged")
