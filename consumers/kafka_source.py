"""The Kafka adapter: a consumer-group member that feeds the pipeline and owns no state of its own.

Offsets live in the lake, committed with the rows; on assignment the consumer seeks to them.
Kafka commits happen too, but only so that lag shows in the usual tools.

Dead letters are copied to the dead-letter topic at least once: a batch's copies are produced
and acknowledged by the broker before the batch's lake transaction commits (`Pipeline`'s
`before_commit`), so every `dead_letters` row has its copy whenever the process is killed. A kill
between the two sends a copy again on the next run; each copy names its source (headers
`source_topic`, `source_partition`, `source_offset`) for readers that want to deduplicate.
While the topic cannot be reached the batch waits, and commits once its copies are delivered.

What the Kafka clients report goes through one `KafkaLogGate` (see `consumers.kafka_logs`):
an outage is a line when it starts, a reminder every 30 s, and a line when it ends.

With `metrics` (`consumers.metrics.ConsumerMetrics`), the pipeline counts each committed batch
on its commit thread, the loop beats the health check at every turn and samples the lag, and
the rebalance callbacks count themselves (touching no client: see `lag`).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    TIMESTAMP_NOT_AVAILABLE,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)

from consumers import kafka_logs
from consumers.metrics import ConsumerMetrics
from consumers.pipeline import Pipeline, RawMessage
from infra.binding import StreamBinding
from infra.kafka import KafkaSecurityError, ensure_topic, security_failure
from infra.logs import fields
from infra.signals import stop_on_signals

log = logging.getLogger("croupier.consumer")
# How often a batch being read looks whether the previous commit has finished.
READ_SLICE_S = 0.02
# After a stop is requested, how long a batch waits for its dead-letter copies before the
# process gives up on committing it (it is read again on the next start).
DEAD_LETTER_STOP_GRACE_S = 10.0
DEAD_LETTER_PRODUCER = "dead-letter producer"
# librdkafka reports every copy within this (`message.timeout.ms`): acknowledged, or failed.
DEAD_LETTER_TIMEOUT_S = 60.0
# A producer that has had no copy acknowledged for a whole message timeout is replaced by a new
# one before the copies are sent again; one that has not even reported a copy this long after
# the timeout is wedged and replaced at once. librdkafka 2.1x clients can stay disconnected for
# good once every broker was down (re-bootstrap races), while a new client connects at once: a
# batch then waited for its copies forever although the broker was back (a flaky outage test).
DEAD_LETTER_WEDGED_S = DEAD_LETTER_TIMEOUT_S + 30.0
# How often the loop samples the lag for the metrics (cheap: no request to the broker).
LAG_SAMPLE_EVERY_S = 1.0
# The consumer client wedges the same way: after a broker restart its group coordinator
# connection stayed down ("GroupCoordinator: Timed out ... 1 out-queue" every minute), so the
# member whose partitions were revoked at the end of the outage never joined again, and a
# SIGTERM then hung in `close()` (a flaky outage test in CI). A member whose group has not been
# steady this long after any outage ended gets a new client; positions come from the lake.
GROUP_STALLED_S = 60.0
# How long leaving the group may take at a stop; past it the process stops without it (the
# lake holds the offsets; the group moves the partitions on after `session.timeout.ms`).
CLOSE_TIMEOUT_S = 15.0


class DeadLetterCopiesUndelivered(RuntimeError):
    """Stopped while a batch's dead-letter copies could not be delivered: the batch was not
    committed to the lake, and the next start reads it again."""


@dataclass(frozen=True, kw_only=True)
class ConsumeOptions:
    topic: str
    group_id: str
    dead_letter_topic: str | None
    # Large: fewer lake commits on a backlog (50k ran 15-20 % faster than 20k, RSS ~620 MB);
    # at a trickle batches are cut early anyway (see `_read_batch`).
    batch_size: int = 50_000
    batch_wait_s: float = 0.25
    metrics_every_s: float = 10.0
    stop_when_idle_s: float | None = None
    """Stop after this long with nothing to read (tests, replays); None = run until stopped."""
    binding_kind: str = "kafka"
    """How the lake is bound to this stream on the first assignment (`infra.binding`)."""
    adopt: bool = False
    """Bind the lake to this stream even if it is bound to another (recorded)."""


class KafkaSource:
    """Reads the topic as one member of the consumer group and hands batches to the pipeline."""

    def __init__(
        self,
        pipeline: Pipeline,
        client_config: dict[str, Any],
        options: ConsumeOptions,
        *,
        metrics: ConsumerMetrics | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.options = options
        self.metrics = metrics
        if metrics is not None:  # counted on the commit thread, once the lake holds the batch
            pipeline.observer = metrics
        self._assigned_offsets: dict[int, int] = {}  # where each partition started, for lag
        self._lag_sampled_at = -math.inf
        self.stopping = threading.Event()
        self._security_error: KafkaError | None = None
        self.log_gate = kafka_logs.KafkaLogGate()
        self._client_config = client_config
        self._abandoned = False  # set when `close` stopped waiting for the client to leave
        self.consumer = self._new_consumer()
        self.dead_letters: Producer | None = None
        if options.dead_letter_topic:
            ensure_topic(
                self._wired(client_config, "admin"), options.dead_letter_topic, partitions=1
            )
            self.dead_letters = self._dead_letter_producer()
            # The pipeline commits on its own thread; this runs there, before each commit.
            self.pipeline.before_commit = self._copy_dead_letters
        self.events_total = 0
        self._window_events = 0
        self._window_start = time.monotonic()
        self._last_batch_s = 0.0
        self._assigned_at: float | None = None
        self._stop_requested_at: float | None = None
        self._said_waiting_at = -math.inf
        self._bound = False
        self._cluster_id: str | None = None
        self._reading: list[RawMessage] = []  # the batch being read (see `_read_batch`)

    def _new_consumer(self) -> Consumer:
        """A consumer client, its group membership watched from its statistics (`_group`)."""
        watch = self._group = GroupWatch()
        return Consumer(
            {
                **self._wired(self._client_config, "consumer", on_stats=watch.stats),
                "group.id": self.options.group_id,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "enable.partition.eof": False,
                "max.poll.interval.ms": 300_000,
                # A crashed member's partitions move on after 10 s, not librdkafka's 45 s.
                "session.timeout.ms": 10_000,
                "heartbeat.interval.ms": 2_000,
                # Prefetch is per partition; bounded so memory stays flat on any backlog.
                "queued.max.messages.kbytes": 16_384,
            }
        )

    def _retired(self, consumer: Consumer) -> bool:
        """Whether a rebalance callback comes from a client no longer ours (replaced, or left
        closing at a stop): it changes nothing (confluent-kafka assigns or unassigns itself)."""
        return consumer is not self.consumer or self._abandoned

    # -- rebalance: positions come from the lake, never from Kafka's committed offsets ----------
    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if self._retired(consumer):
            return
        if not self._bound:  # before anything is read: another stream's lake is refused here
            self.pipeline.sink.bind(self._stream(), adopt=self.options.adopt)
            self._bound = True
        self.pipeline.reload_states()  # also waits for the commit in flight
        # what the batch being read holds of these is read again, from the lake's offsets
        self._drop_reading({tp.partition for tp in partitions})
        stored = self.pipeline.sink.load_offsets(self.options.topic)
        for tp in partitions:
            tp.offset = stored.get(tp.partition, OFFSET_BEGINNING)
        positions = {str(tp.partition): tp.offset for tp in partitions}
        log.info("assigned", extra=fields(partitions=dict(sorted(positions.items()))))
        consumer.assign(partitions)
        self._assigned_at = time.monotonic()
        self._assigned_offsets.update({tp.partition: tp.offset for tp in partitions})
        if self.metrics is not None:  # our own counters only: no client call in a callback
            self.metrics.assigned(tp.partition for tp in partitions)

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if self._retired(consumer):
            return
        self._forget({tp.partition for tp in partitions})
        log.info("revoked", extra=fields(partitions=sorted(tp.partition for tp in partitions)))
        consumer.unassign()

    def _forget(self, lost: set[int]) -> None:
        """Finish the commit in flight, then forget the tables of `lost` partitions: their next
        owner continues from the lake."""
        self.pipeline.flush()
        self._after_commits()
        self._drop_reading(lost)
        self.pipeline.forget_partitions(lost)
        for partition in lost:
            self._assigned_offsets.pop(partition, None)
        if self.metrics is not None:  # after the flush: no commit in flight sets them again
            self.metrics.revoked(self.options.topic, lost)

    def _drop_reading(self, partitions: set[int]) -> None:
        """Forget the messages of `partitions` in the batch being read. A rebalance is served
        inside a read; the messages read before it are ours no longer (revoked), or will be read
        again from the lake's offsets (assigned): processed here they were processed twice, and
        a table's state fell behind its events (librdkafka purges only what the read in
        progress holds, not what earlier reads of the same batch returned)."""
        if partitions:
            self._reading[:] = [m for m in self._reading if m.partition not in partitions]

    def _stream(self) -> StreamBinding:
        return StreamBinding(
            kind=self.options.binding_kind,
            cluster_id=self._cluster_id,
            topic=self.options.topic,
            group_id=self.options.group_id,
        )

    def _find_cluster(self) -> None:
        """The cluster id, for the lake's binding, asked before subscribing: no client call
        may run inside a rebalance callback (librdkafka's call state is per thread and call;
        a nested call aborted the process). Waits out a broker that is down at start."""
        while self._cluster_id is None and not self.stopping.is_set():
            try:
                self._cluster_id = self.consumer.list_topics(
                    self.options.topic, timeout=5
                ).cluster_id
            except KafkaException:  # unreachable: the log gate reports the outage
                continue

    def request_stop(self, *_: object) -> None:
        self.stopping.set()

    def _wired(
        self,
        config: dict[str, Any],
        client: str,
        *,
        on_stats: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """`config` with this consumer's error handling and the log gate."""

        def on_error(error: KafkaError) -> None:
            if security_failure(error):  # no retry can mend it: stop, and say why
                self._security_error = error
                self.stopping.set()
            else:  # librdkafka retries transport errors itself
                self.log_gate.error(error, client=client)

        return kafka_logs.client_config(
            config, self.log_gate, client=client, on_error=on_error, on_stats=on_stats
        )

    def run(self, *, install_signal_handlers: bool = True) -> int:
        """Consume until stopped (SIGTERM/SIGINT or idle limit); returns the events processed."""
        with stop_on_signals(self.request_stop, install=install_signal_handlers):
            return self._run()

    def _run(self) -> int:
        idle_since = time.monotonic()
        try:
            self._find_cluster()
            self._subscribe()
            while not self.stopping.is_set():
                self._serve_clients()
                self._mend_group()
                self._observe()
                batch = self._read_batch()
                now = time.monotonic()
                if not batch:
                    limit = self.options.stop_when_idle_s
                    # Idle time counts from the assignment: joining the group takes a while.
                    since = max(idle_since, self._assigned_at or now)
                    if limit is not None and self._assigned_at is not None and now - since > limit:
                        break
                    self._maybe_report(now)
                    continue
                idle_since = now
                self._handle(batch)
                self._maybe_report(time.monotonic())
        finally:
            if self.metrics is not None:
                self.metrics.health.stopping()
            self.close()
        if self._security_error is not None:
            raise KafkaSecurityError(self._security_error)
        return self.events_total

    def _subscribe(self) -> None:
        self.consumer.subscribe(
            [self.options.topic], on_assign=self._on_assign, on_revoke=self._on_revoke
        )

    def _mend_group(self) -> None:
        """A new client in place of one whose group membership has stalled (`GROUP_STALLED_S`).
        The old one is closed on a thread of its own (leaving a wedged group may block)."""
        stalled_s = self._group.stalled_for(quiet_for=self.log_gate.quiet_for())
        if stalled_s <= GROUP_STALLED_S:
            return
        log.warning(
            "consumer group membership stalled: a new client joins in its place",
            extra=fields(stalled_s=round(stalled_s, 1), **self._group.last),
        )
        self._forget(set(self._assigned_offsets))
        old, self.consumer = self.consumer, self._new_consumer()
        self._assigned_at = None
        self._subscribe()
        threading.Thread(target=_close, args=(old, []), name="consumer-retire", daemon=True).start()

    def _read_batch(self) -> list[RawMessage]:
        """Messages up to `batch_size`, cut early once the previous batch's commit is done
        (group commit): on a backlog batches fill while the last one commits, and at a trickle
        each message waits about one commit, never the whole `batch_wait_s`."""
        # Held by the source, not the loop: a rebalance served by a read below filters it.
        out = self._reading = []
        deadline = time.monotonic() + self.options.batch_wait_s
        while len(out) < self.options.batch_size and not self.stopping.is_set():
            timeout = deadline - time.monotonic()
            if timeout <= 0 or (out and self.pipeline.idle()):
                break
            messages = self.consumer.consume(
                num_messages=self.options.batch_size - len(out),
                timeout=min(timeout, READ_SLICE_S),
            )
            # One comprehension, positional, and the tuple built directly (a NamedTuple's own
            # constructor is a Python call): per message this loop cost as much as validating.
            new = tuple.__new__
            out += [
                new(
                    RawMessage,
                    (m.value(), m.key(), m.topic(), m.partition(), m.offset(), _timestamp(m)),
                )
                for m in messages
                if m.error() is None
            ]
            for msg in messages:
                if (error := msg.error()) is not None:
                    self._check(error)
        return out

    def _observe(self) -> None:
        """The health check's heartbeat, and a lag sample at most every second."""
        metrics = self.metrics
        if metrics is None:
            return
        metrics.health.beat()
        now = time.monotonic()
        if now - self._lag_sampled_at >= LAG_SAMPLE_EVERY_S:
            self._lag_sampled_at = now
            metrics.set_lag(self.lag())

    def _check(self, error: KafkaError) -> None:
        if error.fatal():
            raise KafkaException(error)
        if error.code() != KafkaError._PARTITION_EOF:
            self.log_gate.error(error, client="consumer")

    def _serve_clients(self) -> None:
        """The gate's reminder, and the dead-letter producer's log lines, errors and statistics
        (the consumer's are served by its own reads)."""
        self.log_gate.tick()
        if self.dead_letters is not None:
            self.dead_letters.poll(0)

    def _handle(self, batch: list[RawMessage]) -> None:
        started = time.monotonic()
        self.pipeline.handle(batch)
        self._last_batch_s = time.monotonic() - started
        self.events_total += len(batch)
        self._window_events += len(batch)
        self._after_commits()

    def _after_commits(self) -> None:
        """For batches now durable in the lake: Kafka commits (lag monitoring only)."""
        for result in self.pipeline.committed():
            if result.next_offsets:
                self.consumer.commit(
                    offsets=[
                        TopicPartition(topic, partition, offset)
                        for (topic, partition), offset in result.next_offsets.items()
                    ],
                    asynchronous=True,
                )

    # -- dead-letter copies, at least once ----------------------------------------------------
    def _dead_letter_producer(self) -> Producer:
        return Producer(
            {
                **self._wired(self._client_config, DEAD_LETTER_PRODUCER),
                # Not idempotent: the copies are at least once anyway (named by their headers),
                # and an idempotent producer first needs an id from the transaction coordinator
                # (one more wait after a broker restart) and has fatal states of its own.
                "enable.idempotence": False,
                "acks": "all",
                # A copy not acknowledged within a minute is reported failed and sent again.
                "message.timeout.ms": int(DEAD_LETTER_TIMEOUT_S * 1000),
                "linger.ms": 5,
                # A copy is as large as the message it copies (up to the lake's 1 MiB) plus
                # headers; the broker has the last word (see `_Copy.shrink`).
                "message.max.bytes": 4 << 20,
            }
        )

    def _copy_dead_letters(self, rows: list[dict[str, Any]]) -> None:
        """`Pipeline.before_commit`: a copy of each of the batch's dead letters on the
        dead-letter topic, acknowledged by the broker, before the batch commits. Failed copies
        are sent again with a growing pause; only a stop request ends the wait (raising
        `DeadLetterCopiesUndelivered`: the batch then does not commit)."""
        topic = self.options.dead_letter_topic
        if topic is None or not rows:
            return
        pending = [_Copy(row) for row in rows]
        pause = 0.5
        acknowledged_at = time.monotonic()  # or the first copy sent: progress, for the producer
        while pending:
            producer = self.dead_letters
            for copy in pending:
                self._produce_copy(topic, copy)
            self._await_deliveries(pending)
            failed = [copy for copy in pending if copy.error is not None]
            if len(failed) < len(pending) or self.dead_letters is not producer:
                acknowledged_at = time.monotonic()  # progress, or a new producer already
            too_large = 0
            for copy in failed:
                error = copy.error
                assert error is not None
                if error.code() == KafkaError.MSG_SIZE_TOO_LARGE:  # shorter, and at once
                    copy.shrink()
                    too_large += 1
                    continue
                if error.fatal():  # the producer cannot send any more: a new one
                    self._renew_dead_letter_producer("fatal error")
                self.log_gate.error(error, client=DEAD_LETTER_PRODUCER)
            pending = failed
            if len(pending) > too_large and (
                time.monotonic() - acknowledged_at >= DEAD_LETTER_TIMEOUT_S
            ):  # a whole message timeout without an acknowledgement: the next try, a new client
                self._renew_dead_letter_producer("no copy acknowledged for a message timeout")
                acknowledged_at = time.monotonic()
            if len(pending) > too_large:
                self._say_waiting(len(pending))
                self._wait(pause, pending)
                pause = min(pause * 2, 30.0)

    def _produce_copy(self, topic: str, copy: _Copy) -> None:
        copy.error = None
        copy.done = False
        copy.attempt += 1  # a report of an earlier attempt (an old producer's) is ignored
        on_delivery = copy.reporter()
        while True:
            producer = self.dead_letters
            assert producer is not None
            try:
                producer.produce(
                    topic,
                    value=copy.value,
                    key=copy.row["message_key"],
                    headers=copy.headers(),
                    on_delivery=on_delivery,
                )
                return
            except BufferError:
                producer.poll(0.1)
            except KafkaException as exc:  # refused before sending (size, fatal state)
                error = exc.args[0]
                if error.code() == KafkaError.MSG_SIZE_TOO_LARGE:
                    copy.shrink()
                    continue
                if error.fatal():
                    self._renew_dead_letter_producer("fatal error")
                    continue
                copy.error, copy.done = error, True
                return

    def _await_deliveries(self, copies: list[_Copy]) -> None:
        """Until every copy has its delivery report (served by this thread or the main one)."""
        producer = self.dead_letters
        assert producer is not None
        started = time.monotonic()
        while not all(copy.done for copy in copies):
            if self.dead_letters is not producer:  # replaced after a fatal error: send again
                for copy in copies:
                    if not copy.done:
                        copy.error, copy.done = KafkaError(KafkaError._FATAL), True
                return
            producer.flush(0.5)
            self._give_up_if_stopping(copies)
            if time.monotonic() - started > DEAD_LETTER_WEDGED_S:
                # No report long after the message timeout: the client is wedged. A new one
                # sends the copies again (the caller sees them failed).
                self._renew_dead_letter_producer("copies not reported after the message timeout")
                for copy in copies:
                    if not copy.done:
                        copy.error, copy.done = KafkaError(KafkaError._MSG_TIMED_OUT), True
                return
            if time.monotonic() - started > 30:
                self._say_waiting(sum(not copy.done for copy in copies))

    def _renew_dead_letter_producer(self, reason: str) -> None:
        """A new dead-letter producer in place of the current one, which is retired on a thread
        of its own (destroying a wedged client may block)."""
        old = self.dead_letters
        self.dead_letters = self._dead_letter_producer()
        log.info("dead-letter producer replaced", extra=fields(reason=reason))
        if old is not None:
            threading.Thread(
                target=_retire, args=(old,), name="dead-letter-retire", daemon=True
            ).start()

    def _say_waiting(self, copies: int) -> None:
        """That a batch waits for its copies, at most every 30 s; not during an outage, which
        says it already, nor in the 30 s after one, while the clients reconnect."""
        now = time.monotonic()
        if self.log_gate.quiet_for() < 30 or now - self._said_waiting_at < 30:
            return
        self._said_waiting_at = now
        log.warning(
            "dead-letter copies not delivered yet: the batch waits for them",
            extra=fields(copies=copies, topic=self.options.dead_letter_topic),
        )

    def _wait(self, seconds: float, copies: list[_Copy]) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._give_up_if_stopping(copies)
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))

    def _give_up_if_stopping(self, copies: list[_Copy]) -> None:
        if self._stop_requested_at is None and self.stopping.is_set():
            self._stop_requested_at = time.monotonic()
        if (
            self._stop_requested_at is not None
            and time.monotonic() - self._stop_requested_at > DEAD_LETTER_STOP_GRACE_S
        ):
            undelivered = sum(not copy.done or copy.error is not None for copy in copies)
            raise DeadLetterCopiesUndelivered(
                f"{undelivered} dead-letter copies could not be delivered to "
                f"{self.options.dead_letter_topic}: the last batch was not committed and will "
                "be read again on the next start"
            )

    def _maybe_report(self, now: float) -> None:
        elapsed = now - self._window_start
        if elapsed < self.options.metrics_every_s:
            return
        log.info(
            "metrics",
            extra=fields(
                metrics={
                    "events_per_s": round(self._window_events / elapsed, 1),
                    "events_total": self.events_total,
                    "last_batch_ms": round(self._last_batch_s * 1000, 1),
                    "lag": {str(p): n for p, n in sorted(self.lag().items())},
                }
            ),
        )
        self._window_events = 0
        self._window_start = now

    def lag(self) -> dict[int, int]:
        """Messages not yet read, per assigned partition: the high watermark minus the position.

        Local calls only (the watermarks librdkafka cached from its fetches), made from the
        loop, never from a rebalance callback: librdkafka's call state is per thread and call,
        and a client call nested in the callback's own call aborted the process (see
        `_find_cluster`). A partition nothing was read from yet counts from where it was
        assigned (the lake's offset, or the log's start); one whose watermark is not known yet
        is left out."""
        lag: dict[int, int] = {}
        try:
            for tp in self.consumer.position(self.consumer.assignment()):
                low, high = self.consumer.get_watermark_offsets(tp, cached=True)
                position = tp.offset
                if position < 0:
                    position = self._assigned_offsets.get(tp.partition, -1)
                if position < 0:
                    position = low if low >= 0 else (0 if high == 0 else -1)
                if position >= 0 and high >= 0:
                    lag[tp.partition] = max(0, high - position)
        except KafkaException:
            pass
        return lag

    def close(self) -> None:
        try:
            self.pipeline.flush()
            self._after_commits()
        finally:
            try:
                self._leave_group()
            finally:
                if self.dead_letters is not None:
                    self.dead_letters.flush(10)

    def _leave_group(self) -> None:
        """Closes the consumer client (it leaves the group), waiting `CLOSE_TIMEOUT_S` at most:
        a stop request is obeyed even when the group coordinator cannot be reached."""
        errors: list[Exception] = []
        closing = threading.Thread(
            target=_close, args=(self.consumer, errors), name="consumer-close", daemon=True
        )
        closing.start()
        closing.join(CLOSE_TIMEOUT_S)
        if errors:
            raise errors[0]
        if closing.is_alive():
            self._abandoned = True
            log.warning(
                "the consumer could not leave its group: stopping without it (the group moves "
                "its partitions on after the session timeout)",
                extra=fields(waited_s=CLOSE_TIMEOUT_S, **self._group.last),
            )


class GroupWatch:
    """How long a consumer client's group membership has not been steady, from its statistics
    (`cgrp`: coordinator `state` "up" and `join_state` "steady"). Fed by `stats_cb`, which the
    client serves inside the loop's reads."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._unsteady_since: float | None = None
        self.last: dict[str, Any] = {}  # the latest group figures, for the log

    def stats(self, stats_json: str) -> None:
        try:
            group = json.loads(stats_json).get("cgrp")
        except (ValueError, AttributeError, RecursionError):  # RecursionError: deep nesting
            return
        if not isinstance(group, dict):
            return
        self.last = {key: group.get(key) for key in _GROUP_FIGURES}
        if group.get("state") == "up" and group.get("join_state") == "steady":
            self._unsteady_since = None
        elif self._unsteady_since is None:
            self._unsteady_since = self._clock()

    def stalled_for(self, *, quiet_for: float) -> float:
        """Seconds the membership has not been steady, counted from no earlier than `quiet_for`
        seconds ago (the end of the last outage: no group is steady during one); 0 if steady."""
        if self._unsteady_since is None:
            return 0.0
        now = self._clock()
        return max(0.0, now - max(self._unsteady_since, now - quiet_for))


_GROUP_FIGURES = ("state", "join_state", "rebalance_reason", "assignment_size")


class _Copy:
    """One dead letter on its way to the dead-letter topic."""

    __slots__ = ("attempt", "done", "error", "row", "value")

    def __init__(self, row: dict[str, Any]) -> None:
        self.row = row
        self.value: bytes = row["raw"] or b""
        self.done = False
        self.error: KafkaError | None = None
        self.attempt = 0

    def headers(self) -> dict[str, str | bytes | None]:
        row = self.row
        topic, partition, offset = (
            row["source_topic"],
            row["source_partition"],
            row["source_offset"],
        )
        headers: dict[str, str | bytes | None] = {
            "reason": row["reason"],
            "source": f"{topic}/{partition}/{offset}",
            "source_topic": str(topic),
            "source_partition": str(partition),
            "source_offset": str(offset),
        }
        if len(self.value) < row["raw_size"]:
            headers["raw_size"] = str(row["raw_size"])  # the copy holds the first bytes only
        return headers

    def shrink(self) -> None:
        """Too large for the topic: half as many of the message's bytes (the lake keeps the
        message, up to 1 MiB; the copy still names its source)."""
        self.value = self.value[: len(self.value) // 2]

    def reporter(self) -> Callable[[KafkaError | None, object], None]:
        """The delivery callback of the current attempt."""
        attempt = self.attempt

        def report(error: KafkaError | None, msg: object) -> None:
            if attempt == self.attempt:
                self.delivered(error, msg)

        return report

    def delivered(self, error: KafkaError | None, _msg: object) -> None:
        self.error, self.done = error, True


def _retire(producer: Producer) -> None:
    """Drops a replaced dead-letter producer: what it still holds is purged (copies sent again by
    its successor), then the client is destroyed with the last reference."""
    try:
        producer.purge(in_queue=True, in_flight=True, blocking=False)
        producer.poll(0)  # the purged copies' reports: stale attempts, ignored
    except Exception:  # best effort: the client goes with its last reference anyway
        pass


def _close(consumer: Consumer, errors: list[Exception]) -> None:
    """Closes `consumer` (on a thread of its own: see `CLOSE_TIMEOUT_S`), keeping its error."""
    try:
        consumer.close()
    except Exception as exc:  # the caller's to raise, or to drop with a retired client
        errors.append(exc)


def _timestamp(msg: Any) -> int | None:
    """The broker's timestamp in ms, or None where the message has none."""
    kind, ms = msg.timestamp()
    return ms if kind != TIMESTAMP_NOT_AVAILABLE else None


def run_consumer(
    pipeline: Pipeline,
    client_config: dict[str, Any],
    options: ConsumeOptions,
    *,
    on_start: Callable[[KafkaSource], None] | None = None,
    metrics: ConsumerMetrics | None = None,
) -> int:
    source = KafkaSource(pipeline, client_config, options, metrics=metrics)
    if on_start is not None:
        on_start(source)
    return source.run()
