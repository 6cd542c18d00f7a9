"""Old versions of an event are read through pure upcasters, before validation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from events import CURRENT_VERSIONS, InvalidEvent, dump_event, parse_event, validate_event
from events.models import DeckCounted
from events.upcasters import UPCASTERS, upcast


def counted(version: int, **payload: Any) -> dict[str, Any]:
    return {
        "event_id": "7d2c4a10-3f1e-4b5a-8c9d-0e1f2a3b4c5d",
        "event_type": "deck_counted",
        "schema_version": version,
        "casino_id": "casino-lima-01",
        "table_id": "PG-01",
        "game": "pai_gow",
        "round_id": None,
        "seq": 12,
        "occurred_at": "2025-01-10T23:05:00Z",
        "source_device": "PG-01/console",
        "deck_id": "PG-01-D1",
        **payload,
    }


def test_deck_counted_v1_cards_is_read_as_v2_count() -> None:
    event = parse_event(json.dumps(counted(1, cards=53)).encode())
    assert isinstance(event, DeckCounted)
    assert (event.schema_version, event.count) == (2, 53)
    # Re-serialised, it is a v2 event: the upcast is not repeated on the next read.
    assert b'"schema_version":2' in dump_event(event) and b'"cards"' not in dump_event(event)
    assert validate_event(counted(1, cards=52)) == validate_event(counted(2, count=52))


def test_upcasters_are_pure() -> None:
    old = counted(1, cards=53)
    before = copy.deepcopy(old)
    new = upcast(old)
    assert old == before
    assert new is not old and new["count"] == 53 and "cards" not in new


def test_current_versions_pass_unchanged() -> None:
    current = counted(2, count=53)
    assert upcast(current) == current


def test_a_version_nobody_reads_is_refused_naming_schema_version() -> None:
    with pytest.raises(InvalidEvent) as caught:
        parse_event(json.dumps(counted(0, cards=53)).encode())
    assert "deck_counted.schema_version" in caught.value.fields


def test_an_upcast_event_still_gets_validated() -> None:
    with pytest.raises(InvalidEvent) as caught:
        parse_event(json.dumps(counted(1, cards="fifty-three")).encode())
    assert caught.value.fields == ("deck_counted.count",)


def test_every_upcaster_reads_a_version_older_than_the_current_one() -> None:
    for event_type, version in UPCASTERS:
        assert version < CURRENT_VERSIONS[event_type]
