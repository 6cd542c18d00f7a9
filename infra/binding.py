"""Which stream a lake holds: its identity, and the Kafka cluster, topic and group it is bound to.

A lake is the settlement record of one stream. Consuming a second stream into it (another
topic, another cluster, the demo's simulated night) would mix two casinos' nights and flag every
event of the second as out of order, so the first consumer binds the lake to its stream and any
other is refused (`LakeBoundElsewhere`, exit 2 in the CLI) before anything is written, unless
the operator adopts the lake by name (`--adopt`), which is recorded.

`stream_binding` is append-only: the newest row holds, the older ones are the lake's history.
`lake_identity` gives the lake a random id at creation, so a lake deleted and created again at
the same path is told apart (the marts then rebuild from scratch).
"""

from __future__ import annotations

import contextlib
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

IDENTITY = "lake_identity"
BINDING = "stream_binding"


class LakeBoundElsewhere(RuntimeError):
    """The lake holds another stream; the message names both and the way to adopt it."""


@dataclass(frozen=True, kw_only=True)
class StreamBinding:
    """A stream: `kind` kafka (cluster, topic, group), replay (a fresh lake rebuilt from a
    topic), file (recordings settled with `consume --file`) or demo (the simulated night)."""

    kind: str
    cluster_id: str | None = None
    topic: str | None = None
    group_id: str | None = None

    def describe(self) -> str:
        if self.kind in ("kafka", "replay"):
            return (
                f"{self.kind} topic {self.topic!r}, group {self.group_id!r} on cluster "
                f"{self.cluster_id!r}"
            )
        return {"file": "recordings (consume --file)", "demo": "the demo's simulated night"}.get(
            self.kind, self.kind
        )


def ensure_identity(con: duckdb.DuckDBPyConnection) -> None:
    """Give the lake its identity if it has none (idempotent). A lake made before identities
    existed is dated by its first snapshot, so its marts are not rebuilt for the upgrade."""
    if con.execute(f"SELECT count(*) FROM {IDENTITY}").fetchall()[0][0]:
        return
    (catalog,) = con.execute("SELECT current_database()").fetchone() or ("lake",)
    # Two inserts into one DuckLake table never conflict, so processes creating a lake together
    # each gave it an identity (two rows, seen on PostgreSQL). Altering the table as well makes
    # them conflict: one commits, the others fail and, run again (the callers retry
    # conflicts), find its row.
    con.execute("BEGIN")
    try:
        con.execute(f"COMMENT ON TABLE {IDENTITY} IS 'the lake''s identity, given once'")
        con.execute(
            f"INSERT INTO {IDENTITY} SELECT ?, coalesce("
            f"(SELECT min(snapshot_time) FROM ducklake_snapshots('{catalog}')), now()) "
            f"WHERE NOT EXISTS (SELECT 1 FROM {IDENTITY})",
            [str(uuid.uuid4())],
        )
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # a failed commit has ended it already
            con.execute("ROLLBACK")
        raise


def identity(con: duckdb.DuckDBPyConnection) -> tuple[str, datetime] | None:
    """(lake_id, created_at), or None for a lake never opened for writing since identities
    exist. (Should an older version have inserted two, the oldest holds.)"""
    try:
        row = con.execute(
            f"SELECT lake_id, created_at FROM {IDENTITY} ORDER BY created_at, lake_id LIMIT 1"
        ).fetchone()
    except duckdb.CatalogException:
        return None
    return (str(row[0]), row[1]) if row else None


def current(con: duckdb.DuckDBPyConnection) -> StreamBinding | None:
    """The binding in force (the newest row), or None for a lake never bound."""
    try:
        row = con.execute(
            f"SELECT kind, cluster_id, topic, group_id FROM {BINDING} "
            "ORDER BY bound_at DESC LIMIT 1"
        ).fetchone()
    except duckdb.CatalogException:
        return None
    if row is None:
        return None
    return StreamBinding(kind=row[0], cluster_id=row[1], topic=row[2], group_id=row[3])


def history(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every binding recorded, oldest first."""
    try:
        cursor = con.execute(f"SELECT * FROM {BINDING} ORDER BY bound_at")
    except duckdb.CatalogException:
        return []
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _foreign_data(con: duckdb.DuckDBPyConnection, stream: StreamBinding) -> str | None:
    """Why an unbound lake (made before bindings existed) may not simply be bound to `stream`:
    it holds positions of other sources, or events and no position of this one. None if it is
    empty or holds only this stream's positions."""
    topics = [str(t) for (t,) in con.execute(
        "SELECT DISTINCT source_topic FROM consumer_offsets ORDER BY 1"
    ).fetchall()]  # fmt: skip
    if stream.kind == "file":
        others = [t for t in topics if not t.startswith("file:")]
    else:
        others = [t for t in topics if t != stream.topic]
    if others:
        return "it holds positions of " + ", ".join(repr(t) for t in others)
    if not topics and con.execute("SELECT 1 FROM events LIMIT 1").fetchall():
        return "it already holds events from another source"
    return None


def bind(con: duckdb.DuckDBPyConnection, stream: StreamBinding, *, adopt: bool = False) -> bool:
    """Check that the lake on `con` holds `stream`, binding it on first use; True if a binding
    was recorded. Raises LakeBoundElsewhere (having written nothing) for another stream,
    unless `adopt`. A file binding accepts any recording."""
    bound = current(con)
    if bound == stream or (bound is not None and bound.kind == "file" == stream.kind):
        return False
    if not adopt:
        if bound is not None:
            differ = [
                f"{name} {getattr(stream, attr)!r} (the lake's: {getattr(bound, attr)!r})"
                for name, attr in (("kind", "kind"), ("cluster", "cluster_id"),
                                   ("topic", "topic"), ("group", "group_id"))
                if getattr(stream, attr) != getattr(bound, attr)
            ]  # fmt: skip
            raise LakeBoundElsewhere(
                f"this lake holds {bound.describe()}; this run reads another stream: "
                f"{', '.join(differ)}. Refusing to mix two streams in one lake. Use another "
                "--lake, or --adopt to bind this lake to the new stream (recorded in "
                "stream_binding)."
            )
        reason = _foreign_data(con, stream)
        if reason is not None:
            raise LakeBoundElsewhere(
                f"this lake is bound to no stream and {reason}: refusing to add "
                f"{stream.describe()}. Use another --lake, or --adopt to bind this lake to it."
            )
    con.execute(
        f"INSERT INTO {BINDING} VALUES (now(), ?, ?, ?, ?, ?, ?)",
        [stream.kind, stream.cluster_id, stream.topic, stream.group_id, adopt and bound is not None,
         socket.gethostname()],
    )  # fmt: skip
    return True
