"""The Kafka client for table devices: validate against the contract, number per table, publish.

Idempotent confluent-kafka producer, key = table_id, bounded buffer with back-pressure, flush on
close and on SIGTERM; fatal errors stop it, retriable ones are retried by librdkafka itself.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from confluent_kafka import KafkaError, Message, Producer

from events import Event, InvalidEvent, dump_event, occurred_at_ms, parse_event, validate_event
from infra.kafka import ensure_topic, kafka_settings, security_failure

log = logging.getLogger(__name__)


class PublishError(RuntimeError):
    """Messages could not be delivered (after librdkafka's own retries), or the client is closed."""


class FatalPublishError(PublishError):
    """The producer hit a fatal error (e.g. fenced, or an idempotence guarantee could not be kept):
    it cannot send any more; create a new one after looking at the cause."""


@dataclass(frozen=True, kw_only=True)
class Delivery:
    """The outcome of one message, passed to the `on_delivery` callback."""

    key: str | None
    error: KafkaError | None
    partition: int | None
    offset: int | None


class TableEventProducer:
    """Publish table events to Kafka, validated, in order per table.

    `send()` takes an `Event`, a mapping (a draft: `seq` and `event_id` may be left out and are
    then assigned) or the JSON bytes of one event. It refuses, before anything leaves the
    process, an event the contract rejects (`InvalidEvent` names the field) or whose `seq` is
    not above the last one sent for its table. `send_unchecked()` replays recorded bytes as they
    are. Use it as a context manager: leaving the block flushes and reports undelivered messages.
    """

    def __init__(
        self,
        *,
        bootstrap_servers: str | None = None,
        topic: str | None = None,
        partitions: int | None = None,
        extra_config: Mapping[str, Any] | None = None,
        create_topic: bool = True,
        max_buffered_messages: int = 200_000,
        last_seq: Mapping[str, int] | None = None,
        on_delivery: Callable[[Delivery], None] | None = None,
        flush_on_sigterm: bool = True,
        flush_timeout: float = 60.0,
    ) -> None:
        if bootstrap_servers is None or topic is None or partitions is None:
            base, default_topic, default_partitions = kafka_settings()
        else:
            base, default_topic, default_partitions = {}, topic, partitions
        config: dict[str, Any] = {**base, **(extra_config or {})}
        if bootstrap_servers is not None:
            config["bootstrap.servers"] = bootstrap_servers
        self.topic = topic or default_topic
        self.client_config = dict(config)  # without the producer-only settings below
        if create_topic:
            ensure_topic(config, self.topic, partitions=partitions or default_partitions)
        config.update(
            {
                # Idempotence: librdkafka retries without duplicates or reordering, acks=all.
                "enable.idempotence": True,
                "queue.buffering.max.messages": max_buffered_messages,
                "linger.ms": config.get("linger.ms", 20),
                "batch.num.messages": config.get("batch.num.messages", 10_000),
                "compression.type": config.get("compression.type", "lz4"),
                # A Python callback per delivered message costs about a microsecond: without
                # an `on_delivery` of the caller's, only failures are reported, and `delivered`
                # is settled by `flush()`.
                "delivery.report.only.error": on_delivery is None,
                # One callback for every message, set here: given to each `produce()` instead,
                # it costs half a microsecond more per message.
                "on_delivery": self._on_delivery,
                "error_cb": self._on_error,
            }
        )
        self._producer = Producer(config)
        self._on_delivery_user = on_delivery
        self._flush_timeout = flush_timeout
        self._last_seq: dict[str, int] = dict(last_seq or {})
        self._fatal: KafkaError | None = None
        self._closed = False
        self.sent = 0
        self.delivered = 0  # counted as they arrive with `on_delivery`, else at each full flush
        self.failed = 0
        self.last_failure: KafkaError | None = None
        self._previous_sigterm: Any = None
        if flush_on_sigterm and threading.current_thread() is threading.main_thread():
            self._previous_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)

    # ---- callbacks (run inside poll/flush, on the calling thread) -----------------------------

    def _on_error(self, error: KafkaError) -> None:
        if error.fatal() or security_failure(error):
            self._fatal = error
            log.error("fatal Kafka producer error: %s", error)
        else:
            # Transport and broker-down errors are informational: librdkafka keeps retrying
            # until message.timeout.ms, and idempotence keeps the retries duplicate-free.
            log.warning("Kafka producer error (will retry): %s", error)

    def _on_delivery(self, error: KafkaError | None, message: Message) -> None:
        if error is None:
            self.delivered += 1
        else:
            self.failed += 1
            self.last_failure = error
            log.error("message to %s not delivered: %s", message.topic(), error)
        if self._on_delivery_user is not None:
            raw_key = message.key()
            self._on_delivery_user(
                Delivery(
                    key=raw_key.decode() if raw_key is not None else None,
                    error=error,
                    partition=message.partition() if error is None else None,
                    offset=message.offset() if error is None else None,
                )
            )

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        log.warning("SIGTERM: flushing %d buffered messages", len(self._producer))
        try:
            self.close()
        except PublishError as error:
            log.error("%s", error)
        raise SystemExit(128 + signum)

    # ---- sending ------------------------------------------------------------------------------

    def send(self, event: Event | Mapping[str, Any] | bytes) -> Event:
        """Validate one event, check or assign its seq and queue it; returns the valid event."""
        if isinstance(event, bytes):
            parsed = parse_event(event)
            self._check_seq(parsed)
            self._produce(parsed.table_id, event, _epoch_ms(parsed))
            return parsed
        if isinstance(event, Mapping):
            event = self._complete_draft(event)
        self._check_seq(event)
        self._produce(event.table_id, dump_event(event), _epoch_ms(event))
        return event

    def send_unchecked(self, key: str | None, value: bytes) -> None:
        """Queue recorded bytes exactly as they are (replay of a file; no validation, no seq),
        stamped with their `occurred_at` where they have one."""
        self._produce(key, value, occurred_at_ms(value))

    def send_all(self, events: Iterable[Event | Mapping[str, Any] | bytes]) -> int:
        count = 0
        for event in events:
            self.send(event)
            count += 1
        return count

    def last_seq(self, table_id: str) -> int | None:
        """The seq of the last event sent for `table_id` by this client (or given at start)."""
        return self._last_seq.get(table_id)

    def _complete_draft(self, draft: Mapping[str, Any]) -> Event:
        data = dict(draft)
        if "seq" not in data:
            table_id = data.get("table_id")
            if isinstance(table_id, str):
                previous = self._last_seq.get(table_id)
                data["seq"] = 1 if previous is None else previous + 1
        data.setdefault("event_id", uuid.uuid4())
        return validate_event(data)

    def _check_seq(self, event: Event) -> None:
        previous = self._last_seq.get(event.table_id)
        if previous is not None and event.seq <= previous:
            raise InvalidEvent(
                f"invalid event: seq: {event.seq} is not above {previous}, the last seq sent "
                f"for table {event.table_id!r} (seq must increase strictly per table)",
                ("seq",),
            )
        self._last_seq[event.table_id] = event.seq

    def _produce(self, key: str | None, value: bytes, timestamp_ms: int | None) -> None:
        """Queue one message. Its Kafka timestamp (CreateTime) is the event's `occurred_at`, as a
        device's clock would stamp it, so a recording replayed later keeps its own times; the
        consumer judges `occurred_at` against it (EVT-TIME), or against the broker's clock on a
        topic with message.timestamp.type=LogAppendTime."""
        if self._closed:
            raise PublishError("the producer is closed")
        if self._fatal is not None:
            raise FatalPublishError(f"fatal Kafka producer error: {self._fatal}")
        while True:
            try:
                self._producer.produce(self.topic, value, key, timestamp=timestamp_ms or 0)
                break
            except BufferError:
                # Back-pressure: the bounded local queue is full; serve delivery reports until
                # librdkafka has room, so memory stays flat whatever the input rate.
                self._producer.poll(0.05)
                if self._fatal is not None:
                    raise FatalPublishError(f"fatal Kafka producer error: {self._fatal}") from None
        self.sent += 1
        if self.sent % 1000 == 0:
            self._producer.poll(0)

    # ---- flushing and closing -----------------------------------------------------------------

    def poll(self, timeout: float = 0.0) -> int:
        return 0 if self._closed else self._producer.poll(timeout)

    def flush(self, timeout: float | None = None) -> int:
        """Wait for every queued message to be delivered or to fail, or for a fatal error;
        returns how many remain."""
        if self._closed:
            return 0
        deadline = time.monotonic() + (self._flush_timeout if timeout is None else timeout)
        while True:  # in slices: after a fatal error nothing more will be delivered
            remaining = int(self._producer.flush(max(0.0, min(1.0, deadline - time.monotonic()))))
            if not remaining or self._fatal is not None or time.monotonic() >= deadline:
                break
        if remaining == 0 and self._on_delivery_user is None:
            self.delivered = self.sent - self.failed
        return remaining

    def close(self) -> None:
        """Flush, restore the SIGTERM handler, shut the client down, and raise if any message
        was not delivered (what was still queued after the flush timeout is given up)."""
        if self._closed:
            return
        remaining = self.flush()
        self._closed = True
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None
        failure: PublishError | None = None
        if self._fatal is not None:
            failure = FatalPublishError(f"fatal Kafka producer error: {self._fatal}")
        elif remaining or self.failed:
            failure = PublishError(
                f"{remaining} messages still queued and {self.failed} failed after "
                f"{self._flush_timeout:.0f} s (last error: {self.last_failure})"
            )
        if remaining:
            # What is still queued is given up: each message's delivery report says so, and
            # the client can then shut down instead of retrying a dead broker in the background.
            self._producer.purge()
            self._producer.poll(0)
        self._producer.close()
        if failure is not None:
            raise failure

    def __enter__(self) -> TableEventProducer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _epoch_ms(event: Event) -> int | None:
    try:
        ms = int(event.occurred_at.timestamp() * 1000)
    except (OverflowError, ValueError):
        return None
    return ms if ms >= 0 else None
