"""Keeps one idle SQLite connection open on a lake's SQLite catalog while its writer runs.

DuckDB's sqlite extension opens and closes a SQLite connection for every transaction (about
three per commit, three per reader query). In WAL mode the last connection to close takes an
EXCLUSIVE lock to checkpoint and delete the WAL, and the next to open rebuilds the WAL index;
a reader or writer that meets either waits in SQLite's busy handler, which in the extension's
build (no `usleep`) sleeps a whole second. Under a steady stream of commits that was 2-5 reader
queries of ~1,020 ms per 15 s, the lake's freshness p99. An idle connection in WAL mode keeps a
SHARED lock on the file, so no other connection is ever the last: the WAL stays, no one takes
EXCLUSIVE, no one sleeps. It holds no read transaction, so checkpoints run as before.

It must be another process: POSIX locks belong to a process, and a second SQLite library in the
writer's own process (Python's) would drop DuckDB's locks when either closed the file.

    python -m infra.catalog_keeper CATALOG     # prints "ready", exits when stdin closes

The writer holds the pipe (`infra.lake.hold_catalog`); when it exits, even SIGKILLed, stdin
closes and the keeper closes its connection and exits. It writes no row.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
from pathlib import Path


def main(catalog: str) -> int:
    # Ctrl-C, or a service manager's SIGTERM, reaches the whole process group: the writer may
    # still commit after it, so the keeper stays until the writer closes the pipe (or dies).
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    # Read-write, so that when it is the last to close it checkpoints the WAL into the file,
    # as the writer's own last connection did before: it changes no row.
    con = sqlite3.connect(Path(catalog).as_uri() + "?mode=rw", uri=True, isolation_level=None)
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()  # opens the WAL
        print("ready", flush=True)
        sys.stdin.read()
    finally:
        con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
