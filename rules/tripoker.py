"""Tripóker (Three Card Poker) by the 2005 regulation: ante, play, pair plus and ante bonus.

The profile decides the qualifier, the paytables and whether a fold forfeits pair plus (DEF-TCP).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rules.cards import parse_cards
from rules.profile import TripokerProfile
from rules.rankings import TRIPOKER
from rules.settlement import (
    Decision,
    Outcome,
    RoundError,
    RoundSettlement,
    Settlement,
    Spot,
    category_table,
    settlement_line,
    showdown,
)

SEATS = tuple(range(1, 8))  # TCP: seven betting zones
HAND_SIZE = 3
_QUEEN_SIX_FOUR = TRIPOKER.strength(parse_cards("Qc 6d 4h"))
_CATEGORY = category_table(TRIPOKER)


def plays_queen_six_four(cards: Sequence[int]) -> bool:
    """The usual player strategy: make the play bet with queen-6-4 or better, else fold.

    >>> plays_queen_six_four(parse_cards("Qs 6d 4c")), plays_queen_six_four(parse_cards("Qs 6d 3c"))
    (True, False)
    """
    return TRIPOKER.strength(cards) >= _QUEEN_SIX_FOUR


@lru_cache(maxsize=64)
def qualifier_strength(qualifier: tuple[int, ...]) -> int:
    """Strength of a profile's lowest qualifying dealer hand (DEF-TCP1)."""
    return TRIPOKER.strength(qualifier)


@dataclass(frozen=True, kw_only=True, slots=True)
class TripokerSeat:
    """One betting zone (TCP-A9c): ante and/or pair plus, the 3 cards, and the decision.

    `decision` is `play` or `fold` (TCP-A11a); None for a pair-plus-only player, who stays in
    without a play bet. The play bet itself is `play_multiple × ante` (DEF-TCP2)."""

    seat: int
    ante_cents: int
    pair_plus_cents: int
    cards: tuple[int, ...]
    decision: Decision | None


@dataclass(frozen=True, kw_only=True, slots=True)
class TripokerRound:
    round_id: str
    dealer_cards: tuple[int, ...]
    seats: tuple[TripokerSeat, ...]


def settle_tripoker(game: TripokerRound, profile: TripokerProfile) -> RoundSettlement:
    """Settle every bet of a round (TCP-A11, DEF-TCP1..6).

    Lines per seat, in this order: `ante` and `play` (a fold: the ante only), `ante_bonus` (only
    when it pays: DEF-TCP4 pays on the ante whatever the dealer holds, with no stake of its own),
    `pair_plus`.
    """
    _check_round(game)
    name, version, round_id = profile.name, profile.version, game.round_id
    dealer = TRIPOKER.strength(game.dealer_cards)
    qualifies = dealer >= qualifier_strength(profile.dealer_qualifier)
    lines: list[Settlement] = []

    def line(
        seat: int, spot: Spot, wager: int, outcome: Outcome, pays: int, rules: tuple[str, ...]
    ) -> None:
        net = pays if outcome is Outcome.WIN else 0 if outcome is Outcome.PUSH else -wager
        payout = pays if outcome is Outcome.WIN else 0
        lines.append(
            settlement_line(
                round_id, seat, spot, wager, outcome, payout, 0, net, -net, name, version, rules
            )
        )

    for seat in game.seats:
        strength = TRIPOKER.strength(seat.cards)
        category = _CATEGORY[strength]
        ante = seat.ante_cents
        folded = seat.decision is Decision.FOLD
        if ante:
            if folded:
                line(seat.seat, Spot.ANTE, ante, Outcome.FOLD, 0, ("TCP-A11a",))
            else:
                play = ante * profile.play_multiple
                if not qualifies:
                    line(seat.seat, Spot.ANTE, ante, Outcome.WIN, ante, ("DEF-TCP1", "DEF-TCP3"))
                    line(seat.seat, Spot.PLAY, play, Outcome.PUSH, 0, ("DEF-TCP1", "DEF-TCP3"))
                else:
                    outcome = showdown(strength, dealer)
                    rules: tuple[str, ...] = ("TCP-A11c", "DEF-TCP1", "DEF-TCP3")
                    line(seat.seat, Spot.ANTE, ante, outcome, ante, rules)
                    line(seat.seat, Spot.PLAY, play, outcome, play, ("DEF-TCP2", *rules))
                bonus = profile.ante_bonus.get(category)
                if bonus is not None:
                    line(seat.seat, Spot.ANTE_BONUS, 0, Outcome.WIN, ante * bonus, ("DEF-TCP4",))
        wager = seat.pair_plus_cents
        if wager:
            if folded and profile.fold_forfeits_pair_plus:
                line(seat.seat, Spot.PAIR_PLUS, wager, Outcome.FOLD, 0, ("TCP-A11b",))
            else:
                pays = profile.pair_plus.get(category)
                rules = ("DEF-TCP5",) if not folded else ("DEF-TCP5", "DEF-TCP6")
                if pays is None:
                    line(seat.seat, Spot.PAIR_PLUS, wager, Outcome.LOSE, 0, rules)
                else:
                    line(seat.seat, Spot.PAIR_PLUS, wager, Outcome.WIN, wager * pays, rules)
    return RoundSettlement(round_id=round_id, settlements=tuple(lines))


def _check_round(game: TripokerRound) -> None:
    where = f"round {game.round_id}"
    cards = list(game.dealer_cards)
    if len(game.dealer_cards) != HAND_SIZE:
        raise RoundError(f"{where}: the dealer holds 3 cards (TCP-A10a)")
    seats: set[int] = set()
    for seat in game.seats:
        if seat.seat not in SEATS or seat.seat in seats:
            raise RoundError(f"{where}: seat {seat.seat} is repeated or not one of 1..7")
        seats.add(seat.seat)
        if len(seat.cards) != HAND_SIZE:
            raise RoundError(f"{where}: seat {seat.seat} must hold 3 cards (TCP-A8)")
        cards.extend(seat.cards)
        if seat.ante_cents < 0 or seat.pair_plus_cents < 0:
            raise RoundError(f"{where}: seat {seat.seat} has a negative wager")
        if not seat.ante_cents and not seat.pair_plus_cents:
            raise RoundError(f"{where}: seat {seat.seat} has no bet (TCP-A9c)")
        if seat.decision not in (None, Decision.PLAY, Decision.FOLD):
            raise RoundError(f"{where}: seat {seat.seat}: Tripóker decisions are play or fold")
        if seat.ante_cents and seat.decision is None:
            raise RoundError(f"{where}: seat {seat.seat} bet the ante but did not decide")
        if not seat.ante_cents and seat.decision is Decision.PLAY:
            raise RoundError(f"{where}: seat {seat.seat} cannot play without an ante")
    if len(set(cards)) != len(cards) or min(cards) < 0 or max(cards) > 51:
        raise RoundError(f"{where}: a card is repeated or not a card of the 52-card deck")
