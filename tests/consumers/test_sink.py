"""The sink against a real DuckLake store on disk."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OPEN_SINK = (
    "import sys, pathlib\n"
    "from croupier.lake import Lake\n"
    "from consumers.sink import LakeSink\n"
    "LakeSink(Lake(root=pathlib.Path(sys.argv[1]))).close()\n"
)


def test_consumers_started_together_on_a_new_lake_all_open_it(tmp_path: Path) -> None:
    # Several consumers of one group starting at once race to create the SQLite catalog;
    # the loser sees "database is locked" and must wait, not crash.
    for attempt in range(3):
        lake = tmp_path / f"lake{attempt}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_SINK, str(lake)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err[-2000:]
