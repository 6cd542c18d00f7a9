"""`croupier consume --metrics-port`: the Prometheus counters equal what the lake holds, and
/healthz says whether the consumer is alive.

What `croupier_consumer_events_total` counts: every message read from the topic whose batch
committed to the lake, whatever became of it (a stored event, a dead letter, or an exact
duplicate dropped), so it equals the messages the lake's offsets say were consumed, and
`events_stored_total` equals the lake's events rows.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

import pytest

from consumers.metrics import ConsumerMetrics, Health, MetricsServer, scrape
from consumers.pipeline import Pipeline, RawMessage
from consumers.sink import LakeSink
from infra import lake as lakes
from tests.consumers.helpers import (
    consumer_command,
    consumer_env,
    free_port,
    get,
    night,
    open_lake,
    publish_raw,
)

pytestmark = pytest.mark.kafka


def samples(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Sample name -> (sorted labels) -> value."""
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for name, labels, value in scrape(text):
        out.setdefault(name, {})[tuple(sorted(labels.items()))] = value
    return out


def total(found: dict[str, dict[tuple[tuple[str, str], ...], float]], name: str) -> float:
    return sum(found.get(name, {}).values())


def test_the_metrics_equal_the_lake_and_health_is_ok(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    messages = night(tables=3, hours=2, seed=11).messages  # default faults: malformed ones too
    publish_raw(kafka_bootstrap, topic_name, messages)
    lake, port = tmp_path / "lake", free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        consumer_command(
            lake, topic_name, f"g-{uuid.uuid4().hex[:8]}", "--batch-size", "2000",
            "--metrics-port", str(port), "--stop-when-idle", "120",
        ),
        env=consumer_env(kafka_bootstrap, f"{topic_name}.dead"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # Until every message is committed and read: the process stops only after 120 s idle.
        while True:
            assert process.poll() is None, process.communicate()[1][-3000:]
            try:
                found = samples(get(f"{base}/metrics")[1])
            except OSError:  # not listening yet
                time.sleep(0.2)
                continue
            lag = found.get("croupier_consumer_lag", {})
            if (
                total(found, "croupier_consumer_events_total") == len(messages)
                and lag
                and not any(lag.values())
            ):
                break
            time.sleep(0.2)
        status, health = get(f"{base}/healthz")
        found = samples(get(f"{base}/metrics")[1])
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-3000:]
    assert status == 200, health
    assert json.loads(health)["status"] == "ok"

    con = open_lake(lake)
    try:
        offsets = dict(
            con.execute(
                "SELECT source_partition, max(next_offset) FROM consumer_offsets "
                "WHERE source_topic = ? GROUP BY 1",
                [topic_name],
            ).fetchall()
        )
        (events,) = con.execute("SELECT count(*) FROM events").fetchone()  # type: ignore[misc]
        (dead,) = con.execute("SELECT count(*) FROM dead_letters").fetchone()  # type: ignore[misc]
        violations = dict(
            con.execute("SELECT rule_id, count(*) FROM violations GROUP BY 1").fetchall()
        )
        severities = dict(
            con.execute("SELECT severity, count(*) FROM violations GROUP BY 1").fetchall()
        )
    finally:
        con.close()
    assert dead > 0 and violations, "the night's faults make dead letters and violations"
    # events_total: every message consumed, as the lake's offsets count them (from offset 0).
    assert total(found, "croupier_consumer_events_total") == sum(offsets.values())
    assert sum(offsets.values()) == len(messages)
    assert total(found, "croupier_consumer_events_stored_total") == events
    assert total(found, "croupier_consumer_dead_letters_total") == dead
    # what is neither stored nor a dead letter is an exact duplicate, dropped
    assert events + dead <= len(messages)
    by_rule = Counter(
        {
            dict(labels)["rule_id"]: int(value)
            for labels, value in found["croupier_consumer_violations_total"].items()
        }
    )
    assert by_rule == Counter(violations)
    by_severity = {
        dict(labels)["severity"]: int(value)
        for labels, value in found["croupier_consumer_violations_by_severity_total"].items()
    }
    assert by_severity == severities
    committed = {
        int(dict(labels)["partition"]): int(value)
        for labels, value in found["croupier_consumer_committed_offset"].items()
        if dict(labels)["topic"] == topic_name
    }
    assert committed == offsets
    lags = {
        int(dict(labels)["partition"]): v for labels, v in found["croupier_consumer_lag"].items()
    }
    assert set(offsets) <= set(lags) and not any(lags.values())
    # batches: as many messages in the histogram as consumed; one assignment, no revocation yet
    assert total(found, "croupier_consumer_batch_size_sum") == len(messages)
    commits = total(found, "croupier_consumer_commit_seconds_count")
    assert commits == total(found, "croupier_consumer_batch_size_count") >= 1
    rebalances = {
        dict(labels)["kind"]: v for labels, v in found["croupier_consumer_rebalances_total"].items()
    }
    assert rebalances == {"assign": 1, "revoke": 0}
    assert total(found, "croupier_consumer_last_commit_timestamp_seconds") > 0


def free_ports(n: int) -> int:
    """A port P such that P .. P+n-1 are free now."""
    while True:
        base = free_port()
        if base + n - 1 > 65535:
            continue
        with contextlib.ExitStack() as stack:
            try:
                for port in range(base + 1, base + n):
                    sock = stack.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return base


def test_workers_serve_on_port_plus_i_and_their_counts_add_up_to_the_lake(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    messages = night(tables=4, hours=1, seed=12).messages
    publish_raw(kafka_bootstrap, topic_name, messages)
    lake, port = tmp_path / "lake", free_ports(2)
    process = subprocess.Popen(
        consumer_command(
            lake, topic_name, f"g-{uuid.uuid4().hex[:8]}", "--batch-size", "1000",
            "--workers", "2", "--metrics-port", str(port), "--stop-when-idle", "120",
        ),
        env=consumer_env(kafka_bootstrap), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    urls = [f"http://127.0.0.1:{port + i}" for i in range(2)]
    try:
        # Until both answer, together have committed every message, and both loops run: one
        # worker may commit everything while the other still waits for the broker's cluster id
        # (a 503 "starting" then is right; the test waits it out, a minute at most).
        deadline: float | None = None
        while True:
            assert process.poll() is None, process.communicate()[1][-3000:]
            try:
                counts = [
                    total(samples(get(f"{url}/metrics")[1]), "croupier_consumer_events_total")
                    for url in urls
                ]
                health = [get(f"{url}/healthz") for url in urls]
            except OSError:
                counts, health = [], []
            if sum(counts) == len(messages):
                deadline = deadline or time.monotonic() + 60
                if [code for code, _ in health] == [200, 200] or time.monotonic() > deadline:
                    break
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-3000:]
    assert [code for code, _ in health] == [200, 200], health
    con = open_lake(lake)
    try:
        (consumed,) = con.execute(  # type: ignore[misc]
            "SELECT sum(o) FROM (SELECT max(next_offset) o FROM consumer_offsets "
            "WHERE source_topic = ? GROUP BY source_partition)",
            [topic_name],
        ).fetchone()
    finally:
        con.close()
    assert consumed == len(messages)


def test_a_taken_metrics_port_is_one_clear_line_and_exit_2(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            consumer_command(
                tmp_path / "lake", topic_name, "g", "--metrics-port", str(port),
                "--stop-when-idle", "1",
            ),
            env=consumer_env(kafka_bootstrap), capture_output=True, text=True, timeout=120,
            check=False,
        )  # fmt: skip
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: --metrics-port: 127.0.0.1:{port} is already in use"]
    assert not (tmp_path / "lake").exists()  # before anything was opened or read


def test_a_taken_port_of_any_worker_or_an_empty_host_starts_no_worker(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]  # worker 1's port (port - 1 + 1)
        result = subprocess.run(
            consumer_command(
                tmp_path / "lake", topic_name, "g", "--metrics-port", str(port - 1),
                "--workers", "2", "--stop-when-idle", "1",
            ),
            env=consumer_env(kafka_bootstrap), capture_output=True, text=True, timeout=120,
            check=False,
        )  # fmt: skip
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"127.0.0.1:{port} is already in use" in result.stderr
    assert not (tmp_path / "lake").exists()  # no worker ran: nothing opened, bound or read
    empty = subprocess.run(
        consumer_command(tmp_path / "lake", topic_name, "g", "--metrics-port", "0",
                         "--metrics-host", " ", "--stop-when-idle", "1"),
        env=consumer_env(kafka_bootstrap), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert empty.returncode == 2 and "--metrics-host" in empty.stderr, empty.stderr[-2000:]
    assert not (tmp_path / "lake").exists()


def test_a_worker_killed_by_a_signal_makes_the_command_fail(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    publish_raw(kafka_bootstrap, topic_name, night(tables=1, hours=0.2, seed=3).messages)
    process = subprocess.Popen(
        consumer_command(tmp_path / "lake", topic_name, f"g-{uuid.uuid4().hex[:8]}",
                         "--workers", "2", "--stop-when-idle", "5"),
        env=consumer_env(kafka_bootstrap), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = [
                int(stat.name) for stat in Path("/proc").iterdir() if stat.name.isdigit()
                and _parent(stat) == process.pid
            ]  # fmt: skip
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)  # the other stops when idle, with 0
        assert process.wait(timeout=180) == 128 + signal.SIGKILL
    finally:
        # no orphan worker waits for a broker that has gone, the command running or not (a
        # pid whose command line is no longer a consumer's was reused: left alone)
        if process.poll() is None:
            process.kill()
        for pid in workers:
            with contextlib.suppress(OSError):
                if b"consume" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    os.kill(pid, signal.SIGKILL)
        process.wait(timeout=30)


def _parent(proc: Path) -> int | None:
    with contextlib.suppress(OSError, IndexError, ValueError):
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    return None


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_health_is_503_with_the_reason_until_the_loop_turns_when_stale_or_a_commit_failed() -> None:
    clock = Clock()
    health = Health(stale_after_s=30, clock=clock)
    ok, body = health.check()
    assert not ok and body["reason"].startswith("starting")
    health.beat()
    assert health.check() == (True, {"status": "ok", "commits": 0, "loop_age_s": 0.0})
    clock.now += 31
    ok, body = health.check()
    assert not ok and "has not turned for 31 s" in body["reason"]
    health.beat()
    health.commit_failed(RuntimeError("disk full"))
    ok, body = health.check()
    assert not ok and body["reason"] == "the last lake commit failed: RuntimeError: disk full"
    health.committed()
    assert health.check()[0]
    health.stopping()
    assert health.check() == (False, {"status": "unhealthy", "reason": "stopping", "commits": 1,
                                      "last_commit_age_s": 0.0, "loop_age_s": 0.0})  # fmt: skip


def test_healthz_answers_503_over_http_and_404_elsewhere() -> None:
    metrics = ConsumerMetrics()
    server = MetricsServer(metrics, "127.0.0.1", 0)
    try:
        status, body = get(f"{server.url}/healthz")
        assert status == 503 and json.loads(body)["status"] == "unhealthy"
        metrics.health.beat()
        assert get(f"{server.url}/healthz")[0] == 200
        assert get(f"{server.url}/nothing")[0] == 404
        status, text = get(f"{server.url}/metrics")
        assert status == 200 and "croupier_consumer_events_total 0.0" in text
        request = urllib.request.Request(f"{server.url}/healthz", data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 405 and refused.value.headers["Allow"] == "GET, HEAD"
    finally:
        server.close()


def test_a_client_that_sends_nothing_is_dropped_and_a_burst_waits_its_turn(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from consumers import metrics as metrics_module

    monkeypatch.setattr(metrics_module._Quiet, "timeout", 0.5)
    server = MetricsServer(ConsumerMetrics(), "127.0.0.1", 0)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as idle:
            idle.sendall(b"GET /healthz HTTP/1.1\r\n")  # and never the rest
            assert idle.recv(1024) == b""  # closed by the server, not by our 10 s timeout
        # 200 clients connect and ask at once, before any answer is read: each is served
        burst = []
        try:
            for _ in range(200):
                burst.append(socket.create_connection(("127.0.0.1", server.port), timeout=10))
                burst[-1].sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
            answers = [client.recv(64) for client in burst]
        finally:
            for client in burst:
                client.close()
        assert all(answer.startswith(b"HTTP/1.0 503") for answer in answers)
    finally:
        server.close()
    assert "Traceback" not in capsys.readouterr().err  # a dropped client is not an error


def test_slow_clients_neither_hold_a_thread_for_ever_nor_make_threads_without_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client dripping a byte at a time, each within the per-read timeout, is cut at the
    connection's deadline; more silent clients than `max_clients` make no more threads than
    that, and a health check still gets its answer once the deadline has freed a slot."""
    from consumers import metrics as metrics_module

    monkeypatch.setattr(metrics_module._Server, "deadline_s", 2.0)
    monkeypatch.setattr(metrics_module._Server, "max_clients", 8)
    server = MetricsServer(ConsumerMetrics(), "127.0.0.1", 0)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as drip:
            started = time.monotonic()
            with contextlib.suppress(OSError):  # the server cuts it: a reset or a closed pipe
                for byte in b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 100:
                    drip.sendall(bytes([byte]))
                    time.sleep(0.2)  # under the 30 s per-read timeout, every time
            assert time.monotonic() - started < 8  # cut at ~2 s, not after the 20 s drip

        before = threading.active_count()
        silent = [
            socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(20)
        ]
        try:
            time.sleep(0.5)
            assert threading.active_count() - before <= 8
            started = time.monotonic()
            # answered (503: no consumer loop turns here) once the silent ones ahead of it
            # in the queue were cut, 8 every ~2 s
            with pytest.raises(urllib.error.HTTPError) as answered:
                urllib.request.urlopen(f"{server.url}/healthz", timeout=30)
            assert answered.value.code == 503 and time.monotonic() - started < 20
        finally:
            for client in silent:
                client.close()
    finally:
        server.close()


def test_hostile_requests_get_answers_and_close_does_not_wait_for_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An Accept header prometheus_client cannot parse (`version=a`: a 500 and a traceback on
    stderr) gets the plain text format; HEAD /healthz has no body; close() does not wait for
    a client queued behind full slots (it waited ~deadline_s)."""
    from consumers import metrics as metrics_module

    server = MetricsServer(ConsumerMetrics(), "127.0.0.1", 0)
    try:
        for accept in ("text/plain;version=a", "application/openmetrics-text; version=1.x"):
            request = urllib.request.Request(f"{server.url}/metrics", headers={"Accept": accept})
            with urllib.request.urlopen(request, timeout=10) as answer:
                assert answer.status == 200
                assert b"croupier_consumer_events_total" in answer.read()
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as head:
            head.sendall(b"HEAD /healthz HTTP/1.0\r\n\r\n")
            reply = b""
            while chunk := head.recv(4096):
                reply += chunk
        assert reply.startswith(b"HTTP/1.0 503") and reply.endswith(b"\r\n\r\n"), reply
    finally:
        server.close()

    monkeypatch.setattr(metrics_module._Server, "max_clients", 1)
    server = MetricsServer(ConsumerMetrics(), "127.0.0.1", 0)
    silent = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(2)]
    try:
        time.sleep(1)  # one holds the slot, one waits for it in the accept loop
        started = time.monotonic()
        server.close()
        assert time.monotonic() - started < 3
        assert all(client.recv(16) == b"" for client in silent)  # both closed by the server
    finally:
        for client in silent:
            client.close()
    assert "Traceback" not in capsys.readouterr().err


def test_a_batch_that_failed_to_commit_is_not_counted(tmp_path: Path) -> None:
    messages = night(tables=1, hours=0.5, seed=2).messages[:300]
    raw = [
        RawMessage(value=m.value, key=m.key.encode(), topic="local", partition=0, offset=i)
        for i, m in enumerate(messages)
    ]
    sink = LakeSink(lakes.Lake(root=tmp_path / "lake"))
    pipeline = Pipeline(sink, overlap=False)
    metrics = ConsumerMetrics()
    metrics.health.beat()
    pipeline.observer = metrics
    commit = sink.commit

    def failing(*args: object, **kwargs: object) -> None:
        raise OSError("the lake's disk is full")

    try:
        sink.commit = failing  # type: ignore[method-assign]
        with pytest.raises(OSError):
            pipeline.handle(raw[:100])
        found = samples(metrics_text(metrics))
        assert total(found, "croupier_consumer_events_total") == 0
        assert total(found, "croupier_consumer_batch_size_count") == 0
        ok, body = metrics.health.check()
        assert not ok and "disk is full" in body["reason"]
        sink.commit = commit  # type: ignore[method-assign]
        pipeline.handle(raw[100:])
        found = samples(metrics_text(metrics))
        assert total(found, "croupier_consumer_events_total") == 200
        assert found["croupier_consumer_committed_offset"] == {
            (("partition", "0"), ("topic", "local")): 300.0
        }
        assert metrics.health.check()[0]
    finally:
        pipeline.close()
        sink.close()


def metrics_text(metrics: ConsumerMetrics) -> str:
    from prometheus_client import generate_latest

    return generate_latest(metrics.registry).decode()


def test_a_second_stop_while_the_metrics_server_closes_cuts_nothing_short(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C pressed again while `croupier consume` closes, here as its metrics server shuts
    down (which waits up to half a second for the server's loop), stops nothing more: the run
    committed everything and exits 0, not "Aborted!" with exit 1 (a hostile tester's
    finding: a second signal 0.2-0.4 s after the first)."""
    from click.testing import CliRunner

    from croupier.cli import main
    from infra.config import get_settings

    messages = night(tables=1, hours=0.25, seed=5).messages
    publish_raw(kafka_bootstrap, topic_name, messages)
    real_close = MetricsServer.close
    interrupted = []

    def close_under_ctrl_c(server: MetricsServer) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # lets Python run the handler now
        interrupted.append(True)
        real_close(server)

    monkeypatch.setattr(MetricsServer, "close", close_under_ctrl_c)
    for name, value in consumer_env(kafka_bootstrap, f"{topic_name}.dead").items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(
            main,
            [
                "consume", "--lake", str(tmp_path / "lake"), "--topic", topic_name,
                "--group", f"g-{uuid.uuid4().hex[:8]}", "--metrics-port", str(free_port()),
                "--stop-when-idle", "2",
            ],
        )  # fmt: skip
    finally:
        get_settings.cache_clear()
    assert interrupted and result.exit_code == 0, result.output
    con = open_lake(tmp_path / "lake")
    try:
        [(committed,)] = con.execute(
            "SELECT sum(next_offset) FROM (SELECT source_partition, max(next_offset) AS"
            " next_offset FROM consumer_offsets GROUP BY 1)"
        ).fetchall()
    finally:
        con.close()
    assert committed == len(messages)
