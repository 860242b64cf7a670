"""ExecSim's framework-free core: sandboxed execution, tracing, NLEX, questions, rewards, the model
client, prompts and the solve -> simulate -> select -> repair pipeline.

Never imports Django, ``webapp`` or ``training``; those import this package.
"""

from __future__ import annotations

SCHEMA_VERSION = 1
