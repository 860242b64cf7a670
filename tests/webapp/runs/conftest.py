from __future__ import annotations

from tests.webapp.explorer.support import ann1, sim_run  # noqa: F401 (fixtures shared with the explorer tests)
