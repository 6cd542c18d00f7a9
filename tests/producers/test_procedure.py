"""Procedure properties of thousands of simulated rounds with faults off, article by article."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator

import jsonschema
import pytest

from events import Event, Game, InvalidEvent, dump_event, parse_event
from events.models import (
    BetPlaced,
    CardsDealt,
    CreditRecorded,
    DeckCounted,
    DeckWashed,
    DropRecorded,
    FillRecorded,
    HandSet,
    InventoryCounted,
    JokerDestroyed,
    PayoutRecorded,
    ProgressiveMeterRecorded,
    ProgressiveMeterReset,
    Recipient,
    RoundStarted,
    TableOpened,
)
from events.schema import SCHEMA_PATH
from games.tripoker import checks as tripoker_checks
from producers.simulator import Fault, Message, simulate
from rules.cards import card_str, deck
from tests.producers.oracle import (
    TableStream,
    cards,
    group_one_position,
    pai_gow_hands,
    serpentine_places,
    split_tables,
)


@pytest.fixture(scope="module")
def night() -> tuple[list[Message], dict[str, TableStream]]:
    messages = list(simulate(tables=3, hours=8, seed=17, faults={}))
    return messages, split_tables(messages)


def tables_of(night: tuple[list[Message], dict[str, TableStream]], game: Game) -> list[TableStream]:
    return [s for s in night[1].values() if s.game is game]


def rounds_of(
    night: tuple[list[Message], dict[str, TableStream]], game: Game
) -> Iterator[list[Event]]:
    for stream in tables_of(night, game):
        yield from stream.rounds().values()


def test_thousands_of_rounds_are_simulated(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    started = Counter(
        s.game for s in night[1].values() for e in s.events if isinstance(e, RoundStarted)
    )
    assert sum(started.values()) >= 3000
    assert min(started.values()) >= 600


def test_every_message_is_a_canonical_event(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    messages, tables = night
    assert sum(len(s.arrivals) for s in tables.values()) == len(messages)
    encoded = {m.value for m in messages}
    assert all(dump_event(e) in encoded for s in tables.values() for e in s.events)


def test_every_emitted_message_gets_the_same_verdict_from_schema_and_models() -> None:
    """Faults on, so malformed messages are in the stream too: the committed JSON Schema accepts
    exactly the messages the models accept."""
    schema = json.loads(SCHEMA_PATH.read_text("utf-8"))
    union = jsonschema.Draft202012Validator(schema)
    # The union is tagged on event_type: each event is checked against its own branch (the only
    # one oneOf can match, and much faster); a sample also goes through the whole union.
    branch = {
        name: jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": ref}]})
        for name, ref in schema["discriminator"]["mapping"].items()
    }
    rates = {fault: 0.002 for fault in Fault}
    verdicts: Counter[tuple[bool, bool]] = Counter()
    for number, message in enumerate(simulate(tables=1, hours=3, seed=8, faults=rates)):
        try:
            parse_event(message.value)
            valid = True
        except InvalidEvent:
            valid = False
        try:
            data = json.loads(message.value)
        except ValueError:
            verdicts[(valid, False)] += 1
            continue
        validator = branch.get(data.get("event_type"), union) if number % 50 else union
        verdicts[(valid, validator.is_valid(data))] += 1
    assert verdicts[(True, True)] > 5000 and verdicts[(False, False)] > 5
    assert set(verdicts) == {(True, True), (False, False)}


def test_pgp_a6d_one_of_two_jokers_kept_and_tcp_a5b_thp_a5_none(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    for stream in night[1].values():
        destroyed = [e.count for e in stream.events if isinstance(e, JokerDestroyed)]
        assert destroyed and set(destroyed) == {1 if stream.game is Game.PAI_GOW else 2}


def test_pgp_a7a_every_count_is_53_and_all_3_every_other_deck_52(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    for stream in night[1].values():
        counts = {e.count for e in stream.events if isinstance(e, DeckCounted)}
        assert counts == {53 if stream.game is Game.PAI_GOW else 52}


def test_pgp_a7c_count_and_wash_after_each_dealer_change_and_void(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    checked = 0
    for stream in tables_of(night, Game.PAI_GOW):
        owed = False
        for event in stream.events:
            if event.event_type in ("dealer_changed", "round_voided"):
                owed, counted = True, False
            elif owed and isinstance(event, DeckCounted):
                counted = True
            elif owed and isinstance(event, DeckWashed) and counted:
                owed = False
                checked += 1
            elif isinstance(event, RoundStarted):
                assert not owed, f"{event.round_id}: no count and wash since the last change"
    assert checked >= 20


def test_pgp_a10_49_dealt_and_4_left_make_the_53_card_deck(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    full = sorted(card_str(c) for c in deck(jokers=1))
    rounds = 0
    for events in rounds_of(night, Game.PAI_GOW):
        dealt = [e for e in events if isinstance(e, CardsDealt)]
        groups = [e for e in dealt if e.recipient is Recipient.GROUP]
        discard = [e for e in dealt if e.recipient is Recipient.DISCARD]
        assert sorted(e.group for e in groups) == list(range(1, 8))
        assert all(len(e.cards) == 7 and not e.face_up for e in groups)  # A10a, A10c
        assert len(discard) == 1 and len(discard[0].cards) == 4  # A10d
        assert sorted(c for e in dealt for c in e.cards) == full  # no card twice, none missing
        rounds += 1
    assert rounds >= 600


def test_pgp_a10f_serpentine_deal_order(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    places = serpentine_places()
    assert places[1] == [1, 14, 15, 28, 29, 42, 43] and places[7] == [7, 8, 21, 22, 35, 36, 49]
    for events in rounds_of(night, Game.PAI_GOW):
        for event in events:
            if isinstance(event, CardsDealt) and event.recipient is Recipient.GROUP:
                assert event.group is not None
                assert list(event.deal_order) == places[event.group]
            elif isinstance(event, CardsDealt):
                assert list(event.deal_order) == [50, 51, 52, 53]


def test_pgp_a11b_worked_examples() -> None:
    assert group_one_position(8) == 0  # "total 8 -> the banker"
    assert group_one_position(10) == 2  # "total 10 -> two positions to the banker's left"


def test_pgp_a11b_a12_the_dice_give_each_position_its_group_and_unbet_groups_stay_unseen(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    rounds = 0
    for events in rounds_of(night, Game.PAI_GOW):
        if not any(e.event_type == "dice_rolled" for e in events):
            continue  # a voided round
        hands = pai_gow_hands(events)
        bettors = {e.seat for e in events if isinstance(e, BetPlaced)}
        set_by = {e.seat: e for e in events if isinstance(e, HandSet)}
        assert set(set_by) <= bettors | {0} and 0 in set_by  # A12b: no one else shows cards
        for seat, hand in set_by.items():
            assert sorted(cards([*hand.high, *hand.low])) == sorted(hands[seat])
        rounds += 1
    assert rounds >= 600


def test_pgp_a9c_no_bet_after_bets_close(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    for events in rounds_of(night, Game.PAI_GOW):
        types = [e.event_type for e in events]
        if "bets_closed" in types:
            assert "bet_placed" not in types[types.index("bets_closed") :]


def test_all_1_every_bet_is_within_the_posted_limits(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    for stream in night[1].values():
        opened = stream.events[0]
        assert isinstance(opened, TableOpened)
        limits = {limit.spot: (limit.min_cents, limit.max_cents) for limit in opened.limits}
        for event in stream.events:
            if isinstance(event, BetPlaced):
                low, high = limits[event.spot]
                assert low <= event.amount_cents <= high


def test_tcp_a10_three_rounds_dealer_last_third_dealer_card_up_the_rest_down(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    rounds = 0
    for events in rounds_of(night, Game.TRIPOKER):
        dealt = [e for e in events if isinstance(e, CardsDealt)]
        players = [e for e in dealt if e.recipient is Recipient.SEAT]
        dealer = [e for e in dealt if e.recipient is Recipient.DEALER]
        n = len(players) + 1
        assert all(len(e.cards) == 3 and not e.face_up for e in players)  # TCP-A8, A10b
        faces = {place: e.face_up for e in dealer for place in e.deal_order}
        assert faces == {n: False, 2 * n: False, 3 * n: True}  # the dealer last each round
        places = sorted(p for e in dealt for p in e.deal_order)
        assert places == list(range(1, 3 * n + 1))
        # TCP-A10a: one card per round to each seat with a bet, from the dealer's left (seat
        # numbers ascending), before the dealer's.
        bettors = sorted({e.seat for e in events if isinstance(e, BetPlaced)})
        assert sorted(e.seat for e in players) == bettors
        for i, seat in enumerate(bettors, start=1):
            (hand,) = (e for e in players if e.seat == seat)
            assert list(hand.deal_order) == [i, n + i, 2 * n + i]
        # ... and the platform's check agrees: no TCP-A10a on an honest night.
        assert tripoker_checks.tripoker_deal_order(events) == []
        rounds += 1
    assert rounds >= 1000


def test_thp_a2d_two_decks_alternate_every_round(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    for stream in tables_of(night, Game.HOLDEM):
        decks = [e.deck_id for e in stream.events if isinstance(e, RoundStarted)]
        assert len(set(decks)) == 2 and len(decks) >= 300
        assert all(a != b for a, b in itertools.pairwise(decks))


def test_def_thp4_meter_grows_by_the_contributions_and_drops_only_at_a_hit(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    for stream in tables_of(night, Game.HOLDEM):
        meter = next(e.meter_cents for e in stream.events if isinstance(e, ProgressiveMeterReset))
        assert meter == 2_000_000  # the S/ 20,000 seed
        for events in stream.rounds().values():
            wagers = sum(
                1 for e in events if isinstance(e, BetPlaced) and e.spot.value == "progressive"
            )
            hits = [
                e.paid_cents
                for e in events
                if isinstance(e, PayoutRecorded) and e.spot.value == "progressive" and e.paid_cents
            ]
            after = next(e.meter_cents for e in events if isinstance(e, ProgressiveMeterRecorded))
            if after < meter:
                assert hits, "the meter dropped without a progressive hit"
            elif not hits:
                assert after - meter == wagers * 100  # 20 % of S/ 5 per wager
            meter = after


def test_def_acc1_win_from_the_tray_equals_what_the_payouts_moved(
    night: tuple[list[Message], dict[str, TableStream]],
) -> None:
    for stream in night[1].values():
        inventory = {
            e.kind.value: sum(c.denomination_cents * c.count for c in e.chips)
            for e in stream.events
            if isinstance(e, InventoryCounted)
        }
        fills = sum(e.amount_cents for e in stream.events if isinstance(e, FillRecorded))
        credits = sum(e.amount_cents for e in stream.events if isinstance(e, CreditRecorded))
        drop = sum(e.amount_cents for e in stream.events if isinstance(e, DropRecorded))
        win = inventory["closing"] + credits + drop - inventory["opening"] - fills
        moved = sum(
            e.collected_cents + e.commission_cents - e.paid_cents
            for e in stream.events
            if isinstance(e, PayoutRecorded)
        )
        assert drop > 0 and win == moved


def test_all_2_a_player_plays_one_zone(night: tuple[list[Message], dict[str, TableStream]]) -> None:
    for stream in night[1].values():
        for events in stream.rounds().values():
            seats: dict[str, set[int]] = {}
            for event in events:
                if isinstance(event, BetPlaced) and event.player_ref:
                    seats.setdefault(event.player_ref, set()).add(event.seat)
            assert all(len(s) == 1 for s in seats.values())


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes() -> None:
    first = list(simulate(tables=1, hours=1, seed=4))
    assert first == list(simulate(tables=1, hours=1, seed=4))
    assert first != list(simulate(tables=1, hours=1, seed=5))
