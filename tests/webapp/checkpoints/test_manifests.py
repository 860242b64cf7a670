"""The manifest reader (webapp.checkpoints.manifests): good, partial and malformed manifests, the
discovery of checkpoint folders, finding the default checkpoint among them, and the grouping of
evaluation rows. Plain files in tmp_path; no database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.webapp.checkpoints.support import good_manifest, write_checkpoint
from webapp.checkpoints.manifests import (
    COMMITTED,
    CONFIGURED,
    DATA_DIR,
    Root,
    discover,
    duration,
    find_default,
    normalise_variant,
    read_checkpoint,
)


def test_a_good_manifest_reads_field_by_field(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path, "sft-small", good_manifest())
    c = read_checkpoint(folder, source=COMMITTED)
    assert c.error is None and c.warnings == []
    assert (c.name, c.source, c.kind) == ("sft-small", COMMITTED, "sft")
    assert c.base_model == "/data/models/smollm2-135m-instruct"
    assert (c.steps, c.train_seconds, c.train_time) == (150, 5400.5, "1 h 30 min")
    assert c.created == "2025-01-02T03:04:05Z" and c.weights == ["model.safetensors"]
    assert c.data_examples == 422 and c.data[0].sha256 == "cd" * 32
    assert [s.name for s in c.stages] == ["sft"]
    assert c.stages[0].notes == ["train loss 1.234", "completion loss 1.36 -> 1.1"]
    assert c.card is not None and (c.card.generated, c.card.kept) == (120, 62)
    assert c.card.rejected[0] == ("constant_output", 40)  # largest first
    # the commands the manifest recorded at export are kept, labelled as such
    assert [s.label for s in c.serve] == ["merged (as recorded at export)", "lora (as recorded at export)"]


def test_evaluation_rows_name_their_model_and_default_to_the_checkpoint(tmp_path: Path) -> None:
    c = read_checkpoint(write_checkpoint(tmp_path, "ck", good_manifest()))
    assert [r.model for r in c.evaluation] == ["base", "sft", "sft - base", "sft"]
    assert all(r.problems == [] for r in c.evaluation)
    base = c.evaluation[0]
    assert (base.value, base.low, base.high, base.n, base.method) == (0.02, 0.005, 0.05, 200, "wilson")
    assert (base.value_text, base.interval_text) == ("0.020", "[0.005, 0.050]")
    assert c.evaluation[2].is_difference and not base.is_difference
    groups = c.groups
    assert [(g.benchmark, g.metric) for g in groups] == [
        ("cruxeval-o", "pass@1 (nlex, greedy)"),
        ("mbpp", "best@4"),
    ]
    assert [r.model for r in groups[0].rows] == ["base", "sft", "sft - base"]


def test_the_variant_key_may_be_spelled_variant_and_rows_sort_base_sft_rl_then_differences(
    tmp_path: Path,
) -> None:
    rows = [
        {"benchmark": "b", "metric": "m", "variant": name, "value": 0.1, "n": 9, "low": 0.0, "high": 0.2}
        for name in ("rl - base", "RL", "sft", "base", "other-model", "rl2")
    ]
    stages = [{"stage": "sft", "steps": 3}, {"stage": "rl1", "steps": 2}]
    c = read_checkpoint(write_checkpoint(tmp_path, "ck", {"stages": stages, "evaluation": rows}))
    assert c.kind == "rl" and c.steps == 5  # summed from the stages when the total is absent
    assert [r.model for r in c.groups[0].rows] == ["base", "sft", "rl", "rl2", "other-model", "rl - base"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, "sft"),
        ("", "sft"),
        ("Base", "base"),
        ("sft-base", "sft - base"),
        ("RL  -  SFT", "rl - sft"),
        ("rl -base", "rl - base"),
        ("smollm2-135m-instruct", "smollm2-135m-instruct"),
        ("rl2-sft", "rl2 - sft"),
    ],
)
def test_variant_names_are_normalised(raw: object, expected: str) -> None:
    assert normalise_variant(raw, "sft") == expected


def test_a_partial_manifest_keeps_what_it_has_and_says_what_is_missing(tmp_path: Path) -> None:
    manifest = {
        "base_model": "tiny",
        "steps": "many",
        "stages": [{"stage": "sft", "seconds": "slow"}, "not a stage"],
        "data": "sft.jsonl",
        "evaluation": [
            {"benchmark": "cruxeval-o", "metric": "pass@1", "value": 0.3},  # no n, no interval
            {"benchmark": "cruxeval-o", "metric": "pass@1", "model": "base", "n": 10},  # no value
            {"benchmark": "cruxeval-o", "metric": "pass@1", "model": "rl", "value": 0.9, "n": 10,
             "low": 0.1, "high": 0.2},
            "not a row",
        ],
    }  # fmt: skip
    c = read_checkpoint(write_checkpoint(tmp_path, "half", manifest))
    assert c.error is None
    assert c.base_model == "tiny" and c.steps is None and c.train_seconds is None
    assert 'steps: expected an integer, got "many"' in c.warnings
    assert 'stages[0].seconds: expected a number, got "slow"' in c.warnings
    assert 'stages[1]: expected an object, got "not a stage"' in c.warnings
    assert 'data: expected a list, got "sft.jsonl"' in c.warnings
    assert c.card is None and c.data == [] and c.data_examples is None
    plain, missing_value, outside, not_a_row = c.evaluation
    assert plain.model == "sft" and plain.plotted and not plain.has_interval
    assert plain.problems == ["lacks n, low, high"] and plain.interval_text == ""
    assert not missing_value.plotted and missing_value.problems == ["lacks value, low, high"]
    assert outside.problems == ["value 0.9 lies outside its interval [0.1, 0.2]"]
    assert not_a_row.problems == ['not an object: "not a row"'] and not not_a_row.plotted


def test_a_nearly_empty_manifest_lists_the_missing_sections(tmp_path: Path) -> None:
    c = read_checkpoint(write_checkpoint(tmp_path, "empty", {}))
    assert c.error is None and c.evaluation == [] and c.stages == [] and c.kind == "checkpoint"
    assert c.warnings == [
        "the manifest has no base_model (base model unknown)",
        "the manifest has no stages (training stages unknown)",
        "the manifest has no evaluation (results unknown)",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"base_model": "x",\n  "steps": }',
            "manifest.json is not valid JSON: Expecting value (line 2, column 12)",
        ),
        ("[1, 2]", "manifest.json holds list, not a JSON object"),
        ("", "manifest.json is not valid JSON: Expecting value (line 1, column 1)"),
        (b"\xff\xfe{}", "cannot read manifest.json: 'utf-8' codec can't decode byte 0xff"),
    ],
)
def test_a_malformed_manifest_is_an_error_not_an_exception(
    tmp_path: Path, content: object, message: str
) -> None:
    c = read_checkpoint(write_checkpoint(tmp_path, "bad", content))
    assert c.error is not None and c.error.startswith(message)
    assert c.evaluation == [] and c.groups == []


def test_a_manifest_that_is_a_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "odd" / "manifest.json").mkdir(parents=True)
    c = read_checkpoint(tmp_path / "odd")
    assert c.error is not None and c.error.startswith("cannot read manifest.json:")


def test_serve_commands_follow_the_folders_next_to_the_manifest(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path, "lora-1", good_manifest(serve=None))
    (folder / "adapter").mkdir()
    (folder / "adapter" / "adapter_config.json").write_text("{}")
    (folder / "merged").mkdir()
    (folder / "merged" / "config.json").write_text("{}")
    commands = [s.command for s in read_checkpoint(folder).serve]
    assert commands == [
        f"execsim model serve --checkpoint {folder / 'merged'}",
        f"execsim model serve --lora lora-1={folder / 'adapter'}",
    ]


def test_discover_walks_each_root_in_order_and_skips_what_is_not_there(tmp_path: Path) -> None:
    committed, data, single = tmp_path / "repo", tmp_path / "data", tmp_path / "exported"
    write_checkpoint(committed, "b", good_manifest())
    write_checkpoint(committed, "a", "not json")
    (committed / "no-manifest").mkdir()
    write_checkpoint(data, "a", good_manifest())  # same name as a committed one
    single.mkdir()
    (single / "manifest.json").write_text(json.dumps(good_manifest()))  # a root that is a checkpoint
    roots = [
        Root(tmp_path / "missing", CONFIGURED),
        Root(committed, COMMITTED),
        Root(data, DATA_DIR),
        Root(single, CONFIGURED),
        Root(committed / "b", CONFIGURED),  # reached twice: counted once
    ]
    found = discover(roots)
    assert [(c.name, c.source) for c in found] == [
        ("a", COMMITTED),
        ("b", COMMITTED),
        ("a-2", DATA_DIR),
        ("exported", CONFIGURED),
    ]
    assert found[0].error is not None and found[1].error is None
    assert found[2].warnings[0] == "renamed from a: an earlier folder has that name"


def test_the_default_is_the_listed_checkpoint_in_the_chosen_folder_else_the_one_of_its_name(
    tmp_path: Path,
) -> None:
    mine = write_checkpoint(tmp_path / "repo", "mine", good_manifest())
    write_checkpoint(tmp_path / "data", "mine", good_manifest())  # listed as mine-2
    write_checkpoint(tmp_path / "data", "other", good_manifest())
    found = discover([Root(tmp_path / "repo", COMMITTED), Root(tmp_path / "data", DATA_DIR)])
    assert [c.name for c in found] == ["mine", "mine-2", "other"]

    def default(folder: Path | None, name: str) -> str | None:
        checkpoint = find_default(found, folder, name)
        return checkpoint.name if checkpoint else None

    # by folder, compared resolved: a link to it or a path with ".." is the same folder
    assert default(mine, "mine") == "mine"
    assert default(tmp_path / "data" / "mine", "mine") == "mine-2"
    (tmp_path / "link").symlink_to(tmp_path / "data")
    assert default(tmp_path / "link" / "mine", "mine") == "mine-2"
    assert default(tmp_path / "repo" / ".." / "data" / "other", "other") == "other"
    # a folder not listed: the checkpoint listed under its name, else none
    assert default(tmp_path / "elsewhere" / "other", "other") == "other"
    assert default(tmp_path / "elsewhere" / "gone", "gone") is None
    # the plain base model: no checkpoint is the default, whatever its name
    assert default(None, "mine") is None
    assert find_default([], mine, "mine") is None


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, ""), (4.25, "4.25 s"), (47, "47 s"), (725, "12 min 5 s"), (6720, "1 h 52 min")],
)
def test_durations(seconds: float | None, text: str) -> None:
    assert duration(seconds) == text
