"""The pipeline: raw messages in, one lake transaction out (processor + sink, no Kafka here).

The Kafka adapter and the in-process demo both feed it, so both write exactly the same rows.
"""

from __future__ import annotations

import gc
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from consumers.ids import event_index, round_index, snapshot_after_commit
from consumers.processor import DEFAULT_MAX_SKEW_S, Processor, RawMessage
from consumers.rows import RowBatch
from consumers.sink import LakeSink
from infra import maintenance as lake_maintenance
from infra.logs import fields
from rules.rankings.systems import build_tables

log = logging.getLogger("croupier.consumer")
# How long the consumer's own maintenance pass retries a step that meets another writer.
CONSUMER_RETRY_FOR_S = 20.0

__all__ = ["CommitObserver", "HandleResult", "Pipeline", "RawMessage", "StreamPolicy"]


@dataclass(frozen=True, kw_only=True)
class StreamPolicy:
    """What the consumer accepts: events of one casino only (None: any), and how far an
    event's `occurred_at` may be from the broker's clock before it is a violation."""

    casino_id: str | None = None
    max_skew_s: float = DEFAULT_MAX_SKEW_S


@dataclass(frozen=True, kw_only=True)
class HandleResult:
    next_offsets: dict[tuple[str, int], int]
    dead_letters: list[dict[str, Any]] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    messages: int = 0
    """Messages in the batch (each a stored event, a dead letter or a dropped duplicate)."""
    violations: dict[str, int] = field(default_factory=dict)
    """Violation rows of the batch, by rule ID."""
    severities: dict[str, int] = field(default_factory=dict)
    """Violation rows of the batch, by severity."""


class CommitObserver(Protocol):
    """Told on the commit thread about each batch's lake transaction (`Pipeline.observer`)."""

    def committed(self, result: HandleResult, seconds: float) -> None:
        """The batch's transaction committed; `seconds` it took."""

    def commit_failed(self, error: BaseException) -> None:
        """The batch did not commit (its dead-letter copies or its transaction failed)."""


class Pipeline:
    """Feeds batches through one processor and commits each to the lake with its positions.

    The lake commit of batch N runs on a second thread while batch N+1 is processed (DuckDB
    releases the GIL), with at most one commit in flight; `committed()` hands back the
    batches whose transaction is durable, in order, and a failed commit is raised there.

    `before_commit`, when set, is called on the commit thread with a batch's dead-letter rows
    (only when there are some) just before that batch's transaction; if it raises, the batch
    does not commit and the error is raised like a failed commit. The Kafka adapter copies the
    dead letters to their topic there, so that no committed dead letter lacks its copy.

    `observer`, when set, is told on the commit thread right after each batch's transaction
    committed (or failed): the consumer's metrics count committed batches only.

    `maintenance`, when set, runs a lake maintenance pass (`infra.maintenance`) at most
    every `every_s` seconds, between two batches: the id indexes first write their manifests
    (so expiry may go up to the latest snapshot), then the pass runs on the commit thread,
    before the next batch's commit, while that batch is processed. A failed pass is logged,
    never raised: the lake is as the failed step found it, and the next pass tries again.
    """

    def __init__(
        self,
        sink: LakeSink,
        *,
        overlap: bool = True,
        before_commit: Callable[[list[dict[str, Any]]], None] | None = None,
        policy: StreamPolicy | None = None,
        maintenance: lake_maintenance.Schedule | None = None,
    ) -> None:
        # A batch makes millions of short-lived objects (events, rows) that reference counting
        # frees; the cycle collector's default trigger (every 700 allocations) spent ~5 % of the
        # CPU walking them. The pipeline is its process's main job: it sets the process's trigger.
        gc.set_threshold(50_000, 50, 1_000)
        self.sink = sink
        policy = policy or StreamPolicy()
        # Every event_id and round id the lake holds, beside it (built from it if missing).
        self._ids = (event_index(sink.lake.root, sink.con), round_index(sink.lake.root, sink.con))
        self.processor = Processor(
            load_state=self._load_state,
            index=self._ids[0],
            round_index=self._ids[1],
            lookup=sink.lookup_events,
            lookup_rounds=sink.lookup_rounds,
            casino_id=policy.casino_id,
            max_skew_s=policy.max_skew_s,
        )
        # Kafka key (the table id's bytes) -> partition it was last read from.
        self._partition_of_table: dict[bytes, int] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lake-commit")
        self._overlap = overlap
        # The commit in flight (its future gives the snapshot it made), its result, and the
        # id indexes' tokens for the batch.
        self._inflight: tuple[Future[int | None], HandleResult, list[int]] | None = None
        self._done: list[HandleResult] = []
        self._stored: dict[str, dict[str, Any]] | None = None
        self.before_commit = before_commit
        self.observer: CommitObserver | None = None
        self.maintenance = maintenance
        self._maintained_at = time.monotonic()
        self.maintenance_reports: list[lake_maintenance.MaintenanceReport] = []

    def _load_state(self, table_id: str) -> dict[str, Any] | None:
        # One query for every table's latest state, the first time a table is met; a table met
        # again after `reload_states()` (a new partition assignment) is read afresh.
        if self._stored is None:
            self.flush()
            self._stored = self.sink.load_states()
        return self._stored.pop(table_id, None)

    def reload_states(self) -> None:
        """Forget every table and re-read states from the lake when next needed (another
        consumer may have moved them on while their partitions were elsewhere)."""
        self.flush()
        self.processor.forget(list(self.processor.tables))
        self._partition_of_table.clear()
        self._stored = None

    def flush(self) -> None:
        """Wait for the commit in flight, if any (raises its error)."""
        if self._inflight is not None:
            future, result, tokens = self._inflight
            self._inflight = None
            try:
                snapshot = future.result()
            except BaseException:
                for index, token in zip(self._ids, tokens, strict=True):
                    index.discard(token)
                raise
            for index, token in zip(self._ids, tokens, strict=True):
                index.committed(token, snapshot)
            self._done.append(result)

    def idle(self) -> bool:
        """True when no commit is in flight (a new batch would start committing at once)."""
        return self._inflight is None or self._inflight[0].done()

    def committed(self) -> list[HandleResult]:
        """Results of the batches committed since the last call, oldest first."""
        done, self._done = self._done, []
        return done

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._executor.shutdown()
            for index in self._ids:
                index.close()

    def handle(self, messages: Sequence[RawMessage]) -> HandleResult:
        """Process one batch and start its commit (finished when `committed()` returns it)."""
        batch = self.processor.process(messages)
        offsets: dict[tuple[str, int], int] = {}
        owners = self._partition_of_table
        for _, key, topic, partition, offset, _ in messages:
            if partition is None:
                continue
            if key is not None:
                owners[key] = partition
            if topic is not None and offset is not None:
                at = (topic, partition)
                if offset >= offsets.get(at, 0):
                    offsets[at] = offset + 1
        states = self.processor.take_dirty_states()
        violations = batch.rows.get("violations", [])
        result = HandleResult(
            next_offsets=offsets,
            dead_letters=batch.rows.get("dead_letters", []),
            rows={table: len(rows) for table, rows in batch.rows.items()},
            messages=len(messages),
            violations=dict(Counter(row["rule_id"] for row in violations)),
            severities=dict(Counter(row["severity"] for row in violations)),
        )
        self.flush()
        if (
            self.maintenance is not None
            and time.monotonic() - self._maintained_at >= self.maintenance.every_s
        ):
            self.start_maintenance()
        future = self._executor.submit(
            self._commit, batch, offsets, states, result, self.before_commit, self.observer
        )
        self._inflight = (future, result, [index.seal() for index in self._ids])
        if not self._overlap:
            self.flush()
        return result

    def start_maintenance(self) -> None:
        """Queue a maintenance pass on the commit thread now (no commit may be in flight:
        call after `flush`); `maintenance_reports` gets its report once it ran."""
        schedule = self.maintenance
        if schedule is None:
            return
        self._maintained_at = time.monotonic()
        for index in self._ids:
            try:
                index.persist()
            except Exception as exc:  # expiry then keeps what the older manifest needs
                log.warning("lake maintenance: could not persist an id index: %s", exc)
        self._executor.submit(self._maintain, schedule)

    def _maintain(self, schedule: lake_maintenance.Schedule) -> None:
        try:
            report = lake_maintenance.maintain(
                self.sink.con,
                self.sink.lake,
                retention=schedule.retention,
                grace=schedule.grace,
                # the next batch's commit waits for this pass: give up soon, try next time
                retry_for_s=CONSUMER_RETRY_FOR_S,
            )
        except lake_maintenance.MaintenanceBusy as exc:
            log.info("lake maintenance skipped: %s", exc)
            return
        except Exception as exc:  # never the consumer's end: the next pass tries again
            log.warning("lake maintenance failed: %s", exc)
            return
        self.maintenance_reports = [*self.maintenance_reports[-9:], report]
        log.info(
            "lake maintenance",
            extra=fields(
                files_before=report.before.files,
                files_after=report.after.files,
                live_files=report.live_files_after,
                snapshots_expired=report.snapshots_expired,
                pinned_by=report.pinned_by,
                seconds=report.seconds,
            ),
        )

    def _commit(
        self,
        batch: RowBatch,
        offsets: dict[tuple[str, int], int],
        states: dict[str, tuple[int, str]],
        result: HandleResult,
        before_commit: Callable[[list[dict[str, Any]]], None] | None,
        observer: CommitObserver | None,
    ) -> int | None:
        try:
            if result.dead_letters and before_commit is not None:
                before_commit(result.dead_letters)
            started = time.monotonic()
            self.sink.commit(batch, offsets=offsets, states=states)
        except BaseException as exc:
            if observer is not None:
                _tell(observer.commit_failed, exc)
            raise
        if observer is not None:
            _tell(observer.committed, result, time.monotonic() - started)
        snapshot = snapshot_after_commit(self.sink.con)
        if snapshot is not None:
            # Told now, not at `flush`: the next batch, processed meanwhile, would otherwise
            # read this commit's ids back from the lake as another consumer's.
            for index in self._ids:
                index.own(snapshot)
        return snapshot

    def forget_partitions(self, partitions: Iterable[int]) -> None:
        self.flush()
        lost = set(partitions)
        keys = [k for k, p in self._partition_of_table.items() if p in lost]
        self.processor.forget([k.decode("utf-8", "replace") for k in keys])
        for key in keys:
            del self._partition_of_table[key]


def warm_up() -> None:
    """Ready this process for a stream whose events wait on each batch (call before reading).

    The ranking tables are built now (~1 s), not in the first hand of each game (which made
    the first second of traffic wait over a second). Then everything alive (modules, tables,
    the id indexes) goes to the cycle collector's permanent generation: its full passes, which
    walked all of it between two events, then walk only what the batches made.
    """
    build_tables()
    gc.collect()
    gc.freeze()


def _tell(call: Callable[..., None], *args: Any) -> None:
    """An observer's call: its failure is logged, never the commit's (the batch is durable)."""
    try:
        call(*args)
    except Exception as exc:
        log.warning("commit observer failed: %s", exc)
