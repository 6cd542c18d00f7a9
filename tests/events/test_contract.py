"""The contract refuses what producers must never send, naming the field, and keeps what it accepts
canonical: UTC times, frozen events, one spelling per card."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from events import MAX_EVENT_BYTES, InvalidEvent, dump_event, parse_event, validate_event
from events.models import BetPlaced, CardsDealt, Game


def bet(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_id": "0f8e5c2a-1b7d-4c3e-9a61-00000000002a",
        "event_type": "bet_placed",
        "schema_version": 1,
        "casino_id": "casino-lima-01",
        "table_id": "PG-01",
        "game": "pai_gow",
        "round_id": "PG-01-R00042",
        "seq": 7,
        "occurred_at": "2025-01-10T23:14:05Z",
        "source_device": "PG-01/console",
        "seat": 3,
        "spot": "main",
        "amount_cents": 5000,
        "player_ref": "P3f9a0c21de",
    }
    event.update(changes)
    return event


def dealt(**changes: Any) -> dict[str, Any]:
    event = bet(event_type="cards_dealt")
    for key in ("seat", "spot", "amount_cents", "player_ref"):
        del event[key]
    event.update(
        recipient="seat", seat=2, cards=["As", "Kd", "Jk"], face_up=False, deal_order=[1, 5, 9]
    )
    event.update(changes)
    return event


def refused(data: dict[str, Any] | bytes) -> InvalidEvent:
    with pytest.raises(InvalidEvent) as caught:
        if isinstance(data, bytes):
            parse_event(data)
        else:
            parse_event(json.dumps(data).encode())
    return caught.value


def test_a_valid_event_round_trips_to_the_same_canonical_bytes() -> None:
    event = parse_event(json.dumps(bet()).encode())
    assert isinstance(event, BetPlaced)
    assert event.game is Game.PAI_GOW and event.amount_cents == 5000
    assert parse_event(dump_event(event)) == event
    assert dump_event(parse_event(dump_event(event))) == dump_event(event)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"amount_cents": "5000"}, "bet_placed.amount_cents"),  # a string is not money
        ({"amount_cents": 50.0}, "bet_placed.amount_cents"),  # DEF-M1: never a float
        ({"amount_cents": True}, "bet_placed.amount_cents"),
        ({"amount_cents": 0}, "bet_placed.amount_cents"),  # a bet is a positive amount
        ({"amount_cents": -100}, "bet_placed.amount_cents"),
        ({"seq": "7"}, "bet_placed.seq"),
        ({"seat": 8}, "bet_placed.seat"),
        ({"spot": "insurance"}, "bet_placed.spot"),
        ({"game": "baccarat"}, "bet_placed.game"),
        ({"event_id": "not-a-uuid"}, "bet_placed.event_id"),
        ({"table_id": "PG 01"}, "bet_placed.table_id"),
        ({"round_id": None}, "bet_placed.round_id"),  # a round-level event needs its round
        ({"occurred_at": "2025-01-10T23:14:05"}, "bet_placed.occurred_at"),  # naive time
        ({"occurred_at": 1736550845}, "bet_placed.occurred_at"),  # a number is not a time
        ({"schema_version": 9}, "bet_placed.schema_version"),
        ({"colour": "red"}, "bet_placed.colour"),  # extra="forbid"
    ],
)
def test_bad_input_is_refused_naming_the_field(changes: dict[str, Any], field: str) -> None:
    error = refused(bet(**changes))
    assert field in error.fields
    assert field in str(error)


def test_a_missing_field_is_named() -> None:
    data = bet()
    del data["amount_cents"]
    assert refused(data).fields == ("bet_placed.amount_cents",)


def test_an_unknown_event_type_is_refused_naming_event_type() -> None:
    error = refused(bet(event_type="table_exploded"))
    assert error.fields == ("event_type",)
    assert "table_exploded" in str(error)


@pytest.mark.parametrize("card", ["1s", "Zx", "as", "AS", "10h", "Jo", "A", ""])
def test_a_card_outside_the_canonical_notation_is_refused(card: str) -> None:
    error = refused(dealt(cards=["As", card, "Kd"]))
    assert error.fields == ("cards_dealt.cards.1",)


def test_malformed_json_and_oversized_messages_are_refused() -> None:
    assert "invalid JSON" in str(refused(json.dumps(bet()).encode()[:-5]))
    assert "too large" in str(refused(b" " * (MAX_EVENT_BYTES + 1)))


def test_table_level_events_carry_no_round() -> None:
    counted = bet(event_type="deck_counted", schema_version=2, round_id="PG-01-R00042")
    for key in ("seat", "spot", "amount_cents", "player_ref"):
        del counted[key]
    counted.update(deck_id="PG-01-D1", count=53)
    assert refused(counted).fields == ("deck_counted.round_id",)
    counted["round_id"] = None
    assert parse_event(json.dumps(counted).encode()).round_id is None


def test_cards_dealt_names_a_seat_exactly_for_seat_recipients() -> None:
    assert "seat is given exactly" in str(refused(dealt(recipient="dealer")))
    assert "group is given exactly" in str(refused(dealt(recipient="seat", group=3)))
    assert "one entry per card" in str(refused(dealt(deal_order=[1, 5])))
    assert parse_event(json.dumps(dealt(recipient="group", seat=None, group=4)).encode())


def test_occurred_at_with_an_offset_is_stored_in_utc() -> None:
    event = parse_event(json.dumps(bet(occurred_at="2025-01-10T18:14:05-05:00")).encode())
    assert event.occurred_at == datetime(2025, 1, 10, 23, 14, 5, tzinfo=UTC)
    assert b'"occurred_at":"2025-01-10T23:14:05Z"' in dump_event(event)


def test_events_are_frozen() -> None:
    event = parse_event(json.dumps(bet()).encode())
    with pytest.raises(ValidationError):
        event.amount_cents = 1  # type: ignore[misc]


def test_validate_event_takes_python_values_and_keeps_optional_fields_optional() -> None:
    data = bet(occurred_at=datetime(2025, 1, 10, 23, 14, 5, tzinfo=UTC))
    del data["player_ref"]  # optional fields may be left out: they are null
    event = validate_event(data)
    assert isinstance(event, BetPlaced) and event.player_ref is None
    with pytest.raises(InvalidEvent) as caught:
        validate_event(bet(occurred_at=datetime(2025, 1, 10, 23, 14, 5)))
    assert caught.value.fields == ("bet_placed.occurred_at",)


def test_cards_dealt_model_keeps_deal_order_beside_cards() -> None:
    event = parse_event(json.dumps(dealt()).encode())
    assert isinstance(event, CardsDealt)
    assert list(zip(event.cards, event.deal_order, strict=True)) == [
        ("As", 1),
        ("Kd", 5),
        ("Jk", 9),
    ]
