"""The consumer as operators see it: log lines, broker outages, dead-letter copies.

JSON log lines parse (one object per line) and text lines read; librdkafka never writes to
stderr on its own; a broker outage is a line when it starts, a reminder at most every 30 s and
a line when it ends; every row of `dead_letters` has its copy on the dead-letter topic, however
often the consumer is killed. The gate that folds an outage is first tried on a fake clock.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import random
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError

from consumers.kafka_logs import KafkaLogGate, client_config
from events import occurred_at_ms
from infra import kafka_local
from infra import logs as croupier_logs
from producers.simulator import Message
from tests.consumers.helpers import (
    consumer_command,
    consumer_env,
    lake_progress,
    night,
    open_lake,
    wait_for_progress,
)
from tests.consumers.test_kafka_consumer import unique_valid_ids

DATA = Path(__file__).parents[1] / "data"
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
TEXT_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) \S+ "
)
OUTAGE = ("kafka outage started", "kafka outage continues", "kafka outage ended")


# -- the gate, on a fake clock ----------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def outage_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage() in OUTAGE]


def up(state: str = "UP") -> str:
    return json.dumps(
        {"brokers": {"127.0.0.1:9092/1": {"state": state, "source": "learned", "nodeid": 1}}}
    )


def test_an_outage_is_one_line_a_reminder_every_30_s_and_one_line_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    clock = Clock()
    gate = KafkaLogGate(clock=clock)
    assert gate.quiet_for() == math.inf
    librdkafka = client_config({}, gate, client="consumer")["logger"]
    refused = KafkaError(KafkaError._TRANSPORT, "127.0.0.1:9092/1: Connect to ... refused")
    gate.error(refused, client="consumer")  # held back: is it an outage?
    gate.error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"), client="consumer")
    assert outage_lines(caplog) == ["kafka outage started"]
    (started,) = [r for r in caplog.records if r.getMessage() == "kafka outage started"]
    assert "Connect to" in started.fields["error"]  # type: ignore[attr-defined]
    # 65 s of librdkafka retrying every 50 ms, each attempt an error and a log line.
    failed = "[thrd:127.0.0.1:9092/bootstrap]: Connect to ipv4#127.0.0.1:9092 failed"
    for _ in range(1300):
        clock.now += 0.05
        gate.error(refused, client="consumer")
        gate.error(refused, client="dead-letter producer")
        librdkafka.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#consumer-1", failed)
        librdkafka.log(logging.WARNING, "%s [%s] %s", "SESSTMOUT", "rdkafka#consumer-1", "timeout")
        gate.stats(up("DOWN"), client="consumer")
        gate.tick()
    # A client that never found every broker down may show stale statistics: not the end.
    gate.stats(up(), client="dead-letter producer")
    assert outage_lines(caplog) == ["kafka outage started", *["kafka outage continues"] * 2]
    assert gate.quiet_for() == 0
    gate.stats(up(), client="consumer")
    assert outage_lines(caplog)[-1] == "kafka outage ended"
    (ended,) = [r for r in caplog.records if r.getMessage() == "kafka outage ended"]
    assert ended.fields["duration_s"] == pytest.approx(65, abs=0.5)  # type: ignore[attr-defined]
    assert ended.fields["folded"] >= 4 * 1300  # type: ignore[attr-defined]
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == [
        r for r in caplog.records if r.getMessage() in OUTAGE
    ]
    # Errors another client raised before the end but served after: no second outage.
    clock.now += 1
    assert gate.quiet_for() == 1
    gate.error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1"), client="dead-letter producer")
    gate.error(refused, client="dead-letter producer")
    clock.now += 3
    gate.tick()
    assert outage_lines(caplog)[-1] == "kafka outage ended" and gate.outages == 1
    # A later one is a new outage.
    clock.now += 60
    gate.error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1"), client="dead-letter producer")
    assert outage_lines(caplog)[-1] == "kafka outage started" and gate.outages == 2


def test_other_errors_stay_visible_once_per_30_s_with_a_count_of_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    clock = Clock()
    gate = KafkaLogGate(clock=clock)
    librdkafka = client_config({}, gate, client="consumer")["logger"]
    authorization = KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "not allowed")
    for _ in range(100):
        gate.error(authorization, client="dead-letter producer")
        librdkafka.log(logging.WARNING, "%s [%s] %s", "CONFWARN", "rdkafka#consumer-1", "odd")
        clock.now += 0.1
    # One broker of several down (no "all brokers down"): a warning, not an outage.
    one_down = KafkaError(KafkaError._TRANSPORT, "broker 2: Connect to ... refused")
    for _ in range(100):
        gate.error(one_down, client="consumer")
        clock.now += 0.1
        gate.tick()
    clock.now += 2
    gate.tick()  # the last connection errors held back are due: all of one kind as the first
    clock.now += 30
    gate.error(authorization, client="dead-letter producer")
    gate.tick()
    shown = [(r.name, r.getMessage(), dict(r.fields)) for r in caplog.records]  # type: ignore[attr-defined]
    assert shown == [
        ("croupier.consumer", "kafka error", {"client": "dead-letter producer",
         "code": "TOPIC_AUTHORIZATION_FAILED", "error": "not allowed"}),
        ("croupier.kafka", "odd", {"facility": "CONFWARN", "client": "rdkafka#consumer-1"}),
        ("croupier.consumer", "kafka error", {"client": "consumer", "code": "_TRANSPORT",
         "error": "broker 2: Connect to ... refused"}),
        ("croupier.consumer", "kafka error", {"client": "dead-letter producer",
         "code": "TOPIC_AUTHORIZATION_FAILED", "error": "not allowed", "suppressed": 99}),
    ]  # fmt: skip
    assert gate.outages == 0


def test_json_lines_are_json_and_text_lines_are_text() -> None:
    record = logging.LogRecord("croupier.consumer", logging.INFO, __file__, 1, "metrics", (), None)
    record.created = 1_796_126_400.25
    record.fields = {"metrics": {"events_per_s": 1.5, "lag": {"0": 3}}, "msg": "not the msg"}
    line = croupier_logs.JsonFormatter().format(record)
    assert json.loads(line) == {
        "at": "2026-12-01T12:00:00.250Z", "level": "INFO", "logger": "croupier.consumer",
        "msg": "metrics", "metrics": {"events_per_s": 1.5, "lag": {"0": 3}},
    }  # fmt: skip
    text = croupier_logs.TextFormatter().format(record)
    assert text.startswith("2026-12-01T12:00:00.250Z INFO croupier.consumer metrics metrics={")
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        failed = logging.LogRecord(
            "croupier.x", logging.ERROR, __file__, 1, "it failed: %s", ("quote\" 'x'",),
            sys.exc_info(),
        )  # fmt: skip
    (only,) = croupier_logs.JsonFormatter().format(failed).splitlines()
    parsed = json.loads(only)
    assert parsed["msg"] == "it failed: quote\" 'x'" and "boom" in parsed["exc"]


# -- dead-letter copies, with the producer replaced by a stub --------------------------------
class StubProducer:
    """Acknowledges a copy once `refusals` deliveries of it have failed; refuses values over
    `max_value` bytes as the broker would."""

    def __init__(self, *, refusals: int = 0, max_value: int = 1 << 30) -> None:
        self.refusals = refusals
        self.max_value = max_value
        self.queued: list[tuple[bytes, dict[str, Any], Any]] = []
        self.delivered: list[tuple[bytes, dict[str, Any]]] = []
        self.attempts = 0

    def produce(self, topic: str, *, value: bytes, key: bytes | None, headers: Any,
                on_delivery: Any) -> None:  # fmt: skip
        self.queued.append((value, headers, on_delivery))

    def flush(self, timeout: float) -> int:
        queued, self.queued = self.queued, []
        for value, headers, on_delivery in queued:
            self.attempts += 1
            if len(value) > self.max_value:
                on_delivery(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE), None)
            elif self.refusals > 0:
                self.refusals -= 1
                on_delivery(KafkaError(KafkaError._MSG_TIMED_OUT), None)
            else:
                self.delivered.append((value, headers))
                on_delivery(None, None)
        return 0

    def poll(self, timeout: float) -> int:
        return 0

    def __len__(self) -> int:
        return len(self.queued)


def stub_source(producer: StubProducer) -> Any:
    from consumers.kafka_source import ConsumeOptions, KafkaSource

    options = ConsumeOptions(topic="t", group_id="g", dead_letter_topic=None)
    src = KafkaSource(object(), {"bootstrap.servers": "127.0.0.1:9"}, options)  # type: ignore[arg-type]
    src.consumer.close()
    src.options = ConsumeOptions(topic="t", group_id="g", dead_letter_topic="t.dead")
    src.dead_letters = producer  # type: ignore[assignment]
    return src


def dead_letter(offset: int, raw: bytes = b"{not json") -> dict[str, Any]:
    return {
        "source_topic": "t", "source_partition": 3, "source_offset": offset,
        "message_key": b"PG-01", "raw": raw, "raw_size": len(raw), "reason": "invalid_json",
    }  # fmt: skip


def test_a_copy_that_fails_is_sent_again_until_the_broker_acknowledges_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    producer = StubProducer(refusals=5)
    src = stub_source(producer)
    pauses: list[float] = []
    monkeypatch.setattr(src, "_wait", lambda seconds, _copies: pauses.append(seconds))
    src._copy_dead_letters([dead_letter(7), dead_letter(8)])
    assert sorted(h["source_offset"] for _, h in producer.delivered) == ["7", "8"]
    assert producer.attempts == 7 and pauses == [0.5, 1.0, 2.0]  # 2 + 2 + 1 refused, then sent
    value, headers = next(d for d in producer.delivered if d[1]["source_offset"] == "7")
    assert value == b"{not json" and headers["source"] == "t/3/7" and "raw_size" not in headers


def test_a_copy_too_large_for_the_topic_goes_shorter_and_says_how_long_the_message_was() -> None:
    producer = StubProducer(max_value=100)
    src = stub_source(producer)
    src._copy_dead_letters([dead_letter(9, b"x" * 1000)])
    ((value, headers),) = producer.delivered
    assert value == b"x" * 62 and headers["raw_size"] == "1000"


def test_a_stop_request_gives_up_on_copies_that_cannot_be_delivered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from consumers import kafka_source

    monkeypatch.setattr(kafka_source, "DEAD_LETTER_STOP_GRACE_S", 0.2)
    producer = StubProducer(refusals=10**9)
    src = stub_source(producer)
    src.stopping.set()
    with pytest.raises(kafka_source.DeadLetterCopiesUndelivered, match="not committed"):
        src._copy_dead_letters([dead_letter(1)])
    assert producer.delivered == []


class WedgedProducer(StubProducer):
    """A client that never reports its copies (neither acknowledged nor failed): librdkafka
    after every broker was down, stuck disconnected although the broker is back."""

    def flush(self, timeout: float) -> int:
        return len(self.queued)

    def purge(self, **_: bool) -> None:
        self.queued = []


def test_a_wedged_dead_letter_producer_is_replaced_and_the_copies_go_through_the_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from consumers import kafka_source

    monkeypatch.setattr(kafka_source, "DEAD_LETTER_WEDGED_S", 0.3)
    healthy = StubProducer()
    src = stub_source(WedgedProducer())
    monkeypatch.setattr(src, "_dead_letter_producer", lambda: healthy)
    monkeypatch.setattr(src, "_wait", lambda seconds, _copies: None)
    src._copy_dead_letters([dead_letter(4), dead_letter(5)])
    assert sorted(h["source_offset"] for _, h in healthy.delivered) == ["4", "5"]
    assert src.dead_letters is healthy


def test_copies_failing_for_a_whole_message_timeout_are_sent_again_by_a_new_producer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from consumers import kafka_source

    monkeypatch.setattr(kafka_source, "DEAD_LETTER_TIMEOUT_S", 0.2)
    stuck, healthy = StubProducer(refusals=10**9), StubProducer()
    src = stub_source(stuck)
    monkeypatch.setattr(src, "_dead_letter_producer", lambda: healthy)
    monkeypatch.setattr(src, "_wait", lambda seconds, _copies: time.sleep(0.05))
    src._copy_dead_letters([dead_letter(6)])
    assert [h["source_offset"] for _, h in healthy.delivered] == ["6"] and stuck.attempts > 1


def test_a_late_report_from_a_replaced_producer_does_not_settle_a_copy_sent_again() -> None:
    from consumers.kafka_source import _Copy

    copy = _Copy(dead_letter(3))
    copy.attempt = 1
    old = copy.reporter()
    copy.attempt, copy.done = 2, False
    old(None, None)  # the first producer's report, after the copy was sent again
    assert not copy.done
    copy.reporter()(KafkaError(KafkaError._MSG_TIMED_OUT), None)
    assert copy.done and copy.error is not None


# -- against a real broker --------------------------------------------------------------------
def bad_messages(copies: int = 1) -> list[Message]:
    corpus = json.loads((DATA / "bad_messages.json").read_text())
    return [
        Message(key=entry["key"] or "BAD-01", value=base64.b64decode(entry["b64"]))
        for _ in range(copies)
        for entry in corpus
    ]


def mixed(good: list[Message], bad: list[Message], rng: random.Random) -> list[Message]:
    out = list(good)
    for message in bad:
        out.insert(rng.randrange(len(out) + 1), message)
    return out


def dead_letter_copies(bootstrap: str, topic: str, at_least: int) -> list[Any]:
    """Every message on the dead-letter topic (read until `at_least` and 3 s of silence)."""
    reader = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"dlq-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    reader.subscribe([topic])
    copies: list[Any] = []
    deadline = time.monotonic() + 120
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        batch = [m for m in reader.consume(num_messages=1000, timeout=0.5) if m.error() is None]
        copies += batch
        if batch:
            quiet_since = time.monotonic()
        elif len(copies) >= at_least and time.monotonic() - quiet_since > 3:
            break
    reader.close()
    return copies


def copy_sources(copies: list[Any]) -> Counter[tuple[int, int]]:
    out: Counter[tuple[int, int]] = Counter()
    for msg in copies:
        headers = {k: v.decode() for k, v in msg.headers() or []}
        out[(int(headers["source_partition"]), int(headers["source_offset"]))] += 1
        _, partition, offset = headers["source"].split("/")
        assert (partition, offset) == (headers["source_partition"], headers["source_offset"])
    return out


def lake_dead_letters(lake: Path) -> Counter[tuple[int, int]]:
    con = open_lake(lake)
    try:
        rows = con.execute("SELECT source_partition, source_offset FROM dead_letters").fetchall()
    finally:
        con.close()
    return Counter((int(p), int(o)) for p, o in rows)


def json_lines(stderr: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in stderr.splitlines()]
    for line in lines:
        assert set(line) >= {"at", "level", "logger", "msg"}, line
        assert ISO_UTC.match(line["at"]), line
    return lines


def no_raw_librdkafka(stderr: str) -> None:
    raw = [line for line in stderr.splitlines() if line.startswith("%")]
    assert raw == [], raw[:5]


def publish(bootstrap: str, topic: str, messages: list[Message], *, create: bool = True) -> None:
    """As `publish_raw` (stamped with each event's time, as our publishers do), into a topic
    that keeps its messages: a broker's default retention (7 days) deletes a simulated night,
    dated in the past, at its next check, and the consumer then finds nothing left to read."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    if create:
        new = NewTopic(topic, num_partitions=6, replication_factor=1, config={"retention.ms": "-1"})
        admin = AdminClient({"bootstrap.servers": bootstrap})  # alive until the topic is made
        admin.create_topics([new])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for msg in messages:
        while True:
            try:
                producer.produce(
                    topic, key=msg.key.encode(), value=msg.value,
                    timestamp=occurred_at_ms(msg.value) or 0,
                )  # fmt: skip
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(60) == 0


@pytest.mark.kafka
def test_json_logs_of_a_real_run_parse_and_text_logs_read(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    rng = random.Random(11)
    messages = mixed(night(tables=1, hours=1, seed=4).messages, bad_messages()[:20], rng)
    publish(kafka_bootstrap, topic_name, messages)
    env = consumer_env(kafka_bootstrap, f"{topic_name}.dead")
    runs = {}
    for name, extra, extra_env in [
        ("json", ["--log-format", "json"], {}),
        ("text", [], {}),
        ("json-from-env", [], {"CROUPIER_LOG_FORMAT": "json"}),
    ]:
        result = subprocess.run(
            consumer_command(tmp_path / name, topic_name, f"g-{uuid.uuid4().hex[:8]}",
                             "--stop-when-idle", "4", "--metrics-every", "0.5", *extra),
            env={**env, **extra_env}, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        no_raw_librdkafka(result.stderr)
        runs[name] = result.stderr
    for name in ("json", "json-from-env"):
        lines = json_lines(runs[name])
        by_msg = {line["msg"]: line for line in lines}
        assert set(by_msg["assigned"]["partitions"]) == {str(p) for p in range(6)}
        metrics = by_msg["metrics"]["metrics"]
        assert isinstance(metrics["events_total"], int) and isinstance(metrics["lag"], dict)
        assert by_msg["consumed"]["messages"] == len(messages)
    text = runs["text"].splitlines()
    assert text and all(TEXT_LINE.match(line) for line in text), text[:5]
    for line in text:
        with pytest.raises(ValueError):
            json.loads(line)
    assert any(" INFO croupier.consumer assigned partitions={" in line for line in text)
    assert any(" INFO croupier.consumer metrics metrics={" in line for line in text)


@pytest.mark.kafka
def test_a_40_s_broker_outage_is_three_lines_and_loses_or_doubles_nothing(
    private_kafka_broker: kafka_local.LocalBroker, topic_name: str, tmp_path: Path
) -> None:
    broker = private_kafka_broker
    rng = random.Random(21)
    good = night(tables=1, hours=2, seed=8).messages
    half = len(good) // 2
    first = mixed(good[:half], bad_messages()[:60], rng)
    second = mixed(good[half:], bad_messages()[60:90], rng)
    publish(broker.bootstrap, topic_name, first)
    lake, dead_topic = tmp_path / "lake", f"{topic_name}.dead"
    process = subprocess.Popen(
        consumer_command(lake, topic_name, f"g-{uuid.uuid4().hex[:8]}", "--batch-size", "300",
                         "--log-format", "json"),
        env=consumer_env(broker.bootstrap, dead_topic), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for_progress(lake, topic_name, 1, timeout_s=120)
        # Down while the consumer holds fetched messages with dead letters among them: their
        # batches wait for the dead-letter topic.
        stopped_at = time.monotonic()
        kafka_local.stop(broker)
        time.sleep(max(0.0, 40 - (time.monotonic() - stopped_at)))
        kafka_local.start(broker)
        outage_s = time.monotonic() - stopped_at
        publish(broker.bootstrap, topic_name, second, create=False)
        deadline = time.monotonic() + 180
        while (
            lake_progress(lake, topic_name) < len(first) + len(second)
            and time.monotonic() < deadline
            and process.poll() is None
        ):
            time.sleep(0.5)  # each look opens the lake: not too often on a busy machine
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            _, stderr = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
            raise AssertionError(f"no exit 120 s after SIGTERM:\n{stderr[-5000:]}") from None
    progress = lake_progress(lake, topic_name)
    assert progress == len(first) + len(second), (progress, stderr[-3000:])
    assert process.returncode == 0, stderr[-3000:]
    no_raw_librdkafka(stderr)
    lines = json_lines(stderr)
    said = Counter(line["msg"] for line in lines if line["msg"] in OUTAGE)
    warnings = [line for line in lines if line["level"] in ("WARNING", "ERROR", "CRITICAL")]
    print(f"outage {outage_s:.0f} s: {len(lines)} log lines, {said}, "
          f"{len(warnings)} warnings: {[w['msg'] for w in warnings]}")  # fmt: skip
    assert said["kafka outage started"] == 1 and said["kafka outage ended"] == 1, said
    assert said["kafka outage continues"] <= math.ceil(outage_s / 30), said
    (ended,) = [line for line in lines if line["msg"] == "kafka outage ended"]
    assert 30 <= ended["duration_s"] <= outage_s + 30
    assert len(warnings) <= sum(said.values()) + 4, [w["msg"] for w in warnings]
    # Every event exactly once.
    con = open_lake(lake)
    try:
        ids = {str(i) for (i,) in con.execute("SELECT event_id FROM events").fetchall()}
        (stored,) = con.execute("SELECT count(*) FROM events").fetchone()  # type: ignore[misc]
    finally:
        con.close()
    assert stored == len(ids) and ids == unique_valid_ids(good)
    dead = lake_dead_letters(lake)
    assert sum(dead.values()) >= 90 and max(dead.values()) == 1  # the night's own faults too
    copies = copy_sources(dead_letter_copies(broker.bootstrap, dead_topic, len(dead)))
    assert set(copies) == set(dead)


@pytest.mark.kafka
def test_every_dead_letter_has_its_copy_on_the_topic_however_often_the_consumer_is_killed(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    rng = random.Random(31)
    messages = mixed(night(tables=1, hours=3, seed=12).messages, bad_messages(3), rng)
    publish(kafka_bootstrap, topic_name, messages)
    lake = tmp_path / "killed"
    dead_topic = f"{topic_name}.dead"
    env = consumer_env(kafka_bootstrap, dead_topic)
    kills = 0
    while kills < 8:
        # A group of its own each time (positions are in the lake): no wait for the killed
        # member's session to time out; the lake is adopted by each new group.
        group = f"g-{uuid.uuid4().hex[:8]}"
        process = subprocess.Popen(
            consumer_command(lake, topic_name, group, "--batch-size", "60", "--adopt"),
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        start = lake_progress(lake, topic_name)
        deadline = time.monotonic() + 120
        while lake_progress(lake, topic_name) == start and time.monotonic() < deadline:
            time.sleep(0.1)
        # Small batches and a short random wait: on a fast machine a run given a whole second
        # read the rest of the topic, and only 4 kills landed mid-run.
        time.sleep(rng.uniform(0.0, 0.4))
        process.send_signal(signal.SIGKILL)
        process.wait()
        if lake_progress(lake, topic_name) >= len(messages):
            break
        kills += 1
    assert kills >= 5, f"only {kills} kills landed mid-run"
    # The last run reads to the end (not --stop-when-idle: on a busy machine a first fetch may
    # take longer than any idle limit), then stops on SIGTERM -- once it has its partitions (the
    # killed runs may have read everything already; a SIGTERM during start-up is not the test).
    last = subprocess.Popen(
        consumer_command(lake, topic_name, f"g-{uuid.uuid4().hex[:8]}", "--adopt"),
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(last.stderr or ()), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 300
        while last.poll() is None and (
            lake_progress(lake, topic_name) < len(messages)
            or not any(" assigned " in line for line in said)
        ):
            assert time.monotonic() < deadline, "the last run did not finish"
            time.sleep(0.5)
    finally:
        last.send_signal(signal.SIGTERM)
        last.wait(timeout=120)
        reader.join(timeout=10)
    stderr = "".join(said)
    assert last.returncode == 0, stderr[-3000:]
    assert lake_progress(lake, topic_name) == len(messages)
    dead = lake_dead_letters(lake)
    assert max(dead.values()) == 1  # the lake holds each dead letter once
    assert sum(dead.values()) >= 3 * 200
    copies = copy_sources(dead_letter_copies(kafka_bootstrap, dead_topic, len(dead)))
    missing = set(dead) - set(copies)
    print(f"{kills} kills: {len(dead)} dead letters in the lake, {sum(copies.values())} copies "
          f"on the topic ({len(copies)} distinct), {len(missing)} missing")  # fmt: skip
    assert not missing, sorted(missing)[:10]
    assert set(copies) == set(dead)  # and no copy of anything the lake does not hold


def test_warm_up_builds_the_ranking_tables_and_freezes_what_is_alive() -> None:
    """`croupier consume` calls it before reading: no event waits for a table to be built, and
    the collector's full passes skip the modules and tables (in a process of its own here:
    freezing is for a process's life)."""
    probe = (
        "import gc\n"
        "from consumers.pipeline import warm_up\n"
        "from rules.rankings import SYSTEMS\n"
        "from rules.rankings.tables import size_tables\n"
        "assert gc.get_freeze_count() == 0\n"
        "warm_up()\n"
        "built = size_tables.cache_info().misses\n"
        "for system in SYSTEMS.values():\n"
        "    for size in system.sizes:\n"
        "        system.strength(list(range(0, 4 * size, 4)))\n"
        "print(size_tables.cache_info().misses - built, gc.get_freeze_count())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    built_later, frozen = map(int, done.stdout.split())
    assert built_later == 0
    assert frozen > 10_000
