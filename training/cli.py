"""``execsim train synth|data|sft|rl|evaluate|promote|export``: each stage of training as a command.

Registered through the ``execsim.commands`` entry-point group (pyproject.toml), so ``simulator`` never
imports ``training``. This module only gathers the stages: each keeps its arguments and its handler
beside its code, in a module with a ``register(stages)`` function:

    synth     training/synth/command.py      programs with inputs and outputs, filtered in the sandbox
    data      training/data/command.py       SFT, RL and code-generation examples, with a data card
    sft       training/sft/command.py        supervised fine-tuning (TRL SFTTrainer)
    rl        training/rl/command.py         GRPO (TRL GRPOTrainer) with simulator.rewards
    evaluate  training/evaluate_command.py   the dev benchmarks, paired with a baseline
    promote   training/promote_command.py    the gate that replaces the committed checkpoint
    export    training/export/command.py     a servable merged folder with its manifest

What they share (the configuration log, the progress bar, the trainers' arguments) is in
``training/command_line.py``. Every command prints its full configuration (as JSON, to stderr) before it
starts and writes it next to its output. Recipes: training/recipes/.
"""

from __future__ import annotations

import argparse

from training import evaluate_command, promote_command
from training.data import command as data
from training.export import command as export
from training.rl import command as rl
from training.sft import command as sft
from training.synth import command as synth

STAGES = (synth, data, sft, rl, evaluate_command, promote_command, export)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``execsim train`` and one subcommand per stage (the ``execsim.commands`` entry point)."""
    train = subparsers.add_parser(
        "train", help="synthesise data, fine-tune (SFT, GRPO) and export checkpoints"
    )
    stages = train.add_subparsers(dest="stage", required=True, metavar="STAGE")
    for stage in STAGES:
        stage.register(stages)
