"""Test double for ``vllm.entrypoints.openai.api_server``: same flags, answers GET /v1/models.

It spawns a child (like vLLM's engine core) and writes the child's pid to $FAKE_VLLM_CHILD_PID_FILE.
On SIGTERM it exits WITHOUT stopping that child, so a test can check that ModelServer.stop() still
reaches the whole process group. $FAKE_VLLM_DELAY_S delays readiness (warm-up); $FAKE_VLLM_EXIT makes
it exit at once with that code (a failed start).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model")
    parser.add_argument("--served-model-name")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    args, _unknown = parser.parse_known_args()
    if os.environ.get("FAKE_VLLM_EXIT"):
        print("fake vllm: failing on purpose", flush=True)
        sys.exit(int(os.environ["FAKE_VLLM_EXIT"]))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    pid_file = os.environ.get("FAKE_VLLM_CHILD_PID_FILE")
    if pid_file:
        with open(pid_file, "w") as f:
            f.write(str(child.pid))
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))  # leaves the child behind on purpose
    time.sleep(float(os.environ.get("FAKE_VLLM_DELAY_S", "0")))
    name = args.served_model_name

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"object": "list", "data": [{"id": name, "object": "model"}]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    HTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
