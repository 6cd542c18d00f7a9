"""The marts: `dbt build` reading the lake at one pinned snapshot, and the readers' door to them.

The marts live in their own DuckLake store (default `<lake's parent>/marts`), so dashboards and
analysts read them while dbt writes and while the consumer writes the lake (dbt_project/README.md).
dbt commits model by model; readers never see that: a successful build publishes the marts
snapshot it ended at in `<marts>/published.json`, and every reader attaches the marts pinned at
the published snapshot, so a failed or killed build changes nothing a reader sees.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import duckdb

from infra import lake as lakes
from infra import storage
from infra.catalog_url import pass_password
from infra.dbt_worker import DbtWorker, DbtWorkerError

PROJECT_DIR = Path(__file__).resolve().parents[1] / "dbt_project"
MARTS_ALIAS = "marts"
BUILD_LOG = "build_log"
# The pointer to the last successful build's marts snapshot, the one every reader attaches.
PUBLISHED = "published.json"
# Marts snapshots older than this are expired after a build, except every snapshot published
# within it (_expire_snapshots); a reader's query never lasts as long.
KEEP_SNAPSHOTS = "1 hour"


class BuildError(RuntimeError):
    """dbt failed (a model or a test); the message says where to look."""


@dataclass(frozen=True, kw_only=True)
class BuildResult:
    lake_snapshot_id: int
    full_refresh: bool
    seconds: float


def default_marts_path(lake: lakes.Lake) -> Path:
    """The `marts_path` setting, else `marts/` beside the lake (`<data_dir>/marts` by default)."""
    from infra.config import get_settings

    named = get_settings().marts_path
    return named if named is not None else lake.root.parent / "marts"


def marts_store(path: Path) -> lakes.Lake:
    """The marts store has the lake's layout: `catalog.sqlite` + `data/`."""
    return lakes.Lake(root=path)


@dataclass(frozen=True, kw_only=True)
class PublishedBuild:
    """The last successful build of a marts store, as `<marts>/published.json` says: readers
    see the marts at `marts_snapshot_id`, where its `build_log` row is the latest."""

    marts_snapshot_id: int
    started_at: datetime
    finished_at: datetime
    seconds: float
    lake_path: str
    lake_created_at: datetime
    lake_snapshot_id: int
    full_refresh: bool


def published_build(marts: Path) -> PublishedBuild | None:
    """The published build, or None: no build published yet, or marts written by an older
    version or by `dbt build` run directly (readers then see the latest snapshot)."""
    try:
        raw = json.loads((marts / PUBLISHED).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise lakes.LakeError(
            f"{marts / PUBLISHED} is unreadable ({exc}): run `croupier build`"
        ) from None
    try:
        return _published(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise lakes.LakeError(
            f"{marts / PUBLISHED} is not a published build ({exc!r}): run `croupier build`"
        ) from None


def _published(raw: Any) -> PublishedBuild:
    return PublishedBuild(
        marts_snapshot_id=int(raw["marts_snapshot_id"]),
        started_at=datetime.fromisoformat(raw["started_at"]),
        finished_at=datetime.fromisoformat(raw["finished_at"]),
        seconds=float(raw["seconds"]),
        lake_path=str(raw["lake_path"]),
        lake_created_at=datetime.fromisoformat(raw["lake_created_at"]),
        lake_snapshot_id=int(raw["lake_snapshot_id"]),
        full_refresh=bool(raw["full_refresh"]),
    )


def _publish(marts: Path, build: PublishedBuild) -> None:
    """Replace the pointer atomically: a reader reads the old file or the new one, whole, and
    after a crash the file on disk is one of the two (written, synced, renamed, dir synced)."""
    path = marts / PUBLISHED
    fields = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in asdict(build).items()}
    tmp = path.with_name(f".{PUBLISHED}.{os.getpid()}.tmp")
    with tmp.open("w") as file:
        file.write(json.dumps(fields, indent=2) + "\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(tmp, path)
    folder = os.open(marts, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def connect_marts(
    marts: Path,
    *,
    lake: lakes.Lake | None = None,
    read_only: bool = True,
    snapshot: int | None = None,
    latest: bool = False,
    lake_snapshot: int | None = None,
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the marts attached as `marts` and in use, read-only by default.

    Read-only, the marts are pinned at the published build's snapshot (`published.json`), or at
    `snapshot`: the connection shows the marts of the last successful build, whole, for as long
    as it stays open, whatever builds run or fail meanwhile. Marts no build published (older
    versions, plain `dbt build`) are read at their latest snapshot. `latest=True`, or
    `read_only=False` (the writer), attach the latest snapshot: what dbt left, a failed build's
    half included. With `lake`, the lake is attached read-only too, as `lake`, so the staging
    views resolve: at `lake_snapshot`, else at its latest.
    """
    store = marts_store(marts)
    if not store.exists:
        raise lakes.LakeError(f"no marts at {marts}: run `croupier build` first")
    if not read_only or latest:
        snapshot = None
    elif snapshot is None:
        published = published_build(marts)
        snapshot = published.marts_snapshot_id if published is not None else None
    attach = [lake.attach_sql(read_only=True, snapshot=lake_snapshot)] if lake is not None else []
    attach.append(store.attach_sql(alias=MARTS_ALIAS, read_only=read_only, snapshot=snapshot))
    return lakes.open_session(attach, use=MARTS_ALIAS)


# Set for dbt by a build that evaluates every round again (consumers/evidence.py reads it).
RE_EVALUATE = "CROUPIER_RE_EVALUATE"
# The lake snapshot a build reads (pinned: every model and test reads the same one).
LAKE_SNAPSHOT = "CROUPIER_LAKE_SNAPSHOT"
# The lake snapshot the last whole build read, when the lake still has every snapshot since.
BUILT_SNAPSHOT = "CROUPIER_LAKE_BUILT_SNAPSHOT"

# The lake tables whose rows the marts are built from incrementally (their row ids are the
# watermarks of incremental models and tests, dbt_project/macros/tested_rows.sql).
SOURCES = ("events", "settlements", "rounds", "violations", "jackpot_ledger")


@dataclass(frozen=True, kw_only=True)
class LakeState:
    """The lake as one build reads it."""

    snapshot_id: int
    created_at: datetime  # the lake's creation (infra.binding): tells a recreated lake apart
    max_row_ids: dict[str, int]  # per source table, at `snapshot_id`
    # `since` (the snapshot the last whole build read) if the lake still has every snapshot
    # from it to `snapshot_id` and each of them only added rows (lake.ROWS_KEPT_CHANGES): its
    # change feed (ducklake_table_insertions) then tells every row inserted after it. Else
    # None: a snapshot since did more than add rows (a delete, an update, a table altered or
    # recreated), or one expired and cannot tell what it did; rows the last build built from
    # may be gone or changed, which only a full refresh takes out of the incremental models
    unbroken_since: int | None = None


# The rows of each failed test shown with a failed build's error, and how long reading them
# again may take (a builder without a timeout waits this long at most).
FAILING_ROWS_SHOWN = 5
FAILING_ROWS_SECONDS = 60.0


def _failing_rows(
    lake: lakes.Lake, snapshot: int, marts: Path, *, since: float, timeout: float | None
) -> str:
    """The data tests the dbt command that ended now failed, each with its first rows: what
    went wrong, not only where. Each test's SQL as dbt compiled it (run_results.json, written
    after `since`: a dbt that could not run leaves an older one) runs again, one SELECT only,
    read-only, on the marts dbt left and the lake at the build's snapshot, and is interrupted
    after `timeout` seconds. Empty when no data test failed (a model broke, or a unit test:
    dbt said why)."""
    path = marts / "_dbt" / "target" / "run_results.json"
    try:
        if path.stat().st_mtime < since:
            return ""
        failed = [
            (name.split(".")[2], result.get("failures"), str(result["compiled_code"]))
            for result in json.loads(path.read_text())["results"]
            if result.get("status") == "fail"
            and (name := str(result.get("unique_id", ""))).count(".") >= 2
            and name.startswith("test.")
            and result.get("compiled_code")
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return ""
    if not failed:
        return ""
    try:
        con = connect_marts(marts, lake=lake, latest=True, lake_snapshot=snapshot)
    except (duckdb.Error, lakes.LakeError) as exc:
        return f"\n(the failing rows cannot be read: {exc})"
    lines = [""]
    limit = timeout if timeout is not None else FAILING_ROWS_SECONDS
    deadline = time.monotonic() + limit
    timer = threading.Timer(limit, con.interrupt)  # the query running at the deadline
    timer.start()
    try:
        for name, failures, sql in failed:
            count = f"{failures} failing row(s)" if isinstance(failures, int) else "failed"
            lines.append(f"{name}: {count}, the first:")
            if time.monotonic() >= deadline:
                lines.append(f"  (not read again: past {limit:g} s)")
                continue
            try:
                statements = con.extract_statements(sql)
                if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
                    raise ValueError("its SQL is not one query")
                query = con.execute(f"SELECT * FROM (\n{sql}\n) LIMIT {FAILING_ROWS_SHOWN}")
                columns = [d[0] for d in query.description or ()]
                for row in query.fetchall():
                    lines.append(
                        "  " + ", ".join(f"{c}={v}" for c, v in zip(columns, row, strict=True))
                    )
            except (duckdb.Error, ValueError) as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                lines.append(f"  (cannot be read again: {first})")
    finally:
        timer.cancel()
        con.close()
    return "\n".join(lines)


def project_fingerprint(project_dir: Path = PROJECT_DIR) -> str:
    """A hash of everything in dbt_project/ that dbt reads (models, macros, tests, seeds,
    configuration): unit tests and seeds depend on nothing else."""
    digest = hashlib.sha256()
    for path in sorted(project_dir.rglob("*")):
        parts = path.relative_to(project_dir).parts
        if path.is_file() and parts[0] not in ("target", "logs", "scripts"):
            digest.update("/".join(parts).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _lake_state(lake: lakes.Lake, at: int | None = None, since: int | None = None) -> LakeState:
    """The lake at its latest snapshot, or at snapshot `at`; and whether it has every snapshot
    since snapshot `since`."""
    from infra.binding import identity

    con = lakes.connect(lake, read_only=True)
    try:
        row = con.execute(
            f"SELECT max(snapshot_id), min(snapshot_time) FROM {lakes.LAKE_ALIAS}.snapshots()"
        ).fetchone()
        if row is None or row[0] is None:
            raise lakes.LakeError(f"the lake at {lake.root} has no snapshot")
        if at is not None and not 0 <= at <= int(row[0]):
            raise lakes.LakeError(f"the lake at {lake.root} has no snapshot {at}")
        snapshot = int(row[0]) if at is None else at
        created = identity(con)  # min(snapshot_time) moves once old snapshots are expired
        newest = ", ".join(
            f"(SELECT coalesce(max(rowid), -1) FROM {lakes.LAKE_ALIAS}.main.{table} "
            f"AT (VERSION => {snapshot}))"
            for table in SOURCES
        )
        [found] = con.execute(f"SELECT {newest}").fetchall()
        max_row_ids = {table: int(top) for table, top in zip(SOURCES, found, strict=True)}
        unbroken = None
        if since is not None and since <= snapshot:
            kept = con.execute(
                "SELECT count(*), count(*) FILTER (WHERE snapshot_id > ? AND (NOT "
                f"{lakes.only_added_rows(lakes.ROWS_KEPT_CHANGES)} OR snapshot_id IN "
                f"({lakes.catalog_entries_ended()}))) "
                f"FROM {lakes.LAKE_ALIAS}.snapshots() "
                "WHERE snapshot_id BETWEEN ? AND ?",
                [since, since, snapshot],
            ).fetchone()
            if kept is not None and kept[0] == snapshot - since + 1 and kept[1] == 0:
                unbroken = since
    finally:
        con.close()
    return LakeState(
        snapshot_id=snapshot,
        created_at=created[1] if created is not None else row[1],
        max_row_ids=max_row_ids,
        unbroken_since=unbroken,
    )


@dataclass(frozen=True, kw_only=True)
class LastBuild:
    """What the last successful build of a marts store read and ran."""

    lake_created_at: datetime
    lake_snapshot_id: int
    tested_up_to: dict[str, int]
    project: str  # project_fingerprint() it ran


def _last_build(marts: Path) -> LastBuild | None:
    """From the latest `build_log` row of a whole build (the writer's view: a build that logged
    its row but died before publishing still counts, since the marts hold what it built). A
    build of a selection built and tested only its part: what the next build must rebuild or
    test again is what the last whole build left."""
    if not marts_store(marts).exists:
        return None
    con = connect_marts(marts, latest=True)
    try:
        try:
            cursor = con.execute(
                f"SELECT * FROM {BUILD_LOG} WHERE selection IS NULL "
                "ORDER BY finished_at DESC LIMIT 1"
            )
        except duckdb.BinderException:  # a log of an earlier version: whole builds only
            cursor = con.execute(f"SELECT * FROM {BUILD_LOG} ORDER BY finished_at DESC LIMIT 1")
        row = cursor.fetchone()
        names = [d[0] for d in cursor.description or ()]
    except duckdb.CatalogException:  # marts without a finished build yet
        return None
    finally:
        con.close()
    if row is None:
        return None
    last = dict(zip(names, row, strict=True))
    return LastBuild(
        lake_created_at=last["lake_created_at"],
        lake_snapshot_id=int(last["lake_snapshot_id"]),
        tested_up_to=json.loads(last.get("tested_up_to") or "{}"),
        project=last.get("project") or "",
    )


def _record_build(
    marts: Path, lake: lakes.Lake, state: LakeState, *, full_refresh: bool, started: datetime,
    seconds: float, project: str, selection: str | None,
) -> PublishedBuild:  # fmt: skip
    """Append the build to `marts.main.build_log` (readers see which snapshot the marts show,
    the next build which rows are tested; `selection`: the dbt selection of a partial build),
    publish the snapshot that commit made (readers switch to it), then expire old marts
    snapshots and delete the files nothing references."""
    previous = published_build(marts)
    finished = datetime.now().astimezone()
    con = connect_marts(marts, read_only=False)
    try:
        con.execute(
            f"CREATE TABLE IF NOT EXISTS {BUILD_LOG} (started_at TIMESTAMPTZ, "
            "finished_at TIMESTAMPTZ, seconds DOUBLE, lake_path VARCHAR, "
            "lake_created_at TIMESTAMPTZ, lake_snapshot_id BIGINT, full_refresh BOOLEAN, "
            "tested_up_to VARCHAR, project VARCHAR, selection VARCHAR)"
        )
        for column in ("tested_up_to", "project", "selection"):  # earlier logs lack them
            con.execute(f"ALTER TABLE {BUILD_LOG} ADD COLUMN IF NOT EXISTS {column} VARCHAR")
        con.execute(
            f"INSERT INTO {BUILD_LOG} (started_at, finished_at, seconds, lake_path, "
            "lake_created_at, lake_snapshot_id, full_refresh, tested_up_to, project, selection) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                started, finished, seconds, str(lake.root.resolve()), state.created_at,
                state.snapshot_id, full_refresh, json.dumps(state.max_row_ids, sort_keys=True),
                project, selection,
            ],
        )  # fmt: skip
        # one writer at a time: the latest snapshot is the one the insert just committed
        row = con.execute(f"FROM {MARTS_ALIAS}.current_snapshot()").fetchall()
        build = PublishedBuild(
            marts_snapshot_id=int(row[0][0]), started_at=started, finished_at=finished,
            seconds=seconds, lake_path=str(lake.root.resolve()),
            lake_created_at=state.created_at, lake_snapshot_id=state.snapshot_id,
            full_refresh=full_refresh,
        )  # fmt: skip
        _publish(marts, build)
        _expire_snapshots(con, keep_from=previous.marts_snapshot_id if previous else None)
    finally:
        con.close()
    return build


def _expire_snapshots(con: duckdb.DuckDBPyConnection, *, keep_from: int | None) -> None:
    """Expire the marts snapshots no reader can hold, then delete files expired long enough.

    A reader holds a published snapshot: the one just published, the one before it (a reader
    read the pointer before it changed: `keep_from`), or an older one it attached while that
    was published, within the last KEEP_SNAPSHOTS. So a snapshot is expired only when it is
    older than KEEP_SNAPSHOTS, older than the build that was published KEEP_SNAPSHOTS ago (its
    snapshot was committed after that build's `finished_at`), and below `keep_from`.
    """
    keep = f"now() - INTERVAL '{KEEP_SNAPSHOTS}'"
    found = con.execute(
        f"""
        SELECT list(snapshot_id ORDER BY snapshot_id) FROM {MARTS_ALIAS}.snapshots()
        WHERE snapshot_time < coalesce(
                  (SELECT max(finished_at) FROM {BUILD_LOG} WHERE finished_at <= {keep}), {keep})
          AND snapshot_time < {keep}
          AND snapshot_id < ?
        """,
        [keep_from if keep_from is not None else 2**62],
    ).fetchall()
    expired = found[0][0] if found and found[0][0] else []
    if expired:
        con.execute(f"CALL ducklake_expire_snapshots('{MARTS_ALIAS}', versions => ?)", [expired])
    con.execute(f"CALL ducklake_cleanup_old_files('{MARTS_ALIAS}', older_than => {keep})")


def _code_signature() -> str:
    """What a build runs beside the project (the Python models import the repository's
    packages and read their data files): each file's path, size and modification time, and
    the versions of dbt, its adapter and DuckDB installed."""
    root = PROJECT_DIR.parent
    digest = hashlib.sha256()
    for name in ("dbt-core", "dbt-duckdb", "duckdb"):
        digest.update(f"{name}={metadata.version(name)}\n".encode())
    for package in sorted(root.glob("*/__init__.py")):
        for path in sorted(package.parent.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                stat = path.stat()
                digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


# What dbt uses from the environment only while it runs (the profile, read by every command;
# macros under `execute`; the Python models), never to parse: a new value needs no new parse,
# so one dbt process builds any lake into any marts store (infra/dbt_worker.py).
PER_BUILD = (
    LAKE_SNAPSHOT, "CROUPIER_TESTED_UP_TO", BUILT_SNAPSHOT, RE_EVALUATE,
    "CROUPIER_LAKE_PATH", "CROUPIER_LAKE_CATALOG_PATH", "CROUPIER_LAKE_DATA_PATH",
    "CROUPIER_S3_SETTINGS", "CROUPIER_MARTS_PATH", "PGPASSWORD",
    # and what nothing dbt runs reads: pytest names the running test in it, anew for each one
    "PYTEST_CURRENT_TEST",
)  # fmt: skip


def build_marts(
    lake: lakes.Lake,
    marts: Path,
    *,
    full_refresh: bool = False,
    select: str | None = None,
    command: str = "build",
    quiet: bool = False,
    lake_snapshot: int | None = None,
    project_dir: Path = PROJECT_DIR,
    re_evaluate: bool = False,
    dbt: DbtWorker | None = None,
    timeout: float | None = None,
) -> BuildResult:
    """Run `dbt <command>` (build: seeds, models, tests) of `project_dir` on the lake pinned at
    its current snapshot (or `lake_snapshot`), into the marts store, and publish the marts to
    readers if it passed. A lake that was replaced since the last build, or that did more
    than add rows since (or expired a snapshot since, which cannot tell), or `full_refresh`,
    rebuilds the incremental models from scratch. `re_evaluate` (a full refresh): the hold and
    hole-carding evaluations of every round are computed again from the events, none of
    `croupier evidence`'s stored rows read (consumers/evidence.py). `dbt`: the dbt process to
    run it in, kept by a builder between builds (else one for this build alone). A dbt that
    has not ended within `timeout` seconds is killed, and the build fails unpublished."""
    if not lake.exists:
        raise lakes.LakeError(
            f"no lake at {lake.where}: run `croupier lake init` or `croupier demo`"
        )
    if re_evaluate and not full_refresh:
        raise BuildError("re-evaluating every round is a full refresh: add --full-refresh")
    last = _last_build(marts)
    state = _lake_state(lake, lake_snapshot, since=last.lake_snapshot_id if last else None)
    project = project_fingerprint(project_dir)
    if last is not None and (
        last.lake_created_at != state.created_at or last.lake_snapshot_id > state.snapshot_id
    ):
        full_refresh = True  # the watermarks in the marts belong to another lake
    if last is not None and state.unbroken_since is None:
        full_refresh = True  # the incremental models would keep what the lake took back
    marts.mkdir(parents=True, exist_ok=True)
    if not marts_store(marts).exists:  # a pointer left from a deleted store points at nothing
        (marts / PUBLISHED).unlink(missing_ok=True)
    work = marts.resolve() / "_dbt"
    parse = [
        "--project-dir", str(project_dir),
        "--profiles-dir", str(project_dir),
        "--target-path", str(work / "target"),
        "--log-path", str(work / "logs"),
    ]  # fmt: skip
    args = [command, *parse]
    if full_refresh:
        args.append("--full-refresh")
    if select:
        args += ["--select", select]
    if (
        command == "build"
        and select is None
        and last is not None
        and not full_refresh
        and last.project == project
    ):
        # The project has not changed since a build that passed: its seeds are loaded, its
        # unit tests (which read no data) passed, and the models built from the project alone
        # (tag project_only) are as they were, so only what the lake feeds is built and tested
        # again. Cautious: a test is left out only when everything it reads is (a foreign key
        # from new rows to a seed is still checked).
        args += [
            "--exclude", "resource_type:seed", "test_type:unit", "tag:project_only",
            "--indirect-selection", "cautious",
        ]  # fmt: skip
    if quiet:
        args.append("--quiet")
    try:
        s3_settings = storage.endpoint_settings() if lake.data_remote else {}
    except ValueError as exc:
        raise BuildError(str(exc)) from None
    if lake.catalog_url is not None:
        pass_password(lake.catalog_url)  # into PGPASSWORD (and a connect timeout): dbt inherits
    env = {
        **os.environ,
        "CROUPIER_LAKE_PATH": str(lake.root.resolve()),
        # the catalog without its password, which libpq reads from PGPASSWORD: dbt's logs
        # never see it
        "CROUPIER_LAKE_CATALOG_PATH": lake.catalog_path(),
        "CROUPIER_LAKE_DATA_PATH": lake.data_location,
        "CROUPIER_S3_SETTINGS": json.dumps(s3_settings),
        "CROUPIER_MARTS_PATH": str(marts.resolve()),
        LAKE_SNAPSHOT: str(state.snapshot_id),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    env.pop("CROUPIER_TESTED_UP_TO", None)
    env.pop(RE_EVALUATE, None)
    if re_evaluate:
        env[RE_EVALUATE] = "1"
    env.pop(BUILT_SNAPSHOT, None)
    if last is not None and not full_refresh:
        # rows the last build tested pass again only on a full refresh
        env["CROUPIER_TESTED_UP_TO"] = json.dumps(last.tested_up_to)
        if state.unbroken_since is not None:
            # the event models read only the rows inserted since (macros/event_fields.sql)
            env[BUILT_SNAPSHOT] = str(state.unbroken_since)
    key = hashlib.sha256(
        json.dumps(
            [
                str(project_dir.resolve()),
                project,
                _code_signature(),
                {k: v for k, v in env.items() if k not in PER_BUILD},
            ]
        ).encode()
    ).hexdigest()
    started_at = datetime.now().astimezone()
    started = time.monotonic()
    try:
        with contextlib.nullcontext(dbt) if dbt is not None else DbtWorker() as worker:
            code = worker.run(args, parse=parse, env=env, key=key, timeout=timeout)
    except DbtWorkerError as exc:
        raise BuildError(f"dbt {command} failed: {exc}; see {work / 'logs' / 'dbt.log'}") from None
    seconds = time.monotonic() - started
    if code != 0:
        raise BuildError(
            f"dbt {command} failed (exit {code}); see the output above and "
            f"{work / 'logs' / 'dbt.log'}"
            + _failing_rows(
                lake, state.snapshot_id, marts, since=started_at.timestamp(), timeout=timeout
            )
        )
    if command == "build":
        _record_build(
            marts, lake, state, full_refresh=full_refresh, started=started_at, seconds=seconds,
            project=project, selection=select,
        )  # fmt: skip
    return BuildResult(
        lake_snapshot_id=state.snapshot_id, full_refresh=full_refresh, seconds=seconds
    )
