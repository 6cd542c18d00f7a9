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

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from rules.rankings import Category, RankingSystem
from rules.rankings.tables import family_tables

_set_attribute = object.__setattr__
_new_object = object.__new__


def category_table(system: RankingSystem) -> tuple[Category, ...]:
    """The category of every strength of a ranking system, for one-index lookups when settling."""
    size = len(family_tables(system.family).keys)
    return tuple(Category(int(c)) for c in system.categories_batch(np.arange(size)))


def showdown(player: int, dealer: int) -> Outcome:
    """A player's hand strength against the dealer's: the higher wins, equal hands push."""
    if player > dealer:
        return Outcome.WIN
    return Outcome.PUSH if player == dealer else Outcome.LOSE


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


class Spot(StrEnum):
    """Betting spots. Pai Gow: `main`; Tripóker: `ante`, `play`, `pair_plus`, `ante_bonus`;
    Hold'em: `ante`, `call`, `progressive`."""

    MAIN = "main"
    ANTE = "ante"
    PLAY = "play"
    PAIR_PLUS = "pair_plus"
    ANTE_BONUS = "ante_bonus"
    CALL = "call"
    PROGRESSIVE = "progressive"


class Bettor(StrEnum):
    """Whose money the line is: a player against the bank, the player-banker, or the house's
    own bet at the dealer's position when a player banks (DEF-PGP2)."""

    PLAYER = "player"
    BANKER = "banker"
    HOUSE = "house"


class Decision(StrEnum):
    """A player's decision, as in the `player_decided` event."""

    PLAY = "play"
    FOLD = "fold"
    CALL = "call"
    SURRENDER = "surrender"


@dataclass(frozen=True, kw_only=True)
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


def settlement_line(
    round_id: str,
    seat: int,
    spot: Spot,
    wager_cents: int,
    outcome: Outcome,
    payout_cents: int,
    commission_cents: int,
    net_cents: int,
    house_result_cents: int,
    profile: str,
    profile_version: int,
    rule_ids: tuple[str, ...],
    capped_cents: int = 0,
    bettor: Bettor = Bettor.PLAYER,
) -> Settlement:
    """The settling loops' positional fast path: the same frozen object as `Settlement(...)`,
    built with one `__dict__` assignment instead of fourteen `object.__setattr__` calls (4×
    faster; a Tripóker or Hold'em round settles ~20 lines)."""
    line = _new_object(Settlement)
    _set_attribute(
        line,
        "__dict__",
        {
            "round_id": round_id,
            "seat": seat,
            "spot": spot,
            "wager_cents": wager_cents,
            "outcome": outcome,
            "payout_cents": payout_cents,
            "commission_cents": commission_cents,
            "net_cents": net_cents,
            "house_result_cents": house_result_cents,
            "profile": profile,
            "profile_version": profile_version,
            "rule_ids": rule_ids,
            "capped_cents": capped_cents,
            "bettor": bettor,
        },
    )
    return line


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
