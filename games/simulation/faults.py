"""Dealer and device mistakes the simulator can inject, each named and tied to the rule it breaks.

`FAULTS` is the one table; `--faults name:rate,...` picks rates; the truth log records each one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from events import Game


class Fault(StrEnum):
    DECK_COUNT = "deck_count"
    MISSING_CUT = "missing_cut"
    DUPLICATE_CARD = "duplicate_card"
    SERPENTINE = "serpentine"
    LEFTOVER_CARDS = "leftover_cards"
    BET_AFTER_CLOSE = "bet_after_close"
    UNBET_GROUP_SEEN = "unbet_group_seen"
    HOUSE_WAY = "house_way"
    OVERPAYMENT = "overpayment"
    UNDERPAYMENT = "underpayment"
    COMMISSION_NOT_TAKEN = "commission_not_taken"
    EXPOSED_CARD = "exposed_card"
    DEAL_ORDER = "deal_order"
    SAME_DECK = "same_deck"
    PAID_BEFORE_SHOWN = "paid_before_shown"
    PAYMENT_ORDER = "payment_order"
    SEAT_WITHOUT_BET = "seat_without_bet"
    UNINSPECTED_DECK = "uninspected_deck"
    DECK_CHANGE_UNINSPECTED = "deck_change_uninspected"
    BIASED_DICE = "biased_dice"
    SEQ_GAP = "seq_gap"
    DUPLICATE_EVENT = "duplicate_event"
    OUT_OF_ORDER = "out_of_order"
    MALFORMED = "malformed"


class Check(StrEnum):
    """How the platform is expected to find a fault."""

    PROCEDURE = "procedure"  # one violation row per occurrence, from the round's events
    STREAM = "stream"  # one violation row per occurrence, from seq / event_id
    DEAD_LETTER = "dead_letter"  # one dead_letters row per message
    STATISTICAL = "statistical"  # only in aggregate (dbt marts), never per round


class Unit(StrEnum):
    """What a fault's rate is the probability of, per opportunity."""

    COUNT = "deck count"
    DECK = "new deck"
    ROUND = "round"
    TABLE = "table"
    EVENT = "event"


@dataclass(frozen=True, kw_only=True)
class FaultSpec:
    rule_ids: Mapping[Game, str]  # the games it can happen in -> the rule it breaks there
    check: Check
    unit: Unit
    default_rate: float
    description: str
    # A second rule the same mistake cannot help breaking, logged on a second event.
    companion_rule_ids: Mapping[Game, str] = field(default_factory=dict)


_ALL3 = {Game.PAI_GOW: "ALL-3", Game.TRIPOKER: "ALL-3", Game.HOLDEM: "ALL-3"}
_PAYMENT = {Game.PAI_GOW: "PGP-A17c", Game.TRIPOKER: "DEF-TCP3", Game.HOLDEM: "DEF-THP2"}
_STREAM_GAMES = (Game.PAI_GOW, Game.TRIPOKER, Game.HOLDEM)

FAULTS: dict[Fault, FaultSpec] = {
    Fault.DECK_COUNT: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A7a", Game.TRIPOKER: "ALL-3", Game.HOLDEM: "ALL-3"},
        check=Check.PROCEDURE,
        unit=Unit.COUNT,
        default_rate=0.02,
        description="deck_counted reports one card missing (52 in Pai Gow, 51 elsewhere) and "
        "play goes on with that deck",
    ),
    Fault.MISSING_CUT: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A8b", Game.TRIPOKER: "TCP-A7", Game.HOLDEM: "ALL-4"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="the shuffle before the round is not followed by a cut_completed",
    ),
    Fault.DUPLICATE_CARD: FaultSpec(
        rule_ids=_ALL3,
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.001,
        description="one dealt card is replaced by a copy of another card dealt in the round "
        "(the event carrying the copy is logged)",
    ),
    Fault.SERPENTINE: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A10f"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="the seven groups are dealt one after another, not in the serpentine order",
    ),
    Fault.LEFTOVER_CARDS: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A10d"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.001,
        description="5 cards are left after the deal: a group without a bet got only 6, so "
        "seven groups of seven (PGP-A10a) is broken too, logged on that group's cards_dealt",
        companion_rule_ids={Game.PAI_GOW: "PGP-A10a"},
    ),
    Fault.BET_AFTER_CLOSE: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A9c"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="an empty seat's bet is accepted after bets_closed (the dice were shaken) "
        "and plays the round",
    ),
    Fault.UNBET_GROUP_SEEN: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A12b"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="the group of a position without a bet is turned up and set (a hand_set "
        "for that seat) instead of going to the discard rack unseen; nothing is paid on it",
    ),
    Fault.HOUSE_WAY: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A13c"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.005,
        description="the dealer sets a legal hand other than the house way's",
    ),
    Fault.OVERPAYMENT: FaultSpec(
        rule_ids=_PAYMENT,
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.003,
        description="one winning main bet (Pai Gow main, ante elsewhere) is paid more than due",
    ),
    Fault.UNDERPAYMENT: FaultSpec(
        rule_ids=_PAYMENT,
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.003,
        description="one winning main bet (Pai Gow main, ante elsewhere) is paid less than due",
    ),
    Fault.COMMISSION_NOT_TAKEN: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A17c"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.003,
        description="one winning Pai Gow bet is paid in full with no commission taken",
    ),
    Fault.EXPOSED_CARD: FaultSpec(
        rule_ids={Game.TRIPOKER: "TCP-A10b"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="the dealer's card the profile exposes is dealt face down",
    ),
    Fault.DEAL_ORDER: FaultSpec(
        rule_ids={Game.TRIPOKER: "TCP-A10a"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="the cards are dealt out of order (the dealer's card first in each round, "
        "the players right to left, or each hand's three cards at once); logged on the "
        "cards_dealt of the first seat, left to right",
    ),
    Fault.SAME_DECK: FaultSpec(
        rule_ids={Game.HOLDEM: "THP-A2d"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="a round is dealt from the deck of the round before (DEF-THP6)",
    ),
    Fault.PAID_BEFORE_SHOWN: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A17d"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="the dealer pays the first bet before the banker's hand is shown (the "
        "dealer's hand_set comes after the first payout_recorded); logged on that payout",
    ),
    Fault.PAYMENT_ORDER: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A17d"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="with three or more seats paid, the lowest seat is paid last, not from one "
        "end of the table to the other; logged on its payout_recorded",
    ),
    Fault.SEAT_WITHOUT_BET: FaultSpec(
        rule_ids={Game.TRIPOKER: "TCP-A9c"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="an empty seat with no ante or pair plus is dealt three cards after the "
        "dealer's (nothing is paid on them); the deal gave it places it has none of, so the "
        "deal order (TCP-A10a) is broken too, logged on the same cards_dealt",
        companion_rule_ids={Game.TRIPOKER: "TCP-A10a"},
    ),
    Fault.UNINSPECTED_DECK: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A6a", Game.TRIPOKER: "TCP-A6", Game.HOLDEM: "THP-A6"},
        check=Check.PROCEDURE,
        unit=Unit.DECK,
        default_rate=0.01,
        description="a deck opened at the table's opening goes into play without deck_inspected "
        "(counted and washed all the same); logged on the round_started of its first round",
    ),
    Fault.DECK_CHANGE_UNINSPECTED: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A6b"},
        check=Check.PROCEDURE,
        unit=Unit.ROUND,
        default_rate=0.002,
        description="before a round the deck is changed (retired for a faulty card, PGP-A6c) "
        "and the new one, counted and washed, goes into play without deck_inspected; logged on "
        "that round's round_started",
    ),
    Fault.BIASED_DICE: FaultSpec(
        rule_ids={Game.PAI_GOW: "PGP-A11b"},
        check=Check.STATISTICAL,
        unit=Unit.TABLE,
        default_rate=0.2,
        description="the table's dice land 6 a quarter of the time (3/20 each other face) for "
        "the whole run; only the dice goodness-of-fit test can see it",
    ),
    Fault.SEQ_GAP: FaultSpec(
        rule_ids=dict.fromkeys(_STREAM_GAMES, "EVT-GAP"),
        check=Check.STREAM,
        unit=Unit.EVENT,
        default_rate=0.0005,
        description="the device skips one seq number (no event is lost)",
    ),
    Fault.DUPLICATE_EVENT: FaultSpec(
        rule_ids=dict.fromkeys(_STREAM_GAMES, "EVT-DUP"),
        check=Check.STREAM,
        unit=Unit.EVENT,
        default_rate=0.0005,
        description="an event is sent twice (same event_id and bytes)",
    ),
    Fault.OUT_OF_ORDER: FaultSpec(
        rule_ids=dict.fromkeys(_STREAM_GAMES, "EVT-ORDER"),
        check=Check.STREAM,
        unit=Unit.EVENT,
        default_rate=0.0005,
        description="two neighbouring events inside a round are delivered swapped (the late "
        "one, with the lower seq, is logged)",
    ),
    Fault.MALFORMED: FaultSpec(
        rule_ids=dict.fromkeys(_STREAM_GAMES, "EVT-INVALID"),
        check=Check.DEAD_LETTER,
        unit=Unit.EVENT,
        default_rate=0.0005,
        description="an extra message the contract refuses (truncated JSON, a bad card, a wrong "
        "type or an unknown event type) is sent; it takes no seq",
    ),
}


def default_rates() -> dict[Fault, float]:
    return {fault: spec.default_rate for fault, spec in FAULTS.items()}


def parse_faults(text: str) -> dict[Fault, float]:
    """Read `--faults`: `default`, `none`, or `name:rate,...` over the defaults; begin the list
    with `none,` to set only the faults named (`none,house_way:0.01`). Raises ValueError naming
    the bad item."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    rates = default_rates()
    if items and items[0] in ("none", "default") and items.pop(0) == "none":
        rates = dict.fromkeys(FAULTS, 0.0)
    for item in items:
        name, sep, value = item.partition(":")
        if not sep:
            raise ValueError(f"fault {item!r}: expected name:rate")
        try:
            fault = Fault(name.strip())
        except ValueError:
            known = ", ".join(f.value for f in Fault)
            raise ValueError(f"unknown fault {name.strip()!r}; known faults: {known}") from None
        try:
            rate = float(value)
        except ValueError:
            raise ValueError(f"fault {fault.value}: rate {value!r} is not a number") from None
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault {fault.value}: rate {rate} is not between 0 and 1")
        rates[fault] = rate
    return rates


@dataclass(frozen=True, kw_only=True)
class FaultRecord:
    """One injected fault: a line of the truth log (`--truth`)."""

    fault: Fault
    rule_id: str
    check: Check
    game: Game
    table_id: str
    round_id: str | None
    seat: int | None = None
    seq: int | None = None
    event_id: str | None = None

    def to_json(self) -> str:
        record: dict[str, Any] = {
            "fault": self.fault.value,
            "rule_id": self.rule_id,
            "check": self.check.value,
            "game": self.game.value,
            "table_id": self.table_id,
            "round_id": self.round_id,
            "seat": self.seat,
            "seq": self.seq,
            "event_id": self.event_id,
        }
        return json.dumps(record, separators=(",", ":"))
