"""The producer client refuses bad events before anything is queued, numbers each table's events,
and reports what it could not deliver. No broker here: nothing valid ever needs to arrive."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

from events import InvalidEvent, dump_event, parse_event
from producers.client import Delivery, PublishError, TableEventProducer


def draft(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_type": "bet_placed",
        "schema_version": 1,
        "casino_id": "casino-lima-01",
        "table_id": "PG-01",
        "game": "pai_gow",
        "round_id": "PG-01-R00042",
        "occurred_at": "2025-01-10T23:14:05Z",
        "source_device": "PG-01/console",
        "seat": 3,
        "spot": "main",
        "amount_cents": 5000,
        "player_ref": "P3f9a0c21de",
    }
    event.update(changes)
    return event


def offline_client(message_timeout_ms: int = 1000, **settings: Any) -> TableEventProducer:
    """A client pointed at a port nobody listens on: whatever is queued is never delivered."""
    return TableEventProducer(
        bootstrap_servers="127.0.0.1:9",
        topic="table-events",
        partitions=1,
        create_topic=False,
        flush_on_sigterm=False,
        extra_config={"message.timeout.ms": message_timeout_ms, "log_level": 0},
        **settings,
    )


@pytest.fixture
def offline() -> Any:
    producer = offline_client(flush_timeout=3.0)
    yield producer
    with contextlib.suppress(PublishError):
        producer.close()


def queued(producer: TableEventProducer) -> int:
    """Messages that had reached librdkafka's queue: purged, each reports a failed delivery."""
    before = producer.failed
    producer._producer.purge()
    producer._producer.poll(0.5)
    return producer.failed - before


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (draft(amount_cents="5000"), "bet_placed.amount_cents"),  # wrong type
        ({k: v for k, v in draft().items() if k != "seat"}, "bet_placed.seat"),  # missing
        (draft(event_type="chips_stolen"), "event_type"),  # unknown event type
        (
            draft(
                event_type="dealer_revealed",
                cards=["As", "Zz"],
                seat=None,
                spot=None,
                amount_cents=None,
                player_ref=None,
            ),
            "dealer_revealed.cards.1",
        ),  # bad card
    ],
)
def test_bad_input_is_refused_before_sending_naming_the_field(
    offline: TableEventProducer, event: dict[str, Any], field: str
) -> None:
    if event["event_type"] == "dealer_revealed":
        for key in ("seat", "spot", "amount_cents", "player_ref"):
            del event[key]
    with pytest.raises(InvalidEvent) as caught:
        offline.send(event)
    assert field in caught.value.fields and field in str(caught.value)
    with pytest.raises(InvalidEvent):
        offline.send(
            json.dumps(
                {**event, "seq": 1, "event_id": "0f8e5c2a-1b7d-4c3e-9a61-00000000002a"}
            ).encode()
        )
    assert offline.sent == 0 and queued(offline) == 0


def test_seq_is_assigned_per_table_and_must_increase(offline: TableEventProducer) -> None:
    seqs = [offline.send(draft()).seq for _ in range(3)]
    other = offline.send(draft(table_id="PG-02", round_id="PG-02-R00001")).seq
    assert seqs == [1, 2, 3] and other == 1
    with pytest.raises(InvalidEvent) as caught:
        offline.send(draft(seq=3))
    assert caught.value.fields == ("seq",) and "not above 3" in str(caught.value)
    assert offline.send(draft(seq=10)).seq == 10
    assert offline.last_seq("PG-01") == 10 and offline.sent == 5 == queued(offline)


def test_a_client_restarted_with_last_seq_goes_on_from_it() -> None:
    producer = offline_client(last_seq={"PG-01": 41})
    try:
        assert producer.send(draft()).seq == 42
    finally:
        assert queued(producer) == 1
        with pytest.raises(PublishError, match="1 failed"):
            producer.close()


def test_bytes_are_validated_and_sent_as_they_are(offline: TableEventProducer) -> None:
    raw = dump_event(offline.send(draft()))
    again = raw.replace(b'"seq":1,', b'"seq":2,')
    assert offline.send(again) == parse_event(again)
    assert queued(offline) == 2


def test_undelivered_messages_make_close_fail(offline: TableEventProducer) -> None:
    offline.send(draft())
    with pytest.raises(PublishError, match="1 failed"):
        offline.close()
    assert offline.failed == 1 and offline.delivered == 0
    with pytest.raises(PublishError, match="closed"):
        offline.send(draft())


def test_close_gives_up_what_is_still_queued_and_shuts_the_client_down() -> None:
    """A broker that never answers: close() waits its flush timeout, reports each message still
    queued as not delivered, and shuts librdkafka down rather than leave it retrying (and
    logging) in the background for as long as the process lives."""
    reports: list[Delivery] = []
    producer = offline_client(600_000, flush_timeout=0.5, on_delivery=reports.append)
    producer.send(draft())
    producer.send(draft())
    with pytest.raises(PublishError, match="2 messages still queued"):
        producer.close()
    assert [r.error is not None and r.offset is None for r in reports] == [True, True]
    assert producer.failed == 2 and producer.delivered == 0
    with pytest.raises(RuntimeError, match="closed"):
        producer._producer.poll(0)  # the librdkafka client itself is gone
    assert producer.flush() == 0 and producer.poll() == 0
