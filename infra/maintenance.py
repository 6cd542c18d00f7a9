"""Lake maintenance: keep the number of Parquet files and catalog rows bounded under traffic.

Every consumer batch is one DuckLake commit, and each commit writes a small Parquet file per
table it touches (or, under DuckLake's inlining limit, rows in the catalog). `maintain` runs,
in this order, each step its own short commit (readers and the consumer go on meanwhile):

1. delete the files earlier passes made obsolete (merged away, expired) that were scheduled for
   deletion at least `grace` ago (what `ducklake_cleanup_old_files` does, by age: see
   `cleanup`);
2. flush inlined rows into Parquet (`ducklake_flush_inlined_data`);
3. merge each table's small files into files of up to DuckLake's target size
   (`ducklake_merge_adjacent_files`): row ids, time travel and change feeds are kept, the
   merged file records which snapshot inserted each row; the old files become obsolete;
4. expire the snapshots older than `retention`, except the ones an id index still needs
   (see below): time travel to them is gone afterwards (`ducklake_expire_snapshots`);
5. step 1 again (with `grace` 0, the files this pass made obsolete would go at once);
6. delete orphaned files (in the data folder but in no snapshot: a killed writer's leftovers)
   whose mtime is at least `grace` old and older than every write still in flight
   (`ducklake_delete_orphaned_files`; see "Writers" below).

Ages count back from the pass's start, not from the step: a writer whose commit waits for the
catalog's lock while this pass's steps hold it, or a reader whose query began before a merge,
keeps its files for `grace` beyond the pass however long the pass takes (under load one pass
took 57 s, and a batch's file written before it aged past a 30 s grace while its commit waited:
deleted as an orphan, then referenced). `grace` 0 means nobody reads or writes: then now.

Writers. A writer's files are in no snapshot until its commit, so by the age rule alone a
commit that waited longer than `grace` (for the catalog's lock, under load) would lose its
files to a pass's orphan step and then reference them. So each writing process registers
(`Writer`, one marker file per process in `<lake>/writers/`, flock-held while it lives) and
marks each transaction in flight from before its first file to after its commit; the orphan
step's cutoff is also before the start of every write in flight. A marker whose lock a pass
can take belongs to a dead writer (killed): it is removed, and its files are orphans by age.
If `writers/` cannot be read, no write in flight can be ruled out: the orphan step deletes
nothing that pass.
The markers live beside the lake's root, like `maintenance.lock`: writers on other machines
(a PostgreSQL catalog) are covered by the grace alone.

The consumer's id indexes (`<lake>/event_index`, `round_index`, `event_index-1`, ...) record
in their manifests the snapshot `watermark` they cover; on restart they read the rows committed
after it. Expiry keeps the lowest watermark of every index directory in the lake folder and all
later snapshots, so no restart ever has to rebuild an index from a full scan. An index directory
no process uses any more holds its watermark back for ever: delete it (it is derived data).

One pass at a time per lake (`maintenance.lock`, flock): a second pass started meanwhile is
skipped. Each step that meets a concurrent commit ("database is locked", a DuckLake conflict) is
run again with backoff: the steps write nothing until their commit, and a failed one leaves at
most unreferenced files behind, which step 6 removes later.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import random
import stat
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, TypeVar

import duckdb

from infra import lake as lakes
from infra.config import parse_duration

log = logging.getLogger("croupier.maintenance")

LOCK = "maintenance.lock"
# How many snapshot ids one expiry call names (a SQL list literal).
EXPIRE_CHUNK = 20_000
# A step meeting other writers' commits is run again for up to RETRY_FOR_S: beside a consumer
# committing every 0.1 s and another pass, 30 tries over ~45 s were not always enough.
ATTEMPTS = 200
RETRY_FOR_S = 180.0
# What another writer's commit does to a step (seen under 2,000 commits with passes beside
# them): the catalog locked, a DuckLake conflict, the transaction aborted by either (DuckDB
# then raises it wrapped in other types).
TRANSIENT = ("database is locked", "onflict", "aborted")
VANISHED = ("No such file or directory",)
# The id indexes' manifests (consumers.event_index): format tag and file name.
INDEX_FORMAT = "croupier-event-index"
INDEX_MANIFEST = "manifest.json"
# The live writers' markers (`Writer`): a folder in the lake's root. A marker's mtime is the
# start of its write in flight, or IDLE; a write is taken to start this much before its mark
# (file times come from the kernel's coarse clock, which can trail time.time() by a tick).
WRITERS = "writers"
IDLE = 0.0
WRITE_MARGIN_S = 1.0
T = TypeVar("T")


class MaintenanceBusy(RuntimeError):
    """Another maintenance pass holds the lake's lock."""


@dataclass
class FileCount:
    files: int = 0
    bytes: int = 0


@dataclass
class MaintenanceReport:
    """What one pass did. `before`/`after`: Parquet files in the data folder (all of them:
    live, obsolete not yet deleted, orphaned); `live_*`: files the latest snapshot reads."""

    lake: str
    before: FileCount = field(default_factory=FileCount)
    after: FileCount = field(default_factory=FileCount)
    live_files_before: int = 0
    live_files_after: int = 0
    inlined_rows_flushed: int = 0
    files_merged: int = 0
    files_created: int = 0
    snapshots_expired: int = 0
    snapshots_kept: int = 0
    oldest_snapshot_kept: int | None = None
    pinned_at: int | None = None  # the lowest id-index watermark (None: no index)
    pinned_by: str | None = None  # the index directory holding it
    obsolete_files_deleted: int = 0
    obsolete_files_deferred: int = 0  # scheduled less than `grace` ago: the next pass
    orphaned_files_deleted: int = 0
    writes_in_flight: int = 0  # live writers' commits whose files the orphan step spared
    retries: int = 0
    seconds: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Writer:
    """A writing process's registration with the lake's maintenance (see "Writers" in the
    module's docstring): `with writer.writing():` around each transaction; `close()` at the
    end. Costs two utime calls a transaction. Raises OSError if `<root>/writers/` cannot take
    its marker."""

    def __init__(self, root: Path) -> None:
        folder = root / WRITERS
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.path = folder / name
        self._depth = 0
        # Locked under a hidden name, then renamed: a pass never sees it unlocked (dead). Its
        # mtime is its creation's until marked idle: a write in flight since then, harmless.
        hidden = folder / f".{name}"
        self._handle: IO[bytes] | None = hidden.open("wb")
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX)  # held while this process lives
            hidden.rename(self.path)
        except BaseException:
            self._handle.close()
            with contextlib.suppress(OSError):
                hidden.unlink()
            raise
        self._mark(IDLE)

    def _mark(self, when: float) -> None:
        assert self._handle is not None, "the writer was closed"
        os.utime(self._handle.fileno(), (when, when))

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """A write in flight: a pass's orphan step spares every file written from now on
        until the block ends (an inner block leaves the outer one in flight)."""
        if self._depth == 0:
            self._mark(time.time())
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._mark(IDLE)

    def close(self) -> None:
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        self._handle.close()  # releases the lock
        self._handle = None


def writes_in_flight(root: Path) -> list[float] | None:
    """The start (epoch seconds) of every write in flight by a live writer of the lake at
    `root`, or None if `<root>/writers/` cannot be read (then no file may be taken for an
    orphan). Removes the markers of dead writers (and a registration a writer was killed in,
    an hour on). A marker that cannot be opened or locked (another user's, a file system
    without locks) counts as live: its files are kept."""
    folder = root / WRITERS
    starts: list[float] = []
    try:
        if not folder.exists():
            return starts
        markers = sorted(folder.iterdir())
    except OSError as exc:
        log.warning("lake maintenance: cannot read %s (%s): no orphan deleted", folder, exc)
        return None
    for marker in markers:
        registering = marker.name.startswith(".")
        try:
            # Not following a link, never blocking (a FIFO), then checked on what was opened.
            fd = os.open(marker, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:  # closed meanwhile
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP or marker.is_dir():  # a link, a directory: not ours
                continue
            log.warning("lake maintenance: writer marker %s: %s; taken as live", marker, exc)
            with contextlib.suppress(OSError):
                info = marker.lstat()
                if stat.S_ISREG(info.st_mode) and info.st_mtime > IDLE and not registering:
                    starts.append(info.st_mtime)
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                # Alive (or unknown). Read after the lock test: a writer that begins a write
                # after this read writes files newer than the cutoff anyway.
                if not registering and (mtime := os.fstat(fd).st_mtime) > IDLE:
                    starts.append(mtime)
                continue
            # Its process is gone (a writer unlinks its marker before unlocking it); a
            # registration is left an hour, as its writer may lock it any moment.
            if not registering or info.st_mtime < time.time() - 3600:
                with contextlib.suppress(OSError):
                    marker.unlink()
        finally:
            os.close(fd)
    return starts


def index_watermarks(root: Path) -> dict[str, int]:
    """Watermark of every id-index directory in the lake folder, by directory name (a
    manifest that cannot be read is left out: its index is rebuilt whatever we keep)."""
    found: dict[str, int] = {}
    if not root.is_dir():
        return found
    for directory in sorted(root.iterdir()):
        manifest = directory / INDEX_MANIFEST
        try:
            if not directory.is_dir() or not manifest.is_file():  # EACCES: raised, not False
                continue
            body = json.loads(manifest.read_text(encoding="utf-8"))
            if body.get("format") != INDEX_FORMAT:
                continue
            found[directory.name] = int(body["watermark"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def data_files(lake: lakes.Lake, con: duckdb.DuckDBPyConnection | None = None) -> FileCount:
    """Parquet files in the data folder (or under the bucket's prefix, listed through `con`,
    which has the lake attached) and their bytes."""
    count = FileCount()
    if lake.data_remote:
        if con is None:
            raise lakes.LakeError("listing a bucket needs a connection with the lake attached")
        pattern = f"{lake.data_location}**/*.parquet".replace("'", "''")
        rows = con.execute(f"SELECT count(*), sum(size) FROM read_blob('{pattern}')").fetchall()
        count.files, count.bytes = int(rows[0][0]), int(rows[0][1] or 0)
        return count
    for dirpath, _, names in os.walk(lake.data_path):
        for name in names:
            if name.endswith(".parquet"):
                with contextlib.suppress(OSError):
                    count.bytes += os.stat(os.path.join(dirpath, name)).st_size
                    count.files += 1
    return count


@contextlib.contextmanager
def maintenance_lock(root: Path) -> Iterator[None]:
    """One pass per lake at a time; MaintenanceBusy if another holds it."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / LOCK).open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            raise MaintenanceBusy(f"another maintenance pass is running on {root}") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def maintain(
    con: duckdb.DuckDBPyConnection,
    lake: lakes.Lake,
    *,
    retention: timedelta,
    grace: timedelta,
    alias: str = lakes.LAKE_ALIAS,
    sleep: Callable[[float], None] = time.sleep,
    retry_for_s: float = RETRY_FOR_S,
) -> MaintenanceReport:
    """One maintenance pass (see the module's docstring) on `con`, a read-write connection
    with `lake` attached as `alias`. Raises MaintenanceBusy if another pass is running, and
    duckdb.Error if a step still fails after `retry_for_s` of retries (the lake is then as
    that step found it: every step is atomic). Never run it inside an open transaction of
    `con`."""
    with maintenance_lock(lake.root):
        return _maintain(
            con, lake, retention=retention, grace=grace, alias=alias, sleep=sleep,
            retry_for_s=retry_for_s,
        )  # fmt: skip


def _maintain(
    con: duckdb.DuckDBPyConnection,
    lake: lakes.Lake,
    *,
    retention: timedelta,
    grace: timedelta,
    alias: str,
    sleep: Callable[[float], None],
    retry_for_s: float,
) -> MaintenanceReport:
    started = time.monotonic()
    # files must be `grace` old at the pass's start (see the module's docstring)
    since = datetime.now(UTC) - grace
    report = MaintenanceReport(lake=str(lake.root))
    report.before = data_files(lake, con)
    meta = f'"__ducklake_metadata_{alias}"'
    name = alias.replace("'", "''")

    def run(step: str, action: Callable[[], T], transient: tuple[str, ...] = ()) -> T:
        t0 = time.monotonic()
        for attempt in range(ATTEMPTS):  # about RETRY_FOR_S at most
            try:
                result = action()
                break
            except duckdb.Error as exc:
                text = str(exc)
                busy = isinstance(exc, duckdb.TransactionException) or any(
                    sign in text for sign in (*TRANSIENT, *transient)
                )
                if not busy or attempt == ATTEMPTS - 1 or time.monotonic() - t0 > retry_for_s:
                    raise
                with contextlib.suppress(duckdb.Error):  # a failed commit leaves it aborted
                    con.execute("ROLLBACK")
                report.retries += 1
                log.debug("lake maintenance: %s met a concurrent commit, again: %s", step, exc)
                sleep(min(2.0, 0.05 * 1.5**attempt) * random.uniform(0.5, 1.5))
        report.steps[step] = round(report.steps.get(step, 0.0) + time.monotonic() - t0, 3)
        return result

    def live_files() -> int:
        rows = con.execute(
            f"SELECT count(*) FROM {meta}.ducklake_data_file WHERE end_snapshot IS NULL"
        ).fetchall()
        return int(rows[0][0])

    def cleanup() -> None:
        # Not `ducklake_cleanup_old_files(older_than => ...)`: on a SQLite catalog it compares
        # the times as text and deleted files scheduled a second before (DuckLake 1.0). The
        # same work by age, read with typed times: the catalog rows of the files scheduled
        # before `since` go first (one statement), then the files; a crash in between leaves
        # only unreferenced files, which the orphan step deletes once they are `grace` old.
        scheduled = f"{meta}.ducklake_files_scheduled_for_deletion"
        cutoff = datetime.now(UTC) if grace <= timedelta(0) else since
        old = con.execute(
            f"SELECT data_file_id, path, path_is_relative FROM {scheduled} "
            "WHERE CAST(schedule_start AS TIMESTAMPTZ) <= ?",
            [cutoff],
        ).fetchall()
        if old:
            (root,) = con.execute(
                f"SELECT value FROM {meta}.ducklake_metadata WHERE key = 'data_path'"
            ).fetchone() or (lake.data_location,)
            con.execute(
                f"DELETE FROM {scheduled} WHERE data_file_id IN "
                f"({', '.join(str(int(i)) for i, _, _ in old)})"
            )
            # In a bucket there is nothing to unlink with: the files, no longer in the
            # catalog, are orphans that step 6 deletes (written long before `since`).
            for _, path, relative in [] if lake.data_remote else old:
                with contextlib.suppress(FileNotFoundError):
                    (Path(root) / path if relative else Path(path)).unlink()
            report.obsolete_files_deleted += len(old)
        left = con.execute(f"SELECT count(*) FROM {scheduled}").fetchall()
        report.obsolete_files_deferred = int(left[0][0])

    def orphans() -> int:
        cutoff = datetime.now(UTC) if grace <= timedelta(0) else since
        # Before every write in flight, whatever the grace (see "Writers" above).
        starts = writes_in_flight(lake.root)
        if starts is None:
            return 0
        report.writes_in_flight = len(starts)
        earliest = min([cutoff.timestamp(), *(s - WRITE_MARGIN_S for s in starts)])
        cutoff = datetime.fromtimestamp(max(earliest, 0.0), UTC)
        return len(
            con.execute(
                f"CALL ducklake_delete_orphaned_files('{name}', older_than => ?)", [cutoff]
            ).fetchall()
        )

    def finish() -> MaintenanceReport:
        kept = con.execute(f"SELECT count(*), min(snapshot_id) FROM ducklake_snapshots('{name}')")
        count, oldest = kept.fetchall()[0]
        report.snapshots_kept, report.oldest_snapshot_kept = int(count), oldest
        report.live_files_after = live_files()
        report.after = data_files(lake, con)
        report.seconds = round(time.monotonic() - started, 3)
        return report

    report.live_files_before = live_files()
    run("cleanup_old_files", cleanup)

    flushed = run(
        "flush_inlined_data",
        lambda: con.execute(f"CALL ducklake_flush_inlined_data('{name}')").fetchall(),
    )
    report.inlined_rows_flushed = sum(int(r[-1] or 0) for r in flushed)

    merged = run(
        "merge_adjacent_files",
        lambda: con.execute(f"CALL ducklake_merge_adjacent_files('{name}')").fetchall(),
    )
    report.files_merged = sum(int(r[2] or 0) for r in merged)
    report.files_created = sum(int(r[3] or 0) for r in merged)

    pins = index_watermarks(lake.root)
    if pins:
        report.pinned_by, report.pinned_at = min(pins.items(), key=lambda kv: (kv[1], kv[0]))

    def expire() -> int:
        # Snapshots older than the retention and below every index's watermark (the watermark
        # snapshot itself stays: an index checks it is the one it indexed); never the latest.
        cutoff = datetime.now(UTC) - retention
        latest = lakes.current_snapshot(con)
        limit = latest if report.pinned_at is None else min(latest, report.pinned_at)
        ids = [
            int(s)
            for (s,) in con.execute(
                f"SELECT snapshot_id FROM ducklake_snapshots('{name}') "
                "WHERE snapshot_time < ? AND snapshot_id < ? ORDER BY snapshot_id",
                [cutoff, limit],
            ).fetchall()
        ]
        expired = 0
        for start in range(0, len(ids), EXPIRE_CHUNK):
            chunk = ids[start : start + EXPIRE_CHUNK]
            expired += len(
                con.execute(
                    f"CALL ducklake_expire_snapshots('{name}', versions => "
                    f"[{', '.join(map(str, chunk))}])"
                ).fetchall()
            )
        return expired

    report.snapshots_expired = run("expire_snapshots", expire)
    run("cleanup_old_files", cleanup)

    # A writer's failed commit rolls back and DuckLake deletes its files: one gone between
    # the orphan step's listing and its look at it is no error, the step runs again.
    report.orphaned_files_deleted = run("delete_orphaned_files", orphans, VANISHED)
    return finish()


@dataclass(frozen=True)
class Schedule:
    """When the consumer runs a pass on its own (between batches) and with what limits."""

    every_s: float
    retention: timedelta
    grace: timedelta

    @classmethod
    def from_settings(cls, settings: Any) -> Schedule | None:
        """The configured schedule, or None when `lake_maintenance_every_s` is 0 (off)."""
        if settings.lake_maintenance_every_s <= 0:
            return None
        return cls(
            every_s=float(settings.lake_maintenance_every_s),
            retention=parse_duration(settings.lake_snapshot_retention),
            grace=parse_duration(settings.lake_file_grace),
        )
