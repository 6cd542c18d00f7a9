"""The consumer's Prometheus metrics and health over HTTP (`croupier consume --metrics-port`).

Everything lives in a private `CollectorRegistry` (never prometheus_client's global one), so a
process holds one consumer's metrics only, and tests can build as many as they like.

Counters count what the lake holds: they move on the commit thread right after a batch's lake
transaction committed (`Pipeline.observer`), never when a batch is merely read or processed, so
a batch whose commit failed (and which is read again on the next start) is never counted, and
after a run the counters equal the lake's counts for the rows this process wrote.

`/metrics` is the text exposition; `/healthz` answers 200 with a small JSON body while the
consumer's loop turns (within `HEALTH_STALE_S`) and its last lake commit did not fail, 503 with
the reason otherwise. docs/operations.md says what each metric counts and what to alert on.
"""

from __future__ import annotations

import contextlib
import errno
import json
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIEnvironment

    from consumers.pipeline import HandleResult

PREFIX = "croupier_consumer_"
# The loop turns at least every `batch_wait_s` plus a batch's processing and the wait for the
# previous commit: seconds at most on a healthy consumer. Longer, it is stuck (a commit that
# hangs, dead-letter copies that wait for an unreachable topic, a wedged process).
HEALTH_STALE_S = 30.0
BATCH_SIZE_BUCKETS = (1, 10, 100, 500, 1_000, 5_000, 10_000, 25_000, 50_000, 100_000)
COMMIT_SECONDS_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class Health:
    """Whether the consumer is alive: its loop turned lately and its last commit did not fail.

    Written by the consumer's threads, read by the HTTP server's: plain attribute stores and
    loads, each atomic under the GIL."""

    def __init__(
        self, *, stale_after_s: float = HEALTH_STALE_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stale_after_s = stale_after_s
        self._clock = clock
        self._beat: float | None = None
        self._commit_error: str | None = None
        self._commits = 0
        self._last_commit: float | None = None
        self._stopping = False

    def beat(self) -> None:
        """The consumer's loop turned."""
        self._beat = self._clock()

    def committed(self) -> None:
        self._commit_error = None
        self._commits += 1
        self._last_commit = self._clock()

    def commit_failed(self, error: BaseException) -> None:
        self._commit_error = f"{type(error).__name__}: {error}"[:500]

    def stopping(self) -> None:
        self._stopping = True

    def check(self) -> tuple[bool, dict[str, Any]]:
        """(healthy, the JSON body)."""
        now = self._clock()
        body: dict[str, Any] = {"commits": self._commits}
        if self._last_commit is not None:
            body["last_commit_age_s"] = round(now - self._last_commit, 3)
        if self._beat is not None:
            body["loop_age_s"] = round(now - self._beat, 3)
        reason: str | None = None
        if self._commit_error is not None:
            reason = f"the last lake commit failed: {self._commit_error}"
        elif self._stopping:
            reason = "stopping"
        elif self._beat is None:
            reason = "starting: the consumer loop has not run yet"
        elif now - self._beat > self.stale_after_s:
            reason = (
                f"the consumer loop has not turned for {now - self._beat:.0f} s "
                f"(more than {self.stale_after_s:.0f} s)"
            )
        if reason is None:
            return True, {"status": "ok", **body}
        return False, {"status": "unhealthy", "reason": reason, **body}


class ConsumerMetrics:
    """The consumer's metrics (names below, all prefixed `croupier_consumer_`) and its health."""

    def __init__(self, *, health: Health | None = None) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.health = health or Health()
        self.events = Counter(
            PREFIX + "events",
            "Messages read from the topic whose batch committed to the lake: each is a stored "
            "event, a dead letter, or an exact duplicate dropped (= the lake's offsets advanced).",
            registry=registry,
        )
        self.events_stored = Counter(
            PREFIX + "events_stored",
            "Rows committed to the lake's events table (new, valid events).",
            registry=registry,
        )
        self.dead_letters = Counter(
            PREFIX + "dead_letters",
            "Rows committed to the lake's dead_letters table.",
            registry=registry,
        )
        self.violations = Counter(
            PREFIX + "violations",
            "Rows committed to the lake's violations table, by rule ID.",
            ["rule_id"],
            registry=registry,
        )
        self.violation_severities = Counter(
            PREFIX + "violations_by_severity",
            "Rows committed to the lake's violations table, by severity (critical, major, minor).",
            ["severity"],
            registry=registry,
        )
        self.batch_size = Histogram(
            PREFIX + "batch_size",
            "Messages per batch committed to the lake.",
            buckets=BATCH_SIZE_BUCKETS,
            registry=registry,
        )
        self.commit_seconds = Histogram(
            PREFIX + "commit_seconds",
            "Seconds a batch's lake transaction took (dead-letter copies not included).",
            buckets=COMMIT_SECONDS_BUCKETS,
            registry=registry,
        )
        self.lag = Gauge(
            PREFIX + "lag",
            "Messages of an assigned partition not read yet: high watermark minus position.",
            ["partition"],
            registry=registry,
        )
        self.committed_offset = Gauge(
            PREFIX + "committed_offset",
            "Next offset committed to the lake, per partition assigned to this consumer.",
            ["topic", "partition"],
            registry=registry,
        )
        self.rebalances = Counter(
            PREFIX + "rebalances",
            "Partition assignments and revocations this consumer was handed.",
            ["kind"],
            registry=registry,
        )
        for kind in ("assign", "revoke"):
            self.rebalances.labels(kind=kind)
        self.last_commit = Gauge(
            PREFIX + "last_commit_timestamp_seconds",
            "Unix time of the last batch committed to the lake (0: none yet).",
            registry=registry,
        )
        self._lock = threading.Lock()  # committed offsets: the commit thread and the rebalances
        self._partitions: set[int] = set()

    # -- the pipeline's observer (commit thread) ----------------------------------------------
    def committed(self, result: HandleResult, seconds: float) -> None:
        """A batch's lake transaction committed."""
        self.events.inc(result.messages)
        self.events_stored.inc(result.rows.get("events", 0))
        self.dead_letters.inc(len(result.dead_letters))
        for rule_id, count in result.violations.items():
            self.violations.labels(rule_id=rule_id).inc(count)
        for severity, count in result.severities.items():
            self.violation_severities.labels(severity=severity).inc(count)
        self.batch_size.observe(result.messages)
        self.commit_seconds.observe(seconds)
        with self._lock:
            for (topic, partition), offset in result.next_offsets.items():
                self.committed_offset.labels(topic=topic, partition=str(partition)).set(offset)
        self.last_commit.set(time.time())
        self.health.committed()

    def commit_failed(self, error: BaseException) -> None:
        self.health.commit_failed(error)

    # -- the Kafka source (main thread; rebalance callbacks touch nothing but these) -----------
    def assigned(self, partitions: Iterable[int]) -> None:
        self.rebalances.labels(kind="assign").inc()
        self._partitions.update(partitions)

    def revoked(self, topic: str, partitions: Iterable[int]) -> None:
        """Partitions gone to another member: their gauges are that member's now."""
        self.rebalances.labels(kind="revoke").inc()
        with self._lock:
            for partition in partitions:
                self._partitions.discard(partition)
                _remove(self.lag, str(partition))
                _remove(self.committed_offset, topic, str(partition))

    def set_lag(self, lag: dict[int, int]) -> None:
        for partition, messages in lag.items():
            if partition in self._partitions:
                self.lag.labels(partition=str(partition)).set(messages)


def _remove(metric: Gauge, *labels: str) -> None:
    with contextlib.suppress(KeyError):  # never set
        metric.remove(*labels)


# -- the HTTP server ----------------------------------------------------------------------------
class MetricsServerError(OSError):
    """The metrics server could not listen (the port is taken, the address is not ours)."""


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    """One thread per client, at most `max_clients` at once (more wait in the kernel's queue,
    then are refused), each connection closed `deadline_s` after it was accepted: a client
    dripping a byte at a time (under the per-read timeout) cannot hold a thread for ever, nor
    many such clients make threads without bound in the consumer's process."""

    daemon_threads = True
    # a burst of scrapers and health checks waits in the kernel's queue, not in SYN retries
    request_queue_size = 128
    max_clients = 64
    deadline_s = 10.0  # a scrape or a health check takes milliseconds

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._slots = threading.BoundedSemaphore(self.max_clients)
        self._open: dict[socket.socket, float] = {}
        self._open_lock = threading.Lock()
        self._closing = threading.Event()
        super().__init__(*args, **kwargs)  # binds (or raises, having closed the socket)
        threading.Thread(target=self._watch, name="metrics-http-deadline", daemon=True).start()

    def process_request(self, request: Any, client_address: Any) -> None:
        # Waiting here holds the accept loop: more clients wait in the kernel's queue. A slot
        # frees within `deadline_s` (the watchdog); a client not served by then is refused,
        # and so is one waiting when the server shuts down (close() does not wait for a slot).
        refuse_at = time.monotonic() + self.deadline_s + 1
        while not self._slots.acquire(timeout=0.2):
            if self._closing.is_set() or time.monotonic() > refuse_at:
                self.shutdown_request(request)
                return
        with self._open_lock:
            self._open[request] = time.monotonic() + self.deadline_s
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release(request)

    def _release(self, request: socket.socket) -> None:
        with self._open_lock:
            if self._open.pop(request, None) is None:
                return
        self._slots.release()

    def _watch(self) -> None:
        while not self._closing.wait(0.5):
            now = time.monotonic()
            with self._open_lock:
                late = [conn for conn, until in self._open.items() if until <= now]
            for conn in late:  # its thread then fails its read or write and ends
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    def shutdown(self) -> None:
        self._closing.set()  # first: the accept loop may be waiting for a slot
        super().shutdown()

    def server_close(self) -> None:
        self._closing.set()
        super().server_close()
        with self._open_lock:  # the connections still open end with the server
            still = list(self._open)
        for conn in still:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that went silent (dropped after _Quiet.timeout) or away is not the server's
        # error: no traceback on the consumer's stderr for it
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # HTTPServer's own looks the host's name up (socket.getfqdn), which can hang on DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)
        self.setup_environ()


class _Quiet(WSGIRequestHandler):
    timeout = 30  # a client that sends nothing for this long is dropped, and its thread ends

    def log_message(self, format: str, *args: Any) -> None:  # scrapes: no log
        pass


class _Checks(Protocol):
    def check(self) -> tuple[bool, dict[str, Any]]: ...


class Served(Protocol):
    """What a MetricsServer serves: a registry (`/metrics`) and a health check (`/healthz`)."""

    @property
    def registry(self) -> CollectorRegistry: ...

    @property
    def health(self) -> _Checks: ...


class MetricsServer:
    """`/metrics` (Prometheus text) and `/healthz` (JSON) on a daemon thread, for the consumer
    (ConsumerMetrics) or another long-running command (`croupier build --every`)."""

    def __init__(self, metrics: Served, host: str, port: int) -> None:
        self.metrics = metrics
        exposition = make_wsgi_app(metrics.registry)

        def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
            path = environ.get("PATH_INFO", "/")
            if path == "/healthz":
                if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
                    start_response("405 Method Not Allowed", [("Allow", "GET, HEAD")])
                    return [b"/healthz answers GET and HEAD\n"]
                healthy, body = metrics.health.check()
                start_response(
                    "200 OK" if healthy else "503 Service Unavailable",
                    [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                )
                head = environ.get("REQUEST_METHOD") == "HEAD"
                return [b""] if head else [json.dumps(body).encode() + b"\n"]
            if path in ("/", "/metrics"):
                try:
                    return exposition(environ, start_response)  # type: ignore[no-any-return]
                except (TypeError, ValueError):
                    # prometheus_client compares an Accept header's `version=` unparsed (a
                    # client's `version=a` raised, with a traceback on stderr): such a
                    # client gets the plain text format, as one that sends none.
                    plain = {k: v for k, v in environ.items() if k != "HTTP_ACCEPT"}
                    return exposition(plain, start_response)  # type: ignore[no-any-return]
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found: /metrics and /healthz only\n"]

        if not host.strip():  # "" would listen on every interface, unasked
            raise MetricsServerError(
                errno.EINVAL,
                "the host is empty: give an address (127.0.0.1: this machine only, "
                "0.0.0.0: every interface)",
            )
        server_class = type("_Server", (_Server,), {"address_family": _family(host, port)})
        try:
            self._server: WSGIServer = make_server(
                host, port, app, server_class, handler_class=_Quiet
            )
        except OSError as exc:
            raise MetricsServerError(exc.errno, _reason(exc, host, port)) from None
        self.host: str = host
        self.port: int = self._server.server_port
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="metrics-http", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def _family(host: str, port: int) -> socket.AddressFamily:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return socket.AF_INET
    return infos[0][0] if infos else socket.AF_INET


def _reason(exc: OSError, host: str, port: int) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"{host}:{port} is already in use"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{host} is not an address of this machine"
    if exc.errno == errno.EACCES:
        return f"not allowed to listen on {host}:{port}"
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}"


def scrape(text: str) -> Iterator[tuple[str, dict[str, str], float]]:
    """(sample name, labels, value) of a Prometheus text exposition (tests, smoke checks)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            yield sample.name, dict(sample.labels), sample.value
