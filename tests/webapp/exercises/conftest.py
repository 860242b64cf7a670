from __future__ import annotations

from tests.webapp.explorer.support import ann1, browser, educator, page_as, sim_run  # noqa: F401
