#!/usr/bin/env python
"""Django's command-line utility for ExecSim's web app (``execsim up`` covers the embedded mode)."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    from django.core.management import execute_from_command_line

    from webapp.errors import run_command

    # A bad setting or a service that is down: one line and exit 2 or 1, not a traceback.
    sys.exit(run_command(lambda: execute_from_command_line(sys.argv)))


if __name__ == "__main__":
    main()
