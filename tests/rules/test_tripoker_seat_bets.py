"""TCP-A9c: to play, a player bets pair plus and/or the ante; a seat dealt cards without either
is a finding (games/tripoker/checks.py `seats_without_bet`), reported once, never raised."""

from __future__ import annotations

from typing import Any

from consumers.rounds import finish_round
from consumers.state import TableState
from events import Event
from events.models import Game
from games.base import RoundEvents
from games.profiles import load_profile
from games.registry import GAMES
from games.tripoker.checks import seats_without_bet
from tests.builders import hand_made


def ev(event_type: str, **fields: Any) -> Event:
    return hand_made(event_type, game="tripoker", table_id="TP-1", round_id="R-1", **fields)


def bet(seat: int, spot: str, amount: int = 5_000) -> Event:
    return ev("bet_placed", seat=seat, spot=spot, amount_cents=amount, player_ref=None)


def to_seat(seat: int, cards: list[str], order: list[int]) -> Event:
    return ev(
        "cards_dealt",
        recipient="seat",
        seat=seat,
        group=None,
        cards=cards,
        face_up=False,
        deal_order=order,
    )


def to_dealer(cards: list[str], order: list[int], face_up: bool = False) -> Event:
    return ev(
        "cards_dealt",
        recipient="dealer",
        seat=None,
        group=None,
        cards=cards,
        face_up=face_up,
        deal_order=order,
    )


def round_of(bets: list[Event], seats: dict[int, list[str]]) -> list[Event]:
    """round_started, the bets, one cards_dealt per seat (places left to right, dealer last)
    and the dealer's cards; ends with the dealer revealed and round_ended, nothing paid."""
    n = len(seats)
    events = [ev("round_started", deck_id="D1", dealer_id="DLR-1"), *bets]
    for i, (seat, cards) in enumerate(sorted(seats.items()), start=1):
        events.append(to_seat(seat, cards, [i, n + 1 + i, 2 * n + 2 + i]))
    dealer = ["Ks", "Kd", "2h"]
    events.append(to_dealer(dealer[:2], [n + 1, 2 * n + 2]))
    events.append(to_dealer(dealer[2:], [3 * n + 3], face_up=True))
    return [*events, ev("dealer_revealed", cards=dealer), ev("round_ended")]


def test_tcp_a9c_ante_or_pair_plus_or_both_is_a_bet() -> None:
    events = round_of(
        [bet(1, "ante"), bet(3, "pair_plus"), bet(5, "ante"), bet(5, "pair_plus")],
        {1: ["2c", "3c", "4c"], 3: ["5c", "6c", "7c"], 5: ["8c", "9c", "Tc"]},
    )
    assert seats_without_bet(events) == []


def test_tcp_a9c_a_seat_dealt_cards_without_ante_or_pair_plus() -> None:
    cards = {1: ["2c", "3c", "4c"], 4: ["5c", "6c", "7c"], 6: ["8c", "9c", "Tc"]}
    # Seat 4 bet nothing; seat 6 only a `play` bet, which is not TCP-A9c's.
    events = round_of([bet(1, "ante"), bet(6, "play")], cards)
    found = seats_without_bet(events)
    assert [(f.rule_id, f.check, f.evidence["seat"]) for f in found] == [
        ("TCP-A9c", "seat_without_bet", 4),
        ("TCP-A9c", "seat_without_bet", 6),
    ]
    assert found[1].evidence["spots"] == ["play"]
    seat_4 = next(e for e in events if getattr(e, "seat", None) == 4)
    assert found[0].event_id == str(seat_4.event_id)


def test_tcp_a9c_one_finding_per_seat_and_none_for_a_voided_round() -> None:
    events = round_of([bet(1, "ante")], {1: ["2c", "3c", "4c"], 2: ["5c", "6c", "7c"]})
    # The seat's cards in two events: one finding, at the first.
    extra = to_seat(2, ["8c"], [20])
    found = seats_without_bet([*events, extra])
    assert len(found) == 1 and found[0].evidence["seat"] == 2
    voided = [*events[:-1], ev("round_voided", reason="misdeal")]
    assert seats_without_bet(voided) == []


def test_tcp_a9c_is_reported_by_the_round_checks_and_the_round_still_settles() -> None:
    """The engine settles the round on the seats that bet; the seat without a bet is a finding
    (TCP-A9c), and TCP-A10a's deal-order check reports the place the deal gave it."""
    events = round_of([bet(1, "ante")], {1: ["2c", "3c", "4c"], 2: ["5c", "6c", "7c"]})
    profile = load_profile("tripoker/pe-2005")
    rules = [f.rule_id for f in GAMES[Game.TRIPOKER].checks(RoundEvents(events), profile)]
    assert rules.count("TCP-A9c") == 1 and "TCP-A10a" in rules
    state = TableState(table_id="TP-1", game="tripoker", profile="tripoker/pe-2005")
    state.profile_version = 1
    state.round_id = "R-1"
    state.round_events = [
        *events[:-1],
        ev("player_decided", seat=1, decision="fold", amount_cents=0),
        events[-1],
    ]
    result = finish_round(state, abandoned=False)
    assert [f.rule_id for f in result.findings].count("TCP-A9c") == 1
    assert result.round_row["status"] == "settled"
    assert {row["seat"] for row in result.rows["settlements"]} == {1}


def test_tcp_a9c_never_raises_on_odd_rounds() -> None:
    assert seats_without_bet([]) == []
    assert seats_without_bet([bet(1, "ante")]) == []
    only_dealer = [to_dealer(["2c", "3c", "4c"], [1, 2, 3])]
    assert seats_without_bet(only_dealer) == []
