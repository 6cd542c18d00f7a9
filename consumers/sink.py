"""The sink: writes one batch of derived rows to the lake in one transaction, with its positions.

Rows, the Kafka offsets they came from and the processor's table state commit together, so a
consumer killed at any point restarts exactly where the lake says it stopped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

import duckdb
import pyarrow as pa

from consumers.rows import RowBatch
from consumers.schema import ARROW_SCHEMAS, TABLES, create_tables
from infra import lake as lakes
from infra import maintenance
from infra.logs import fields

if TYPE_CHECKING:
    from infra.binding import StreamBinding

log = logging.getLogger("croupier.consumer")

# Bookkeeping tables: append-only (no deletes in the lake), the latest row wins on read.
OFFSETS = "consumer_offsets"
STATE = "table_state"
COMMIT_ATTEMPTS = 30
T = TypeVar("T")
ANALYTIC_TABLES = (
    "events",
    "dead_letters",
    "rounds",
    "settlements",
    "violations",
    "jackpot_ledger",
    "skipped_events",
)


class LakeSink:
    """Owns one read-write connection to the lake."""

    def __init__(self, lake: lakes.Lake) -> None:
        self.lake = lake
        # Two consumers started together on a new lake race to create its catalog.
        self.con = retry_when_locked(lambda: lakes.connect(lake, create=True))
        self.keeper: subprocess.Popen[str] | None = None
        self.writer: maintenance.Writer | None = None
        try:
            # Maintenance spares the files of a commit in flight, however long it waits.
            try:
                self.writer = maintenance.Writer(lake.root)
            except OSError as exc:
                raise lakes.LakeError(
                    f"cannot register as a writer of the lake in "
                    f"{lake.root / maintenance.WRITERS}: {exc}"
                ) from None
            self.keeper = lakes.hold_catalog(lake)
            self._prepare()
        except BaseException:
            self.close()
            raise

    def _prepare(self) -> None:
        # pyarrow's first conversion from Python objects imports pandas (over a second): pay it
        # here, not in the first batch, where it showed as the latency bench's p99.
        pa.array([""], pa.string())
        # One DuckDB thread: a batch's inserts are small, and the processor's thread needs the
        # other core. On 2 cores this gave 8-10 % more events/s and per CPU-second than two.
        self.con.execute("SET threads = 1")
        # DuckDB caches the blocks of every file it reads (up to 80 % of RAM): a maintenance
        # pass reads every small file it merges, and the consumer's RSS grew ~1 MB per 1,000
        # events for ever (300 MB a simulated day in bench_soak). The consumer re-reads little.
        self.con.execute("SET enable_external_file_cache = false")

        def create() -> None:
            create_tables(self.con)
            # Bookkeeping column added by the sink (not part of the analytic schema's docs).
            self.con.execute(f"ALTER TABLE {STATE} ADD COLUMN IF NOT EXISTS version BIGINT")

        # Idempotent DDL, so a commit that conflicts with another consumer creating the same
        # tables (DuckLake then reports half of the other's tables) is simply run again.
        retry_when_locked(create, conflicts=True)

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            if self.writer is not None:
                self.writer.close()
            lakes.release_catalog(self.keeper)  # last: it alone may then checkpoint the WAL

    def bind(self, stream: StreamBinding, *, adopt: bool = False) -> None:
        """Bind the lake to `stream`, or raise LakeBoundElsewhere having written nothing
        (`infra.binding`); call before the first batch."""
        from infra.binding import bind

        if self.write(lambda: bind(self.con, stream, adopt=adopt)):
            log.info("lake bound", extra=fields(stream=stream.describe(), adopted=adopt))

    def commit(
        self,
        batch: RowBatch,
        *,
        offsets: Mapping[tuple[str, int], int] | None = None,
        states: Mapping[str, tuple[int, str]] | None = None,
    ) -> None:
        """Write rows, next offsets per (topic, partition) and table states in one transaction.

        `states` maps table_id -> (version, state as JSON text): the version (the last offset or
        position applied for that table) orders snapshots of one table's state.
        """
        tables = {table: to_arrow(table, rows) for table, rows in batch.rows.items() if rows}
        if offsets:
            tables[OFFSETS] = to_arrow(
                OFFSETS,
                [
                    {"source_topic": t, "source_partition": p, "next_offset": o}
                    for (t, p), o in sorted(offsets.items())
                ],
            )
        if states:
            ids = sorted(states)
            tables[STATE] = pa.table(
                {
                    "table_id": ids,
                    "state": [states[t][1] for t in ids],
                    "version": pa.array([states[t][0] for t in ids], pa.int64()),
                }
            )
        self.write(lambda: self._transaction(tables))

    def write(self, action: Callable[[], T], *, conflicts: bool = False) -> T:
        """Run `action`, a write on `con`, as a write in flight (maintenance spares its files)
        and again while the catalog is locked (`retry_when_locked`)."""
        with self.writing():
            return retry_when_locked(action, conflicts=conflicts)

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """A write in flight on `con`, whose files maintenance must not take for orphans."""
        assert self.writer is not None, "the sink was closed"
        return self.writer.writing()

    def _transaction(self, tables: Mapping[str, pa.Table]) -> None:
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            for table, data in tables.items():
                if table == STATE:
                    con.register("_batch", data)
                    con.execute(
                        f"INSERT INTO {STATE} (table_id, state, version) "
                        "SELECT table_id, state, version FROM _batch"
                    )
                    con.unregister("_batch")
                else:
                    self._insert(table, data)
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a failed COMMIT has already rolled back
                con.execute("ROLLBACK")
            raise

    def _insert(self, table: str, data: pa.Table) -> None:
        columns = ", ".join(c.name for c in TABLES[table])
        select, source = (
            (EVENTS_FROM_PAYLOAD, EVENTS_SOURCE) if table == "events" else (columns, "_batch")
        )
        self.con.register("_batch", data)
        try:
            self.con.execute(f"INSERT INTO {table} ({columns}) SELECT {select} FROM {source}")
        finally:
            self.con.unregister("_batch")

    def load_offsets(self, topic: str) -> dict[int, int]:
        """Next offset per partition of `topic`, as last committed with the rows."""
        rows = self.con.execute(
            f"SELECT source_partition, max(next_offset) FROM {OFFSETS} "
            "WHERE source_topic = ? GROUP BY source_partition",
            [topic],
        ).fetchall()
        return {int(p): int(o) for p, o in rows}

    def _reader(self) -> duckdb.DuckDBPyConnection:
        """A cursor on the lake for reads beside a commit in flight on `con`."""
        cur = self.con.cursor()
        cur.execute(f"USE {lakes.LAKE_ALIAS}")
        return cur

    def lookup_events(self, ids: Sequence[int]) -> dict[int, tuple[int | None, int | None, bytes]]:
        """The stored events among `ids` (UUIDs as integers): where each was read from and its
        payload. Safe beside a commit in flight: it reads through its own cursor."""
        texts = [str(UUID(int=i)) for i in ids]
        with self._reader() as cur:
            rows = cur.execute(
                "SELECT event_id, source_partition, source_offset, payload FROM events "
                "WHERE event_id IN (SELECT unnest(?::VARCHAR[]))",
                [texts],
            ).fetchall()
        return {UUID(e).int: (p, o, payload.encode()) for e, p, o, payload in rows}

    def lookup_rounds(self, round_ids: Sequence[str]) -> set[str]:
        """The round ids among `round_ids` that a stored `round_started` opened."""
        with self._reader() as cur:
            rows = cur.execute(
                "SELECT DISTINCT round_id FROM events WHERE event_type = 'round_started' "
                "AND round_id IN (SELECT unnest(?::VARCHAR[]))",
                [list(round_ids)],
            ).fetchall()
        return {r for (r,) in rows}

    def max_state_version(self) -> int:
        """The highest version of any table's committed state (-1: none yet)."""
        row = self.con.execute(f"SELECT coalesce(max(version), -1) FROM {STATE}").fetchone()
        return int(row[0]) if row else -1

    def load_states(self, table_ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """The latest committed state of each table (all tables, or the ones named)."""
        rows = self.con.execute(
            f"SELECT table_id, arg_max(state, version) FROM {STATE} GROUP BY table_id"
        ).fetchall()
        wanted = None if table_ids is None else set(table_ids)
        return {str(t): json.loads(s) for t, s in rows if wanted is None or t in wanted}


# Event rows arrive as (payload, partition, offset), the payload as the message's bytes (UTF-8,
# or the contract's JSON parser would have refused it; Arrow checks again): DuckDB reads the
# envelope out of the JSON (vectorised, off the GIL) instead of Python building thirteen
# columns per event. One json_extract_string over a list of paths parses each payload once;
# ten `->>` parsed it ten times (about 5x the CPU for the same values).
EVENT_ROW_SCHEMA = pa.schema(
    [
        pa.field("payload", pa.string()),
        pa.field("source_partition", pa.int32()),
        pa.field("source_offset", pa.int64()),
    ]
)
_ENVELOPE_PATHS = ", ".join(
    f"'$.{name}'"
    for name in (
        "event_id",
        "event_type",
        "schema_version",
        "casino_id",
        "table_id",
        "game",
        "round_id",
        "seq",
        "occurred_at",
        "source_device",
    )
)
# The processor stores only payloads in the contract's spelling (or re-spelled by it), so these
# read what the contract read; lower() and upper() fold the case the contract lets vary (a
# UUID's hex digits, the `T` and `Z` of a time).
EVENTS_FROM_PAYLOAD = """
    lower(e[1]), e[2], CAST(e[3] AS INTEGER), e[4], e[5], e[6], e[7], CAST(e[8] AS BIGINT),
    CAST(upper(e[9]) AS TIMESTAMPTZ), e[10], payload, source_partition, source_offset"""
EVENTS_SOURCE = f"(SELECT *, json_extract_string(payload, [{_ENVELOPE_PATHS}]) AS e FROM _batch)"


def retry_when_locked(action: Callable[[], T], *, conflicts: bool = False) -> T:
    """Run a write; if the SQLite catalog is locked by another writer (several consumers of one
    group share it), run it again whole, with backoff. Safe: a failed write left nothing.
    `conflicts`: also run again after a failed DuckLake commit (for idempotent writes only)."""
    for attempt in range(COMMIT_ATTEMPTS):
        try:
            return action()
        except duckdb.Error as exc:
            retry = lakes.is_locked(exc) or (
                conflicts and isinstance(exc, duckdb.TransactionException)
            )
            if not retry or attempt == COMMIT_ATTEMPTS - 1:
                raise
            time.sleep(min(2.0, 0.02 * 1.5**attempt))
    raise AssertionError("unreachable")


def to_arrow(table: str, rows: list[Any]) -> pa.Table:
    """Rows to an Arrow table of the table's schema, column by column (many times faster than
    `pa.Table.from_pylist`, which dominated the sink's time). Rows are dicts, except events:
    (payload, partition, offset) tuples."""
    if table == "events":
        schema, keys = EVENT_ROW_SCHEMA, list(range(len(EVENT_ROW_SCHEMA)))
    else:
        schema, keys = ARROW_SCHEMAS[table], ARROW_SCHEMAS[table].names
    columns = [
        pa.array([row[k] for row in rows], type=f.type) for k, f in zip(keys, schema, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=schema)


_POSITION_COLUMNS = ("source_topic", "source_partition", "source_offset", "violation_id")
_POSITIONLESS = {
    "evidence": """json_merge_patch(evidence, '{"original": null, "repeat": null}')""",
}


def content_hashes(con: duckdb.DuckDBPyConnection, *, positions: bool = True) -> dict[str, str]:
    """MD5 of each analytic table's rows, sorted, so two lakes with equal content hash equal.

    `positions=False` leaves out where messages were read from (Kafka partition and offset),
    to compare a lake built through Kafka with one built in-process: the source columns, and
    in violations the offsets a duplicate's evidence names (and the id made from them)."""
    hashes: dict[str, str] = {}
    for table in ANALYTIC_TABLES:
        columns = ", ".join(
            _POSITIONLESS.get(c.name, c.name) if not positions else c.name
            for c in TABLES[table]
            if positions or c.name not in _POSITION_COLUMNS
        )
        row = con.execute(
            f"SELECT count(*), md5(coalesce(string_agg(r, chr(10) ORDER BY r), '')) "
            f"FROM (SELECT CAST(({columns}) AS VARCHAR) AS r FROM {table})"
        ).fetchone()
        count, digest = row if row else (0, "")
        hashes[table] = f"{count}:{digest}"
    return hashes
