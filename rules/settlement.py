"""The result of settling a round: one `Settlement` per bet, plus jackpot ledger entries.

Shared by the three games so the consumer writes one `settlements` table whatever the game.

Money semantics of a `Settlement` (all integer céntimos, DEF-M1):

- `wager_cents`: the stake on that spot (for a player-banker, the bank that covers the bets);
  the Tripóker ante bonus is paid on the ante, so its line has a zero wager.
- `payout_cents`: winnings paid *on top of* the returned stake, after any payout cap; 0 unless
  the outcome is `win`. `capped_cents` is what the cap withheld (`uncapped_payout_cents` =
  `payout_cents + capped_cents`).
- `commission_cents`: commission the bettor paid to the house on this line.
- `net_cents`: the bettor's money change: `payout - commission` on a win, 0 on a push or a
  returned bet, `-wager` on lose / fold / surrender / foul (a player-banker's loss is the part
  of the bank it paid out, between `-wager` and 0).
- `house_result_cents`: the house's money change from this line: `-net` when the house banks,
  the commission when a player banks, and the house's own `net` on the house's own bet.

Money is conserved: for every round, `sum(house_result) == -sum(net of non-house bettors)`
(`tests/rules/test_settlement_properties.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from typing import Any, Protocol, cast

import numpy as np

from events.models import Spot
from rules.rankings import Category, RankingSystem
from rules.rankings.tables import (
    CARD_BITS,
    CARD_KEYS,
    SUIT_BITS,
    SUIT_MASK,
    family_tables,
    size_tables,
)


def category_table(system: RankingSystem) -> tuple[Category, ...]:
    """The category of every strength of a ranking system, for one-index lookups when settling."""
    size = len(family_tables(system.family).keys)
    return tuple(Category(int(c)) for c in system.categories_batch(np.arange(size)))


# Per card (the joker is 52): its rank key above the suit-count field, and its bit, as plain ints.
_CARD_KEYS: list[int] = CARD_KEYS.tolist()
_CARD_BITS: list[int] = CARD_BITS.tolist()


def strengths_with(
    system: RankingSystem, shared: Sequence[int], hands: Sequence[Sequence[int]]
) -> list[int]:
    """`system.strength((*hand, *shared))` of each hand (all of one size), the shared cards (a
    board, a flop, or none) summed once: the settling loops' fast path.

    Only for cards already checked (`_check_round`): valid for the system and distinct, which
    `strength` verifies on every call and this does not.

    >>> from rules.cards import parse_cards
    >>> from rules.rankings import HOLDEM
    >>> board = parse_cards("Ah Kh Qh 7c 2d")
    >>> hands = [parse_cards("Jh Th"), parse_cards("7d 7s")]
    >>> strengths_with(HOLDEM, board, hands) == [HOLDEM.strength((*h, *board)) for h in hands]
    True
    """
    if not hands:
        return []
    tables = size_tables(system.family, len(shared) + len(hands[0]))
    ranks, flush_suit, flush = tables.rank_view, tables.flush_suit_list, tables.flush_list
    keys = _CARD_KEYS
    shared_total = 0
    for card in shared:
        shared_total += keys[card]
    found = []
    for hand in hands:
        total = shared_total
        for card in hand:
            total += keys[card]
        value: int = ranks[total >> SUIT_BITS]
        suit = flush_suit[total & SUIT_MASK]
        if suit >= 0:  # a flush is possible (rarely): the same lookup as `strength`
            bits = 0
            for card in (*shared, *hand):
                bits |= _CARD_BITS[card]
            suited = flush[(bits >> 13 * suit) & 0x1FFF | (bits >> 52) << 13]
            if suited > value:
                value = suited
        found.append(value)
    return found


class RoundError(ValueError):
    """A round record that cannot be settled (impossible cards, missing decision, bad seat)."""


class Outcome(StrEnum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    FOLD = "fold"
    SURRENDER = "surrender"
    FOUL = "foul"
    RETURNED = "returned"


class Bettor(StrEnum):
    """Whose money the line is: a player against the bank, the player-banker, or the house's
    own bet at the dealer's position when a player banks (DEF-PGP2)."""

    PLAYER = "player"
    BANKER = "banker"
    HOUSE = "house"


@dataclass(frozen=True, kw_only=True, slots=True)
class Settlement:
    round_id: str
    seat: int
    spot: Spot
    wager_cents: int
    outcome: Outcome
    payout_cents: int
    commission_cents: int
    net_cents: int
    house_result_cents: int
    profile: str
    profile_version: int
    rule_ids: tuple[str, ...]
    capped_cents: int = 0
    bettor: Bettor = Bettor.PLAYER

    @property
    def uncapped_payout_cents(self) -> int:
        return self.payout_cents + self.capped_cents

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready dict (enums as their string values), as `croupier settle` prints it."""
        return {
            "round_id": self.round_id,
            "seat": self.seat,
            "spot": self.spot.value,
            "bettor": self.bettor.value,
            "wager_cents": self.wager_cents,
            "outcome": self.outcome.value,
            "payout_cents": self.payout_cents,
            "commission_cents": self.commission_cents,
            "net_cents": self.net_cents,
            "house_result_cents": self.house_result_cents,
            "capped_cents": self.capped_cents,
            "uncapped_payout_cents": self.uncapped_payout_cents,
            "profile": self.profile,
            "profile_version": self.profile_version,
            "rule_ids": list(self.rule_ids),
        }


class LineBuilder(Protocol):
    """Makes the `Settlement`s of one round, its round and profile already given."""

    def __call__(
        self,
        seat: int,
        spot: Spot,
        wager_cents: int,
        outcome: Outcome,
        payout_cents: int,
        commission_cents: int,
        net_cents: int,
        house_result_cents: int,
        rule_ids: tuple[str, ...],
        capped_cents: int = 0,
        bettor: Bettor = Bettor.PLAYER,
    ) -> Settlement: ...


def line_builder(round_id: str, profile: str, profile_version: int) -> LineBuilder:
    """The settling loops' fast path to `Settlement`s, positional, for one round (a Tripóker or
    Hold'em round settles ~19 lines): the same frozen objects as `Settlement(...)`, 2.5× faster.

    >>> line = line_builder("r1", "tripoker/pe-2005", 1)
    >>> line(3, Spot.ANTE, 1_000, Outcome.FOLD, 0, 0, -1_000, 1_000, ("TCP-A11a",)).net_cents
    -1000
    """
    # The twin's `__init__` turns it into a `Settlement`, which its type cannot say.
    return cast(LineBuilder, partial(_SettlementLine, round_id, profile, profile_version))


class _SettlementLine:
    """A mutable twin of `Settlement`, with the same slots: it fills them with plain attribute
    stores, then becomes a `Settlement`, which CPython allows because the two layouts are
    identical (a field added to one and not the other fails the change at once).
    The frozen `__init__` is slower: each of its fields is an `object.__setattr__` call.
    """

    __slots__ = (
        "bettor", "capped_cents", "commission_cents", "house_result_cents", "net_cents", "outcome",
        "payout_cents", "profile", "profile_version", "round_id", "rule_ids", "seat", "spot",
        "wager_cents",
    )  # fmt: skip

    def __init__(
        self,
        round_id: str,
        profile: str,
        profile_version: int,
        seat: int,
        spot: Spot,
        wager_cents: int,
        outcome: Outcome,
        payout_cents: int,
        commission_cents: int,
        net_cents: int,
        house_result_cents: int,
        rule_ids: tuple[str, ...],
        capped_cents: int = 0,
        bettor: Bettor = Bettor.PLAYER,
    ) -> None:
        self.round_id = round_id
        self.seat = seat
        self.spot = spot
        self.wager_cents = wager_cents
        self.outcome = outcome
        self.payout_cents = payout_cents
        self.commission_cents = commission_cents
        self.net_cents = net_cents
        self.house_result_cents = house_result_cents
        self.profile = profile
        self.profile_version = profile_version
        self.rule_ids = rule_ids
        self.capped_cents = capped_cents
        self.bettor = bettor
        self.__class__ = Settlement  # type: ignore[assignment]


class LedgerKind(StrEnum):
    CONTRIBUTION = "contribution"
    HIT = "hit"
    RESET = "reset"


@dataclass(frozen=True, kw_only=True, slots=True)
class JackpotEntry:
    """One movement of the progressive meter (DEF-THP4), in the order it happened: a round's
    contributions (one entry, `seat` None), each hit, and a reset to the seed (`seat` None).

    A fixed-amount hit (paid by the house, not from the meter) is recorded too, with the meter
    unchanged, so the ledger lists every progressive payout."""

    round_id: str
    seat: int | None
    kind: LedgerKind
    amount_cents: int
    meter_before_cents: int
    meter_after_cents: int
    rule_ids: tuple[str, ...]

    def to_record(self) -> dict[str, Any]:
        return {
            "round_id": self.round_id,
            "seat": self.seat,
            "kind": self.kind.value,
            "amount_cents": self.amount_cents,
            "meter_before_cents": self.meter_before_cents,
            "meter_after_cents": self.meter_after_cents,
            "rule_ids": list(self.rule_ids),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class RoundSettlement:
    """Everything a round settles to. `meter_after_cents` is None for games without a meter."""

    round_id: str
    settlements: tuple[Settlement, ...]
    jackpot: tuple[JackpotEntry, ...] = ()
    meter_after_cents: int | None = None

    @property
    def house_result_cents(self) -> int:
        return sum(s.house_result_cents for s in self.settlements)
