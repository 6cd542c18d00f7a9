"""SASL from configuration, against a real broker that demands it (SASL_PLAINTEXT, PLAIN): the
KAFKA_* settings reach the producer and the consumer unchanged, and refused credentials stop
the CLI with an error that says so, not after a timeout on a 'transport failure'."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from croupier import kafka_local
from croupier import lake as lakes
from producers.client import CredentialsRefused, FatalPublishError, TableEventProducer
from tests.conftest import make_broker

pytestmark = pytest.mark.kafka

USER, PASSWORD = "table-device", "s3cret-pass"


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[kafka_local.LocalBroker]:
    broker = dataclasses.replace(
        make_broker(tmp_path_factory.mktemp("kafka-sasl")),
        sasl_port=kafka_local.free_port(),
        sasl_users=((USER, PASSWORD),),
    )
    kafka_local.start(broker)
    try:
        yield broker
    finally:
        kafka_local.stop(broker)


def croupier(
    broker: kafka_local.LocalBroker, data: Path, password: str, *args: str
) -> subprocess.CompletedProcess[str]:
    assert broker.sasl_bootstrap is not None
    env = {
        **os.environ,
        "CROUPIER_DATA_DIR": str(data),
        "KAFKA_BOOTSTRAP_SERVERS": broker.sasl_bootstrap,
        "KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "KAFKA_SASL_MECHANISM": "PLAIN",
        "KAFKA_SASL_USERNAME": USER,
        "KAFKA_SASL_PASSWORD": password,
    }
    return subprocess.run(
        [sys.executable, "-m", "croupier", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_sasl_settings_reach_the_producer_and_the_consumer(
    sasl_broker: kafka_local.LocalBroker, tmp_path: Path, topic_name: str
) -> None:
    simulated = croupier(
        sasl_broker, tmp_path, PASSWORD,
        "simulate", "--kafka", "--topic", topic_name, "--hours", "0.25",
        "--tables-per-game", "1", "--faults", "none",
    )  # fmt: skip
    assert simulated.returncode == 0, simulated.stderr[-2000:]
    sent = json.loads(simulated.stdout)["messages"]
    assert sent > 100
    lake = tmp_path / "lake"
    consumed = croupier(
        sasl_broker, tmp_path, PASSWORD,
        "consume", "--lake", str(lake), "--topic", topic_name, "--stop-when-idle", "3",
    )  # fmt: skip
    assert consumed.returncode == 0, consumed.stderr[-2000:]
    con = lakes.connect(lakes.Lake(root=lake), read_only=True)
    try:
        row = con.execute("SELECT count(*) FROM events").fetchone()
    except duckdb.Error as exc:
        raise AssertionError(consumed.stderr[-2000:]) from exc
    finally:
        con.close()
    assert row == (sent,)  # faults off: every message is one valid, distinct event


@pytest.mark.parametrize("command", ["simulate", "consume"])
def test_refused_credentials_stop_the_cli_with_an_error_that_says_so(
    sasl_broker: kafka_local.LocalBroker, tmp_path: Path, topic_name: str, command: str
) -> None:
    args = {
        "simulate": ["simulate", "--kafka", "--topic", topic_name, "--hours", "0.1"],
        "consume": ["consume", "--lake", str(tmp_path / "lake"), "--topic", topic_name],
    }[command]
    result = croupier(sasl_broker, tmp_path, "not-the-password", *args)
    assert result.returncode == 1
    # librdkafka's own log lines may come after the CLI's one-line error.
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith("Error: Kafka: the broker refused the credentials: ")
    assert "Invalid username or password" in error


def test_the_producer_client_reports_refused_credentials_as_fatal(
    sasl_broker: kafka_local.LocalBroker, topic_name: str
) -> None:
    """For device integrators using producers.client directly: with the topic check, creating
    the client fails; without it, closing does, naming the broker's reason either way."""
    security = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": USER,
        "sasl.password": "not-the-password",
    }
    client = {
        "bootstrap_servers": sasl_broker.sasl_bootstrap,
        "topic": topic_name,
        "partitions": 1,
        "extra_config": security,
        "flush_on_sigterm": False,
    }
    with pytest.raises(CredentialsRefused, match="Invalid username or password"):
        TableEventProducer(**client)
    producer = TableEventProducer(**client, create_topic=False)
    producer.send_unchecked("PG-01", b"{}")
    with pytest.raises(FatalPublishError, match="Invalid username or password"):
        producer.close()
