"""PGP-A17d: pay only after every hand is shown, from one end of the table to the other
(games/pai_gow/checks.py `pai_gow_payment_order`), on hand-made rounds."""

from __future__ import annotations

from typing import Any

import pytest

from events import Event
from events.models import Game
from games.base import RoundEvents
from games.pai_gow.checks import pai_gow_payment_order
from games.profiles import load_profile
from games.registry import GAMES
from tests.builders import hand_made

HIGH, LOW = ["As", "Ks", "Qs", "Js", "9s"], ["2d", "3d"]


def ev(event_type: str, **fields: Any) -> Event:
    return hand_made(event_type, game="pai_gow", table_id="PG-1", round_id="R-1", **fields)


def bet(seat: int) -> Event:
    return ev("bet_placed", seat=seat, spot="main", amount_cents=5_000, player_ref=None)


def hand(seat: int) -> Event:
    return ev("hand_set", seat=seat, high=HIGH, low=LOW)


def pay(seat: int) -> Event:
    """Winnings paid (less the 5 % commission)."""
    return ev(
        "payout_recorded",
        seat=seat,
        spot="main",
        collected_cents=0,
        paid_cents=5_000,
        commission_cents=250,
    )


def collect(seat: int) -> Event:
    """A losing bet taken to the tray (PGP-A17a)."""
    return ev(
        "payout_recorded",
        seat=seat,
        spot="main",
        collected_cents=5_000,
        paid_cents=0,
        commission_cents=0,
    )


def start(banker: int | None = 0) -> Event:
    return ev("round_started", deck_id="D1", dealer_id="DLR-1", banker_position=banker)


def checks(events: list[Event]) -> list[tuple[str, str]]:
    return [(f.rule_id, f.check) for f in pai_gow_payment_order(events)]


def test_pgp_a17d_every_hand_shown_then_paid_in_one_direction() -> None:
    bets = [bet(1), bet(3), bet(5)]
    shown = [hand(1), hand(3), hand(5), hand(0)]
    assert checks([start(), *bets, *shown, pay(1), pay(3), pay(5)]) == []
    # From the other end is as good; the same seat twice in a row is one payment.
    assert checks([start(), *bets, *shown, pay(5), pay(3), pay(3), pay(1)]) == []
    # A surrendered player gave up the cards: no hand to show.
    surrender = ev("player_decided", seat=3, decision="surrender", amount_cents=0)
    rest = [hand(1), surrender, hand(5), hand(0)]
    assert checks([start(), *bets, *rest, pay(1), pay(3), pay(5)]) == []


def test_pgp_a17d_losers_collected_first_then_winners_paid_in_one_direction() -> None:
    """PGP-A17a sends losing bets to the tray at once: collections (and pushes) wherever they
    fall are not payments along the table; only the winnings paid are judged for order."""
    bets = [bet(1), bet(2), bet(3), bet(5), bet(6)]
    shown = [hand(1), hand(2), hand(3), hand(5), hand(6), hand(0)]
    losers_first = [collect(6), collect(2), pay(1), pay(3), pay(5)]
    assert checks([start(), *bets, *shown, *losers_first]) == []
    mixed = [pay(1), collect(6), pay(3), collect(2), pay(5)]
    assert checks([start(), *bets, *shown, *mixed]) == []
    # winnings paid out of order are still one finding, collections between them or not
    wrong = [collect(2), pay(3), collect(6), pay(1), pay(5)]
    assert checks([start(), *bets, *shown, *wrong]) == [("PGP-A17d", "payment_order")]


def test_pgp_a17d_paid_before_the_dealers_hand_is_shown() -> None:
    events = [start(), bet(1), bet(3), hand(1), hand(3), pay(1), hand(0), pay(3)]
    found = pai_gow_payment_order(events)
    assert [(f.rule_id, f.check) for f in found] == [("PGP-A17d", "paid_before_hands_shown")]
    assert found[0].event_id == str(events[5].event_id)
    assert found[0].evidence == {"not_shown": [0]}


def test_pgp_a17d_a_players_hand_shown_late_and_a_player_banker() -> None:
    # Seat 3's hand is shown only after seat 1 was paid.
    events = [start(), bet(1), bet(3), hand(1), hand(0), pay(1), hand(3), pay(3)]
    found = pai_gow_payment_order(events)
    assert [f.evidence for f in found] == [{"not_shown": [3]}]
    # Seat 3 never sets a hand: treated as surrendered (DEF-PGP4), no hand to show.
    assert checks([start(), bet(1), bet(3), hand(1), hand(0), pay(1), pay(3)]) == []
    # The dealer's hand never shown at all: paid before it.
    assert checks([start(), bet(1), hand(1), pay(1)]) == [("PGP-A17d", "paid_before_hands_shown")]
    # A player banking at position 4: the banker's hand is a hand in play too.
    events = [start(4), bet(1), bet(3), hand(1), hand(3), hand(0), pay(1), pay(3)]
    found = pai_gow_payment_order(events)
    assert [f.evidence for f in found] == [{"not_shown": [4]}]
    # Staff re-setting the banker's hands after paying began (PGP-A13b) is not judged.
    later = [start(), bet(1), bet(3), hand(1), hand(3), hand(0), pay(1), hand(0), pay(3)]
    assert checks(later) == []


def test_pgp_a17d_paid_out_of_order_is_one_finding() -> None:
    bets = [bet(1), bet(2), bet(4), bet(6)]
    shown = [hand(1), hand(2), hand(4), hand(6), hand(0)]
    events = [start(), *bets, *shown, pay(2), pay(4), pay(1), pay(6)]
    found = pai_gow_payment_order(events)
    assert [(f.rule_id, f.check) for f in found] == [("PGP-A17d", "payment_order")]
    assert found[0].event_id == str(events[-2].event_id)
    assert found[0].evidence["seats"] == [2, 4, 1, 6]
    # The dealer's position 0 is not along the table: its payment is not judged.
    assert checks([start(), *bets, *shown, pay(1), pay(0), pay(2), pay(4), pay(6)]) == []


def test_pgp_a17d_both_mistakes_in_one_round_and_the_round_checks_run_it() -> None:
    events = [start(), bet(1), bet(2), bet(3), hand(1), hand(2), pay(3), pay(1), pay(2)]
    events.insert(7, hand(3))
    events.insert(8, hand(0))
    assert sorted(checks(events)) == [
        ("PGP-A17d", "paid_before_hands_shown"),
        ("PGP-A17d", "payment_order"),
    ]
    found = GAMES[Game.PAI_GOW].checks(RoundEvents(events), load_profile("pai-gow/pe-1999"))
    assert [f.rule_id for f in found].count("PGP-A17d") == 2


@pytest.mark.parametrize(
    "events",
    [
        [],
        [pay(3)],
        [start(None), pay(0), pay(0)],
        [start(), bet(1), hand(1), hand(0), pay(1), ev("round_voided", reason="misdeal")],
        [start(), bet(1), pay(1), ev("round_voided", reason="misdeal")],
    ],
)
def test_pgp_a17d_odd_rounds_never_raise(events: list[Event]) -> None:
    pai_gow_payment_order(events)
    if any(e.event_type == "round_voided" for e in events):
        assert checks(events) == []
