"""Problems and their tests: list, search, create, edit, import (JSON, CRUXEval, MBPP, Code Jam)."""

from __future__ import annotations
