"""Kafka security from configuration, against a real broker with a SASL_PLAINTEXT (PLAIN) and
an SSL (TLS, self-signed) listener: the KAFKA_* settings reach the producer and the consumer
unchanged, and a failed handshake (refused credentials, an untrusted certificate) stops the
CLI with an error that says so, not after a timeout on a 'transport failure'."""

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

from infra import kafka_local
from infra.kafka import KafkaSecurityError
from producers.client import FatalPublishError, TableEventProducer
from tests.conftest import make_broker
from tests.consumers.helpers import open_lake

pytestmark = pytest.mark.kafka

USER, PASSWORD = "table-device", "s3cret-pass"


@pytest.fixture(scope="module")
def secure_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[kafka_local.LocalBroker]:
    broker = dataclasses.replace(
        make_broker(tmp_path_factory.mktemp("kafka-secure")),
        sasl_port=kafka_local.free_port(),
        sasl_users=((USER, PASSWORD),),
        ssl_port=kafka_local.free_port(),
    )
    kafka_local.start(broker)
    try:
        yield broker
    finally:
        kafka_local.stop(broker)


def security_env(broker: kafka_local.LocalBroker, listener: str, password: str) -> dict[str, str]:
    """The environment a site would set for `listener` (sasl or ssl)."""
    if listener == "ssl":
        assert broker.ssl_bootstrap is not None
        return {
            "KAFKA_BOOTSTRAP_SERVERS": broker.ssl_bootstrap,
            "KAFKA_SECURITY_PROTOCOL": "SSL",
            "KAFKA_SSL_CA_LOCATION": str(broker.ca_file),
        }
    assert broker.sasl_bootstrap is not None
    return {
        "KAFKA_BOOTSTRAP_SERVERS": broker.sasl_bootstrap,
        "KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "KAFKA_SASL_MECHANISM": "PLAIN",
        "KAFKA_SASL_USERNAME": USER,
        "KAFKA_SASL_PASSWORD": password,
    }


def croupier(security: dict[str, str], data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "croupier", *args],
        env={**os.environ, "CROUPIER_DATA_DIR": str(data), **security},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.parametrize("listener", ["sasl", "ssl"])
def test_security_settings_reach_the_producer_and_the_consumer(
    secure_broker: kafka_local.LocalBroker, tmp_path: Path, topic_name: str, listener: str
) -> None:
    security = security_env(secure_broker, listener, PASSWORD)
    simulated = croupier(
        security, tmp_path,
        "simulate", "--kafka", "--topic", topic_name, "--hours", "0.25",
        "--tables-per-game", "1", "--faults", "none",
    )  # fmt: skip
    assert simulated.returncode == 0, simulated.stderr[-2000:]
    sent = json.loads(simulated.stdout)["messages"]
    assert sent > 100
    lake = tmp_path / "lake"
    consumed = croupier(
        security, tmp_path,
        "consume", "--lake", str(lake), "--topic", topic_name, "--stop-when-idle", "3",
    )  # fmt: skip
    assert consumed.returncode == 0, consumed.stderr[-2000:]
    con = open_lake(lake)
    try:
        row = con.execute("SELECT count(*) FROM events").fetchone()
    except duckdb.Error as exc:
        raise AssertionError(consumed.stderr[-2000:]) from exc
    finally:
        con.close()
    assert row == (sent,)  # faults off: every message is one valid, distinct event


@pytest.mark.parametrize("command", ["simulate", "consume"])
@pytest.mark.parametrize(
    ("failure", "reason"),
    [("password", "Invalid username or password"), ("certificate", "certificate verify failed")],
)
def test_a_failed_security_handshake_stops_the_cli_with_an_error_that_says_so(
    secure_broker: kafka_local.LocalBroker,
    tmp_path: Path,
    topic_name: str,
    command: str,
    failure: str,
    reason: str,
) -> None:
    if failure == "password":
        security = security_env(secure_broker, "sasl", "not-the-password")
    else:  # TLS without the broker's CA: its self-signed certificate is not trusted
        security = security_env(secure_broker, "ssl", PASSWORD)
        del security["KAFKA_SSL_CA_LOCATION"]
    args = {
        "simulate": ["simulate", "--kafka", "--topic", topic_name, "--hours", "0.1"],
        "consume": ["consume", "--lake", str(tmp_path / "lake"), "--topic", topic_name],
    }[command]
    result = croupier(security, tmp_path, *args)
    assert result.returncode == 1
    # librdkafka's own log lines may come after the CLI's one-line error.
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith("Error: Kafka: security handshake failed: ")
    assert reason in error


def test_the_producer_client_reports_refused_credentials_as_fatal(
    secure_broker: kafka_local.LocalBroker, topic_name: str
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
        "bootstrap_servers": secure_broker.sasl_bootstrap,
        "topic": topic_name,
        "partitions": 1,
        "extra_config": security,
        "flush_on_sigterm": False,
    }
    with pytest.raises(KafkaSecurityError, match="Invalid username or password"):
        TableEventProducer(**client)
    producer = TableEventProducer(**client, create_topic=False)
    producer.send_unchecked("PG-01", b"{}")
    with pytest.raises(FatalPublishError, match="Invalid username or password"):
        producer.close()
