"""Tripóker (Three Card Poker) by the 2005 regulation: ante, play, pair plus and ante bonus.

The profile decides the qualifier, the paytables and whether a fold forfeits pair plus (DEF-TCP).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from events.models import Decision, Spot
from games.tripoker.profile import TripokerProfile
from rules.cards import parse_cards
from rules.rankings import TRIPOKER
from rules.settlement import (
    Outcome,
    RoundError,
    RoundSettlement,
    Settlement,
    category_table,
    line_builder,
    strengths_with,
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
    without a play bet. The play bet is `play_multiple × ante` (DEF-TCP2); `play_cents`, when
    given, is the play bet as the table recorded it, which is settled whatever its amount (a
    play bet of another amount than DEF-TCP2's is a violation of its own, not unsettled money).
    """

    seat: int
    ante_cents: int
    pair_plus_cents: int
    cards: tuple[int, ...]
    decision: Decision | None
    play_cents: int | None = None


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
    seats = game.seats
    dealer, *strengths = strengths_with(
        TRIPOKER, (), [game.dealer_cards, *(seat.cards for seat in seats)]
    )
    qualifies = dealer >= qualifier_strength(profile.dealer_qualifier)
    multiple, forfeits = profile.play_multiple, profile.fold_forfeits_pair_plus
    bonus_pays, pair_plus_pays = profile.ante_bonus.values, profile.pair_plus.values
    line = line_builder(game.round_id, profile.name, profile.version)
    lines: list[Settlement] = []
    add = lines.append
    for seat, strength in zip(seats, strengths, strict=True):
        number, ante, category = seat.seat, seat.ante_cents, _CATEGORY_VALUE[strength]
        folded = seat.decision is _FOLD
        if ante and folded:
            add(line(number, _ANTE, ante, _FOLDED, 0, 0, -ante, ante, _FOLD_RULES))
        elif ante:
            play = ante * multiple if seat.play_cents is None else seat.play_cents
            if not qualifies:  # the ante wins 1:1, the play pushes
                add(line(number, _ANTE, ante, _WIN, ante, 0, ante, -ante, _NOT_QUALIFIED))
                add(line(number, _PLAY, play, _PUSH, 0, 0, 0, 0, _NOT_QUALIFIED))
            else:  # the higher hand wins ante and play 1:1; equal hands push
                sign = (strength > dealer) - (strength < dealer)  # the player's gain per unit
                outcome, won = _OUTCOME_OF_SIGN[sign], sign > 0
                net = sign * ante
                add(line(number, _ANTE, ante, outcome, won * ante, 0, net, -net, _SHOWDOWN_ANTE))
                net = sign * play
                add(line(number, _PLAY, play, outcome, won * play, 0, net, -net, _SHOWDOWN_PLAY))
            bonus = bonus_pays[category]
            if bonus is not None:
                paid = ante * bonus
                add(line(number, _ANTE_BONUS, 0, _WIN, paid, 0, paid, -paid, _BONUS))
        wager = seat.pair_plus_cents
        if wager:
            pays = pair_plus_pays[category]
            if folded and forfeits:
                outcome, paid, rules = _FOLDED, 0, _FORFEIT
            else:
                outcome, paid = (_LOSE, 0) if pays is None else (_WIN, wager * pays)
                rules = _PAIR_PLUS_FOLDED if folded else _PAIR_PLUS
            net = paid if outcome is _WIN else -wager
            add(line(number, _PAIR_PLUS_SPOT, wager, outcome, paid, 0, net, -net, rules))
    return RoundSettlement(round_id=game.round_id, settlements=tuple(lines))


_CATEGORY_VALUE = tuple(int(category) for category in _CATEGORY)  # plain ints index faster
# Module constants: the loop reads them without an attribute lookup on the enum class.
_ANTE, _PLAY, _ANTE_BONUS, _PAIR_PLUS_SPOT = Spot.ANTE, Spot.PLAY, Spot.ANTE_BONUS, Spot.PAIR_PLUS
_WIN, _LOSE, _PUSH, _FOLDED = Outcome.WIN, Outcome.LOSE, Outcome.PUSH, Outcome.FOLD
_FOLD = Decision.FOLD
_OUTCOME_OF_SIGN = {1: _WIN, 0: _PUSH, -1: _LOSE}
_FOLD_RULES = ("TCP-A11a",)
_NOT_QUALIFIED = ("DEF-TCP1", "DEF-TCP3")
_SHOWDOWN_ANTE = ("TCP-A11c", "DEF-TCP1", "DEF-TCP3")
_SHOWDOWN_PLAY = ("DEF-TCP2", *_SHOWDOWN_ANTE)
_BONUS = ("DEF-TCP4",)
_FORFEIT: tuple[str, ...] = ("TCP-A11b",)
_PAIR_PLUS = ("DEF-TCP5",)
_PAIR_PLUS_FOLDED = ("DEF-TCP5", "DEF-TCP6")


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
        if seat.ante_cents < 0 or seat.pair_plus_cents < 0 or (seat.play_cents or 0) < 0:
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
