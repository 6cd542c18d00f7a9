"""Procedure checks: pure functions over a table's events that say which article was broken.

Each finding names its rule ID, a severity and the evidence (what was expected, what was seen),
so an auditor can go from any violation row back to the article and the event that showed it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from events.models import (
    BetPlaced,
    BetsClosed,
    CardsDealt,
    Event,
)


class Severity(StrEnum):
    CRITICAL = "critical"  # money or game integrity directly at stake
    MAJOR = "major"  # a procedure the regulation makes mandatory was not followed
    MINOR = "minor"  # a device or stream defect; nothing paid on it


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """One breach found in the events."""

    rule_id: str
    check: str
    severity: Severity
    evidence: Mapping[str, Any] = field(default_factory=dict)
    seq: int | None = None
    event_id: str | None = None
    occurred_at: datetime | None = None


def finding_at(
    event: Event, rule_id: str, check: str, severity: Severity, **evidence: Any
) -> Finding:
    return Finding(
        rule_id=rule_id,
        check=check,
        severity=severity,
        evidence=evidence,
        seq=event.seq,
        event_id=str(event.event_id),
        occurred_at=event.occurred_at,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class TableRules:
    """A game's deck, and the articles that state the same procedure for it: each game's page
    numbers them its own way (a game's `GameSpec.table_rules`)."""

    deck_size: int  # PGP-A7a: 53; ALL-3: 52
    jokers_in_play: int  # jokers a prepared deck keeps: one in Pai Gow (PGP-A6d), else none
    deck_count: str
    shuffle: str
    cut: str
    joker: str  # the box's jokers dealt with; a joker in play where none may be
    one_zone: str  # one player, one betting zone
    payment: str  # a recorded payout other than the rules' (overpaid / underpaid)
    # A bet placed after bets_closed, where the game's page closes betting (Pai Gow: when the
    # dice are shaken); None where it states no such moment.
    bets_close: str | None = None
    # Where the page has the cards counted and washed after a new deck or dealer before play
    # (Pai Gow); None: the round's deck must have been counted (`deck_count`'s article).
    count_and_wash: str | None = None
    # Where the page alternates two decks, never two rounds in a row from one (Hold'em).
    alternate_decks: str | None = None
    # Where the page has a new deck inspected (shown) before its first round: the table's first
    # deck after opening (Pai Gow: PGP-A6a) and every later new deck (PGP-A6b).
    deck_inspected: str | None = None
    deck_change_inspected: str | None = None
    # Where the page orders a new deck's preparation: show (deck_inspected), turn, wash, shuffle,
    # cut (Tripóker TCP-A6, Hold'em THP-A6).
    new_deck_order: str | None = None


def jokers_left_in_play(rules: TableRules, jokers_in_box: int) -> int:
    """How many jokers a correctly prepared deck keeps (PGP-A6d, TCP-A5b, THP-A5)."""
    return min(jokers_in_box, rules.jokers_in_play)


# ---------------------------------------------------------------------------------------------
# Round checks: the events of one round, in seq order


def duplicate_cards(rules: TableRules, events: Sequence[Event]) -> list[Finding]:
    """A card seen twice in one round, or a joker outside Pai Gow: the deck is not what it
    should be (ALL-3; TCP-A5b / THP-A5 for a joker)."""
    findings: list[Finding] = []
    seen: set[str] = set()
    for event in events:
        if not isinstance(event, CardsDealt):
            continue
        for position, card in enumerate(event.cards):  # which of the event's cards it is
            if card == "Jk" and not rules.jokers_in_play:
                findings.append(
                    finding_at(
                        event, rules.joker, "joker_in_play", Severity.CRITICAL,
                        card=card, position=position,
                    )
                )  # fmt: skip
            elif card in seen:
                findings.append(
                    finding_at(
                        event, "ALL-3", "duplicate_card", Severity.CRITICAL,
                        card=card, position=position,
                    )
                )  # fmt: skip
            seen.add(card)
    return findings


def one_player_per_zone(rules: TableRules, events: Sequence[Event]) -> list[Finding]:
    """The same player reference at two seats in one round (ALL-2, PGP-A9a, TCP-A9a)."""
    seats_of: dict[str, set[int]] = {}
    first: dict[str, BetPlaced] = {}
    findings: list[Finding] = []
    for event in events:
        if isinstance(event, BetPlaced) and event.player_ref is not None:
            seats = seats_of.setdefault(event.player_ref, set())
            seats.add(event.seat)
            first.setdefault(event.player_ref, event)
            if len(seats) == 2:
                findings.append(
                    finding_at(
                        event,
                        rules.one_zone,
                        "player_in_two_zones",
                        Severity.MAJOR,
                        player_ref=event.player_ref,
                        seats=sorted(seats),
                    )
                )
    return findings


def bets_within_limits(
    events: Sequence[Event], limits: Mapping[str, Sequence[int]]
) -> list[Finding]:
    """Every bet within the table's posted limits for its spot (ALL-1); `limits` maps a spot to
    (min, max) céntimos as the table_opened event posted them. A bet on a spot the table
    posted no limit for (a spot the game does not take, or one the table did not open) is
    outside every posted limit: reported with null limits."""
    findings: list[Finding] = []
    for event in events:
        if not isinstance(event, BetPlaced):
            continue
        # The spot is a StrEnum: it finds its text key without `.value`.
        low, high = limits.get(event.spot) or (None, None)
        if low is None or high is None or not low <= event.amount_cents <= high:
            findings.append(
                finding_at(
                    event,
                    "ALL-1",
                    "bet_within_limits",
                    Severity.MAJOR,
                    seat=event.seat,
                    spot=event.spot.value,
                    amount_cents=event.amount_cents,
                    min_cents=low,
                    max_cents=high,
                )
            )
    return findings


def bets_after_close(rules: TableRules, events: Sequence[Event]) -> list[Finding]:
    """Bets are accepted only until betting closes, where the game's page says so (PGP-A9c:
    until the dice are shaken)."""
    rule = rules.bets_close
    if rule is None:
        return []
    closed = False
    findings: list[Finding] = []
    for event in events:
        if isinstance(event, BetsClosed):
            closed = True
        elif isinstance(event, BetPlaced) and closed:
            findings.append(
                finding_at(
                    event,
                    rule,
                    "bet_after_close",
                    Severity.CRITICAL,
                    seat=event.seat,
                    amount_cents=event.amount_cents,
                )
            )
    return findings
