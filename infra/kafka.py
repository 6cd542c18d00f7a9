"""Kafka helpers shared by the producers and the consumer: the configured client settings, topic
creation, and what counts as a failed security handshake."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from infra.config import get_settings


class KafkaSecurityError(RuntimeError):
    """The security handshake with the broker failed: credentials refused (SASL) or a
    certificate not trusted (TLS). A configuration error that no retry mends, so it stops the
    client at once instead of retrying until a timeout."""

    def __init__(self, error: KafkaError) -> None:
        super().__init__(f"security handshake failed: {error.str()}")
        self.error = error


def security_failure(error: KafkaError) -> bool:
    return error.code() in (
        KafkaError._AUTHENTICATION,
        KafkaError.SASL_AUTHENTICATION_FAILED,
        KafkaError._SSL,
    )


def kafka_settings() -> tuple[dict[str, Any], str, int]:
    """librdkafka base configuration, topic and partitions from croupier's configuration."""
    settings = get_settings()
    return settings.kafka_client_config(), settings.kafka_topic, settings.kafka_partitions


def ensure_topic(
    client_config: Mapping[str, Any],
    topic: str,
    *,
    partitions: int,
    replication_factor: int = -1,
    timeout: float = 30.0,
) -> bool:
    """Create `topic` with `partitions` unless it exists; True when it was created.

    `replication_factor=-1` takes the broker's `default.replication.factor`.
    """
    errors: list[KafkaError] = []
    config: dict[str, Any] = {**client_config, "error_cb": errors.append}
    admin = AdminClient(config)
    deadline = time.monotonic() + timeout
    while True:  # in short slices, so a failed security handshake ends it at once
        try:
            slice_s = max(0.05, min(1.0, deadline - time.monotonic()))  # never <= 0: forever
            existing = admin.list_topics(timeout=slice_s).topics
            break
        except KafkaException:
            admin.poll(0)  # serves error_cb
            failed = next((e for e in errors if security_failure(e)), None)
            if failed is not None:
                raise KafkaSecurityError(failed) from None
            if time.monotonic() >= deadline - 0.05:
                raise
    if topic in existing:
        return False
    # Kept forever: the topic is the record the lake is rebuilt from, and messages carry their
    # events' own times (a replayed recording's are old), which a retention by age would delete.
    futures = admin.create_topics(
        [
            NewTopic(
                topic,
                num_partitions=partitions,
                replication_factor=replication_factor,
                config={"retention.ms": "-1"},
            )
        ],
        operation_timeout=timeout,
        request_timeout=timeout,
    )
    try:
        futures[topic].result(timeout)
    except KafkaException as error:
        # Another process may have created it between our look and our request.
        if error.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise
        return False
    return True
