"""Move a lake from its embedded SQLite catalog to a PostgreSQL one (`croupier lake migrate`).

The copy is of the catalog itself, not of the tables' rows: every row of DuckLake's metadata
tables goes across unchanged, so snapshots, time travel, row ids (the marts' incremental
watermarks), the lake's identity, its stream binding and the Kafka offsets committed with the
rows are the same on the new catalog, and consumption continues where it stopped. The Parquet
files are copied to the new lake's data folder (their catalog paths are relative to it).

Safe by construction: the source's catalog and files are only read (a lock file of ours and
SQLite's WAL files appear beside them); the target's catalog rows are written in one
PostgreSQL transaction, committed only after the files are copied and the source is known not
to have moved meanwhile (its latest snapshot is read again just before the commit); a failure
leaves the target's catalog as it was and removes the files this run copied. The result is then
verified: every table of both lakes, row ids included, hashes the same.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from infra import lake as lakes
from infra.catalog_url import pass_password, redact

_SOURCE, _TARGET = "src", "dst"


class MigrationError(lakes.LakeError):
    """The migration was refused or failed; the message says why, and the source is untouched."""


@dataclass(frozen=True)
class Migrated:
    snapshot_id: int
    tables: dict[str, int]  # schema.table -> rows, as verified on the target
    files: int
    bytes: int
    seconds: float


def migrate(
    source: lakes.Lake,
    target: lakes.Lake,
    *,
    on_file: Callable[[int], None] | None = None,
) -> Migrated:
    """Copy `source` (SQLite catalog) to `target` (PostgreSQL catalog, new data folder).

    `on_file(bytes)` is called after each data file is copied (progress)."""
    from infra.maintenance import maintenance_lock

    started = time.monotonic()
    if _check(source, target):
        return _verify_committed(source, target, started)
    # No maintenance pass may merge or delete files of the source while they are copied.
    with maintenance_lock(source.root):
        snapshot = _latest_snapshot(source)
        if not target.exists:  # DuckLake makes its catalog tables (empty; a failed run's stay)
            lakes.connect(target, create=True).close()
        target.data_path.mkdir(parents=True, exist_ok=True)
        con = _catalog_session(target)
        copied: list[Path] = []
        try:
            con.execute(
                f"ATTACH '{_quote(str(source.catalog.resolve()))}' AS {_SOURCE} "
                "(TYPE sqlite, READ_ONLY)"
            )
            con.execute("BEGIN TRANSACTION")
            _copy_catalog(con, target)
            copied = _copy_files(source.data_path, target.data_path, on_file)
            _check_files(con, target)
            expected = table_hashes(source)
            if expected.pop(SNAPSHOT) != str(snapshot) or _latest_snapshot(source) != snapshot:
                raise MigrationError(
                    f"{source.where} was written during the migration: stop its consumers "
                    "(and anything else writing to it), then run the migration again"
                )
            con.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            for path in copied:
                path.unlink(missing_ok=True)
            if isinstance(exc, duckdb.Error):
                raise MigrationError(f"migration failed: {redact(str(exc))}") from None
            if isinstance(exc, OSError):
                raise MigrationError(f"migration failed: {exc}; nothing was written") from None
            raise
        finally:
            con.close()
    try:
        tables = _verify(expected, target)
    except BaseException as exc:  # committed: say so, and what to do
        if isinstance(exc, MigrationError):  # it differs: start again from nothing
            advice = (
                f"To start again, drop and create the database "
                f"{redact(target.catalog_url or '')} and remove {target.root}"
            )
            reason = str(exc)
        else:  # interrupted: the same command verifies it
            advice = "Run the same migration again to verify it"
            reason = type(exc).__name__
        raise MigrationError(
            f"the copy was committed but not verified ({reason}): do not use it yet. {advice}"
        ) from None
    return _migrated(snapshot, tables, copied, started)


def _check(source: lakes.Lake, target: lakes.Lake) -> bool:
    """Refuse what cannot be migrated; True when the target's catalog already holds a lake
    (a copy a stopped run committed and did not verify, or another lake)."""
    if source.on_postgres:
        raise MigrationError(f"{source.where} already has its catalog on PostgreSQL")
    if not source.exists:
        raise MigrationError(f"no lake at {source.where}")
    if not target.on_postgres:
        raise MigrationError("the target must be a PostgreSQL catalog (postgres://…)")
    old, new = source.root.resolve(), target.root.resolve()
    if old == new or old.is_relative_to(new) or new.is_relative_to(old):
        raise MigrationError(
            "the new lake needs a folder of its own, neither inside the source lake's folder "
            "nor holding it (--to-lake): the source's maintenance would delete the files of a "
            "lake inside it as orphans, and two catalogs over one folder each other's"
        )
    if target.exists and _holds_lake(target):
        return True
    if lakes.holds_files(target):
        raise MigrationError(
            f"{target.data_path} is not empty (another lake's files, or those a killed "
            "migration left: remove them if so): nothing was written"
        )
    return False


def _verify_committed(source: lakes.Lake, target: lakes.Lake, started: float) -> Migrated:
    """The target's catalog holds a lake: a run stopped after its commit (the files were all
    copied before it) and before its verification, so verify it now; any other lake there is
    refused, and nothing is written."""
    from infra.maintenance import maintenance_lock

    with maintenance_lock(source.root):
        expected = table_hashes(source)
        snapshot = int(expected.pop(SNAPSHOT))
        try:
            tables = _verify(expected, target)
        except (duckdb.IOException, duckdb.ConnectionException) as exc:  # may pass: say so
            raise MigrationError(
                f"the catalog {redact(target.catalog_url or '')} already holds a lake, which "
                f"could not be read to verify it ({redact(str(exc))}): nothing was written; "
                "run the migration again"
            ) from None
        except (MigrationError, duckdb.Error, lakes.LakeError) as exc:
            raise MigrationError(
                f"the catalog {redact(target.catalog_url or '')} already holds a lake that is "
                f"not a copy of {source.where} as it is now ({redact(str(exc))}): nothing was "
                "written. Migrate into an empty database; if that lake is what an interrupted "
                f"migration left, drop and create the database and remove {target.root} first"
            ) from None
    files = [p for p in target.data_path.rglob("*") if p.is_file()]
    return _migrated(snapshot, tables, files, started)


def _migrated(snapshot: int, tables: dict[str, int], files: list[Path], started: float) -> Migrated:
    return Migrated(
        snapshot_id=snapshot,
        tables=tables,
        files=len(files),
        bytes=sum(p.stat().st_size for p in files),
        seconds=time.monotonic() - started,
    )


def _catalog_session(target: lakes.Lake) -> duckdb.DuckDBPyConnection:
    """A session with the target's PostgreSQL database attached as itself (not as a lake)."""
    assert target.catalog_url is not None
    con = lakes.open_session([], use="memory")
    try:
        con.execute("LOAD postgres_scanner")
        con.execute(
            f"ATTACH '{_quote(pass_password(target.catalog_url))}' AS {_TARGET} (TYPE postgres)"
        )
    except duckdb.Error as exc:
        con.close()
        raise MigrationError(f"the new catalog's server: {redact(str(exc))}") from None
    except BaseException:
        con.close()
        raise
    return con


def _holds_lake(target: lakes.Lake) -> bool:
    """Whether the target's DuckLake catalog has anything in it beyond its first, empty
    snapshot (a failed migration leaves it so, and may be run again)."""
    con = _catalog_session(target)
    try:
        row = con.execute(
            f"SELECT (SELECT count(*) FROM {_TARGET}.ducklake_snapshot) > 1 "
            f"OR (SELECT count(*) FROM {_TARGET}.ducklake_table) > 0"
        ).fetchone()
    finally:
        con.close()
    return bool(row and row[0])


def _latest_snapshot(source: lakes.Lake) -> int:
    con = lakes.connect(source, read_only=True)
    try:
        return lakes.current_snapshot(con)
    finally:
        con.close()


def _tables(con: duckdb.DuckDBPyConnection, database: str) -> dict[str, list[str]]:
    rows = con.execute(
        "SELECT table_name, list(column_name ORDER BY column_index) FROM duckdb_columns() "
        "WHERE database_name = ? AND schema_name IN ('main', 'public') "
        "AND table_name LIKE 'ducklake%' GROUP BY table_name",
        [database],
    ).fetchall()
    return {str(name): list(columns) for name, columns in rows}


def _copy_catalog(con: duckdb.DuckDBPyConnection, target: lakes.Lake) -> None:
    """Replace the target catalog's rows by the source's, table by table (same DuckLake
    version: the same tables and columns, else nothing is written)."""
    source_tables, target_tables = _tables(con, _SOURCE), _tables(con, _TARGET)
    for name, columns in sorted(source_tables.items()):
        known = target_tables.get(name)
        if known is None and name.startswith("ducklake_inlined_data_"):
            con.execute(f'CREATE TABLE {_TARGET}."{name}" AS FROM {_SOURCE}."{name}"')
            continue
        if known is None or set(known) != set(columns):
            raise MigrationError(
                f"the catalogs differ in DuckLake's table {name}: made by another DuckLake "
                "version? Nothing was written"
            )
        listed = ", ".join(f'"{c}"' for c in columns)
        con.execute(f'DELETE FROM {_TARGET}."{name}"')
        con.execute(
            f'INSERT INTO {_TARGET}."{name}" ({listed}) SELECT {listed} FROM {_SOURCE}."{name}"'
        )
    absolute = con.execute(
        f"SELECT count(*) FROM {_TARGET}.ducklake_data_file WHERE path_is_relative = 0"
    ).fetchone()
    if absolute and absolute[0]:
        raise MigrationError(
            "the source lake names data files by absolute paths, which would still point into "
            "its own folder: nothing was written"
        )
    con.execute(
        f"UPDATE {_TARGET}.ducklake_metadata SET value = ? WHERE key = 'data_path'",
        [f"{target.data_path.resolve()}/"],
    )


def _copy_files(source: Path, target: Path, on_file: Callable[[int], None] | None) -> list[Path]:
    """Copy every file under `source` to the same place under `target`, each fsynced."""
    copied: list[Path] = []
    try:
        for folder, _, names in os.walk(source, followlinks=True):
            for name in sorted(names):
                origin = Path(folder) / name
                destination = target / origin.relative_to(source)
                destination.parent.mkdir(parents=True, exist_ok=True)
                copied.append(destination)
                shutil.copyfile(origin, destination)
                with destination.open("rb+") as handle:
                    os.fsync(handle.fileno())
                if on_file is not None:
                    on_file(destination.stat().st_size)
    except BaseException:
        for path in copied:
            path.unlink(missing_ok=True)
        raise
    return copied


def _check_files(con: duckdb.DuckDBPyConnection, target: lakes.Lake) -> None:
    """Every data and delete file the copied catalog names is in the target's folder (a file
    the walk could not reach, a symlink that led nowhere, is found here, before the commit)."""
    missing = []
    for kind in ("data", "delete"):
        rows = con.execute(
            f"SELECT DISTINCT s.path, s.path_is_relative, t.path, t.path_is_relative, f.path, "
            f"f.path_is_relative FROM {_TARGET}.ducklake_{kind}_file f "
            f"JOIN {_TARGET}.ducklake_table t ON t.table_id = f.table_id "
            f"JOIN {_TARGET}.ducklake_schema s ON s.schema_id = t.schema_id "
            "WHERE f.end_snapshot IS NULL AND t.end_snapshot IS NULL"
        ).fetchall()
        for schema, schema_relative, table, table_relative, name, name_relative in rows:
            path = Path(name)
            if name_relative:
                folder = Path(table)
                if table_relative:
                    base = Path(schema)
                    folder = (target.data_path / base if schema_relative else base) / folder
                path = folder / path
            if not path.is_file():
                missing.append(str(path))
    if missing:
        raise MigrationError(
            f"{len(missing)} file(s) the catalog names could not be copied (a symlink that "
            f"leads nowhere, a folder out of reach?), e.g. {missing[0]}: nothing was written"
        )


SNAPSHOT = "(snapshot)"


def table_hashes(lake: lakes.Lake) -> dict[str, str]:
    """Rows and a hash of every table of the lake, each row with its row id (what the marts'
    incremental watermarks rely on), and its latest snapshot under SNAPSHOT. Streaming: two
    order-free aggregates of each row's 64-bit hash, in constant memory whatever the size."""
    con = lakes.connect(lake, read_only=True)
    try:
        hashes = {}
        for name in lakes.table_counts(con):
            schema, table = name.split(".", 1)
            row = con.execute(
                "SELECT count(*), coalesce(bit_xor(h), 0), coalesce(sum(h::HUGEINT), 0) FROM "
                f'(SELECT hash(CAST((rowid, t) AS VARCHAR)) AS h FROM "{schema}"."{table}" t)'
            ).fetchone()
            count, xor, total = row if row else (0, 0, 0)
            hashes[name] = f"{count}:{xor:016x}:{total:x}"
        hashes[SNAPSHOT] = str(lakes.current_snapshot(con))
        return hashes
    finally:
        con.close()


def _verify(expected: dict[str, str], target: lakes.Lake) -> dict[str, int]:
    """The target's table hashes against the source's (`expected`, without its snapshot)."""
    found = table_hashes(target)
    found.pop(SNAPSHOT)
    if found != expected:
        differ = sorted(
            k for k in expected.keys() | found.keys() if expected.get(k) != found.get(k)
        )
        raise MigrationError(f"the copy differs from the source in {', '.join(differ)}")
    return {k: int(v.split(":")[0]) for k, v in found.items()}


def _quote(text: str) -> str:
    return text.replace("'", "''")
