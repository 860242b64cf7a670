"""``execsim train data``: synthesised programs -> SFT examples (one kind per request the pipeline sends:
simulate, repair, solve), RL rows (white-box) and code-generation rows, with a data card.

The simulate examples are narrated real traces (``training.data.examples``); the repair examples are
guided fix requests on mutants that really fail (``training.data.repair``); the solve examples answer
the solve request with a program that passes every test (``training.data.solve``,
``training.data.stdin_solve``). ``--solve-url`` and ``--fix-url`` answer solve and fix requests with a
served model's own programs instead. ``training.data.mix`` cuts the kinds to their shares and writes
the card.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from simulator.cli import EXIT_FAILED, UsageError
from simulator.nlex.narrator import STYLES as NARRATIONS
from training.command_line import Bar, log_config


def register(stages: argparse._SubParsersAction) -> None:
    """Add ``train data`` and its arguments."""
    data = stages.add_parser(
        "data", help="programs -> SFT (NLEX), RL (white-box) and code-generation examples"
    )
    add = data.add_argument
    add("--programs", type=Path, required=True, help="the programs.jsonl written by `execsim train synth`")
    add(
        "--out",
        type=Path,
        required=True,
        help="output folder (sft.jsonl, rl.jsonl, codegen.jsonl, data card)",
    )
    add(
        "--styles",
        default="call,stdin",
        help="comma-separated prompt styles: call (the app's simulate request), stdin (programs that read "
        "standard input), cruxeval (the CRUXEval-O evaluation's prompt)",
    )
    add(
        "--narration",
        choices=(*NARRATIONS, "none"),
        default="full",
        help="how simulate answers narrate the run (docs/nlex.md), or none to answer at once "
        "as the app's quicker option asks",
    )
    add(
        "--max-completion-chars",
        type=int,
        help="leave out simulate examples with a longer answer (default 6000)",
    )
    add(
        "--annotations",
        type=Path,
        action="append",
        default=[],
        help="an annotator export JSONL to add (repeatable)",
    )
    add(
        "--seed",
        type=int,
        default=0,
        help="the seed of question selection, mutations and the mix (default %(default)s)",
    )
    add("--rl-max-prompt-chars", type=int, help="leave out longer RL prompts (useful on a CPU)")
    add(
        "--kinds",
        default="simulate,repair,solve",
        help="comma-separated example kinds to build, one per request the pipeline sends: "
        "simulate, repair, solve",
    )
    add(
        "--mix", help="shares of the kinds, e.g. simulate=0.6,repair=0.25,solve=0.15 (default: every example)"
    )
    add(
        "--repair-mutants",
        type=int,
        default=1,
        help="how many fix examples to keep per program (default %(default)s)",
    )
    add(
        "--repair-attempts",
        type=int,
        default=6,
        help="how many mutants to try per program (default %(default)s)",
    )
    add(
        "--benchmarks", type=Path, help="benchmark folder no mutant may match (default: ../shared/benchmarks)"
    )
    add("--solve-url", help="answer solve requests with the passing programs of the model at this URL")
    add(
        "--solve-model",
        help="the model name at --solve-url (default: EXECSIM_MODEL_NAME or the default model)",
    )
    add(
        "--solve-samples",
        type=int,
        default=4,
        help="how many replies to ask per problem with --solve-url (default %(default)s)",
    )
    add(
        "--fix-url",
        help="answer fix requests with the programs of the model at this URL that run on every test",
    )
    add("--fix-model", help="the model name at --fix-url (default: EXECSIM_MODEL_NAME or the default model)")
    add(
        "--fix-passing-only", action="store_true", help="with --fix-url, keep only fixes that pass every test"
    )
    add("--solve-limit", type=int, help="with --solve-url, ask at most this many problems (a seeded draw)")
    data.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Build every kind asked, cut them to the mix, write the files and the data card; a served model
    that fails ends the run (exit 1) before anything is written."""
    from simulator.llm import LLMError
    from training.data.examples import codegen_examples, rl_examples, write_jsonl
    from training.data.mix import OWN_FIX_SOURCE, OWN_SOLVE_SOURCE, MixError, card_markdown, data_card, mix

    styles, kinds, shares = _choices(args)
    records = _read(args.programs)
    index = _benchmark_index(args.benchmarks) if "repair" in kinds else {}
    log_config("data", vars(args), args.out)
    counts: dict[str, Any] = {"programs": len(records)}
    built: dict[str, list[dict[str, Any]]] = {}
    with Bar() as bar:
        if "simulate" in kinds:
            bar("simulate examples", 0, 1)
            built["simulate"] = _simulate(records, styles, args, counts)
            bar("simulate examples", 1, 1)
        if "repair" in kinds or "solve" in kinds:
            try:
                built.update(_repair_and_solve(records, kinds, styles, args, index, counts, bar))
            except LLMError as exc:  # --solve-url, --fix-url: the server is down or refuses the request
                print(f"execsim train data: {exc}", file=sys.stderr)
                return EXIT_FAILED
        bar("rl examples", 0, 1)
        at_once = args.narration == "none"
        rl = rl_examples(records, seed=args.seed, max_prompt_chars=args.rl_max_prompt_chars, at_once=at_once)
        bar("rl examples", 1, 1)
        codegen = codegen_examples(records)
    try:
        sft = mix(built, shares, seed=args.seed)
    except MixError as exc:
        raise UsageError(str(exc)) from None
    counts.update(sft=write_jsonl(args.out / "sft.jsonl", sft), rl=write_jsonl(args.out / "rl.jsonl", rl))
    counts["codegen"] = write_jsonl(args.out / "codegen.jsonl", codegen)
    sources = {"solve": OWN_SOLVE_SOURCE} if args.solve_url and "solve" in kinds else {}
    sources |= {"repair": OWN_FIX_SOURCE} if args.fix_url else {}
    card = data_card(built=built, written=sft, shares=shares, seed=args.seed, details=counts, sources=sources)
    (args.out / "data-card.json").write_text(json.dumps(card, indent=2) + "\n")
    (args.out / "data-card.md").write_text(card_markdown(card))
    print(json.dumps(card, indent=2))
    return 0


def _choices(args: argparse.Namespace) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, float] | None]:
    """The styles, kinds and shares asked for, or a usage error for arguments that do not go together."""
    from training.data.examples import STYLES
    from training.data.mix import MixError, parse_kinds, parse_mix

    styles = tuple(s.strip() for s in args.styles.split(",") if s.strip())
    if not styles or any(s not in STYLES for s in styles):
        raise UsageError(f"--styles takes {', '.join(STYLES)}")
    try:
        kinds = parse_kinds(args.kinds)
        shares = parse_mix(args.mix, kinds) if args.mix else None
    except MixError as exc:
        raise UsageError(str(exc)) from None
    if args.repair_mutants < 1 or args.repair_attempts < 1:
        raise UsageError("--repair-mutants and --repair-attempts must be >= 1")
    if args.solve_samples < 1 or (args.solve_limit is not None and args.solve_limit < 1):
        raise UsageError("--solve-samples and --solve-limit must be >= 1")
    if args.fix_passing_only and not args.fix_url:
        raise UsageError("--fix-passing-only filters the own fixes of --fix-url: give --fix-url too")
    if args.fix_url and "repair" not in kinds:
        raise UsageError("--fix-url answers fix examples: it needs --kinds repair")
    return styles, kinds, shares


def _read(path: Path) -> list[Any]:
    """The synthesised programs at ``path``; a benchmark file, an unreadable or an empty one is refused."""
    from training.data.examples import BenchmarkDataRefused, refuse_benchmarks
    from training.synth.pipeline import read

    try:
        refuse_benchmarks(path)
        records = read(path)
    except BenchmarkDataRefused as exc:
        raise UsageError(str(exc)) from None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if not records:
        raise UsageError(f"{path} holds no programs (an `execsim train synth --out` programs.jsonl)")
    return records


def _simulate(
    records: list[Any], styles: tuple[str, ...], args: argparse.Namespace, counts: dict[str, Any]
) -> list[dict[str, Any]]:
    """The simulate examples: each program's real runs narrated (or answered at once), then the
    verified annotator exports."""
    from functools import partial

    from simulator.nlex.narrator import narrate
    from training.data.examples import BenchmarkDataRefused, annotation_examples, answer_at_once, sft_examples

    limit = {"max_completion_chars": args.max_completion_chars} if args.max_completion_chars else {}
    narration = answer_at_once if args.narration == "none" else partial(narrate, style=args.narration)
    examples = sft_examples(records, styles=styles, narrate=narration, **limit)
    counts["sft_synth"] = len(examples)
    counts["narration"] = args.narration
    for path in args.annotations:
        try:
            extra, outcome = annotation_examples(path)
        except BenchmarkDataRefused as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc}") from None
        examples += extra
        counts[f"annotations:{path}"] = outcome
    return examples


def _benchmark_index(folder: Path | None) -> dict[str, str]:
    """Fingerprints of the benchmark programs no mutant may match (empty when there is no folder)."""
    from training.paths import benchmarks_dir
    from training.synth.normalize import benchmark_fingerprints

    bench = folder or benchmarks_dir()
    if folder is not None and not Path(folder).is_dir():
        raise UsageError(f"--benchmarks {folder} is not a folder")
    return benchmark_fingerprints(Path(bench)) if bench else {}


def _repair_and_solve(
    records: list[Any],
    kinds: tuple[str, ...],
    styles: tuple[str, ...],
    args: argparse.Namespace,
    index: dict[str, str],
    counts: dict[str, Any],
    bar: Bar,
) -> dict[str, list[dict[str, Any]]]:
    """The repair and solve kinds, from the programs that pass every test in the sandbox; solve in the
    styles asked: call (the problem made from each program), stdin (the stated tasks as stdin problems)."""
    from training.data.problems import passing
    from training.data.repair import own_fix_examples, repair_examples
    from training.data.solve import own_solve_examples, solve_examples
    from training.data.stdin_solve import stdin_solve_examples
    from training.synth.sampler import ServedModel

    bar("sandbox-checked programs", 0, 1)
    checked, rejected = passing(records)
    counts["checked_programs"] = {"passing": len(checked), **rejected}
    bar("sandbox-checked programs", 1, 1)
    built = {}
    if "repair" in kinds:
        bar("repair examples", 0, 1)
        built["repair"], counts["repair"] = repair_examples(
            checked,
            seed=args.seed,
            mutants_per_program=args.repair_mutants,
            attempts=args.repair_attempts,
            benchmark_index=index,
        )
        counts["repair"]["decontaminated_against"] = len(index)
        if args.fix_url:
            built["repair"], counts["repair"]["own_fixes"] = own_fix_examples(
                built["repair"],
                checked,
                ServedModel(args.fix_url, args.fix_model),
                passing_only=args.fix_passing_only,
                progress=bar,
            )
        bar("repair examples", 1, 1)
    if "solve" in kinds and "call" in styles and args.solve_url:
        import random

        asked = checked
        if args.solve_limit is not None and args.solve_limit < len(checked):
            asked = random.Random(args.seed).sample(checked, args.solve_limit)
        built["solve"], counts["solve"] = own_solve_examples(
            asked, ServedModel(args.solve_url, args.solve_model), samples=args.solve_samples, progress=bar
        )
    elif "solve" in kinds and "call" in styles:
        built["solve"] = solve_examples(checked)
    if "solve" in kinds and "stdin" in styles:
        stdin, counts["solve_stdin"] = stdin_solve_examples(checked)
        built["solve"] = [*built.get("solve", []), *stdin]
    return built
