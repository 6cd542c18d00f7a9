"""Who sits at a simulated table: player archetypes, chosen with `--players name:share,...`.

`ARCHETYPES` is the one table; `parse_players` reads the option; each player seated, each
flashing dealer and each decision taken with the dealer's hidden cards in view is a line of the
truth log (`--truth`), a `PlayerRecord` (`{"kind": "player" | "flashing_dealer" |
"hidden_knowledge", ...}`).

Without `--players` every player is `typical` and no archetype is drawn: the night is the one
the simulator always made, byte for byte (and so with `typical:1`, but for the truth log).
Archetypes come from a generator of their own (`TableSim.player_rng`), a hole-carder's
sightings from another (`TableSim.sight_rng`); a player who is not typical still makes every
draw a typical one makes (then decides by the archetype); and with such players the payment
faults draw from a generator of their own (`TableSim.payment_rng`), since which bets win follows
the decisions. So choosing archetypes changes no card dealt, bet placed or player seated: with
`--faults none` those are the night's without `--players`; with any faults, two mixes of the
same shares (say `hole-carder:0.1` and `basic:0.1`) seat the same players, the same ones of the
other archetype, on the same cards, bets and dealers: a paired comparison.

Pai Gow has no decision the dealer's cards inform: every archetype but `typical` sets by the
house way (never another setting, a foul or a surrender) and sees nothing.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from events import Game


class Archetype(StrEnum):
    TYPICAL = "typical"
    BASIC = "basic"
    EXPOSED_OPTIMAL = "exposed-optimal"
    HOLE_CARDER = "hole-carder"
    FLASH_PARTNER = "flash-partner"


ARCHETYPES: dict[Archetype, str] = {
    Archetype.TYPICAL: "today's simulated player: the simple strategy (Tripóker queen-6-4, "
    "Hold'em a pair or a queen in the hole), with a few mistakes (4% and 3% of decisions "
    "reversed); Pai Gow: mostly the house way, some other settings, a few fouls and surrenders",
    Archetype.BASIC: "the legitimate optimal strategy without the exposed card (Tripóker "
    "queen-6-4, Hold'em `games.holdem.strategy.legitimate_calls`); Pai Gow: always the house "
    "way",
    Archetype.EXPOSED_OPTIMAL: "Tripóker: the exact best play or fold given the exposed dealer "
    "card (queen-6-4 when the card is not exposed); other games: as basic",
    Archetype.HOLE_CARDER: "sees the dealer's hidden cards with probability P per round "
    "(hole-carder@P, default 1) and then takes the full-information decision; otherwise as "
    "exposed-optimal. Pai Gow: as basic (no decision uses the dealer's cards)",
    Archetype.FLASH_PARTNER: "a hole-carder (P = 1) only while the table's one flashing dealer "
    "deals (picked per table from the seed, logged in the truth file); otherwise as basic",
}

SEES_HIDDEN = (Archetype.HOLE_CARDER, Archetype.FLASH_PARTNER)


@dataclass(frozen=True, kw_only=True)
class Share:
    """One item of `--players`: a NEW player is this archetype with probability `share`."""

    archetype: Archetype
    share: float
    sees: float = 0.0  # hole-carder: probability of seeing the dealer's hidden cards per round

    @property
    def label(self) -> str:
        if self.archetype is Archetype.HOLE_CARDER and self.sees != 1.0:
            return f"{self.archetype.value}@{self.sees:g}"
        return self.archetype.value


@dataclass(frozen=True)
class PlayerMix:
    """The archetypes of the players a table seats: the shares given, the rest `typical`."""

    shares: tuple[Share, ...]

    @property
    def has_flash_partners(self) -> bool:
        return any(s.archetype is Archetype.FLASH_PARTNER and s.share > 0 for s in self.shares)

    def draw(self, rng: random.Random) -> Share | None:
        """The archetype of a player sitting down (one draw from `rng`); None: typical."""
        u = rng.random()
        total = 0.0
        for share in self.shares:
            total += share.share
            if u < total:
                return share
        return None

    def to_json(self) -> dict[str, float]:
        return {share.label: share.share for share in self.shares}


def parse_players(text: str) -> PlayerMix:
    """Read `--players`: `name:share,...` (hole-carder may name its P: `hole-carder@0.3:0.02`).
    Each new player is that archetype with that probability, the rest `typical`. Raises
    ValueError naming the bad item."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise ValueError("no players given: expected name:share,... (e.g. basic:0.3)")
    known = ", ".join(a.value for a in Archetype)
    shares: list[Share] = []
    seen: set[str] = set()
    for item in items:
        name, sep, value = item.rpartition(":")
        if not sep or not name.strip():
            raise ValueError(f"players {item!r}: expected name:share (e.g. basic:0.3)")
        name, at, sees_text = name.strip().partition("@")
        if at and not sees_text.strip():
            raise ValueError(f"players {item!r}: @ without a P (e.g. hole-carder@0.25:0.02)")
        try:
            archetype = Archetype(name.strip())
        except ValueError:
            raise ValueError(f"unknown archetype {name.strip()!r}; known: {known}") from None
        sees = 0.0
        if archetype is Archetype.HOLE_CARDER:
            sees = _probability(sees_text or "1", f"hole-carder@{sees_text}: P")
        elif archetype is Archetype.FLASH_PARTNER:
            sees = 1.0
        if sees_text and archetype is not Archetype.HOLE_CARDER:
            raise ValueError(f"players {item!r}: only hole-carder takes @P")
        share = _probability(value, f"players {item!r}: share")
        entry = Share(archetype=archetype, share=share, sees=sees)
        if entry.label in seen:  # the truth log and the summary tell entries by their label
            raise ValueError(f"players {item!r}: {entry.label} named twice")
        seen.add(entry.label)
        shares.append(entry)
    total = sum(s.share for s in shares)
    if total > 1.0 + 1e-9:
        raise ValueError(f"players: the shares add up to {total:g}, more than 1")
    return PlayerMix(tuple(shares))


def _probability(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise ValueError(f"{what} {text.strip()} is not between 0 and 1")
    return value + 0.0  # -0 is 0


def flashing_dealer(seed: int, table_id: str) -> str:
    """The one dealer of the table who lets a partner see the hole cards (of the four who take
    turns at it, `TableSim.change_dealer`), from its own generator."""
    number = random.Random(f"{seed}/{table_id}/flashing_dealer").randint(1, 4)
    return f"{table_id}-dealer-{number}"


@dataclass(frozen=True, kw_only=True)
class PlayerRecord:
    """One line of the truth log about players (beside the faults' `FaultRecord`)."""

    kind: str  # "player", "flashing_dealer" or "hidden_knowledge"
    game: Game
    table_id: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        record = {"kind": self.kind, "game": self.game.value, "table": self.table_id}
        return json.dumps({**record, **self.fields}, separators=(",", ":"))
