"""The processor's id indexes kept beside the lake: every event_id, and every round started.

Each wraps an `EventIndex` (keyed 64-bit fingerprints in memory-mapped runs, bounded heap) under
the processor's `IdIndex` protocol, and ties its batches to the sink's commits: what a batch
adds is sealed when the batch is handed to the sink, confirmed once its transaction is durable
and forgotten if it failed. Each batch first reads what other consumers of the lake committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from consumers.event_index import EventIndex, last_committed_snapshot
from infra import lake as lakes


class LakeIdIndex:
    """Ids of one lake table, as the processor asks for them (128-bit integers)."""

    def __init__(
        self,
        directory: Path,
        con: duckdb.DuckDBPyConnection,
        *,
        table: str,
        column: str,
    ) -> None:
        self._index = EventIndex(directory)
        # Its own cursor of `con`, made now (before any commit runs on `con`'s thread).
        self._index.recover(con, catalog=lakes.LAKE_ALIAS, table=table, column=column)

    def seen(self, ids: Sequence[int]) -> Sequence[bool]:
        self._index.refresh()
        return self._index.seen(self._index.fingerprints(ids)).tolist()  # type: ignore[no-any-return]

    def add(self, ids: Sequence[int]) -> None:
        self._index.add(self._index.fingerprints(ids))

    def seal(self) -> int:
        return self._index.seal()

    def committed(self, token: int, snapshot: int | None) -> None:
        self._index.committed(token, snapshot)

    def own(self, snapshot: int) -> None:
        self._index.own(snapshot)

    def discard(self, token: int) -> None:
        self._index.discard(token)

    def persist(self) -> None:
        """Catch up with the lake and write the manifest: its watermark becomes the latest
        snapshot, so lake maintenance may expire every older one (`infra.maintenance`)."""
        self._index.refresh()
        self._index.persist()

    def close(self) -> None:
        self._index.close()


def event_index(root: Path, con: duckdb.DuckDBPyConnection) -> LakeIdIndex:
    return LakeIdIndex(root / "event_index", con, table="events", column="event_id")


def round_index(root: Path, con: duckdb.DuckDBPyConnection) -> LakeIdIndex:
    """Round ids as `processor.round_key` makes them (md5 of 'round:' and the id)."""
    return LakeIdIndex(
        root / "round_index", con, table="rounds", column="md5('round:' || round_id)"
    )


def snapshot_after_commit(con: duckdb.DuckDBPyConnection) -> int | None:
    """The snapshot the last commit on `con` created (on the committing thread)."""
    return last_committed_snapshot(con, lakes.LAKE_ALIAS)
