"""The DuckLake store: a SQLite catalog plus a folder of Parquet files, one writer and many readers.

Extensions come from the pinned PyPI wheels (`duckdb-extension-ducklake`, `-sqlite`,
`-postgres-scanner` for a catalog on PostgreSQL) and are
copied into DuckDB's extension folder, so attaching the lake never downloads anything.
"""

from __future__ import annotations

import importlib.util
import logging
import select
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb

from infra import storage
from infra.catalog_url import pass_password, redact, split_password

LAKE_ALIAS = "lake"
KEEPER_READY_S = 10.0
# A live reader (a surveillance page, the freshness probe) polls the latest snapshot. On a
# SQLite catalog it attaches with SQLite's busy handler off and `read_live` retries a locked
# read every LIVE_RETRY_EVERY_S, for up to LIVE_RETRY_FOR_S: the handler in DuckDB's sqlite
# extension sleeps a whole second per wait (its build has no usleep).
LIVE_RETRY_EVERY_S = 0.005
LIVE_RETRY_FOR_S = 5.0
T = TypeVar("T")
log = logging.getLogger("croupier.lake")
# Name in the wheel -> name DuckDB looks for (the sqlite extension loads as `sqlite_scanner`).
_EXTENSIONS = {
    "ducklake": "ducklake",
    "sqlite": "sqlite_scanner",
    "postgres_scanner": "postgres_scanner",
    "httpfs": "httpfs",
}


# The changes (DuckLake's snapshots().changes keys) after which the change feed still lists
# exactly the rows added since: rows inserted (in files or inlined in the catalog), inlined
# rows flushed to files, files merged, columns or tables or views added. Any other (a delete,
# an update, a drop, or a kind DuckLake adds later) may leave in the feed a row the lake no
# longer holds.
FEED_SAFE_CHANGES = (
    "tables_inserted_into", "inlined_insert", "flushed_inlined", "merge_adjacent",
    "tables_altered", "tables_created", "schemas_created", "views_created", "views_altered",
)  # fmt: skip
# Those after which, moreover, the lake still holds every row it held before, as it was, under
# the same row id (what an incremental build needs of the rows it has read), provided the
# snapshot ended no column or table of the catalog (`catalog_entries_ended`): DuckLake records
# a column dropped and added back with a default (a new value in every old row) as
# `tables_altered`, as it does a comment (`croupier evidence` comments on its table every batch)
# or a column added. Not a table created: one renamed away and created again empty has its row
# ids from 0 again. The consumer's own DDL is a no-op, no snapshot, once its tables exist.
ROWS_KEPT_CHANGES = tuple(change for change in FEED_SAFE_CHANGES if change != "tables_created")


def catalog_entries_ended(alias: str = LAKE_ALIAS) -> str:
    """SQL: the ids of the snapshots that ended a column or a table of the lake attached as
    `alias` (dropped, renamed, retyped, its default changed), from DuckLake's own catalog."""
    meta = f'"__ducklake_metadata_{alias}"'
    return " UNION ALL ".join(
        f"SELECT end_snapshot FROM {meta}.{table} WHERE end_snapshot IS NOT NULL"
        for table in ("ducklake_column", "ducklake_table")
    )


def only_added_rows(changes: tuple[str, ...] = FEED_SAFE_CHANGES) -> str:
    """SQL true for a row of `<lake>.snapshots()` whose changes are all among `changes`: over
    snapshots that all are FEED_SAFE_CHANGES, the change feed lists exactly the rows added (it
    still lists a row inserted and then deleted); ROWS_KEPT_CHANGES, none of them among
    `catalog_entries_ended`, and every row read before is still there as it was."""
    safe = ", ".join(f"'{change}'" for change in changes)
    return f"coalesce(list_has_all([{safe}], map_keys(changes)), false)"


# What a losing process of a race to create a PostgreSQL catalog's tables is told.
_CREATION_RACE = ("already exists", "duplicate key value")


class LakeError(RuntimeError):
    """The lake is missing, or its extensions cannot be installed; the message says which."""


@dataclass(frozen=True, kw_only=True)
class Lake:
    """Where one lake lives: its catalog (metadata) and `data/` (Parquet files) under `root`.

    The catalog is `root/catalog.sqlite` (the embedded default, one writing process) or, with
    `catalog_url` (postgres://user[:password]@host:port/database), DuckLake's tables in that
    PostgreSQL database, which processes on several machines share; `root` then holds the
    data (a folder every process reaches) and this machine's own state (event index, locks).
    `data`, when given, is where the Parquet files go instead of `root/data`: another folder,
    or an S3-compatible URL (`infra.storage`)."""

    root: Path
    catalog_url: str | None = None
    data: str | None = None

    @property
    def catalog(self) -> Path:
        return self.root / "catalog.sqlite"

    @property
    def data_remote(self) -> bool:
        return self.data is not None and storage.is_remote(self.data)

    @property
    def data_path(self) -> Path:
        """The data folder; LakeError when the data is in a bucket (no folder to walk)."""
        if self.data_remote:
            raise LakeError(f"the lake's data is at {self.data}, not in a folder")
        return Path(self.data) if self.data is not None else self.root / "data"

    @property
    def data_location(self) -> str:
        """DuckLake's DATA_PATH: the folder's absolute path or the bucket's URL, with a `/`."""
        if self.data_remote:
            return str(self.data)
        return f"{self.data_path.resolve()}/"

    @property
    def on_postgres(self) -> bool:
        return self.catalog_url is not None

    @property
    def where(self) -> str:
        """The lake for messages: its folder, its catalog's server (no password) and its
        files' bucket."""
        shown = [f"catalog {redact(self.catalog_url)}"] if self.catalog_url else []
        if self.data_remote:
            shown.append(f"data {self.data}")
        return f"{self.root} ({', '.join(shown)})" if shown else str(self.root)

    @property
    def exists(self) -> bool:
        if self.catalog_url is None:
            return self.catalog.is_file()
        return _postgres_catalog_exists(self.catalog_url)

    def catalog_path(self) -> str:
        """DuckLake's path of the catalog (`ducklake:sqlite:<file>`, `ducklake:postgres:<url>`),
        never with a password: libpq reads it from PGPASSWORD (`attach_sql` puts a password
        of the URL there)."""
        if self.catalog_url is None:
            return f"ducklake:sqlite:{self.catalog.resolve()}"
        return f"ducklake:postgres:{split_password(self.catalog_url)[0]}"

    def attach_sql(
        self,
        *,
        alias: str = LAKE_ALIAS,
        read_only: bool = False,
        snapshot: int | None = None,
        live: bool = False,
    ) -> str:
        """The ATTACH statement for this lake; with `snapshot`, pinned at that snapshot id
        (DuckLake's `SNAPSHOT_VERSION`). `live` (a reader's): on a SQLite catalog a read that
        meets a lock fails at once ("database is locked") instead of sleeping a second in
        SQLite's busy handler; run its queries through `read_live`."""
        options = [f"DATA_PATH '{_quote(self.data_location)}'"]
        if live and not read_only:
            raise ValueError("a live attach is a reader's: add read_only")
        if live and not self.on_postgres:
            options.append("META_BUSY_TIMEOUT 0")
        if read_only:
            options.append("READ_ONLY")
        else:
            # No rows inlined in the catalog: a reader counting `events` while maintenance
            # flushed inlined rows into a file saw the count go back (3,750 then 3,727, under
            # 2,000 commits of 1-5 messages); each commit writes files, which maintenance merges.
            options.append("DATA_INLINING_ROW_LIMIT 0")
        if snapshot is not None:
            options.append(f"SNAPSHOT_VERSION {int(snapshot)}")
        if self.catalog_url is not None:
            pass_password(self.catalog_url)
        return f"ATTACH '{_quote(self.catalog_path())}' AS {alias} ({', '.join(options)})"


def _postgres_catalog_exists(url: str) -> bool:
    """True when the PostgreSQL database at `url` holds a DuckLake catalog; LakeError when the
    server cannot be reached or refuses us."""
    install_extensions()
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    try:
        con.execute("LOAD postgres_scanner")
        con.execute(f"ATTACH '{_quote(pass_password(url))}' AS pg (TYPE postgres, READ_ONLY)")
        (found,) = con.execute(
            "SELECT count(*) FROM pg.information_schema.tables "
            "WHERE table_name = 'ducklake_metadata' AND table_schema = 'public'"
        ).fetchone() or (0,)
    except duckdb.Error as exc:
        raise LakeError(f"the lake's catalog server: {redact(str(exc))}") from None
    finally:
        con.close()
    return bool(found)


def _quote(text: str) -> str:
    return text.replace("'", "''")


def extension_dir() -> Path:
    """DuckDB's default extension folder for this DuckDB version and platform."""
    con = duckdb.connect()
    try:
        row = con.execute(
            "SELECT current_setting('extension_directory'), v.library_version, p.platform "
            "FROM pragma_version() v, pragma_platform() p"
        ).fetchone()
    finally:
        con.close()
    if row is None:
        raise LakeError("DuckDB did not report its version")
    base, version, platform = row
    root = Path(base) if base else Path.home() / ".duckdb" / "extensions"
    return root / str(version) / str(platform)


def install_extensions() -> Path:
    """Copy the ducklake and sqlite extensions from their wheels into DuckDB's folder."""
    target = extension_dir()
    target.mkdir(parents=True, exist_ok=True)
    version = target.parent.name
    for package_suffix, loaded_as in _EXTENSIONS.items():
        package = f"duckdb_extension_{package_suffix}"
        spec = importlib.util.find_spec(package)
        if spec is None or spec.submodule_search_locations is None:
            raise LakeError(f"the Python package {package} is not installed (run `uv sync`)")
        source = (
            Path(next(iter(spec.submodule_search_locations)))
            / "extensions"
            / version
            / f"{package_suffix}.duckdb_extension"
        )
        if not source.is_file():
            raise LakeError(f"{source} is missing: {package} does not match DuckDB {version}")
        destination = target / f"{loaded_as}.duckdb_extension"
        if not destination.is_file() or destination.stat().st_size != source.stat().st_size:
            tmp = destination.with_suffix(".partial")
            shutil.copyfile(source, tmp)
            tmp.replace(destination)
    return target


def close(con: duckdb.DuckDBPyConnection) -> None:
    """Closes `con` after stopping whatever query it still runs: DuckDB (1.5) leaves a query
    that Ctrl-C interrupted half stopped, and closing its connection then waits forever (`croupier
    sql` printed nothing and hung) unless the connection is interrupted once more."""
    con.interrupt()
    con.close()


def connect(
    lake: Lake, *, read_only: bool = False, create: bool = False, live: bool = False
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the lake attached as `lake` and in use; `live`: a
    live reader's (`Lake.attach_sql`), whose queries go through `read_live`."""
    existed = lake.exists
    if not existed and not create:
        raise LakeError(f"no lake at {lake.where}: run `croupier lake init` first")
    if create:
        try:
            lake.root.mkdir(parents=True, exist_ok=True)
            if not lake.data_remote:
                lake.data_path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LakeError(f"cannot make the lake's folders at {lake.where}: {exc}") from None
        if not existed and holds_files(lake) and not lake.exists:  # (another may have just
            # made it: then those are its files)
            raise LakeError(
                f"{lake.data_location} already holds files and no catalog here names them "
                "(another lake's data, or a deleted lake's): a lake owns its data location, "
                "and its maintenance deletes the files it does not know. Choose an empty one."
            )
    attach = [lake.attach_sql(read_only=read_only, live=live)]

    def session() -> duckdb.DuckDBPyConnection:
        return open_session(attach, use=LAKE_ALIAS)

    attempt = 0
    while True:
        try:
            con = read_live(session) if live else session()
            break
        except LakeError as exc:
            # Processes started together on a new PostgreSQL catalog race to create its tables
            # (in one transaction each): the losers fail on "already exists" / "duplicate key"
            # once the winner has committed, and then attach to what it made.
            attempt += 1
            racing = any(sign in str(exc) for sign in _CREATION_RACE)
            if not (create and lake.on_postgres and racing) or attempt >= 10:
                raise
            time.sleep(0.1 * attempt)
    if create and not lake.on_postgres:
        try:
            use_wal(lake.catalog)
        except Exception:
            con.close()
            raise
    return con


def is_locked(exc: BaseException) -> bool:
    """Whether a DuckDB error is the SQLite catalog's lock (another connection writing): a
    failed statement that left nothing, to be run again."""
    return "database is locked" in str(exc)


def read_live(read: Callable[[], T], *, for_s: float = LIVE_RETRY_FOR_S) -> T:
    """`read()` (a query on a live attach, `Lake.attach_sql(live=True)`), run again every
    LIVE_RETRY_EVERY_S while the SQLite catalog is locked (a writer's commit, its WAL's
    checkpoint), for up to `for_s` seconds; then the lock's error is raised. Any other error is
    raised at once. A read changes nothing, so running it again is safe."""
    deadline = time.monotonic() + for_s
    while True:
        try:
            return read()
        except duckdb.Error as exc:
            if not is_locked(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(LIVE_RETRY_EVERY_S)


def holds_files(lake: Lake) -> bool:
    """Whether the lake's data location holds any file (a bucket's prefix: any object)."""
    if not lake.data_remote:
        return any(p.is_file() for p in lake.data_path.rglob("*"))
    install_extensions()
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    try:
        storage.configure(con)
        pattern = _quote(f"{lake.data_location}**")
        return bool(con.execute(f"SELECT count(*) FROM glob('{pattern}')").fetchall()[0][0])
    except ValueError as exc:  # AWS_ENDPOINT_URL
        raise LakeError(str(exc)) from None
    finally:
        con.close()


def open_session(attach: Sequence[str], *, use: str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the DuckLake extensions loaded from the pinned
    wheels (PostgreSQL's too when a catalog is there), each ATTACH statement of `attach` run,
    and the database `use` in use. A failing ATTACH is a LakeError without any password."""
    install_extensions()
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    try:
        # No progress bar: it writes to stdout, which belongs to the callers' output (JSON, CSV).
        con.execute("SET enable_progress_bar = false")
        con.execute("LOAD ducklake")
        con.execute("LOAD sqlite_scanner")
        if any("ducklake:postgres:" in statement for statement in attach):
            con.execute("LOAD postgres_scanner")
        if any(f"DATA_PATH '{scheme}" in s for s in attach for scheme in storage.REMOTE_SCHEMES):
            try:
                storage.configure(con)
            except ValueError as exc:
                raise LakeError(str(exc)) from None
        for statement in attach:
            try:
                con.execute(statement)
            except duckdb.Error as exc:
                if "does not match existing data path" in str(exc):
                    raise LakeError(
                        f"{redact(str(exc)).splitlines()[0]} Set lake_data (CROUPIER_LAKE_DATA) "
                        "to the lake's data location."
                    ) from None
                if "ducklake:postgres:" not in statement:
                    raise
                raise LakeError(f"the lake's catalog server: {redact(str(exc))}") from None
        con.execute(f"USE {use}")
    except Exception:
        con.close()
        raise
    return con


def use_wal(catalog: Path) -> None:
    """Put the SQLite catalog in WAL mode (persistent, in the file): readers then never block
    the writer's commit. In the default rollback journal a long-lived reader polling every
    20 ms, as a dashboard does, wedged both sides on "database is locked" within seconds until
    the consumer gave up; in WAL mode the same reader ran alongside without one failure."""
    con = sqlite3.connect(catalog, timeout=30)
    try:
        con.execute("PRAGMA journal_mode=WAL")
    finally:
        con.close()


def hold_catalog(lake: Lake) -> subprocess.Popen[str] | None:
    """Start `infra.catalog_keeper` on the lake's SQLite catalog, for a writing process to hold
    while it writes and `release_catalog` after closing its DuckDB connection. None on
    PostgreSQL, and None with a warning when the keeper could not start or was not ready within
    `KEEPER_READY_S`: it only spares readers a wait, the writer runs the same without it."""
    if lake.on_postgres or not lake.catalog.is_file():
        return None
    try:
        keeper = subprocess.Popen(
            [sys.executable, "-m", "infra.catalog_keeper", str(lake.catalog.resolve())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            cwd=Path(__file__).resolve().parent.parent,
        )  # fmt: skip
    except OSError as exc:  # no interpreter any more, no file descriptor or process left
        log.warning("catalog keeper not started (%s): readers may wait on the catalog", exc)
        return None
    assert keeper.stdout is not None
    ready = select.select([keeper.stdout], [], [], KEEPER_READY_S)[0]
    if not ready or keeper.stdout.readline().strip() != "ready":
        release_catalog(keeper)
        log.warning(
            "catalog keeper not ready (exit code %s): readers may wait on the catalog",
            keeper.returncode,
        )
        return None
    return keeper


def release_catalog(keeper: subprocess.Popen[str] | None) -> None:
    """Let a keeper from `hold_catalog` go: it closes its connection and exits."""
    if keeper is None:
        return
    for pipe in (keeper.stdin, keeper.stdout):
        if pipe is not None:
            pipe.close()
    try:
        keeper.wait(timeout=KEEPER_READY_S)
    except subprocess.TimeoutExpired:  # the pipe is held open elsewhere (a forked child)
        keeper.kill()
        keeper.wait()


def current_snapshot(con: duckdb.DuckDBPyConnection) -> int:
    # fetchall: a result left half-read keeps SQLite's read lock and blocks the writer
    rows = con.execute(f"FROM {LAKE_ALIAS}.current_snapshot()").fetchall()
    return int(rows[0][0]) if rows else 0


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Row count of every table in the lake, by `schema.table`."""
    tables = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? "
        "ORDER BY schema_name, table_name",
        [LAKE_ALIAS],
    ).fetchall()
    counts: dict[str, int] = {}
    for schema, table in tables:
        row = con.execute(f'SELECT count(*) FROM {LAKE_ALIAS}."{schema}"."{table}"').fetchone()
        counts[f"{schema}.{table}"] = int(row[0]) if row else 0
    return counts


def from_settings(path: Path | None = None) -> Lake:
    """The configured lake (folder and catalog), or the one at `path` with the configured
    catalog."""
    from infra.config import get_settings

    settings = get_settings()
    return Lake(
        root=path if path is not None else settings.lake_dir,
        catalog_url=settings.lake_catalog,
        data=settings.lake_data,
    )
