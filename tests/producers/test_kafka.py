"""Against the real broker: everything published arrives once, in order per table, through a
broker restart, a SIGTERM, and a file replayed with `croupier publish`."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from confluent_kafka import Consumer

from croupier.cli import main
from infra import kafka_local
from producers.client import TableEventProducer
from producers.simulator import simulate

pytestmark = pytest.mark.kafka


def read_topic(
    bootstrap: str, topic: str, expected: int, idle_s: float = 10.0
) -> list[tuple[str, bytes]]:
    """Every message of `topic` as (key, value), partition by partition in offset order."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{topic}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    out: list[tuple[str, bytes]] = []
    quiet_since = time.monotonic()
    try:
        while time.monotonic() - quiet_since < idle_s and len(out) < expected + 1:
            batch = consumer.consume(num_messages=5000, timeout=0.5)
            for message in batch:
                if message.error():
                    raise AssertionError(message.error())
                out.append((message.key().decode(), message.value()))
            if batch:
                quiet_since = time.monotonic()
            elif len(out) >= expected:
                break
    finally:
        consumer.close()
    return out


def per_table(messages: list[tuple[str, bytes]]) -> dict[str, list[bytes]]:
    tables: dict[str, list[bytes]] = defaultdict(list)
    for key, value in messages:
        tables[key].append(value)
    return dict(tables)


def test_100k_events_published_and_read_back_in_order_per_table(
    kafka_bootstrap: str, topic_name: str
) -> None:
    sent = [m for m in itertools.islice(simulate(tables=4, hours=24, seed=2, faults={}), 100_000)]
    assert len(sent) == 100_000
    with TableEventProducer(
        bootstrap_servers=kafka_bootstrap, topic=topic_name, partitions=6, flush_on_sigterm=False
    ) as producer:
        for message in sent:
            producer.send(message.value)  # validated, then sent as it is
    assert producer.delivered == 100_000 and producer.failed == 0
    received = read_topic(kafka_bootstrap, topic_name, len(sent))
    assert len(received) == len(sent)  # nothing lost, nothing doubled
    assert per_table(received) == per_table([(m.key, m.value) for m in sent])


def test_broker_stopped_mid_run_loses_and_duplicates_nothing(
    private_kafka_broker: kafka_local.LocalBroker, topic_name: str
) -> None:
    broker = private_kafka_broker
    sent = [m for m in itertools.islice(simulate(tables=2, hours=24, seed=9, faults={}), 30_000)]
    producer = TableEventProducer(
        bootstrap_servers=broker.bootstrap,
        topic=topic_name,
        partitions=3,
        flush_on_sigterm=False,
        extra_config={"log_level": 0},
    )
    for message in sent[:10_000]:
        producer.send(message.value)
    assert producer.flush(30) == 0
    kafka_local.stop(broker)
    for message in sent[10_000:20_000]:
        producer.send(message.value)  # buffered while the broker is down
    time.sleep(3)
    producer.poll(0)
    assert producer.failed == 0
    kafka_local.start(broker)
    for message in sent[20_000:]:
        producer.send(message.value)
    producer.close()  # flushes; raises if anything was not delivered
    assert producer.delivered == len(sent) and producer.failed == 0
    received = read_topic(broker.bootstrap, topic_name, len(sent))
    assert len(received) == len(sent)
    assert per_table(received) == per_table([(m.key, m.value) for m in sent])


CHILD = textwrap.dedent(
    """
    import sys, time
    from producers.client import TableEventProducer
    from producers.simulator import simulate
    producer = TableEventProducer(bootstrap_servers=sys.argv[1], topic=sys.argv[2], partitions=2,
                                  extra_config={"linger.ms": 5000})
    count = 0
    for message in simulate(tables=1, hours=2, seed=1, faults={}):
        producer.send(message.value)
        count += 1
    print(count, flush=True)
    time.sleep(120)  # messages wait in the buffer (linger 5 s) until SIGTERM flushes them
    """
)


def test_sigterm_flushes_what_was_sent(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(
        [sys.executable, str(script), kafka_bootstrap, topic_name],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert child.stdout is not None
    count = int(child.stdout.readline())
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=60) == 128 + signal.SIGTERM
    assert len(read_topic(kafka_bootstrap, topic_name, count)) == count


def test_simulate_to_kafka_and_publish_replay_byte_for_byte(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    recorded = tmp_path / "night.jsonl"
    runner = CliRunner()
    args = ["simulate", "--tables-per-game", "1", "--hours", "1", "--seed", "6", "--quiet"]
    faults = ["--faults", "malformed:0.01,duplicate_event:0.01"]
    result = runner.invoke(main, [*args, *faults, "--out", str(recorded)])
    assert result.exit_code == 0, result.output
    lines = recorded.read_bytes().splitlines()

    replay = runner.invoke(
        main,
        ["publish", str(recorded), "--kafka", kafka_bootstrap, "--topic", topic_name, "--quiet"],
    )
    assert replay.exit_code == 0, replay.output
    assert json.loads(replay.output)["published"] == len(lines)
    received = read_topic(kafka_bootstrap, topic_name, len(lines))
    assert sorted(v for _, v in received) == sorted(lines)  # malformed ones too, as recorded
    by_table = per_table(received)
    assert all(b'"table_id":"' + k.encode() in v for k, vs in by_table.items() for v in vs)

    direct = f"{topic_name}-direct"
    result = runner.invoke(main, [*args, *faults, "--kafka", kafka_bootstrap, "--topic", direct])
    assert result.exit_code == 0, result.output
    assert per_table(read_topic(kafka_bootstrap, direct, len(lines))) == by_table


def test_the_documented_client_example_publishes_a_valid_event(
    kafka_bootstrap: str, topic_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from events import parse_event
    from infra.config import get_settings
    from tests.events.test_docs import DOC

    example = DOC.read_text(encoding="utf-8").split("```python\n")[1].split("```")[0]
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", kafka_bootstrap)
    monkeypatch.setenv("CROUPIER_KAFKA_TOPIC", topic_name)
    get_settings.cache_clear()
    try:
        exec(compile(example, "docs/events.md", "exec"), {})
    finally:
        get_settings.cache_clear()
    [(key, value)] = read_topic(kafka_bootstrap, topic_name, 1)
    event = parse_event(value)
    assert key == "PG-01" and event.event_type == "bet_placed" and event.seq == 1
