"""``execsim train synth|data|sft|rl|export``: each stage of training as a command.

Registered through the ``execsim.commands`` entry-point group (pyproject.toml), so ``simulator`` never
imports ``training``. Every command prints its full configuration (as JSON, to stderr) before it starts,
writes it next to its output, and shows a progress bar (rich for synthesis and data; the trainers' own
bar for SFT and GRPO). Recipes: training/recipes/.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from simulator.cli import EXIT_FAILED, UsageError
from simulator.config import DEFAULT_CHECKPOINT, checkpoints_dir
from simulator.nlex.narrator import STYLES
from simulator.pipeline.settings import REPAIR_MODES, RunSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.add_parser(
        "train", help="synthesise data, fine-tune (SFT, GRPO) and export checkpoints"
    )
    stages = train.add_subparsers(dest="stage", required=True, metavar="STAGE")

    synth = stages.add_parser(
        "synth", help="synthesise programs with inputs and outputs (ExecVerify constraints)"
    )
    synth.add_argument(
        "--out", type=Path, required=True, help="output folder (programs.jsonl, card.json, card.md)"
    )
    synth.add_argument("--programs", type=int, default=50, help="rule-generated programs before filtering")
    synth.add_argument("--levels", default="1-6", help="difficulty levels, e.g. 1-6 or 3,4")
    synth.add_argument("--seed", type=int, default=0)
    synth.add_argument("--timeout", type=float, default=0.5, help="execution filter timeout per input (s)")
    synth.add_argument("--value-mutations", type=int, default=2)
    synth.add_argument("--type-mutations", type=int, default=1)
    synth.add_argument("--no-rules", action="store_true", help="skip the model-free generator")
    synth.add_argument(
        "--tasks",
        action="store_true",
        help="add the stated tasks (training.synth.tasks): problems with a real statement",
    )
    synth.add_argument(
        "--model-programs", type=int, default=0, help="programs to ask of a served generator model"
    )
    synth.add_argument(
        "--generator-url", help="OpenAI-compatible URL of the generator model (default: EXECSIM_MODEL_URL)"
    )
    synth.add_argument("--generator-model", help="model name at that URL")
    synth.add_argument(
        "--reference-url", help="URL of the difficulty filter's reference model (omit: no difficulty filter)"
    )
    synth.add_argument("--reference-model", help="reference model name at that URL")
    synth.add_argument("--samples", type=int, default=10, help="reference model samples per program")
    synth.add_argument(
        "--max-pass", type=int, default=3, help="keep programs it gets right at most this often"
    )
    synth.add_argument(
        "--benchmarks",
        type=Path,
        help="benchmark folder to decontaminate against (default: ../shared/benchmarks)",
    )
    synth.add_argument(
        "--no-decontaminate", action="store_true", help="skip decontamination (recorded in the card)"
    )
    synth.set_defaults(handler=_synth)

    data = stages.add_parser(
        "data", help="programs -> SFT (NLEX), RL (white-box) and code-generation examples"
    )
    data.add_argument("--programs", type=Path, required=True, help="programs.jsonl from `train synth`")
    data.add_argument(
        "--out", type=Path, required=True, help="output folder (sft.jsonl, rl.jsonl, codegen.jsonl)"
    )
    data.add_argument(
        "--styles",
        default="call,stdin",
        help="SFT styles, comma-separated: call (the app's simulate prompt, CRUXEval format), stdin "
        "(simulate: the function in a script that reads its arguments; solve: the stated tasks asked as "
        "stdin problems), cruxeval (the prompt of `execsim eval cruxeval-o --prompt nlex`)",
    )
    data.add_argument(
        "--narration",
        choices=(*STYLES, "none"),
        default="full",
        help="NLEX style of the simulate completions (simulator.nlex.narrator.narrate; docs/nlex.md); "
        "none: no narration, the answer at once, as the app's default simulate request asks (rl.jsonl "
        "too: that request as its prompts, for `train rl --reward output_prediction`)",
    )
    data.add_argument(
        "--max-completion-chars",
        type=int,
        help="drop SFT examples whose narration is longer (default 6000; CPU runs: shorter sequences)",
    )
    data.add_argument(
        "--annotations", type=Path, action="append", default=[], help="annotator export JSONL (repeatable)"
    )
    data.add_argument("--seed", type=int, default=0, help="question selection, mutation and mix seed")
    data.add_argument("--rl-max-prompt-chars", type=int, help="leave out longer RL prompts (CPU runs)")
    data.add_argument(
        "--kinds",
        default="simulate,repair,solve",
        help="SFT example kinds, one per prompt the pipeline sends: simulate, repair, solve",
    )
    data.add_argument(
        "--mix",
        help="shares of the kinds in sft.jsonl, e.g. simulate=0.6,repair=0.25,solve=0.15 (default: all)",
    )
    data.add_argument(
        "--near-misses",
        type=int,
        default=0,
        help="also simulate this many near misses of each program that passes its tests: one-node "
        "mutants that run and fail a test, answered by their own real runs (training.data.near_misses)",
    )
    data.add_argument("--repair-mutants", type=int, default=1, help="fix examples per program")
    data.add_argument("--repair-attempts", type=int, default=6, help="mutants tried per program")
    data.add_argument(
        "--submit-share", type=float, default=0.5, help="share of #SUBMIT among repair examples (model)"
    )
    data.add_argument(
        "--repair-mode",
        choices=REPAIR_MODES,
        default=RunSettings.repair,
        help="the repair request taught, as RunSettings.repair: guided (the pipeline's default: the solve "
        "request told what the attempt got wrong, answered by the fixed program; fix examples only) or "
        "model (the paper's free reply: a fix or #SUBMIT)",
    )
    data.add_argument(
        "--benchmarks",
        type=Path,
        help="benchmark folder whose programs no mutant may match (default: ../shared/benchmarks if present)",
    )
    data.add_argument(
        "--solve-url",
        help="answer the solve examples with the own solutions of the model at this OpenAI-compatible URL "
        "(the first of its replies that passes every test) instead of the synthesised program",
    )
    data.add_argument(
        "--solve-model", help="model name at --solve-url (default: EXECSIM_MODEL_NAME or the default model)"
    )
    data.add_argument(
        "--solve-samples", type=int, default=4, help="replies asked per problem (--solve-url, --simulate-url)"
    )
    data.add_argument(
        "--simulate-url",
        help="simulate the own programs of the model at this OpenAI-compatible URL (its replies to each "
        "problem's solve request, passing or not) instead of the synthesised programs",
    )
    data.add_argument(
        "--simulate-model", help="model name at --simulate-url (default: EXECSIM_MODEL_NAME or the default)"
    )
    data.add_argument(
        "--fix-url",
        help="answer the guided fix examples with the own replies of the model at this OpenAI-compatible "
        "URL (programs that run on every test, passing ones first) instead of the original program",
    )
    data.add_argument(
        "--fix-model", help="model name at --fix-url (default: EXECSIM_MODEL_NAME or the default)"
    )
    data.add_argument(
        "--fix-passing-only",
        action="store_true",
        help="keep only own fixes that pass every test (--fix-url; for stated tasks: train synth --tasks)",
    )
    data.add_argument(
        "--solve-limit", type=int, help="ask at most this many problems, a seeded draw (--solve-url)"
    )
    data.set_defaults(handler=_data)

    sft = stages.add_parser(
        "sft", help="supervised fine-tuning on NLEX (TRL SFTTrainer, loss on completions)"
    )
    _model_args(sft)
    sft.add_argument("--format", choices=("text", "chat"), default="text")
    sft.add_argument("--max-steps", type=int, default=100)
    sft.add_argument("--lr", type=float, default=2e-4)
    sft.add_argument(
        "--max-length",
        type=int,
        default=1024,
        help="tokens an example is cut to; one whose prompt alone reaches it is not trained on "
        "(a kind left with none is refused)",
    )
    sft.add_argument("--gradient-checkpointing", action="store_true")
    sft.set_defaults(handler=_sft)

    rl = stages.add_parser("rl", help="GRPO (TRL GRPOTrainer) with simulator.rewards")
    _model_args(rl)
    rl.add_argument(
        "--stage-number",
        "--stage",
        dest="rl_stage",
        type=int,
        choices=(1, 2),
        default=1,
        help="1: output prediction, white-box reward; 2: code generation, unit tests",
    )
    rl.add_argument("--reward", action="append", default=[], help="reward name or dotted path (repeatable)")
    rl.add_argument("--max-steps", type=int, default=10)
    rl.add_argument("--lr", type=float, default=1e-6)
    rl.add_argument("--num-generations", type=int, default=4)
    rl.add_argument("--max-completion-length", type=int, default=128)
    rl.add_argument("--temperature", type=float, default=1.0)
    rl.add_argument("--beta", type=float, default=0.0, help="KL coefficient (ExecVerify: 0)")
    rl.add_argument(
        "--format", choices=("text", "chat"), default="text", help="chat: prompts as one user message"
    )
    rl.add_argument(
        "--vllm", choices=("auto", "on", "off"), default="auto", help="vLLM rollouts (auto: when CUDA)"
    )
    rl.set_defaults(handler=_rl)

    ev = stages.add_parser(
        "evaluate", help="serve a model folder, evaluate it (CRUXEval-O NLEX, MBPP), compare with a baseline"
    )
    ev.add_argument("--model", type=Path, help="HF model folder to serve (e.g. runs/export/merged)")
    ev.add_argument("--url", help="evaluate this running OpenAI-compatible server instead of serving --model")
    ev.add_argument("--name", help="served model name (default: the folder's name)")
    ev.add_argument("--out", type=Path, required=True, help="output folder (one subfolder per task)")
    ev.add_argument(
        "--variant", default="checkpoint", help="what the result rows call this model (base, sft, rl)"
    )
    ev.add_argument("--tasks", default="cruxeval-o,mbpp", help="comma-separated: cruxeval-o, mbpp")
    ev.add_argument("--limit", type=int, help="first N items of each benchmark only")
    ev.add_argument(
        "--baseline", type=Path, help="an earlier `train evaluate --out` to compare with, item by item"
    )
    ev.add_argument(
        "--baseline-variant", default="base", help="what the rows call the baseline (e.g. current)"
    )
    ev.add_argument("--concurrency", type=int, default=16)
    ev.add_argument("--max-model-len", type=int, help="vLLM context length (default: the server's)")
    ev.set_defaults(handler=_evaluate)

    pro = stages.add_parser(
        "promote",
        help="replace the committed checkpoint with a candidate only if it beats it on dev (paired)",
    )
    pro.add_argument("--candidate", type=Path, required=True, help="an `execsim train export --out` folder")
    pro.add_argument(
        "--current",
        type=Path,
        default=checkpoints_dir() / DEFAULT_CHECKPOINT,
        help="the committed checkpoint (default: this checkout's checkpoints/smollm2-135m-nlex)",
    )
    pro.add_argument(
        "--candidate-results",
        type=Path,
        required=True,
        help="`execsim train evaluate --out` of the candidate",
    )
    pro.add_argument(
        "--current-results",
        type=Path,
        required=True,
        help="`execsim train evaluate --out` of the current one",
    )
    pro.add_argument(
        "--target",
        default="cruxeval-o",
        help="the task whose interval must be above zero: cruxeval-o, mbpp, or with a self-rlef/ "
        "results folder, self-rlef or repair-replies",
    )
    pro.add_argument(
        "--beside",
        type=Path,
        help="commit the candidate as this new checkpoint folder (checkpoints/<name>, served with "
        "EXECSIM_CHECKPOINT=<name>) whatever the verdict, recorded in its manifest; the current one stays",
    )
    pro.add_argument("--dry-run", action="store_true", help="print the comparison and the verdict only")
    pro.set_defaults(handler=_promote)

    exp = stages.add_parser("export", help="merge a checkpoint into a servable folder with a manifest")
    exp.add_argument(
        "--checkpoint", type=Path, required=True, help="an adapter/ or model/ folder from sft or rl"
    )
    exp.add_argument("--out", type=Path, required=True)
    exp.add_argument("--base", help="base model (default: the adapter's own record)")
    exp.add_argument(
        "--summary", type=Path, action="append", default=[], help="a stage's summary.json (repeatable)"
    )
    exp.add_argument("--card", type=Path, help="the synthesis card.json")
    exp.add_argument(
        "--eval-results", type=Path, help="JSON list of {benchmark, metric, value, n, low, high}"
    )
    exp.set_defaults(handler=_export)


def _model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", required=True, help="HF model folder (e.g. .data/models/smollm2-135m-instruct)"
    )
    parser.add_argument("--data", type=Path, required=True, help="examples JSONL from `train data`")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--full", action="store_true", help="full fine-tuning instead of LoRA")
    parser.add_argument("--lora-r", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--grad-accum", type=int, default=None)
    parser.add_argument("--threads", type=int, help="torch CPU threads")
    parser.add_argument(
        "--cpu-bf16",
        action="store_true",
        help="on a CPU with bf16 instructions (AVX512-BF16, AMX), train under bf16 autocast (fp32 weights)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--resume",
        type=Path,
        help="continue a run: its output folder or one of its checkpoints (optimizer and step count "
        "included; --max-steps counts from the first run)",
    )
    parser.add_argument(
        "--init-adapter",
        type=Path,
        help="continue training this LoRA adapter of --model (e.g. checkpoints/smollm2-135m-nlex/adapter): "
        "the result is still an adapter of that base, its export manifest counts the adapter's steps",
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        help="stop after this many minutes of training, saving a checkpoint that --resume continues",
    )
    parser.add_argument(
        "--save-steps", type=int, default=50, help="save a resumable checkpoint every N optimizer steps"
    )


def _log_config(name: str, config: dict[str, Any], out: Path) -> None:
    config = {k: v for k, v in config.items() if not callable(v)}
    text = json.dumps(config, indent=2, default=str)
    print(f"execsim train {name}: configuration\n{text}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}-config.json").write_text(text + "\n")


def _levels(spec: str) -> tuple[int, ...]:
    try:
        if "-" in spec:
            low, high = (int(x) for x in spec.split("-", 1))
            levels = tuple(range(low, high + 1))
        else:
            levels = tuple(int(x) for x in spec.split(","))
    except ValueError:
        raise UsageError(f"--levels must look like 1-6 or 3,4, not {spec!r}") from None
    if not levels or any(not 1 <= x <= 6 for x in levels):
        raise UsageError("--levels must be within 1..6")
    return levels


class _Bar:
    """A rich progress bar over named stages (stderr)."""

    def __init__(self) -> None:
        from rich.progress import Progress

        self.progress = Progress(transient=False, console=None)
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> _Bar:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=max(total, 1))
        self.progress.update(self.tasks[stage], completed=done, total=max(total, 1))


def _synth(args: argparse.Namespace) -> int:
    from training.paths import benchmarks_dir
    from training.synth.normalize import benchmark_fingerprints
    from training.synth.pipeline import SynthConfig, synthesize, write
    from training.synth.sampler import ServedModel

    if args.programs < 0 or args.model_programs < 0:
        raise UsageError("--programs and --model-programs must be >= 0")
    config = SynthConfig(
        programs=0 if args.no_rules else args.programs,
        levels=_levels(args.levels),
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
    _log_config(
        "synth", {**vars(args), "resolved": config.__dict__, "benchmark_programs": len(index or {})}, args.out
    )
    from simulator.llm import LLMError

    try:
        with _Bar() as bar:
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


def _data(args: argparse.Namespace) -> int:
    from functools import partial

    from simulator.nlex.narrator import narrate
    from training.data.examples import (
        STYLES,
        BenchmarkDataRefused,
        annotation_examples,
        answer_at_once,
        codegen_examples,
        refuse_benchmarks,
        rl_examples,
        sft_examples,
        write_jsonl,
    )
    from training.data.mix import (
        NEAR_MISS_SOURCE,
        OWN_FIX_SOURCE,
        OWN_PROGRAM_SOURCE,
        OWN_SOLVE_SOURCE,
        MixError,
        card_markdown,
        data_card,
        mix,
        parse_kinds,
        parse_mix,
    )
    from training.synth.pipeline import read

    styles = tuple(s.strip() for s in args.styles.split(",") if s.strip())
    if not styles or any(s not in STYLES for s in styles):
        raise UsageError(f"--styles takes {', '.join(STYLES)}")
    try:
        kinds = parse_kinds(args.kinds)
        shares = parse_mix(args.mix, kinds) if args.mix else None
    except MixError as exc:
        raise UsageError(str(exc)) from None
    if not 0 < args.submit_share < 1 or args.repair_mutants < 1 or args.repair_attempts < 1:
        raise UsageError("--submit-share must be in (0, 1); --repair-mutants and --repair-attempts >= 1")
    if args.solve_samples < 1 or (args.solve_limit is not None and args.solve_limit < 1):
        raise UsageError("--solve-samples and --solve-limit must be >= 1")
    if args.fix_passing_only and not args.fix_url:
        raise UsageError("--fix-passing-only filters the own fixes of --fix-url: give --fix-url too")
    if args.simulate_url and "simulate" not in kinds:
        raise UsageError("--simulate-url answers simulate examples: it needs --kinds simulate")
    if args.fix_url and ("repair" not in kinds or args.repair_mode != "guided"):
        raise UsageError(
            "--fix-url answers guided fix examples: it needs --kinds repair and --repair-mode guided"
        )
    try:
        refuse_benchmarks(args.programs)
        records = read(args.programs)
    except BenchmarkDataRefused as exc:
        raise UsageError(str(exc)) from None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"cannot read {args.programs}: {exc}") from None
    if not records:
        raise UsageError(f"{args.programs} holds no programs (an `execsim train synth --out` programs.jsonl)")
    if args.near_misses < 0 or (args.near_misses and "simulate" not in kinds):
        raise UsageError("--near-misses is a count of simulated programs: >= 0, with --kinds simulate")
    index = _benchmark_index(args.benchmarks) if "repair" in kinds or args.near_misses else {}
    _log_config("data", vars(args), args.out)
    counts: dict[str, Any] = {"programs": len(records)}
    built: dict[str, list[dict[str, Any]]] = {}
    with _Bar() as bar:
        if "simulate" in kinds:
            bar("simulate examples", 0, 1)
            limit = {"max_completion_chars": args.max_completion_chars} if args.max_completion_chars else {}
            narration = answer_at_once if args.narration == "none" else partial(narrate, style=args.narration)
            simulated = records
            if args.simulate_url:
                from simulator.llm import LLMError

                try:
                    simulated, counts["own_programs"] = _own_programs(records, args, bar)
                except LLMError as exc:  # the server is down or refuses the request
                    print(f"execsim train data: {exc}", file=sys.stderr)
                    return EXIT_FAILED
            if args.near_misses:
                bar("near misses (sandbox)", 0, 1)
                simulated, counts["near_misses"] = _near_misses(records, simulated, args, index)
                bar("near misses (sandbox)", 1, 1)
            built["simulate"] = sft_examples(simulated, styles=styles, narrate=narration, **limit)
            counts["sft_synth"] = len(built["simulate"])
            counts["narration"] = args.narration
            for path in args.annotations:
                try:
                    extra, outcome = annotation_examples(path)
                except BenchmarkDataRefused as exc:
                    raise UsageError(str(exc)) from None
                except OSError as exc:
                    raise UsageError(f"cannot read {path}: {exc}") from None
                built["simulate"] += extra
                counts[f"annotations:{path}"] = outcome
            bar("simulate examples", 1, 1)
        if "repair" in kinds or "solve" in kinds:
            from simulator.llm import LLMError

            try:
                built.update(_repair_and_solve(records, kinds, styles, args, index, counts, bar))
            except LLMError as exc:  # --solve-url: the server is down or refuses the request
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
    sources |= {"simulate": NEAR_MISS_SOURCE} if args.near_misses else {}
    sources |= {"simulate": OWN_PROGRAM_SOURCE} if args.simulate_url else {}
    card = data_card(built=built, written=sft, shares=shares, seed=args.seed, details=counts, sources=sources)
    (args.out / "data-card.json").write_text(json.dumps(card, indent=2) + "\n")
    (args.out / "data-card.md").write_text(card_markdown(card))
    print(json.dumps(card, indent=2))
    return 0


def _own_programs(
    records: list[Any], args: argparse.Namespace, bar: _Bar
) -> tuple[list[Any], dict[str, Any]]:
    """--simulate-url: the served model's own programs for the problems of the records that pass
    their tests (``training.data.solve.own_programs``), as records to simulate."""
    from training.data.problems import passing
    from training.data.solve import own_programs
    from training.synth.sampler import ServedModel

    checked, _ = passing(records)
    model = ServedModel(args.simulate_url, args.simulate_model)
    return own_programs(checked, model, samples=args.solve_samples, progress=bar)


def _near_misses(
    records: list[Any], simulated: list[Any], args: argparse.Namespace, index: dict[str, str]
) -> tuple[list[Any], dict[str, Any]]:
    """--near-misses: beside the programs simulated, near misses of the records that pass their tests
    (``training.data.near_misses``)."""
    from training.data.near_misses import near_misses
    from training.data.problems import passing

    checked, _ = passing(records)
    near, counts = near_misses(checked, per_program=args.near_misses, seed=args.seed, benchmark_index=index)
    return [*simulated, *near], counts


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
    bar: _Bar,
) -> dict[str, list[dict[str, Any]]]:
    """The repair and solve kinds, from the programs that pass every test in the sandbox; solve in the
    styles asked: call (the problem made from each program), stdin (the stated tasks as stdin problems)."""
    from training.data.problems import passing
    from training.data.repair import own_fix_examples, repair_examples
    from training.data.solve import own_solve_examples, solve_examples
    from training.data.stdin_solve import stdin_solve_examples

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
            submit_share=args.submit_share,
            benchmark_index=index,
            mode=args.repair_mode,
        )
        counts["repair"]["decontaminated_against"] = len(index)
        counts["repair"]["mode"] = args.repair_mode
        if args.fix_url:
            from training.synth.sampler import ServedModel

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

        from training.synth.sampler import ServedModel

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


def _train(train: Any, config: Any) -> dict[str, Any]:
    """Run a trainer; a checkpoint that cannot be resumed, a data file that is not examples, or examples
    all too long, is a usage error."""
    from training.data.examples import BadExamples
    from training.runs import ResumeError
    from training.sft.train import ExamplesTooLong

    try:
        return train(config)
    except (ResumeError, ExamplesTooLong, BadExamples) as exc:
        raise UsageError(str(exc)) from None


def _check_model(args: argparse.Namespace) -> None:
    from training.runs import ResumeError, adapter_config

    if not (Path(args.model) / "config.json").is_file():
        raise UsageError(
            f"--model {args.model} is not an HF model folder (no config.json); see `execsim model prepare`"
        )
    if not args.data.is_file():
        raise UsageError(f"--data {args.data} does not exist")
    if args.resume is not None and not args.resume.is_dir():
        raise UsageError(f"--resume {args.resume} is not a folder")
    counts = ("max_steps", "save_steps", "lora_r", "batch_size", "grad_accum", "threads", "max_length")
    for name in (*counts, "num_generations", "max_completion_length"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 1, not {value}")
    for name in ("lr", "max_minutes", "temperature"):
        value = getattr(args, name, None)
        if value is not None and not value > 0:  # nan too
            raise UsageError(f"--{name.replace('_', '-')} must be > 0, not {value}")
    if args.init_adapter is not None:
        if args.full:
            raise UsageError("--init-adapter continues a LoRA adapter: it does not go with --full")
        try:
            adapter = adapter_config(args.init_adapter)
        except ResumeError as exc:
            raise UsageError(f"--init-adapter: {exc}") from None
        base = adapter.get("base_model_name_or_path")
        if base and Path(base).is_dir() and Path(base).resolve() != Path(args.model).resolve():
            raise UsageError(f"--init-adapter {args.init_adapter} is an adapter of {base}, not of --model")
        args.lora_r, args.lora_alpha = int(adapter["r"]), int(adapter["lora_alpha"])
    else:
        args.lora_alpha = 2 * args.lora_r


def _sft(args: argparse.Namespace) -> int:
    from training.sft.train import SFTRunConfig, run_sft

    _check_model(args)
    config = SFTRunConfig(
        model=args.model,
        data=str(args.data),
        out=str(args.out),
        format=args.format,
        lora=not args.full,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        max_steps=args.max_steps,
        learning_rate=args.lr,
        batch_size=args.batch_size,
        grad_accum=args.grad_accum or 1,
        max_length=args.max_length,
        seed=args.seed,
        gradient_checkpointing=args.gradient_checkpointing,
        threads=args.threads,
        cpu_bf16=args.cpu_bf16,
        max_minutes=args.max_minutes,
        save_steps=args.save_steps,
        resume=str(args.resume) if args.resume else None,
        init_adapter=str(args.init_adapter) if args.init_adapter else None,
    )
    _log_config("sft", config.__dict__, args.out)
    summary = _train(run_sft, config)
    print(json.dumps({k: v for k, v in summary.items() if k not in ("log_history", "config")}, indent=2))
    return 0


def _rl(args: argparse.Namespace) -> int:
    from training.rl.train import RLRunConfig, resolve_reward, run_grpo

    _check_model(args)
    for spec in args.reward:
        try:
            resolve_reward(spec)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    config = RLRunConfig(
        model=args.model,
        data=str(args.data),
        out=str(args.out),
        stage=args.rl_stage,
        rewards=args.reward,
        lora=not args.full,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        max_steps=args.max_steps,
        learning_rate=args.lr,
        batch_size=args.batch_size,
        grad_accum=args.grad_accum or args.num_generations,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        temperature=args.temperature,
        beta=args.beta,
        seed=args.seed,
        vllm=args.vllm,
        threads=args.threads,
        cpu_bf16=args.cpu_bf16,
        format=args.format,
        max_minutes=args.max_minutes,
        save_steps=args.save_steps,
        resume=str(args.resume) if args.resume else None,
        init_adapter=str(args.init_adapter) if args.init_adapter else None,
    )
    if (config.batch_size * config.grad_accum) % config.num_generations:
        raise UsageError("--batch-size x --grad-accum must be a multiple of --num-generations")
    _log_config("rl", config.__dict__, args.out)
    summary = _train(run_grpo, config)
    print(json.dumps({k: v for k, v in summary.items() if k not in ("log_history", "config")}, indent=2))
    return 0


def _export(args: argparse.Namespace) -> int:
    from training.export.checkpoint import ExportError, export

    if not args.checkpoint.is_dir():
        raise UsageError(f"--checkpoint {args.checkpoint} is not a folder")
    try:
        summaries = [json.loads(p.read_text()) for p in args.summary]
        results = json.loads(args.eval_results.read_text()) if args.eval_results else None
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read a summary or the evaluation results: {exc}") from None
    _log_config("export", vars(args), args.out)
    try:
        manifest = export(
            args.checkpoint,
            args.out,
            base=args.base,
            summaries=summaries,
            card=args.card,
            eval_results=results,
        )
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    print(
        json.dumps({k: manifest[k] for k in ("base_model", "merged", "adapter", "steps", "serve")}, indent=2)
    )
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from training.evaluate import TASKS, EvalRunConfig, EvaluateError, evaluate_model

    if (args.model is None) == (args.url is None):
        raise UsageError("give exactly one of --model (a folder to serve) and --url (a running server)")
    if args.model is not None and not (args.model / "config.json").is_file():
        raise UsageError(f"--model {args.model} is not an HF model folder (no config.json)")
    if args.url is not None and not args.name:
        raise UsageError("--url needs --name (the model name that server serves)")
    tasks = tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    if not tasks or any(t not in TASKS for t in tasks):
        raise UsageError(f"--tasks takes {', '.join(TASKS)}")
    if args.baseline is not None and not args.baseline.is_dir():
        raise UsageError(f"--baseline {args.baseline} is not a folder")
    config = EvalRunConfig(
        model=str(args.model or ""),
        out=str(args.out),
        variant=args.variant,
        name=args.name,
        tasks=tasks,
        limit=args.limit,
        baseline=str(args.baseline) if args.baseline else None,
        baseline_variant=args.baseline_variant,
        concurrency=args.concurrency,
        url=args.url,
        max_model_len=args.max_model_len,
    )
    _log_config("evaluate", config.__dict__, args.out)
    from simulator.llm import LLMError, LLMUnavailable

    try:
        with _Bar() as bar:
            rows = evaluate_model(config, progress=bar)
    except EvaluateError as exc:
        raise UsageError(str(exc)) from None
    except LLMError as exc:  # the server is down, went away or refuses: say so, keep what is cached
        print(f"execsim train evaluate: {exc}", file=sys.stderr)
        if isinstance(exc, LLMUnavailable):
            print(LLMUnavailable.HINT, file=sys.stderr)
        print("rerun the same command to resume: replies already received are cached", file=sys.stderr)
        return EXIT_FAILED
    for row in rows:
        interval = f"[{row['low']:+.3f}, {row['high']:+.3f}]"
        print(f"{row['benchmark']} {row['model']}: {row['value']:+.3f} {interval} n={row['n']}")
    print(f"wrote {args.out / 'eval-results.json'} (pass it to `execsim train export --eval-results`)")
    return 0


def _promote(args: argparse.Namespace) -> int:
    from training.promote import PromoteError, chosen_by, promote

    try:
        decision = promote(
            args.candidate,
            args.current,
            args.candidate_results,
            args.current_results,
            args.target,
            dry_run=args.dry_run,
            beside=args.beside,
        )
    except (PromoteError, OSError, json.JSONDecodeError) as exc:
        raise UsageError(str(exc)) from None
    for line in decision.lines():
        print(line)
    if args.beside:
        done = "would write" if args.dry_run else "wrote"
        print(
            f"{done} {args.candidate}'s adapter and manifest.json to {args.beside}, beside {args.current}, "
            f"which stays the default; serve it with EXECSIM_CHECKPOINT={chosen_by(args.beside)}"
        )
        return 0
    if decision.promote:
        done = "would replace" if args.dry_run else "replaced"
        print(f"{done} {args.current}/adapter and manifest.json with {args.candidate}'s")
        return 0
    return EXIT_FAILED
