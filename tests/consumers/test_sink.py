"""The sink against a real DuckLake store on disk."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.consumers.helpers import gone

OPEN_SINK = (
    "import sys, pathlib\n"
    "from infra.lake import Lake\n"
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


def test_a_long_lived_reader_polling_the_lake_never_blocks_the_writer(tmp_path: Path) -> None:
    # A dashboard keeps one connection and queries it in a loop. With the SQLite catalog in
    # its default rollback journal such a reader wedged the writer's commits on "database is
    # locked" within seconds; the sink puts the catalog in WAL mode so both run side by side.
    import threading

    from consumers.processor import Processor, RawMessage
    from consumers.sink import LakeSink
    from infra import lake as lakes
    from producers.simulator import parse_faults, simulate

    root = tmp_path / "lake"
    sink = LakeSink(lakes.Lake(root=root))
    raw = [
        RawMessage(m.value, m.key.encode(), "t", 0, offset)
        for offset, m in enumerate(simulate(tables=2, hours=1, seed=3, faults=parse_faults("none")))
    ][:6_000]
    reader = lakes.connect(lakes.Lake(root=root), read_only=True)
    stop = threading.Event()
    reads: list[int] = []
    failures: list[str] = []

    def poll() -> None:
        while not stop.is_set():
            try:
                (count,) = reader.execute("SELECT count(*) FROM events").fetchall()[0]
                reads.append(int(count))
            except Exception as exc:  # recorded, and the test fails on it below
                failures.append(str(exc))

    thread = threading.Thread(target=poll)
    thread.start()
    processor = Processor()
    unseen: list[int] = []
    try:
        for start in range(0, len(raw), 200):
            batch = processor.process(raw[start : start + 200])
            sink.commit(
                batch,
                offsets={("t", 0): start + 200},
                states=processor.take_dirty_states(),
            )
            # The same reader must see each commit soon: never blocked, never stuck on a snapshot.
            deadline = time.monotonic() + 30
            while (not reads or reads[-1] < start + 200) and time.monotonic() < deadline:
                time.sleep(0.005)
            if not reads or reads[-1] < start + 200:
                unseen.append(start + 200)
    finally:
        stop.set()
        thread.join()
    events = reader.execute("SELECT count(*) FROM events").fetchall()[0][0]
    reader.close()
    sink.close()
    assert failures == []
    assert unseen == [], "commits the long-lived reader did not see within 30 s"
    assert len(raw) == 6_000 and events == 6_000  # a clean stream: every message is an event
    assert reads == sorted(reads), "a reader never sees the lake go back in time"


def _commit_some(sink: object, root: Path, count: int = 50) -> None:
    from consumers.processor import Processor, RawMessage
    from producers.simulator import parse_faults, simulate

    messages = simulate(tables=1, hours=1, seed=3, faults=parse_faults("none"))
    raw = [RawMessage(m.value, m.key.encode(), "t", 0, o) for o, m in enumerate(messages)]
    processor = Processor()
    sink.commit(  # type: ignore[attr-defined]
        processor.process(raw[:count]),
        offsets={("t", 0): count},
        states=processor.take_dirty_states(),
    )


def test_the_writer_keeps_the_catalog_open_between_its_transactions(tmp_path: Path) -> None:
    # DuckDB's sqlite extension closes its SQLite connection after each transaction; the last
    # to close tore the WAL down under an EXCLUSIVE lock, and a reader meeting it slept a whole
    # second (the freshness p99). The sink's keeper process keeps the WAL up while it writes.
    from consumers.sink import LakeSink
    from infra import lake as lakes

    root = tmp_path / "lake"
    wal = root / "catalog.sqlite-wal"
    sink = LakeSink(lakes.Lake(root=root))
    try:
        assert sink.keeper is not None and sink.keeper.poll() is None
        _commit_some(sink, root)
        reader = lakes.connect(lakes.Lake(root=root), read_only=True)
        assert reader.execute("SELECT count(*) FROM events").fetchall() == [(50,)]
        reader.close()
        # Without the keeper the reader's close, the last, checkpointed and emptied the WAL.
        assert wal.is_file() and wal.stat().st_size > 0
        # And it holds no read transaction, which would pin the WAL and let it grow for ever:
        # a full checkpoint from another process is not kept waiting (busy = 0). (Another
        # process: a second SQLite library in this one would drop DuckDB's POSIX locks.)
        checkpoint = (
            "import sqlite3, sys\n"
            "con = sqlite3.connect(sys.argv[1], timeout=0)\n"
            "print(con.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone()[0])\n"
        )
        busy = subprocess.run(
            [sys.executable, "-c", checkpoint, str(root / "catalog.sqlite")],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout  # fmt: skip
        assert busy.strip() == "0"
        assert sink.keeper.poll() is None
    finally:
        sink.close()
    # Closed last, the keeper checkpointed every commit into the catalog file and left.
    assert sink.keeper.returncode == 0
    assert not wal.exists()
    con = sqlite3.connect(root / "catalog.sqlite")
    try:
        (files,) = con.execute("SELECT count(*) FROM ducklake_data_file").fetchone()
    finally:
        con.close()
    assert files > 0


def test_a_killed_writer_leaves_no_keeper_behind_and_its_lake_opens_again(tmp_path: Path) -> None:
    from consumers.sink import LakeSink
    from infra import lake as lakes

    root = tmp_path / "lake"
    script = (
        "import sys, pathlib, time\n"
        "from infra.lake import Lake\n"
        "from consumers.sink import LakeSink\n"
        "sink = LakeSink(Lake(root=pathlib.Path(sys.argv[1])))\n"
        "print(sink.keeper.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", script, str(root)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None
        keeper = int(writer.stdout.readline())
        assert not gone(keeper)
    finally:
        writer.kill()
        writer.wait(timeout=30)
    deadline = time.monotonic() + 30
    while not gone(keeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(keeper), "the keeper outlived its SIGKILLed writer"
    sink = LakeSink(lakes.Lake(root=root))
    try:
        _commit_some(sink, root)
        assert sink.con.execute("SELECT count(*) FROM events").fetchall() == [(50,)]
    finally:
        sink.close()


@pytest.mark.parametrize("interpreter", ["/nonexistent/python", "/bin/false"])
def test_a_writer_whose_keeper_cannot_start_writes_all_the_same(
    tmp_path: Path,
    interpreter: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The keeper only spares readers a wait: no interpreter to start it (OSError), or one that
    # exits before it is ready, is a warning, never a writer that cannot write.
    from consumers.sink import LakeSink
    from infra import lake as lakes

    root = tmp_path / "lake"
    monkeypatch.setattr(lakes.sys, "executable", interpreter)
    sink = LakeSink(lakes.Lake(root=root))
    try:
        assert sink.keeper is None
        _commit_some(sink, root)
        assert sink.con.execute("SELECT count(*) FROM events").fetchall() == [(50,)]
    finally:
        sink.close()
    assert "catalog keeper not" in caplog.text


def test_a_lake_made_before_a_column_existed_gains_it_keeping_its_rows(tmp_path: Path) -> None:
    from consumers.schema import TABLES
    from consumers.sink import LakeSink
    from infra.lake import Lake

    lake = Lake(root=tmp_path / "lake")
    sink = LakeSink(lake)
    sink.con.execute("ALTER TABLE rounds DROP COLUMN profile_hash")  # as an older lake was
    sink.con.execute("INSERT INTO rounds (round_id, status) VALUES ('r-old', 'settled')")
    sink.close()
    sink = LakeSink(lake)
    try:
        columns = [r[0] for r in sink.con.execute("DESCRIBE rounds").fetchall()]
        rows = sink.con.execute("SELECT round_id, profile_hash FROM rounds").fetchall()
    finally:
        sink.close()
    # added at the end (DuckLake appends columns); every column of the schema is there
    assert sorted(columns) == sorted(c.name for c in TABLES["rounds"])
    assert columns[-1] == "profile_hash"
    assert rows == [("r-old", None)]
