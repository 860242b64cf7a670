"""ExecSim's web application: Django project, apps (accounts, problems, runs), Channels and Celery.

Kept import-light: the `execsim` CLI loads ``webapp.cli`` through an entry point on every invocation.
The Celery app lives in ``webapp.celery`` (``celery -A webapp worker`` finds it there).
"""

from __future__ import annotations
