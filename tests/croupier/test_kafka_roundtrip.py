"""The foundation's proof that Kafka is real: idempotent produce, group consume, resume, restart."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from infra import kafka_local
from infra.kafka_local import free_port

pytestmark = pytest.mark.kafka

MESSAGES = 10_000
KEYS = 37


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic(topic, num_partitions=partitions, replication_factor=1)]
    )
    futures[topic].result(timeout=30)


def consume(bootstrap: str, topic: str, group: str, limit: int) -> list[tuple[str, int, int, int]]:
    """Read up to `limit` messages as (key, value, partition, offset), committing as we go."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    out: list[tuple[str, int, int, int]] = []
    idle = 0
    try:
        while len(out) < limit and idle < 20:
            batch = consumer.consume(num_messages=min(500, limit - len(out)), timeout=0.5)
            if not batch:
                idle += 1
                continue
            idle = 0
            for msg in batch:
                if msg.error():
                    raise AssertionError(msg.error())
                out.append((msg.key().decode(), int(msg.value()), msg.partition(), msg.offset()))
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return out


def test_idempotent_keyed_roundtrip_preserves_per_key_order_and_resumes(
    kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=6)
    producer = Producer(
        {"bootstrap.servers": kafka_bootstrap, "enable.idempotence": True, "linger.ms": 5}
    )
    delivered: list[int] = []
    errors: list[KafkaError] = []

    def on_delivery(err: KafkaError | None, msg: object) -> None:
        if err is not None:
            errors.append(err)
        else:
            delivered.append(1)

    for i in range(MESSAGES):
        producer.produce(topic_name, key=f"table-{i % KEYS}", value=str(i), on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(30) == 0
    assert errors == []
    assert len(delivered) == MESSAGES

    first = consume(kafka_bootstrap, topic_name, "group-a", limit=6_000)
    assert len(first) == 6_000
    # A new consumer in the same group resumes from the committed offsets: nothing re-read.
    rest = consume(kafka_bootstrap, topic_name, "group-a", limit=MESSAGES)
    everything = first + rest
    assert len(everything) == MESSAGES
    assert sorted(v for _, v, _, _ in everything) == list(range(MESSAGES))

    by_key: dict[str, list[int]] = defaultdict(list)
    partitions_of_key: dict[str, set[int]] = defaultdict(set)
    for key, value, partition, _ in everything:
        by_key[key].append(value)
        partitions_of_key[key].add(partition)
    assert len(by_key) == KEYS
    for key, values in by_key.items():
        assert values == sorted(values), f"order broken for {key}"
        assert len(partitions_of_key[key]) == 1
    assert len({p for _, _, p, _ in everything}) > 1, "keys should spread over partitions"

    committed = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": "group-a"}).committed(
        [TopicPartition(topic_name, p) for p in range(6)], timeout=10
    )
    assert sum(tp.offset for tp in committed) == MESSAGES


def test_broker_stops_and_starts_again_and_second_start_is_a_no_op(
    private_kafka_broker: kafka_local.LocalBroker,
) -> None:
    broker = private_kafka_broker
    pid = kafka_local.running_pid(broker)
    assert pid is not None
    again_pid, started = kafka_local.start(broker)
    assert (again_pid, started) == (pid, False)

    assert kafka_local.stop(broker) is True
    assert kafka_local.running_pid(broker) is None
    assert not kafka_local.broker_answers(broker.bootstrap, timeout=1.0)
    assert kafka_local.stop(broker) is False

    new_pid, started = kafka_local.start(broker)
    assert started and new_pid != pid
    assert kafka_local.broker_answers(broker.bootstrap)


def test_cli_start_reports_taken_port_clearly(tmp_path: Path, kafka_bootstrap: str) -> None:
    _host, port = kafka_bootstrap.rsplit(":", 1)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(Path.home()),
        "CROUPIER_DATA_DIR": str(tmp_path),
        "CROUPIER_LOCAL_KAFKA_PORT": port,
    }
    result = subprocess.run(
        [sys.executable, "-m", "croupier", "kafka", "start"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert result.returncode == 1
    assert f"port {port}" in result.stderr and "taken" in result.stderr


def test_cli_start_without_java_says_what_to_install(tmp_path: Path) -> None:
    """No Java on PATH: a clear message naming what is missing, exit 1, nothing started."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "CROUPIER_DATA_DIR": str(tmp_path / "var"),
        "CROUPIER_LOCAL_KAFKA_PORT": str(free_port()),
        "CROUPIER_LOCAL_KAFKA_CONTROLLER_PORT": str(free_port()),
    }
    result = subprocess.run(
        [sys.executable, "-m", "croupier", "kafka", "start"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1
    assert "`java` was not found" in result.stderr
