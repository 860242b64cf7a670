"""Training for ExecSim's model: data synthesis, trace datasets, SFT and GRPO (TRL), checkpoint export.

Imports ``simulator`` (never the reverse). Heavy dependencies (torch, transformers, trl, peft, datasets)
come from the ``train`` extra and are imported only inside the stages that need them, so
``execsim train --help`` and the synthesis stage work without them.
"""

from __future__ import annotations
