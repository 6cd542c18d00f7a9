"""Lake maintenance on a real DuckLake under traffic: small commits merged into a bounded number
of files, content and row ids unchanged, readers and the consumer running meanwhile, orphans
deleted only when old, and the consumer's id indexes recovering without a rebuild."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from consumers.pipeline import Pipeline, RawMessage
from consumers.sink import ANALYTIC_TABLES, LakeSink, content_hashes
from croupier.cli import main
from infra import lake as lakes
from infra import maintenance
from tests.consumers.helpers import night

# The bound a pass leaves: the latest snapshot reads at most this many files per table (one
# per DuckLake target file size, 512 MiB: one here), and no other file stays on disk.
FILES_PER_TABLE = 1
# A trickle, as a live floor commits: 6-20 messages a batch, some 550 commits for the first two
# thirds of the night (1-8, some 1,600 commits, took 25 minutes beside three other test workers
# and its reader's spinning took a core from them; 3-12 still 11 minutes).
SMALL = (6, 20)
# Snapshot retention while readers run: longer than any of their queries (a reader whose
# snapshot was expired mid-query fails "No snapshot found", as it would in production with a
# retention shorter than its queries); the final pass at rest expires everything.
CONCURRENT_RETENTION = timedelta(seconds=20)
# File grace while readers and the consumer run: longer than any of their queries, as the
# setting lake_file_grace must be (default 10 minutes). 1 s was not, on a loaded CI machine: a
# reader's query outlived it and met a merged-away file already deleted. (A batch's Parquet
# file whose commit waited longer than 5 s, then 30 s, for the catalog's lock was deleted as an
# orphan and then referenced, until the sink registered its writes in flight: see
# test_a_commit_held_past_the_grace_keeps_its_files.)
CONCURRENT_GRACE = timedelta(seconds=30)
# After the second third, readers and passes go on until a pass has deleted files (the merged-
# away ones, once `CONCURRENT_GRACE` old), at most this long.
DELETIONS_WITHIN_S = 120.0
# Maintenance passes beside a writer rolling back in a loop: the race they test failed 6 % of
# passes, so 20 passes catch it with a chance of 1 - 0.94 ** 20 = 71 % per run.
PASSES = 20


def _messages(count: int | None = None) -> list[RawMessage]:
    sim = night(tables=2, hours=1.5, seed=11).messages
    return [
        RawMessage(value=m.value, key=m.key.encode(), topic="t", partition=0, offset=i)
        for i, m in enumerate(sim[:count])
    ]


def _consume(
    pipeline: Pipeline, messages: list[RawMessage], rng: random.Random, sizes: tuple[int, int]
) -> int:
    """Hand `messages` to the pipeline in batches of random sizes; returns the commits made."""
    commits = position = 0
    while position < len(messages):
        size = rng.randint(*sizes)
        pipeline.handle(messages[position : position + size])
        position += size
        commits += 1
    pipeline.flush()
    return commits


def _rows_by_rowid(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """A hash of (rowid, row) of every table: equal iff no row moved to another rowid."""
    out = {}
    for table in (*ANALYTIC_TABLES, "consumer_offsets", "table_state"):
        row = con.execute(
            f"SELECT count(*), md5(coalesce(string_agg(CAST(rowid AS VARCHAR) || ':' || "
            f"CAST(t AS VARCHAR), chr(10) ORDER BY rowid), '')) FROM {table} t"
        ).fetchone()
        out[table] = f"{row[0]}:{row[1]}" if row else ""
    return out


def _live_files(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    rows = con.execute(
        "SELECT t.table_name, count(*) FROM __ducklake_metadata_lake.ducklake_data_file f "
        "JOIN __ducklake_metadata_lake.ducklake_table t USING (table_id) "
        "WHERE f.end_snapshot IS NULL AND t.end_snapshot IS NULL GROUP BY 1"
    ).fetchall()
    return {str(t): int(n) for t, n in rows}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Content of the lake the same messages make in a few large batches, never maintained."""
    root = tmp_path_factory.mktemp("reference") / "lake"
    sink = LakeSink(lakes.Lake(root=root))
    pipeline = Pipeline(sink)
    messages = _messages()
    for position in range(0, len(messages), 5_000):
        pipeline.handle(messages[position : position + 5_000])
    pipeline.close()
    try:
        return content_hashes(sink.con)
    finally:
        sink.close()


@pytest.mark.timeout(1800)  # some 550 commits beside a reader and a maintainer
def test_maintenance_under_traffic_bounds_files_and_keeps_everything(
    tmp_path: Path, reference: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="consumers.event_index")
    store = lakes.Lake(root=tmp_path / "lake")
    messages = _messages()
    first, second, third = (
        messages[: len(messages) // 3],
        messages[len(messages) // 3 : 2 * len(messages) // 3],
        messages[2 * len(messages) // 3 :],
    )
    rng = random.Random(5)
    sink = LakeSink(store)
    # The consumer maintains on its own too, every second (between batches, on its commit
    # thread), beside the passes another process runs below.
    pipeline = Pipeline(
        sink,
        maintenance=maintenance.Schedule(
            every_s=1.0, retention=CONCURRENT_RETENTION, grace=CONCURRENT_GRACE
        ),
    )
    commits = _consume(pipeline, first, rng, SMALL)
    files_first_third = maintenance.data_files(store).files

    # A reader polling the lake read-only, and passes from another connection, while the
    # consumer commits the second third.
    stop = threading.Event()
    errors: list[str] = []
    gave_up: list[str] = []
    reports: list[maintenance.MaintenanceReport] = []
    seen: list[int] = []

    def reader() -> None:
        try:
            con = lakes.connect(store, read_only=True)
            try:
                while not stop.is_set():
                    (n,) = con.execute("SELECT count(*) FROM events").fetchone() or (0,)
                    con.execute("SELECT sum(wager_cents) FROM settlements").fetchall()
                    seen.append(int(n))
                    time.sleep(0.05)  # a dashboard's pace: a spinning reader starves the writer
            finally:
                con.close()
        except BaseException:
            errors.append(traceback.format_exc())

    def maintainer() -> None:
        try:
            con = lakes.connect(store)
            try:
                while not stop.is_set():
                    # Busy: the consumer's own pass is running.
                    with contextlib.suppress(maintenance.MaintenanceBusy):
                        try:
                            reports.append(
                                maintenance.maintain(
                                    con,
                                    store,
                                    retention=CONCURRENT_RETENTION,
                                    grace=CONCURRENT_GRACE,
                                )
                            )
                        except duckdb.Error as exc:
                            # A pass beside a consumer committing every ~0.1 s may give up
                            # on the catalog's lock (a clear error, as `croupier lake
                            # maintain` exits 1); anything else is a failure.
                            if "database is locked" not in str(exc):
                                raise
                            gave_up.append(str(exc))
                    time.sleep(0.3)
            finally:
                con.close()
        except BaseException:
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=reader), threading.Thread(target=maintainer)]
    for thread in threads:
        thread.start()
    try:
        commits += _consume(pipeline, second, rng, SMALL)
        deadline = time.monotonic() + DELETIONS_WITHIN_S
        while (
            not errors
            and sum(r.obsolete_files_deleted for r in reports) == 0
            and time.monotonic() < deadline
        ):
            time.sleep(0.5)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    assert not errors, errors
    passes = reports + pipeline.maintenance_reports
    print(f"\nbeside the consumer: {len(reports)} passes from another connection "
          f"({len(gave_up)} gave up on the lock), the consumer's own: "
          f"{len(pipeline.maintenance_reports)} (the last 10 kept); obsolete files deleted "
          f"{sum(r.obsolete_files_deleted for r in passes)}, deferred "
          f"{[r.obsolete_files_deferred for r in passes]}, pass seconds "
          f"{[r.seconds for r in passes]}")  # fmt: skip
    assert sum(r.files_merged for r in passes) > 0
    # Files were deleted under the readers' feet (past the grace), not only merged.
    assert sum(r.obsolete_files_deleted for r in passes) > 0
    assert pipeline.maintenance_reports, "the consumer ran no pass of its own"
    assert seen == sorted(seen), "a reader saw rows disappear"
    pipeline.close()  # persists the id indexes: their watermark is the latest snapshot

    # A final pass at rest: files down to the bound, content and row ids unchanged.
    before_rows = _rows_by_rowid(sink.con)
    before_hashes = content_hashes(sink.con)
    started = time.monotonic()
    report = maintenance.maintain(sink.con, store, retention=timedelta(0), grace=timedelta(0))
    elapsed = time.monotonic() - started
    live = _live_files(sink.con)
    on_disk = maintenance.data_files(store)
    print(
        f"\n{commits} commits: {files_first_third} files on disk after the first third; "
        f"final pass {elapsed:.2f} s: {report.before.files} -> {on_disk.files} files "
        f"({report.before.bytes} -> {on_disk.bytes} bytes), live {live}, "
        f"{report.snapshots_expired} snapshots expired, pinned at {report.pinned_at}"
    )
    assert commits >= 500
    assert max(live.values()) <= FILES_PER_TABLE
    assert on_disk.files == sum(live.values())
    assert _rows_by_rowid(sink.con) == before_rows
    assert content_hashes(sink.con) == before_hashes
    # Expiry stopped at the indexes' watermark: their snapshot and the later ones remain.
    watermarks = maintenance.index_watermarks(store.root)
    assert set(watermarks) == {"event_index", "round_index"}
    assert report.oldest_snapshot_kept == min(watermarks.values())
    sink.close()

    # Restart: the indexes recover from their manifests (no rebuild) and the last third
    # brings no false duplicate: the content equals the never-maintained lake's.
    caplog.clear()
    sink = LakeSink(store)
    pipeline = Pipeline(sink)
    rebuilt = [r for r in caplog.records if "rebuilding" in r.getMessage()]
    assert not rebuilt, [r.getMessage() for r in rebuilt]
    commits += _consume(pipeline, third, rng, (50, 300))
    pipeline.close()
    assert not [r for r in caplog.records if "rebuilding" in r.getMessage()]
    assert content_hashes(sink.con) == reference
    sink.close()


def _small_lake(root: Path) -> lakes.Lake:
    store = lakes.Lake(root=root)
    con = lakes.connect(store, create=True)
    try:
        con.execute("CREATE TABLE t (a INTEGER, s VARCHAR)")
        for i in range(40):
            con.execute(f"INSERT INTO t SELECT range + {i * 100}, 'x' FROM range(50)")
    finally:
        con.close()
    return store


def test_orphans_are_deleted_only_when_old(tmp_path: Path) -> None:
    store = _small_lake(tmp_path / "lake")
    folder = store.data_path / "main" / "t"
    old = folder / "ducklake-killed-writer.parquet"
    fresh = folder / "ducklake-live-writer.parquet"
    old.write_bytes(b"PAR1 left by a killed writer")
    fresh.write_bytes(b"PAR1 about to be committed")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    con = lakes.connect(store)
    try:
        report = maintenance.maintain(
            con, store, retention=timedelta(days=7), grace=timedelta(hours=1)
        )
        assert report.orphaned_files_deleted == 1
        assert not old.exists() and fresh.exists()
        # Nothing is a day old: no snapshot expired; the merged-away files wait for the grace.
        assert report.snapshots_expired == 0
        assert report.obsolete_files_deferred == report.files_merged > 0
        assert con.execute("SELECT count(*), sum(a) FROM t").fetchone() == (2000, 3949000)
    finally:
        con.close()


def test_cli_maintain(tmp_path: Path) -> None:
    store = _small_lake(tmp_path / "lake")
    runner = CliRunner()
    args = ["lake", "maintain", "--lake", str(store.root), "--retention", "0 s", "--grace", "0s"]
    result = runner.invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["before"]["files"] == 40
    assert report["after"]["files"] == report["live_files_after"] == 1
    assert report["snapshots_expired"] > 0

    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "files:" in result.output and "snapshots:" in result.output
    assert "spared:" not in result.output
    writer = maintenance.Writer(store.root)  # a writer committing meanwhile
    try:
        with writer.writing():
            result = runner.invoke(main, args)
    finally:
        writer.close()
    assert result.exit_code == 0, result.output
    assert "spared:     the files of 1 commit(s) in flight" in result.output

    with maintenance.maintenance_lock(store.root):
        result = runner.invoke(main, args)
    assert result.exit_code == 3
    assert runner.invoke(main, [*args[:-2], "--grace", "soon"]).exit_code == 2
    missing = runner.invoke(main, ["lake", "maintain", "--lake", str(tmp_path / "none")])
    assert missing.exit_code == 1


# A grace short enough to wait out in a test; a commit held for twice as long.
SHORT_GRACE = timedelta(seconds=1)


@pytest.mark.parametrize("registered", [True, False], ids=["registered", "unregistered"])
def test_a_commit_held_past_the_grace_keeps_its_files(tmp_path: Path, registered: bool) -> None:
    """A writer's transaction has written its Parquet file and waits (as a commit waits for the
    catalog's lock under load) longer than the grace while a pass runs. Registered, as the
    consumer's sink is, its file is spared and its commit reads back. Unregistered, the age
    rule alone takes the file for an orphan: the hazard the registry closes, shown real."""
    store = lakes.Lake(root=tmp_path / "lake")
    sink = LakeSink(store)
    other = lakes.connect(store)
    try:
        with sink.writing() if registered else contextlib.nullcontext():
            sink.con.execute("BEGIN TRANSACTION")
            sink.con.execute(
                "INSERT INTO consumer_offsets (source_topic, source_partition, next_offset) "
                "VALUES ('t', 0, 42)"
            )
            written = [
                p for p in store.data_path.rglob("*.parquet") if "consumer_offsets" in str(p)
            ]
            assert len(written) == 1, written  # written now, committed below
            time.sleep(2 * SHORT_GRACE.total_seconds())
            report = maintenance.maintain(
                other, store, retention=timedelta(days=1), grace=SHORT_GRACE
            )
            sink.con.execute("COMMIT")
        assert report.writes_in_flight == registered
        if registered:
            assert report.orphaned_files_deleted == 0 and written[0].exists()
            rows = sink.con.execute("SELECT next_offset FROM consumer_offsets").fetchall()
            assert rows == [(42,)]
        else:
            assert report.orphaned_files_deleted == 1 and not written[0].exists()
            with pytest.raises(duckdb.IOException, match="No such file"):
                sink.con.execute("SELECT next_offset FROM consumer_offsets").fetchall()
    finally:
        other.close()
        sink.close()


def test_writers_in_flight_live_and_dead(tmp_path: Path) -> None:
    """A live writer's write in flight holds the cutoff back, an idle one does not; a killed
    writer's marker (its lock gone with its process) is removed and holds nothing back."""
    root = tmp_path / "lake"
    writer = maintenance.Writer(root)
    assert maintenance.writes_in_flight(root) == []
    before = time.time()
    with writer.writing():
        (start,) = maintenance.writes_in_flight(root)
        assert before - 0.1 <= start <= time.time() + 0.1
    assert maintenance.writes_in_flight(root) == []
    writer.close()
    assert not list((root / maintenance.WRITERS).iterdir())

    # Junk in the folder: a directory, a FIFO (opening it would block) or a symlink is not a
    # marker; a file nobody locks is a dead writer's.
    folder = root / maintenance.WRITERS
    (folder / "junk-dir").mkdir()
    os.mkfifo(folder / "junk-fifo")
    (folder / "junk-link").symlink_to(folder / "junk-dir")
    (folder / "junk-file").write_bytes(b"x")
    assert maintenance.writes_in_flight(root) == []
    assert sorted(p.name for p in folder.iterdir()) == ["junk-dir", "junk-fifo", "junk-link"]
    for name in ("junk-fifo", "junk-link"):
        (folder / name).unlink()
    (folder / "junk-dir").rmdir()

    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from infra import maintenance\n"
         "w = maintenance.Writer(Path(sys.argv[1]))\n"
         "with w.writing():\n    print('writing', flush=True); time.sleep(600)",
         str(root)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "writing"
        assert len(maintenance.writes_in_flight(root)) == 1  # alive, in flight
        assert len(list((root / maintenance.WRITERS).iterdir())) == 1
    finally:
        child.kill()
        child.wait()
    assert maintenance.writes_in_flight(root) == []
    assert not list((root / maintenance.WRITERS).iterdir())


def test_writer_registry_edges(tmp_path: Path) -> None:
    """Nested writes stay in flight until the outer one ends; a registration its writer was
    killed in is removed an hour on, not before (its writer may lock it any moment)."""
    root = tmp_path / "lake"
    writer = maintenance.Writer(root)
    try:
        with writer.writing():
            with writer.writing():
                pass
            assert len(maintenance.writes_in_flight(root) or []) == 1
        assert maintenance.writes_in_flight(root) == []
    finally:
        writer.close()
    folder = root / maintenance.WRITERS
    fresh, stale = folder / ".1-fresh", folder / ".2-stale"
    fresh.write_bytes(b"")
    stale.write_bytes(b"")
    two_hours_ago = time.time() - 7200
    os.utime(stale, (two_hours_ago, two_hours_ago))
    assert maintenance.writes_in_flight(root) == []
    assert [p.name for p in folder.iterdir()] == [fresh.name]


def test_an_unreadable_registry_spares_every_orphan(tmp_path: Path) -> None:
    """If the writers' folder cannot be listed (here: a file in its place), no write in flight
    can be ruled out: the pass deletes no orphan and does the rest."""
    store = _small_lake(tmp_path / "lake")
    orphan = store.data_path / "main" / "t" / "ducklake-killed-writer.parquet"
    orphan.write_bytes(b"PAR1 left by a killed writer")
    two_hours_ago = time.time() - 7200
    os.utime(orphan, (two_hours_ago, two_hours_ago))
    (store.root / maintenance.WRITERS).write_text("not a folder")
    with pytest.raises(lakes.LakeError, match="cannot register as a writer of the lake"):
        LakeSink(store)  # a clear error (the CLI's exit 1), not a traceback
    con = lakes.connect(store)
    try:
        report = maintenance.maintain(con, store, retention=timedelta(days=7), grace=timedelta(0))
        assert report.files_merged > 0 and report.orphaned_files_deleted == 0
        assert orphan.exists()
        (store.root / maintenance.WRITERS).unlink()
        report = maintenance.maintain(con, store, retention=timedelta(days=7), grace=timedelta(0))
        assert report.orphaned_files_deleted == 1 and not orphan.exists()
    finally:
        con.close()


def test_a_marker_far_in_the_future_is_no_error() -> None:
    """tmpfs keeps any mtime: a live marker dated in year 11476 (out of datetime's range) must
    not fail the pass."""
    with tempfile.TemporaryDirectory(dir="/dev/shm") as folder:
        store = _small_lake(Path(folder) / "lake")
        writer = maintenance.Writer(store.root)
        os.utime(writer.path, (3e11, 3e11))
        con = lakes.connect(store)
        try:
            report = maintenance.maintain(
                con, store, retention=timedelta(days=7), grace=timedelta(hours=1)
            )
            assert report.writes_in_flight == 1
        finally:
            con.close()
            writer.close()


def test_files_a_rolled_back_writer_removes_do_not_fail_a_pass(tmp_path: Path) -> None:
    """A writer whose commit fails rolls back, and DuckLake deletes the files it wrote: one gone
    between the orphan step's listing and its look at it is no error (it was, in 6 % of passes
    beside a writer rolling back in a loop)."""
    store = lakes.Lake(root=tmp_path / "lake")
    sink = LakeSink(store)
    stop = threading.Event()
    rollbacks = 0

    def churn() -> None:
        nonlocal rollbacks
        while not stop.is_set():
            sink.con.execute("BEGIN TRANSACTION")
            sink.con.execute("INSERT INTO consumer_offsets VALUES ('t', 0, 1)")
            sink.con.execute("ROLLBACK")
            rollbacks += 1

    thread = threading.Thread(target=churn)
    thread.start()
    con = lakes.connect(store)
    passes = 0
    try:
        # Counted, not timed: a slow machine makes fewer passes in a given time, not fewer
        # rollbacks between two of them (CI once made 9 passes in 10 s, 10 asked).
        while (passes < PASSES or rollbacks < 10 * PASSES) and thread.is_alive():
            maintenance.maintain(
                con, store, retention=timedelta(seconds=5), grace=timedelta(seconds=1)
            )
            passes += 1
    finally:
        stop.set()
        thread.join()
        con.close()
        sink.close()
    assert passes >= PASSES and rollbacks >= 10 * PASSES, (passes, rollbacks)
