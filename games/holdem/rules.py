"""Progressive Texas Hold'em (Casino Hold'em with a jackpot) by the 2007 regulation and DEF-THP.

Ante and call against the dealer, the ante paytable, the per-seat payout cap and the progressive.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from events.models import Decision, Spot
from games.holdem.profile import HoldemProfile
from rules.money import BASIS_POINTS, share_cents
from rules.rankings import HOLDEM
from rules.settlement import (
    JackpotEntry,
    LedgerKind,
    Outcome,
    RoundError,
    RoundSettlement,
    Settlement,
    category_table,
    line_builder,
    strengths_with,
)

SEATS = tuple(range(1, 8))  # THP-A2a: seven ante boxes
FLOP = 3
BOARD = 5
_KING = 11
_CATEGORY = category_table(HOLDEM)


@lru_cache(maxsize=64)
def qualifier_strength(qualifier: tuple[int, ...]) -> int:
    """Strength of a profile's lowest qualifying dealer hand (THP-A2b)."""
    return HOLDEM.strength(qualifier)


def calls_simple_strategy(hole: Sequence[int], flop: Sequence[int]) -> bool:
    """A simple call-or-fold strategy on the hole cards and the flop (DEF-THP1), used by the game
    math and the simulator: call with a pair or better that uses a hole card, four to a flush or
    four in a row open at both ends (or better) with a hole card, an ace or a king in the hole,
    or two hole cards above every flop card; otherwise fold.

    >>> from rules.cards import parse_cards
    >>> calls_simple_strategy(parse_cards("7c 2d"), parse_cards("9s Th Jh"))
    False
    >>> calls_simple_strategy(parse_cards("7c 2d"), parse_cards("7s Th Jh"))
    True
    """
    hole_ranks = {c >> 2 for c in hole}
    flop_ranks = [c >> 2 for c in flop]
    if len(hole_ranks) == 1 or hole_ranks & set(flop_ranks):
        return True
    if max(hole_ranks) >= _KING or min(hole_ranks) > max(flop_ranks):
        return True
    suits = [c & 3 for c in (*hole, *flop)]
    if any(suits.count(c & 3) >= 4 for c in hole):
        return True
    ranks = hole_ranks | set(flop_ranks)
    return any(
        all(r in ranks for r in range(low, low + 4)) and hole_ranks & set(range(low, low + 4))
        for low in range(1, 9)  # 3-4-5-6 up to J-Q-K-A's lower neighbour T-J-Q-K
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class HoldemSeat:
    """One seat: ante, the optional progressive wager, two hole cards and call or fold. The
    call is `call_multiple × ante` (DEF-THP1); `call_cents`, when given, is the call as the
    table recorded it, which is settled whatever its amount (another amount than DEF-THP1's is
    a violation of its own, not unsettled money)."""

    seat: int
    ante_cents: int
    progressive_cents: int
    hole: tuple[int, ...]
    decision: Decision
    call_cents: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class HoldemRound:
    """A round as the consumer rebuilds it. `board` is the flop, turn and river (the flop alone
    when every seat folded); `dealer_hole` may be empty then too. `meter_cents` is the
    progressive meter before this round's contributions."""

    round_id: str
    dealer_hole: tuple[int, ...]
    board: tuple[int, ...]
    seats: tuple[HoldemSeat, ...]
    meter_cents: int


def settle_holdem(game: HoldemRound, profile: HoldemProfile) -> RoundSettlement:
    """Settle every bet (DEF-THP1..5, THP-A2b, THP-A2c) and move the meter (DEF-THP4).

    Lines per seat, seats in order: `ante`, `call` (not after a fold), `progressive` (when
    wagered). The cap applies to a seat's ante and call winnings together, taken off the ante
    line first. Progressive contributions all go in before the first hit (the wagers are placed
    before the deal); hits are paid in seat order, each from the meter as the previous one left
    it, and are never capped (DEF-THP4, DEF-THP5).
    """
    _check_round(game, profile)
    seats = sorted(game.seats, key=_seat_number)
    # Every hand shares the board (the progressive: the flop), so its cards are summed once.
    callers = [seat.hole for seat in seats if seat.decision is _CALLED]
    strengths: Iterator[int] = iter(())
    dealer, qualifies = 0, False
    if callers:
        dealer, *called = strengths_with(HOLDEM, game.board, [game.dealer_hole, *callers])
        qualifies = dealer >= qualifier_strength(profile.dealer_qualifier)
        strengths = iter(called)
    rules = _QUALIFIED if qualifies else _NOT_QUALIFIED
    capped = rules + _CAPPED
    cap, multiple, pays = profile.payout_cap_cents, profile.call_multiple, profile.ante_pays.values
    progressive = _Meter(game, profile, seats)
    line = line_builder(game.round_id, profile.name, profile.version)
    lines: list[Settlement] = []
    add = lines.append
    for seat in seats:
        number, ante = seat.seat, seat.ante_cents
        if seat.decision is not _CALLED:
            add(line(number, _ANTE, ante, _FOLDED, 0, 0, -ante, ante, _FOLD))
        else:
            call = ante * multiple if seat.call_cents is None else seat.call_cents
            strength = next(strengths)
            if qualifies and strength <= dealer:  # the dealer wins both; equal hands push both
                outcome, sign = (_PUSH, 0) if strength == dealer else (_LOSE, -1)
                add(line(number, _ANTE, ante, outcome, 0, 0, sign * ante, -sign * ante, rules))
                add(line(number, _CALL, call, outcome, 0, 0, sign * call, -sign * call, rules))
            else:  # the ante wins (paid by the table when the dealer does not qualify)
                ante_win = ante * (pays[_CATEGORY_VALUE[strength]] or 0)
                call_outcome, call_win = (_WIN, call) if qualifies else (_PUSH, 0)
                over = ante_win + call_win - cap
                ante_cut = call_cut = 0
                if over > 0:  # THP-A2c / DEF-THP5: the cap withholds the excess, ante line first
                    ante_cut = min(over, ante_win)
                    call_cut = over - ante_cut
                paid, ids = ante_win - ante_cut, capped if ante_cut else rules
                add(line(number, _ANTE, ante, _WIN, paid, 0, paid, -paid, ids, ante_cut))
                paid, ids = call_win - call_cut, capped if call_cut else rules
                add(line(number, _CALL, call, call_outcome, paid, 0, paid, -paid, ids, call_cut))
        wager = seat.progressive_cents
        if wager:
            outcome, paid = progressive.settle(number)
            net = paid if outcome is _WIN else -wager
            add(line(number, _PROGRESSIVE, wager, outcome, paid, 0, net, -net, _METER))
    return RoundSettlement(
        round_id=game.round_id,
        settlements=tuple(lines),
        jackpot=tuple(progressive.ledger),
        meter_after_cents=progressive.meter,
    )


def _seat_number(seat: HoldemSeat) -> int:
    return seat.seat


_FOLD = ("DEF-THP1",)
_QUALIFIED = ("THP-A4", "DEF-THP2", "DEF-THP3")
_NOT_QUALIFIED = ("THP-A2b", "DEF-THP2", "DEF-THP3")
_CAPPED = ("THP-A2c", "DEF-THP5")
_METER = ("DEF-THP4",)
_CATEGORY_VALUE = tuple(int(category) for category in _CATEGORY)  # plain ints index faster
# Module constants: the loop reads them without an attribute lookup on the enum class.
_ANTE, _CALL, _PROGRESSIVE = Spot.ANTE, Spot.CALL, Spot.PROGRESSIVE
_WIN, _LOSE, _PUSH, _FOLDED = Outcome.WIN, Outcome.LOSE, Outcome.PUSH, Outcome.FOLD
_CALLED = Decision.CALL


class _Meter:
    """The progressive meter through one round, with its ledger (DEF-THP4)."""

    def __init__(self, game: HoldemRound, profile: HoldemProfile, seats: list[HoldemSeat]) -> None:
        self.round_id = game.round_id
        self.table = table = profile.progressive
        self.meter = game.meter_cents
        self.ledger: list[JackpotEntry] = []
        bets = [seat for seat in seats if seat.progressive_cents]
        # Judged on the hole cards and the flop, fold or not.
        strengths = strengths_with(HOLDEM, game.board[:FLOP], [seat.hole for seat in bets])
        self.categories = {
            seat.seat: _CATEGORY_VALUE[strength]
            for seat, strength in zip(bets, strengths, strict=True)
        }
        # One entry for the round: each wager's share is rounded down on its own, and every
        # wager is the profile's fixed one (checked), so the shares are all the same.
        added = share_cents(table.wager_cents, table.contribution_bp) * len(bets)
        if added:
            self._record(None, LedgerKind.CONTRIBUTION, added, self.meter + added)

    def _record(self, seat: int | None, kind: LedgerKind, amount: int, after: int) -> None:
        self.ledger.append(
            JackpotEntry(
                round_id=self.round_id,
                seat=seat,
                kind=kind,
                amount_cents=amount,
                meter_before_cents=self.meter,
                meter_after_cents=after,
                rule_ids=_METER,
            )
        )
        self.meter = after

    def settle(self, seat: int) -> tuple[Outcome, int]:
        """The progressive wager of `seat`: a share of the meter, a fixed pay, or lost."""
        table = self.table
        category = self.categories[seat]
        share_bp = table.meter_pays_bp.values[category]
        if share_bp is not None:
            paid = share_cents(self.meter, share_bp)
            self._record(seat, LedgerKind.HIT, paid, self.meter - paid)
            if share_bp == BASIS_POINTS:  # the whole meter was paid: it starts from the seed
                self._record(None, LedgerKind.RESET, table.seed_cents, table.seed_cents)
            return Outcome.WIN, paid
        fixed = table.fixed_pays_cents.values[category]
        if fixed is not None:
            self._record(seat, LedgerKind.HIT, fixed, self.meter)
            return Outcome.WIN, fixed
        return Outcome.LOSE, 0


_DECISIONS = frozenset({Decision.CALL, Decision.FOLD})
_SEAT_NUMBERS = frozenset(SEATS)


def _check_round(game: HoldemRound, profile: HoldemProfile) -> None:
    wager = profile.progressive.wager_cents
    cards = [*game.dealer_hole, *game.board]
    for seat in game.seats:
        hole = seat.hole
        cards += hole
        if (
            len(hole) != 2
            or seat.ante_cents <= 0
            or (seat.call_cents or 0) < 0
            or seat.decision not in _DECISIONS
            or (seat.progressive_cents and seat.progressive_cents != wager)
        ):
            raise RoundError(
                f"round {game.round_id}: seat {seat.seat}: {_seat_problem(seat, wager)}"
            )
    numbers = {seat.seat for seat in game.seats}
    if len(numbers) != len(game.seats) or not numbers <= _SEAT_NUMBERS:
        raise RoundError(f"round {game.round_id}: a seat is repeated or not one of 1..7")
    if len(set(cards)) != len(cards) or min(cards) < 0 or max(cards) > 51:
        raise RoundError(
            f"round {game.round_id}: a card is repeated or not a card of the 52-card deck"
        )
    board, dealer = len(game.board), len(game.dealer_hole)
    if board not in (FLOP, BOARD) or dealer not in (0, 2):
        raise RoundError(
            f"round {game.round_id}: the board holds 3 or 5 cards, the dealer 2 (or none yet)"
        )
    if (board != BOARD or dealer != 2) and any(s.decision is Decision.CALL for s in game.seats):
        raise RoundError(
            f"round {game.round_id}: a called round needs the dealer's 2 cards and 5 board cards"
        )
    if game.meter_cents < 0:
        raise RoundError(f"round {game.round_id}: negative meter")


def _seat_problem(seat: HoldemSeat, wager: int) -> str:
    if len(seat.hole) != 2:
        return "a seat holds 2 cards (DEF-THP1)"
    if seat.ante_cents <= 0:
        return "needs an ante (DEF-THP1)"
    if (seat.call_cents or 0) < 0:
        return "a negative call"
    if seat.decision not in _DECISIONS:
        return "Hold'em decisions are call or fold"
    return f"the progressive wager is {wager} céntimos (DEF-THP4)"
