"""``execsim train synth``: synthesise programs with inputs and outputs (ExecVerify's constraints), filter
them in the sandbox, and write ``programs.jsonl`` with its card (``training.synth.pipeline``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simulator.cli import EXIT_FAILED, UsageError
from training.command_line import Bar, log_config


def register(stages: argparse._SubParsersAction) -> None:
    """Add ``train synth`` and its arguments."""
    synth = stages.add_parser(
        "synth", help="synthesise programs with inputs and outputs (ExecVerify constraints)"
    )
    add = synth.add_argument
    add("--out", type=Path, required=True, help="output folder (programs.jsonl, card.json, card.md)")
    add("--programs", type=int, default=50, help="how many programs the rules generate before filtering")
    add("--levels", default="1-6", help="difficulty levels to generate, e.g. 1-6 or 3,4")
    add("--seed", type=int, default=0, help="the seed of every draw (default %(default)s)")
    add(
        "--timeout",
        type=float,
        default=0.5,
        help="seconds a program may run on one input (default %(default)s)",
    )
    add("--value-mutations", type=int, default=2, help="inputs derived per program by changing a value")
    add("--type-mutations", type=int, default=1, help="inputs derived per program by changing a type")
    add("--no-rules", action="store_true", help="skip the model-free generator")
    add("--tasks", action="store_true", help="add the stated tasks: small problems with a real statement")
    add("--model-programs", type=int, default=0, help="how many programs to ask of a served generator model")
    add("--generator-url", help="OpenAI-compatible URL of the generator model (default: EXECSIM_MODEL_URL)")
    add("--generator-model", help="the generator's model name at that URL")
    add("--reference-url", help="URL of the model that judges difficulty (omit: no difficulty filter)")
    add("--reference-model", help="the reference model's name at that URL")
    add("--samples", type=int, default=10, help="how many times the reference model tries each program")
    add(
        "--max-pass",
        type=int,
        default=3,
        help="keep programs the reference model gets right at most this often",
    )
    add(
        "--benchmarks",
        type=Path,
        help="benchmark folder to decontaminate against (default: ../shared/benchmarks)",
    )
    add("--no-decontaminate", action="store_true", help="skip decontamination (the card says so)")
    synth.set_defaults(handler=run)


def levels(spec: str) -> tuple[int, ...]:
    """``1-6`` or ``3,4`` as the levels it names, each within 1..6."""
    try:
        if "-" in spec:
            low, high = (int(x) for x in spec.split("-", 1))
            chosen = tuple(range(low, high + 1))
        else:
            chosen = tuple(int(x) for x in spec.split(","))
    except ValueError:
        raise UsageError(f"--levels must look like 1-6 or 3,4, not {spec!r}") from None
    if not chosen or any(not 1 <= x <= 6 for x in chosen):
        raise UsageError("--levels must be within 1..6")
    return chosen


def run(args: argparse.Namespace) -> int:
    """Synthesise, filter and write the programs; a served model that fails ends the run (exit 1)."""
    from simulator.llm import LLMError
    from training.paths import benchmarks_dir
    from training.synth.normalize import benchmark_fingerprints
    from training.synth.pipeline import SynthConfig, synthesize, write
    from training.synth.sampler import ServedModel

    if args.programs < 0 or args.model_programs < 0:
        raise UsageError("--programs and --model-programs must be >= 0")
    config = SynthConfig(
        programs=0 if args.no_rules else args.programs,
        levels=levels(args.levels),
        seed=args.seed,
        value_mutations=args.value_mutations,
        type_mutations=args.type_mutations,
        timeout_s=args.timeout,
        rules=not args.no_rules,
        tasks=args.tasks,
        model_programs=args.model_programs,
        difficulty_samples=args.samples,
        max_pass=args.max_pass,
    )
    index = None
    if not args.no_decontaminate:
        bench = args.benchmarks or benchmarks_dir()
        if bench is None or not Path(bench).is_dir():
            raise UsageError(
                "no benchmark folder to decontaminate against: pass --benchmarks DIR or --no-decontaminate"
            )
        index = benchmark_fingerprints(Path(bench))
    generator = ServedModel(args.generator_url, args.generator_model) if args.model_programs else None
    reference = ServedModel(args.reference_url, args.reference_model) if args.reference_url else None
    resolved = {**vars(args), "resolved": config.__dict__, "benchmark_programs": len(index or {})}
    log_config("synth", resolved, args.out)
    try:
        with Bar() as bar:
            kept, card = synthesize(
                config,
                benchmark_index=index,
                generator_model=generator,
                reference_model=reference,
                progress=bar,
            )
    except LLMError as exc:
        print(f"execsim train synth: {exc}", file=sys.stderr)
        return EXIT_FAILED
    write(args.out, kept, card)
    print(card.to_markdown())
    print(f"{len(kept)} programs -> {args.out / 'programs.jsonl'}", file=sys.stderr)
    return 0
