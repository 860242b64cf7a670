"""``execsim up``: the embedded mode in one command, nothing to install as a service.

It migrates the SQLite database in the data directory, loads examples/*.json, marks runs left active by
a previous process as failed (the in-process runner that held them is gone), starts the default model's
vLLM server in the background unless ``--no-model`` or EXECSIM_MODEL_URL says to use another one, then
serves the ASGI app with daphne in this process (the task runner is a thread pool in it) and prints the
URL. Ctrl-C stops the web server, cancels runs in progress and stops the model server.

Registered through the ``execsim.commands`` entry point, so ``simulator`` never imports the web app.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import Any

from simulator.cli import EXIT_FAILED, UsageError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("up", help="start the web app (embedded mode: SQLite, in-process runner, model)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument(
        "--no-model",
        action="store_true",
        help="do not start the default model's server (use EXECSIM_MODEL_URL, or run without a model)",
    )
    parser.set_defaults(handler=_up)


def _up(args: argparse.Namespace) -> int:
    from simulator.llm.server import port_in_use

    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: not a port number")
    busy = port_in_use(args.host, args.port)
    if busy:
        print(f"execsim up: cannot listen on {args.host}:{args.port}: {busy}", file=sys.stderr)
        return EXIT_FAILED
    from webapp.errors import run_command

    # A bad setting (exit 2) or a database that is down (exit 1): one line naming it, not a traceback.
    return run_command(lambda: _start(args))


def _start(args: argparse.Namespace) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    if args.host not in ("127.0.0.1", "localhost"):
        hosts = os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost")
        os.environ["ALLOWED_HOSTS"] = f"{hosts},{args.host}"
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from webapp.problems.management.commands.load_examples import load_examples

    call_command("migrate", interactive=False, verbosity=0)
    created, errors = load_examples(settings.BASE_DIR / "examples")
    for error in errors:
        print(f"example skipped: {error}", file=sys.stderr)
    print(f"database {settings.DATABASES['default']['NAME']} ready; {created} new example problem(s)")
    _fail_orphaned_runs()
    _start_reaper()

    server = None
    if not args.no_model and not os.environ.get("EXECSIM_MODEL_URL"):
        server = _start_model_in_background()
    else:
        from simulator import config

        print(f"model: using {config.model_url()} ({config.model_name()})")
    try:
        return _serve(args.host, args.port)
    finally:
        _cancel_active_runs()
        if server is not None and server.get("server") is not None:
            print("stopping the model server")
            server["server"].stop()


def _start_reaper(every_s: float = 30.0) -> None:
    """What the Procfile's ``reaper`` does in production: every 30 s, mark failed the runs whose
    worker stopped sending heartbeats (``record.reap_stale_runs``)."""

    def loop() -> None:
        from django.db import connections

        from webapp.runs.record import reap_stale_runs

        while not stop.wait(every_s):
            try:
                reap_stale_runs()
            except Exception as exc:  # a database hiccup must not end the reaper
                print(f"reaper: {exc}", file=sys.stderr)
            finally:
                connections.close_all()

    stop = threading.Event()
    threading.Thread(target=loop, name="reaper", daemon=True).start()


def _fail_orphaned_runs() -> None:
    from webapp.runs.models import Run
    from webapp.runs.record import append_final

    for run_id in Run.objects.active().values_list("id", flat=True):
        append_final(
            run_id, "run_failed", error="server_restarted", message="The server restarted. Retry it."
        )


def _cancel_active_runs() -> None:
    from webapp.runs import cancel
    from webapp.runs.models import Run

    for run_id in Run.objects.active().values_list("id", flat=True):
        cancel.signal(run_id)


def _start_model_in_background() -> dict[str, Any]:
    """Prepare the default model (the base with the default checkpoint merged in, EXECSIM_CHECKPOINT) and
    start its vLLM server on a thread; the web app is usable meanwhile (the status fragment says
    "starting (about N min)" until it answers: webapp.model_state). It is served under the name
    ``config.model_name()`` requests by default."""
    from simulator import config
    from simulator.llm import default_model
    from simulator.llm.server import ModelServer, port_in_use, vllm_installed
    from webapp import model_state

    holder: dict[str, Any] = {"server": None}
    os.environ["EXECSIM_MODEL_URL"] = f"http://127.0.0.1:{config.DEFAULT_MODEL_PORT}/v1"
    if not vllm_installed():
        print("model: vLLM is not installed (`execsim model install`); running without a model")
        model_state.absent("vLLM is not installed: `execsim model install`")
        return holder
    busy = port_in_use("127.0.0.1", config.DEFAULT_MODEL_PORT)
    if busy:  # most likely an `execsim model serve` started first: the app asks it
        print(
            f"model: 127.0.0.1:{config.DEFAULT_MODEL_PORT} is taken ({busy}); the app asks the server "
            "listening there (the status in the page's header says whether it answers)"
        )
        return holder

    def start() -> None:
        try:
            prepared = default_model.prepare_default(progress=lambda msg: print(f"model: {msg}"))
            if prepared.merged is None:
                print(f"model: no checkpoint merged ({prepared.reason}): serving the base model")
            server = ModelServer(
                prepared.path, model_name=prepared.name, port=config.DEFAULT_MODEL_PORT, enforce_eager=True
            )
            holder["server"] = server
            server.start()
            seconds = server.wait_ready()
            model_state.ready()
            print(f"model: {server.model_name} ready at {server.url} after {seconds:.0f} s")
        except Exception as exc:  # the web app keeps working; the status fragment says it could not start
            model_state.failed(str(exc))
            print(f"model: could not start ({exc}); see `execsim model serve`", file=sys.stderr)

    model_state.starting()  # the header says "starting (about N min)" until it answers
    threading.Thread(target=start, name="model-server", daemon=True).start()
    print(
        f"model: starting the default model at {os.environ['EXECSIM_MODEL_URL']} (takes a few minutes on CPU)"
    )
    return holder


def _serve(host: str, port: int) -> int:
    from daphne.endpoints import build_endpoint_description_strings
    from daphne.server import Server

    from webapp.asgi import application

    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/"
    print(f"ExecSim is up at {url}  (Ctrl-C to stop)", flush=True)
    try:
        Server(
            application=application,
            endpoints=build_endpoint_description_strings(host=host, port=port),
            signal_handlers=True,
        ).run()
    except OSError as exc:
        print(f"could not serve on {host}:{port}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return 0
