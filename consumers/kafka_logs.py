"""What the Kafka clients say, told once: a broker outage is three kinds of line, not thousands.

librdkafka retries a lost broker every few milliseconds and reports each attempt twice (a log
line and an error event): a 41 s outage printed 516 warnings and 668 raw `%3|...` lines. Here
every client of the consume path (consumer, dead-letter producer, admin client) hands its
errors (`error_cb`), its log lines (the `logger` property) and its statistics (`stats_cb`) to
one `KafkaLogGate`, which prints:

- one line when an outage starts: a client finds every broker down (`_ALL_BROKERS_DOWN`);
- a reminder at most every `remind_every_s` (30 s) while it lasts, with what it folded;
- one line when it ends, with its duration: the statistics of a client that found every broker
  down show a broker up again. (Only such a client's: its statistics come after its error in
  its own queue, so they are fresh; another client's may have been taken before the outage.
  Messages read are no sign either: they may have been fetched before it.)

While an outage lasts, connection errors and their consequences (session timeouts, coordinator
errors, failed connection attempts) are counted into it. Every other error and log line stays
visible, each kind (error code, librdkafka facility) at most once per `remind_every_s`, with a
count of the ones held back: one broker of several down, say, is one warning every 30 s.
Security failures are not decided here: the consumer stops on them at once.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError

from infra.logs import fields

log = logging.getLogger("croupier.consumer")
CLIENT_LOGGER = "croupier.kafka"

# Errors of one connection, or of what follows an outage: folded into an outage while it
# lasts, shown rate-limited otherwise.
CONNECTION_ERRORS = frozenset(
    {
        KafkaError._TRANSPORT,
        KafkaError._RESOLVE,
        KafkaError._TIMED_OUT,
        KafkaError._TIMED_OUT_QUEUE,
        KafkaError._MSG_TIMED_OUT,
        KafkaError._WAIT_COORD,
        KafkaError._MAX_POLL_EXCEEDED,
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.BROKER_NOT_AVAILABLE,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.NOT_COORDINATOR,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
    }
)
# librdkafka log facilities of the same: connection failures and what follows an outage.
CONNECTION_FACILITIES = frozenset(
    {
        "FAIL", "ERROR", "REQTMOUT", "CONNECT", "RESOLVE", "BRKFAIL", "SESSTMOUT", "MAXPOLL",
        "GETPID", "COMMITFAIL", "HEARTBEAT", "FETCH", "OFFSET", "METADATA",
    }
)  # fmt: skip


@dataclass
class _Outage:
    started: float  # monotonic
    last_error: str
    clients: set[str] = field(default_factory=set)  # the clients that found every broker down
    folded: int = 0
    last_line: float = 0.0  # monotonic time of the last line printed about it


@dataclass
class _Line:
    """A line held back or about to be printed: logger, level, message, fields."""

    logger: str
    level: int
    msg: str
    values: dict[str, Any]
    key: str  # its kind, for the rate limit
    text: str  # what an outage remembers of it as its last error
    due: float = 0.0


@dataclass
class _Held:
    last_line: float
    suppressed: int = 0


class KafkaLogGate:
    """Thread-safe: error and log callbacks are served on whichever thread polls a client.

    A connection error outside an outage is held back `hold_s` first: the "all brokers down"
    that starts an outage often comes just after the first failed connection, which is then
    part of the outage and not a line of its own.
    """

    def __init__(
        self,
        *,
        remind_every_s: float = 30.0,
        hold_s: float = 2.0,
        settle_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.remind_every_s = remind_every_s
        self.hold_s = hold_s
        # After an outage ends, errors raised before the broker came back but served after
        # (from another client's queue) are not news.
        self.settle_s = settle_s
        self._clock = clock
        self._lock = threading.Lock()
        self._outage: _Outage | None = None
        self._ended_at: float | None = None
        self._pending: list[_Line] = []
        self._held: dict[str, _Held] = {}
        self.outages = 0  # started so far

    @property
    def in_outage(self) -> bool:
        return self._outage is not None

    def quiet_for(self) -> float:
        """Seconds since the last outage ended (infinite when none did); 0 during one."""
        if self._outage is not None:
            return 0.0
        return math.inf if self._ended_at is None else self._clock() - self._ended_at

    # -- inputs -----------------------------------------------------------------------------
    def error(self, error: KafkaError, *, client: str) -> None:
        """An `error_cb` error, or the error of a consumed message (not a security failure)."""
        code = error.code()
        text = f"{client}: {error.str()}"
        if code == KafkaError._ALL_BROKERS_DOWN:
            self._all_brokers_down(client, text)
            return
        line = _Line(
            logger=log.name,
            level=logging.WARNING,
            msg="kafka error",
            values={"client": client, "code": error.name(), "error": error.str()},
            key=f"error:{code}",
            text=text,
        )
        if code in CONNECTION_ERRORS:
            self._connection_trouble(line)
        else:
            self._emit(line)

    def client_log(self, record: logging.LogRecord) -> bool:
        """Filter of the clients' logger: True when the librdkafka line is to be printed now
        (rewritten: librdkafka's message as the message, facility and client as fields)."""
        args = record.args
        if not (isinstance(args, tuple) and len(args) == 3):
            return True
        facility, client, message = (str(a) for a in args)
        if message.startswith("[thrd:") and "]: " in message:  # librdkafka's thread name
            message = message.split("]: ", 1)[1]
        values: dict[str, Any] = {"facility": facility, "client": client}
        if facility in CONNECTION_FACILITIES:
            line = _Line(
                logger=CLIENT_LOGGER,
                level=record.levelno,
                msg=message,
                values=values,
                key=f"log:{facility}",
                text=f"{client}: {message}",
            )
            self._connection_trouble(line)
            return False
        shown, suppressed = self._admit(f"log:{facility}")
        if suppressed:
            values["suppressed"] = suppressed
        record.msg, record.args = message, ()
        record.fields = values
        return shown

    def stats(self, stats_json: str, *, client: str) -> None:
        """`stats_cb`: librdkafka's statistics, looked at only during an outage, and only those
        of a client that found every broker down (see the module's docstring)."""
        outage = self._outage
        if outage is None or client not in outage.clients:
            return
        try:
            brokers = json.loads(stats_json).get("brokers", {})
        except ValueError:
            return
        if any(b.get("state") == "UP" and b.get("source") != "internal" for b in brokers.values()):
            self._end(outage)

    def tick(self) -> None:
        """Called often by the consumer's loop: reminders, and held-back lines now due."""
        if self._outage is None and not self._pending:
            return
        due: list[_Line] = []
        with self._lock:
            now = self._clock()
            self._remind(now)
            if self._pending and self._pending[0].due <= now:
                due = [line for line in self._pending if line.due <= now]
                self._pending = [line for line in self._pending if line.due > now]
        for line in due:
            self._emit(line)

    # -- the lines --------------------------------------------------------------------------
    def _all_brokers_down(self, client: str, text: str) -> None:
        with self._lock:
            now = self._clock()
            outage = self._outage
            if outage is not None:
                outage.clients.add(client)
                outage.folded += 1
                outage.last_error = text
                self._remind(now)
                return
            if self._ended_at is not None and now - self._ended_at < self.settle_s:
                log.debug("kafka: %s (raised before the last outage ended)", text)
                return
            # What was held back is the start of this outage.
            self._outage = _Outage(
                started=min([now, *(line.due - self.hold_s for line in self._pending)]),
                last_error=text,
                clients={client},
                folded=len(self._pending),
                last_line=now,
            )
            first = self._pending[0].text if self._pending else text
            self._pending = []
            self.outages += 1
            log.warning("kafka outage started", extra=fields(error=first, detail=text))

    def _connection_trouble(self, line: _Line) -> None:
        """Folded into the outage; held back when there is none (yet)."""
        with self._lock:
            now = self._clock()
            outage = self._outage
            if outage is not None:
                outage.folded += 1
                outage.last_error = line.text
                self._remind(now)
            elif self._ended_at is not None and now - self._ended_at < self.settle_s:
                log.debug("kafka: %s (raised before the last outage ended)", line.text)
            else:
                line.due = now + self.hold_s
                self._pending.append(line)

    def _end(self, outage: _Outage) -> None:
        with self._lock:
            if self._outage is not outage:
                return
            self._outage = None
            now = self._ended_at = self._clock()
            log.warning(
                "kafka outage ended",
                extra=fields(
                    duration_s=round(now - outage.started, 1),
                    folded=outage.folded,
                    last_error=outage.last_error,
                ),
            )

    def _remind(self, now: float) -> None:
        outage = self._outage
        if outage is None or now - outage.last_line < self.remind_every_s:
            return
        outage.last_line = now
        log.warning(
            "kafka outage continues",
            extra=fields(
                for_s=round(now - outage.started, 1),
                folded=outage.folded,
                last_error=outage.last_error,
            ),
        )

    def _admit(self, key: str) -> tuple[bool, int]:
        """(print it?, how many of its kind were held back since the last one printed)."""
        with self._lock:
            now = self._clock()
            held = self._held.get(key)
            if held is None:
                self._held[key] = _Held(last_line=now)
                return True, 0
            if now - held.last_line < self.remind_every_s:
                held.suppressed += 1
                return False, 0
            suppressed, held.suppressed, held.last_line = held.suppressed, 0, now
            return True, suppressed

    def _emit(self, line: _Line) -> None:
        """Prints the line unless one of its kind was printed less than `remind_every_s` ago."""
        shown, suppressed = self._admit(line.key)
        if shown:
            values = {**line.values, "suppressed": suppressed} if suppressed else line.values
            logging.getLogger(line.logger).log(line.level, line.msg, extra=fields(**values))


class _ClientLogger(logging.Logger):
    """The `logger` given to the Kafka clients of one consumer: named `croupier.kafka`, below
    `croupier` (so the process's handler prints its lines), each line through the gate first.
    Not registered with `logging.getLogger`: each consumer in a process has its own gate."""

    def __init__(self, gate: KafkaLogGate) -> None:
        super().__init__(CLIENT_LOGGER)
        self.parent = logging.getLogger("croupier")
        self.addFilter(gate.client_log)


def client_config(
    config: dict[str, Any],
    gate: KafkaLogGate,
    *,
    client: str,
    on_error: Callable[[KafkaError], None] | None = None,
    on_stats: Callable[[str], None] | None = None,
    stats_every_ms: int = 2_000,
) -> dict[str, Any]:
    """`config` with the gate wired in: librdkafka's log lines, errors and statistics.
    `on_error` replaces the gate's error handler (it should pass what it does not handle on);
    `on_stats` sees the statistics after the gate."""

    def default_on_error(error: KafkaError) -> None:
        gate.error(error, client=client)

    def stats(stats_json: str) -> None:
        gate.stats(stats_json, client=client)
        if on_stats is not None:
            on_stats(stats_json)

    return {
        **config,
        "logger": _ClientLogger(gate),
        "error_cb": on_error or default_on_error,
        "stats_cb": stats,
        "statistics.interval.ms": stats_every_ms,
    }
