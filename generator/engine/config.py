"""``RunConfig``: the settings of one run, as one frozen value.

The command line (or a caller of the Python API) makes it once; it travels
through the run to every stage and mechanism that needs a setting. No
module keeps a setting of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..writer import LOCK_TIMEOUT


@dataclass(frozen=True)
class RunConfig:
    # Parsed files, memoised checks and rendered units (None: no cache at all).
    cache_dir: str | None = None
    # Worker processes: None, one per core (``EVCAT_JOBS`` overrides); 1, none.
    jobs: int | None = None
    # What formats generated Python: ruff (default) or black (render.python.FORMATTERS).
    formatter: str = "ruff"
    # The AsyncAPI version written (None: render.asyncapi's first, 3.0.0).
    asyncapi_version: str | None = None
    # A checked ``--templates`` directory (generate.use_templates), or None.
    templates: Path | None = None
    # Seconds to wait for another run's lock on OUT (None: wait forever).
    lock_timeout: float | None = LOCK_TIMEOUT
    # A progress bar on stderr while rendering (only on a terminal).
    progress: bool = False
    # ``--templates``: the seconds that rendering with DIR's templates may take
    # in all (``--template-timeout``), and how many bytes each process
    # rendering them may grow by, also the bound of all their output
    # (engine.workers.bounded).
    template_timeout: float = 30.0
    template_memory: int = 1 << 30

    def workers(self, items: int) -> int:
        """How many processes are worth starting for ``items`` pieces of work (engine.workers)."""
        from .workers import worker_count

        return worker_count(items, self.jobs)
