"""``execsim train ...``: registered through the entry point, usage errors exit 2, synth writes its files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from simulator.cli import EXIT_FAILED, EXIT_USAGE, main
from training.paths import benchmarks_dir

# synth decontaminates against the benchmark folder and refuses to run without one
needs_benchmarks = pytest.mark.skipif(benchmarks_dir() is None, reason="no benchmark folder")


def test_train_is_registered_through_the_entry_point(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for stage in ("synth", "data", "sft", "rl", "export"):
        assert stage in out


STAGES = ("synth", "data", "sft", "rl", "evaluate", "promote", "export")


def _stage_parsers() -> dict[str, argparse.ArgumentParser]:
    """The parser of each ``execsim train`` stage, as the entry point registers them."""
    from simulator.cli import build_parser

    def choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices

    return dict(choices(choices(build_parser())["train"]))


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_has_help_and_every_flag_one_plain_sentence(capsys, stage):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", stage, "--help"])
    assert exit_info.value.code == 0 and f"usage: execsim train {stage}" in capsys.readouterr().out
    for action in _stage_parsers()[stage]._actions:
        assert action.help, f"train {stage} {action.option_strings} has no help"
        assert ". " not in action.help.replace("e.g. ", "") and "section" not in action.help, action.help
        assert "results.md" not in action.help.replace("docs/results.md#training", ""), action.help


def test_the_train_dispatcher_stays_small():
    """Each stage keeps its arguments beside its code; training/cli.py only gathers them."""
    import training.cli

    assert set(_stage_parsers()) == set(STAGES)
    assert len(Path(training.cli.__file__).read_text().splitlines()) < 150


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "synth", "--out", "{tmp}/s", "--levels", "0-9", "--no-decontaminate"], "--levels"),
        (
            ["train", "sft", "--model", "{tmp}", "--data", "{tmp}/x.jsonl", "--out", "{tmp}/o"],
            "not an HF model folder",
        ),
        (["train", "data", "--programs", "{tmp}/missing.jsonl", "--out", "{tmp}/d"], "cannot read"),
        (["train", "data", "--programs", "/dev/null", "--out", "{tmp}/d"], "/dev/null holds no programs"),
        (
            ["train", "data", "--programs", "{tmp}/p.jsonl", "--out", "{tmp}/d", "--fix-passing-only"],
            "give --fix-url too",
        ),
        (["train", "export", "--checkpoint", "{tmp}/none", "--out", "{tmp}/e"], "is not a folder"),
        (["train", "export", "--checkpoint", "{tmp}", "--out", "{tmp}/e"], "nor a model (no config.json)"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path, capsys, argv, message):
    assert main([a.format(tmp=tmp_path) for a in argv]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1]


@pytest.mark.parametrize(
    "stage, option, message",
    [
        ("sft", ["--lr", "-1"], "--lr must be > 0, not -1.0"),
        ("sft", ["--max-minutes", "-2"], "--max-minutes must be > 0"),
        ("sft", ["--max-steps", "0"], "--max-steps must be >= 1, not 0"),
        ("sft", ["--batch-size", "0"], "--batch-size must be >= 1"),
        ("rl", ["--num-generations", "0"], "--num-generations must be >= 1"),
        ("rl", ["--temperature", "nan"], "--temperature must be > 0, not nan"),
    ],
)
def test_numbers_a_run_cannot_use_are_refused_before_it_starts(tmp_path, capsys, stage, option, message):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    (tmp_path / "data.jsonl").write_text('{"prompt": "a", "completion": "b"}\n')
    argv = ["train", stage, "--model", str(tmp_path / "model"), "--data", str(tmp_path / "data.jsonl")]
    assert main([*argv, "--out", str(tmp_path / "out"), *option]) == EXIT_USAGE
    assert message in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "stage, lines, message",
    [
        ("sft", ['{"prompt": "a", "completion": "b"}', '{"prompt": 3'], "data.jsonl:2: not JSON"),
        ("sft", ['{"messages": [], "completion": "b"}'], "an example holds prompt, completion; this one: co"),
        ("rl", ["[1, 2]"], "data.jsonl:1: an example holds prompt; this one: list"),
        ("rl", [""], "data.jsonl holds no examples"),
    ],
)
def test_a_data_file_that_is_not_examples_is_named_with_its_line(tmp_path, capsys, stage, lines, message):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")  # an HF folder to the CLI; never loaded
    (tmp_path / "data.jsonl").write_text("\n".join(lines) + "\n")
    argv = ["train", stage, "--model", str(tmp_path / "model"), "--data", str(tmp_path / "data.jsonl")]
    assert main([*argv, "--out", str(tmp_path / "out")]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and not (tmp_path / "out" / "config.json").exists()


@needs_benchmarks
def test_evaluate_against_a_server_that_is_down_says_so_in_words(tmp_path, capsys):
    import socket

    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [
        "train",
        "evaluate",
        "--url",
        f"http://127.0.0.1:{port}/v1",
        "--name",
        "m",
        "--tasks",
        "cruxeval-o",
    ]
    assert main([*argv, "--limit", "1", "--out", str(tmp_path)]) == EXIT_FAILED
    err = capsys.readouterr().err
    assert f"execsim train evaluate: model server at http://127.0.0.1:{port}/v1 is not reachable" in err
    assert "execsim model serve" in err and "rerun the same command to resume" in err
    assert "Traceback" not in err


@needs_benchmarks
def test_synth_writes_programs_and_a_card(tmp_path, capsys):
    assert main(["train", "synth", "--out", str(tmp_path), "--programs", "12", "--seed", "1"]) == 0
    card = json.loads((tmp_path / "card.json").read_text())
    assert sum(card["generated_per_level"].values()) == 12
    lines = (tmp_path / "programs.jsonl").read_text().splitlines()
    assert len(lines) == sum(card["kept_per_level"].values()) > 0
    assert card["settings"]["decontaminated_against"] > 0
    assert json.loads((tmp_path / "synth-config.json").read_text())["programs"] == 12
    assert "| filter (reason) | rejected |" in capsys.readouterr().out


@needs_benchmarks
def test_synth_asks_served_models_by_url(tmp_path):
    """Generator and reference models over real HTTP (simulator.llm's fake server, a test double): the
    generator's program is kept and the reference model's pass counts land in the card's histogram."""
    from simulator.llm.testing import FakeModelServer

    program = "```python\ndef f(s):\n    return s.upper().lower().count('a')\n\nprint(f('banana'))\n```"

    def responder(body):
        prompt = body["messages"][-1]["content"]
        if "[PYTHON]" in prompt:  # the difficulty filter's output-prediction prompt: always wrong
            return "[ANSWER] assert f('banana') == 'nope' [/ANSWER]"
        return program

    server = FakeModelServer(responder)
    with server.serve() as url:
        argv = [
            "train",
            "synth",
            "--out",
            str(tmp_path),
            "--no-rules",
            "--model-programs",
            "1",
            "--levels",
            "1",
            "--generator-url",
            url,
            "--generator-model",
            "fake-model",
            "--reference-url",
            url,
            "--reference-model",
            "fake-model",
            "--samples",
            "4",
        ]
        code = main(argv)
    assert code == 0
    card = json.loads((tmp_path / "card.json").read_text())
    assert card["sources"]["model"].startswith("fake-model @ ")
    assert card["reference_model"] == f"fake-model @ {url}"
    kept = [json.loads(line) for line in (tmp_path / "programs.jsonl").read_text().splitlines()]
    # the constraint drawn for level 1 may name another method than count: then it is rejected, and counted
    assert len(kept) + card["rejected"].get("constraint", 0) == 1
    if kept:
        assert kept[0]["pass_count"] == 0 and kept[0]["samples"] == 4
        assert card["pass_rate_histogram"] == {"0": 1, "1": 0, "2": 0, "3": 0, "4": 0}
