"""Procedure checks on hand-made events, one test per article (the simulator's faults exercise
them too, in tests/consumers; these cover what it never injects)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from events import Event
from events.models import CardsDealt, Game
from games.base import RoundEvents
from games.pai_gow import checks as pai_gow_checks
from games.pai_gow.rules import serpentine_deal_order
from games.profiles import load_profile
from games.registry import GAMES
from games.tripoker import checks as tripoker_checks
from rules import procedure
from tests.builders import hand_made


def ev(event_type: str, game: str = "pai_gow", **fields: Any) -> Event:
    version = 2 if event_type == "deck_counted" else 1
    return hand_made(
        event_type, game=game, table_id="T-1", round_id="R-1", schema_version=version, **fields
    )


def bet(seat: int, amount: int = 5_000, ref: str | None = None, game: str = "pai_gow") -> Event:
    spot = "main" if game == "pai_gow" else "ante"
    return ev("bet_placed", game, seat=seat, spot=spot, amount_cents=amount, player_ref=ref)


def dealt(
    recipient: str, cards: list[str], order: list[int], game: str = "pai_gow", **kw: Any
) -> Event:
    fields: dict[str, Any] = {"seat": None, "group": None, "face_up": False, **kw}
    return ev("cards_dealt", game, recipient=recipient, cards=cards, deal_order=order, **fields)


def rules_of(findings: list[procedure.Finding]) -> list[str]:
    return [f.rule_id for f in findings]


def test_all1_bet_above_the_posted_limit_is_a_violation() -> None:
    events = [bet(1, 5_000), bet(2, 300_000), bet(3, 1_000)]
    found = procedure.bets_within_limits(events, {"main": [2_000, 200_000]})
    assert rules_of(found) == ["ALL-1", "ALL-1"]
    assert [f.evidence["amount_cents"] for f in found] == [300_000, 1_000]


def test_all2_one_player_in_two_zones_is_a_violation() -> None:
    events = [bet(1, ref="P1"), bet(2, ref="P2"), bet(4, ref="P1")]
    found = procedure.one_player_per_zone(GAMES[Game.PAI_GOW].table_rules, events)
    assert rules_of(found) == ["PGP-A9a"]
    assert found[0].evidence["seats"] == [1, 4]


def test_pgp_a9c_bet_after_the_dice_are_shaken() -> None:
    pai_gow = GAMES[Game.PAI_GOW].table_rules
    events = [bet(1), ev("bets_closed"), bet(2)]
    assert rules_of(procedure.bets_after_close(pai_gow, events)) == ["PGP-A9c"]
    assert procedure.bets_after_close(pai_gow, [bet(1), bet(2), ev("bets_closed")]) == []
    # Tripóker's and Casino Hold'em's pages state no moment when betting closes
    for game in (Game.TRIPOKER, Game.HOLDEM):
        late = [bet(1, game=game.value), ev("bets_closed", game.value), bet(2, game=game.value)]
        assert procedure.bets_after_close(GAMES[game].table_rules, late) == []


def test_all3_a_card_twice_and_a_joker_outside_pai_gow() -> None:
    twice = [dealt("seat", ["As", "Kd"], [1, 2], seat=1), dealt("seat", ["As"], [3], seat=2)]
    assert rules_of(procedure.duplicate_cards(GAMES[Game.PAI_GOW].table_rules, twice)) == ["ALL-3"]
    joker = [dealt("seat", ["Jk", "Kd", "2c"], [1, 2, 3], game="tripoker", seat=1)]
    assert rules_of(procedure.duplicate_cards(GAMES[Game.TRIPOKER].table_rules, joker)) == [
        "TCP-A5b"
    ]
    assert (
        procedure.duplicate_cards(GAMES[Game.PAI_GOW].table_rules, [dealt("discard", ["Jk"], [50])])
        == []
    )


def _deal(order_of: dict[int, list[int]], leftovers: int = 4) -> list[Event]:
    deck = [f"{r}{s}" for r in "23456789TJQKA" for s in "cdhs"] + ["Jk"]
    events, k = [], 0
    for group in range(1, 8):
        cards = deck[k : k + len(order_of[group])]
        k += len(cards)
        events.append(dealt("group", cards, order_of[group], group=group))
    events.append(dealt("discard", deck[k : k + leftovers], list(range(50, 50 + leftovers))))
    return events


def test_pgp_a10f_serpentine_order_is_accepted_and_group_by_group_is_not() -> None:
    serpentine: dict[int, list[int]] = {g: [] for g in range(1, 8)}
    for place, (group, _card) in enumerate(serpentine_deal_order(), start=1):
        serpentine[group].append(place)
    assert pai_gow_checks.pai_gow_deal(_deal(serpentine)) == []
    # PGP-A10f literally: the first card of group 7 is the 7th dealt, its second the 8th.
    assert serpentine[7][:2] == [7, 8] and serpentine[1][:2] == [1, 14]
    one_by_one = {g: list(range(7 * (g - 1) + 1, 7 * g + 1)) for g in range(1, 8)}
    assert rules_of(pai_gow_checks.pai_gow_deal(_deal(one_by_one))) == ["PGP-A10f"]


def test_pgp_a10d_five_cards_left_is_a_violation() -> None:
    serpentine: dict[int, list[int]] = {g: [] for g in range(1, 8)}
    for place, (group, _card) in enumerate(serpentine_deal_order(), start=1):
        serpentine[group].append(place)
    serpentine[3] = serpentine[3][:6]  # one card short: 5 are left
    found = rules_of(pai_gow_checks.pai_gow_deal(_deal(serpentine, leftovers=5)))
    assert "PGP-A10d" in found and "PGP-A10a" in found


def test_pgp_a10a_a_group_of_eight_cards_is_reported_not_raised() -> None:
    """Found by the consumer fuzzer: a group with an eighth card raised KeyError (the serpentine
    check looked up the eighth card's place in the deal), stopping the consumer."""
    serpentine: dict[int, list[int]] = {g: [] for g in range(1, 8)}
    for place, (group, _card) in enumerate(serpentine_deal_order(), start=1):
        serpentine[group].append(place)
    serpentine[3] = [*serpentine[3], 50]  # an eighth card to group 3: 3 are left
    found = rules_of(pai_gow_checks.pai_gow_deal(_deal(serpentine, leftovers=3)))
    assert "PGP-A10a" in found and "PGP-A10f" in found


def test_tcp_a10b_dealer_cards_given_the_same_deal_order_are_judged_not_raised() -> None:
    """Found by the consumer fuzzer: two dealer cards with the same `deal_order` made the sort
    compare the events themselves (TypeError), and the round was unprocessable."""
    events = [
        dealt("dealer", ["As", "Kd"], [4, 4], game="tripoker"),
        dealt("dealer", ["2c"], [4], game="tripoker", face_up=True),
    ]
    assert tripoker_checks.tripoker_exposed_card(events, {3}) == []  # numbered in stream order
    found = tripoker_checks.tripoker_exposed_card(events, {2})
    assert [f.evidence["card_number"] for f in found] == [2, 3]


def test_pgp_a11c_a_deal_without_a_valid_roll() -> None:
    events = [ev("dice_rolled", dice=[1, 2, 3], valid=False), dealt("group", ["As"], [1], group=1)]
    assert rules_of(pai_gow_checks.pai_gow_dice(events)) == ["PGP-A11c"]
    events.insert(1, ev("dice_rolled", dice=[4, 2, 3], valid=True))
    assert pai_gow_checks.pai_gow_dice(events) == []


def test_pgp_a12b_a_hand_set_at_a_position_without_a_bet() -> None:
    def hand(seat: int) -> Event:
        return ev("hand_set", seat=seat, high=["As", "Ad", "Kc", "Kd", "2c"], low=["3h", "4h"])

    # Seats 1 and 3 bet; the dealer (seat 0) always sets; seat 5's group was turned up.
    events = [bet(1), bet(3), ev("bets_closed"), hand(1), hand(3), hand(5), hand(0)]
    found = pai_gow_checks.pai_gow_unbet_groups(events)
    assert rules_of(found) == ["PGP-A12b"]
    assert found[0].evidence == {"seat": 5} and found[0].event_id == str(events[5].event_id)
    assert pai_gow_checks.pai_gow_unbet_groups(events[:5] + events[6:]) == []


def test_tcp_a8_every_hand_has_three_cards() -> None:
    events = [
        dealt("seat", ["As", "Kd"], [1, 3], game="tripoker", seat=1),
        dealt("dealer", ["2c", "3c", "4c"], [2, 4, 6], game="tripoker"),
    ]
    found = tripoker_checks.three_card_hands(events)
    assert rules_of(found) == ["TCP-A8"] and found[0].evidence["seat"] == 1


def test_tcp_a10b_the_dealers_third_card_face_up_under_pe_2005() -> None:
    down = dealt("dealer", ["2c", "3c"], [2, 4], game="tripoker")
    up = dealt("dealer", ["4c"], [6], game="tripoker", face_up=True)
    assert tripoker_checks.tripoker_exposed_card([down, up], exposed={3}) == []
    all_down = dealt("dealer", ["2c", "3c", "4c"], [2, 4, 6], game="tripoker")
    assert rules_of(tripoker_checks.tripoker_exposed_card([all_down], exposed={3})) == ["TCP-A10b"]
    # The standard profile exposes nothing: a face-up card there is the breach.
    assert rules_of(tripoker_checks.tripoker_exposed_card([down, up], exposed=set())) == [
        "TCP-A10b"
    ]


# ---- TCP-A10a: three rounds, one card each, left to right, the dealer last -------------------

_TCP_DECK = [f"{r}{s}" for s in "cdhs" for r in "23456789TJQKA"]
DEALER = None  # the dealer's key in a deal below


def _tripoker_deal(
    places: dict[int | None, list[int]], bettors: list[int] | None = None
) -> list[Event]:
    """Bets by `bettors` (default: the seats in `places`), then each seat's cards in seat order,
    then the dealer's (`DEALER`): face down, the last face up (TCP-A10b under pe-2005)."""
    seats = sorted(s for s in places if s is not None)
    events = [bet(seat, game="tripoker") for seat in (seats if bettors is None else bettors)]
    deck = iter(_TCP_DECK)
    for seat in seats:
        cards = [next(deck) for _ in places[seat]]
        events.append(dealt("seat", cards, places[seat], game="tripoker", seat=seat))
    dealer = places.get(DEALER, [])
    cards = [next(deck) for _ in dealer]
    if len(dealer) > 1:
        events.append(dealt("dealer", cards[:-1], dealer[:-1], game="tripoker"))
    if dealer:
        events.append(dealt("dealer", cards[-1:], dealer[-1:], game="tripoker", face_up=True))
    return events


def _deal_order(events: list[Event]) -> list[procedure.Finding]:
    return tripoker_checks.tripoker_deal_order(events)


def test_tcp_a10a_three_rounds_left_to_right_dealer_last_is_accepted() -> None:
    # One player: player, dealer, player, dealer, player, dealer.
    assert _deal_order(_tripoker_deal({4: [1, 3, 5], DEALER: [2, 4, 6]})) == []
    # Seats 2, 5 and 7 (ascending seats are left to right, from the dealer's left).
    deal = {2: [1, 5, 9], 5: [2, 6, 10], 7: [3, 7, 11], DEALER: [4, 8, 12]}
    assert _deal_order(_tripoker_deal(deal)) == []
    # Seven players, the most a table has.
    full: dict[int | None, list[int]] = {s: [s, 8 + s, 16 + s] for s in range(1, 8)}
    assert _deal_order(_tripoker_deal({**full, DEALER: [8, 16, 24]})) == []


def test_tcp_a10a_dealer_dealt_before_the_player_in_each_round() -> None:
    """The case from the report: dealer 1, 3, 5 and the player 2, 4, 6."""
    events = _tripoker_deal({3: [2, 4, 6], DEALER: [1, 3, 5]})
    found = _deal_order(events)
    assert rules_of(found) == ["TCP-A10a"]
    assert found[0].check == "deal_order" and found[0].severity is procedure.Severity.MAJOR
    assert found[0].event_id == str(events[1].event_id)  # the seat's cards, the first dealt event
    assert found[0].evidence == {
        "recipient": "seat",
        "seat": 3,
        "expected": [1, 3, 5],
        "seen": [2, 4, 6],
        "players": [3],
    }


@pytest.mark.parametrize(
    ("name", "places"),
    [
        ("dealer first in each round", {1: [2, 5, 8], 4: [3, 6, 9], DEALER: [1, 4, 7]}),
        ("right to left", {1: [2, 5, 8], 4: [1, 4, 7], DEALER: [3, 6, 9]}),
        ("a player two in a row", {1: [1, 2, 7], 4: [3, 5, 8], DEALER: [4, 6, 9]}),
        ("hand by hand", {1: [1, 2, 3], 4: [4, 5, 6], DEALER: [7, 8, 9]}),
        ("dealer not last in round 3", {1: [1, 4, 8], 4: [2, 5, 9], DEALER: [3, 6, 7]}),
        ("dealer's cards at the end", {1: [1, 3, 5], 4: [2, 4, 6], DEALER: [7, 8, 9]}),
        ("a gap in the numbering", {1: [1, 4, 7], 4: [2, 5, 8], DEALER: [3, 6, 10]}),
        ("a place beyond the deal", {1: [1, 4, 64], 4: [2, 5, 8], DEALER: [3, 6, 9]}),
        ("a place given twice", {1: [1, 4, 7], 4: [2, 5, 8], DEALER: [3, 3, 9]}),
        ("a place shared by two", {1: [1, 4, 7], 4: [1, 5, 8], DEALER: [3, 6, 9]}),
    ],
)
def test_tcp_a10a_out_of_order_deals_are_one_finding(
    name: str, places: dict[int | None, list[int]]
) -> None:
    found = _deal_order(_tripoker_deal(places))
    assert rules_of(found) == ["TCP-A10a"], name


def test_tcp_a10a_exactly_one_way_to_deal_two_players_passes() -> None:
    """Every assignment of places 1..9 to two players and the dealer, three each: only the
    regulation's is accepted, and none raises."""
    base = _tripoker_deal({2: [1, 2, 3], 6: [4, 5, 6], DEALER: [7, 8, 9]})
    bets, (seat_2, seat_6, down, up) = base[:2], base[2:]
    accepted = []
    for first in itertools.combinations(range(1, 10), 3):
        rest = [p for p in range(1, 10) if p not in first]
        for second in itertools.combinations(rest, 3):
            dealer = [p for p in rest if p not in second]
            places = {2: list(first), 6: list(second), DEALER: dealer}
            events = [
                *bets,
                seat_2.model_copy(update={"deal_order": list(first)}),
                seat_6.model_copy(update={"deal_order": list(second)}),
                down.model_copy(update={"deal_order": dealer[:2]}),
                up.model_copy(update={"deal_order": dealer[2:]}),
            ]
            if not _deal_order(events):
                accepted.append(places)
    assert accepted == [{2: [1, 4, 7], 6: [2, 5, 8], DEALER: [3, 6, 9]}]


def test_tcp_a10a_cards_to_a_seat_without_a_bet() -> None:
    # Seat 5 has no bet, yet it is dealt between the player and the dealer.
    events = _tripoker_deal({1: [1, 4, 7], 5: [2, 5, 8], DEALER: [3, 6, 9]}, bettors=[1])
    found = _deal_order(events)
    assert rules_of(found) == ["TCP-A10a"]
    assert found[0].evidence["seat"] == 5 and found[0].evidence["expected"] is None


def test_tcp_a10a_a_player_or_the_dealer_dealt_nothing() -> None:
    # Seat 4 bet and was skipped; the others got the places a deal to both would give them.
    events = _tripoker_deal({1: [1, 4, 7], DEALER: [3, 6, 9]}, bettors=[1, 4])
    found = _deal_order(events)
    assert rules_of(found) == ["TCP-A10a"]
    assert found[0].evidence["seat"] == 4 and found[0].evidence["seen"] == []
    # No dealer card at all.
    found = _deal_order(_tripoker_deal({1: [1, 3, 5]}))
    assert rules_of(found) == ["TCP-A10a"] and found[0].evidence["recipient"] == "dealer"


def test_tcp_a10a_leaves_to_other_checks_what_they_report() -> None:
    tripoker = GAMES[Game.TRIPOKER]
    profile = load_profile("tripoker/pe-2005")
    # A hand of two cards: TCP-A8 reports it, the order of such a deal is not judged again.
    short = _tripoker_deal({1: [1, 3], DEALER: [2, 4, 6]})
    assert rules_of(tripoker.checks(RoundEvents(short), profile)) == ["TCP-A8"]
    # A card seen twice, dealt in the right order: ALL-3 only.
    twice = _tripoker_deal({1: [1, 3, 5], DEALER: [2, 4, 6]})
    assert isinstance(twice[1], CardsDealt)
    twice[1] = twice[1].model_copy(update={"cards": ["2c", "2c", "3c"]})
    assert rules_of(procedure.duplicate_cards(tripoker.table_rules, twice)) == ["ALL-3"]
    assert tripoker.checks(RoundEvents(twice), profile) == []
    # A voided round (its bets are returned, ALL-5): not judged, and no exception.
    wrong = _tripoker_deal({1: [2, 4, 6], DEALER: [1, 3, 5]})
    assert _deal_order([*wrong, ev("round_voided", "tripoker", reason="misdeal")]) == []
    # Nothing dealt to a player or the dealer: nothing to judge.
    assert _deal_order([bet(1, game="tripoker")]) == []
    assert _deal_order([]) == []


def test_tcp_a10a_is_checked_under_every_tripoker_profile() -> None:
    """Art. 10's order is not among the profile's choices (DEF-TCP6 differs only in TCP-A10b
    and TCP-A11b): the `standard` profile is held to it too."""
    wrong = RoundEvents(_tripoker_deal({1: [2, 4, 6], DEALER: [1, 3, 5]}))
    tripoker = GAMES[Game.TRIPOKER]
    for name in ("tripoker/pe-2005", "tripoker/standard"):
        found = rules_of(tripoker.checks(wrong, load_profile(name)))
        assert "TCP-A10a" in found, name
