"""Procedure checks: pure functions over a table's events that say which article was broken.

Each finding names its rule ID, a severity and the evidence (what was expected, what was seen),
so an auditor can go from any violation row back to the article and the event that showed it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from events.models import (
    BetPlaced,
    BetsClosed,
    CardsDealt,
    DiceRolled,
    Event,
    Game,
    HandSet,
    Recipient,
)
from rules.pai_gow import DEALER, GROUP_SIZE, LEFTOVER_CARDS, POSITIONS, serpentine_deal_order


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


# Rule IDs that differ by game for the same procedure.
DECK_SIZE: Mapping[Game, int] = {Game.PAI_GOW: 53, Game.TRIPOKER: 52, Game.HOLDEM: 52}
DECK_COUNT_RULE: Mapping[Game, str] = {
    Game.PAI_GOW: "PGP-A7a",
    Game.TRIPOKER: "ALL-3",
    Game.HOLDEM: "ALL-3",
}
SHUFFLE_RULE: Mapping[Game, str] = {
    Game.PAI_GOW: "PGP-A8a",
    Game.TRIPOKER: "TCP-A7",
    Game.HOLDEM: "ALL-4",
}
CUT_RULE: Mapping[Game, str] = {
    Game.PAI_GOW: "PGP-A8b",
    Game.TRIPOKER: "TCP-A7",
    Game.HOLDEM: "ALL-4",
}
JOKER_RULE: Mapping[Game, str] = {
    Game.PAI_GOW: "PGP-A6d",
    Game.TRIPOKER: "TCP-A5b",
    Game.HOLDEM: "THP-A5",
}
ONE_ZONE_RULE: Mapping[Game, str] = {
    Game.PAI_GOW: "PGP-A9a",
    Game.TRIPOKER: "TCP-A9a",
    Game.HOLDEM: "ALL-2",
}
# Overpaid / underpaid bets (the dealer's recorded payout differs from the rules').
PAYMENT_RULE: Mapping[Game, str] = {
    Game.PAI_GOW: "PGP-A17c",
    Game.TRIPOKER: "DEF-TCP3",
    Game.HOLDEM: "DEF-THP2",
}


def jokers_left_in_play(game: Game, jokers_in_box: int) -> int:
    """How many jokers a correctly prepared deck keeps: one in Pai Gow (PGP-A6d), none elsewhere
    (TCP-A5b, THP-A5)."""
    return min(jokers_in_box, 1) if game is Game.PAI_GOW else 0


# ---------------------------------------------------------------------------------------------
# Round checks: the events of one round, in seq order


def duplicate_cards(game: Game, events: Sequence[Event]) -> list[Finding]:
    """A card seen twice in one round, or a joker outside Pai Gow: the deck is not what it
    should be (ALL-3; TCP-A5b / THP-A5 for a joker)."""
    findings: list[Finding] = []
    seen: set[str] = set()
    for event in events:
        if not isinstance(event, CardsDealt):
            continue
        for card in event.cards:
            if card == "Jk" and game is not Game.PAI_GOW:
                findings.append(
                    finding_at(
                        event, JOKER_RULE[game], "joker_in_play", Severity.CRITICAL, card=card
                    )
                )
            elif card in seen:
                findings.append(
                    finding_at(event, "ALL-3", "duplicate_card", Severity.CRITICAL, card=card)
                )
            seen.add(card)
    return findings


def one_player_per_zone(game: Game, events: Sequence[Event]) -> list[Finding]:
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
                        ONE_ZONE_RULE[game],
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
    (min, max) céntimos as the table_opened event posted them."""
    findings: list[Finding] = []
    for event in events:
        # The spot is a StrEnum: it finds its text key without `.value`.
        if not isinstance(event, BetPlaced) or event.spot not in limits:
            continue
        low, high = limits[event.spot]
        if not low <= event.amount_cents <= high:
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


def bets_after_close(events: Sequence[Event]) -> list[Finding]:
    """Pai Gow bets are accepted only until the dice are shaken (PGP-A9c)."""
    closed = False
    findings: list[Finding] = []
    for event in events:
        if isinstance(event, BetsClosed):
            closed = True
        elif isinstance(event, BetPlaced) and closed:
            findings.append(
                finding_at(
                    event,
                    "PGP-A9c",
                    "bet_after_close",
                    Severity.CRITICAL,
                    seat=event.seat,
                    amount_cents=event.amount_cents,
                )
            )
    return findings


def pai_gow_deal(events: Sequence[Event]) -> list[Finding]:
    """The 7x7 deal: seven groups of seven (PGP-A10a), face down (A10c), 4 cards left over and
    discarded unseen (A10d), the serpentine order (A10f)."""
    findings: list[Finding] = []
    groups: dict[int, CardsDealt] = {}
    leftovers: list[CardsDealt] = []
    for event in events:
        if isinstance(event, CardsDealt):
            if event.recipient is Recipient.GROUP and event.group is not None:
                groups[event.group] = event
            elif event.recipient is Recipient.DISCARD:
                leftovers.append(event)
    last = events[-1] if events else None
    if len(groups) != POSITIONS or any(len(g.cards) != GROUP_SIZE for g in groups.values()):
        sizes = {str(n): len(g.cards) for n, g in sorted(groups.items())}
        anchor = next(iter(groups.values()), None) or last
        if anchor is not None:
            findings.append(
                finding_at(
                    anchor, "PGP-A10a", "seven_groups_of_seven", Severity.CRITICAL, groups=sizes
                )
            )
    # The discard of the leftovers is the first discard after the groups (A10d).
    dealt_leftover = [e for e in leftovers if e.deal_order and min(e.deal_order) > 0]
    leftover_count = sum(len(e.cards) for e in dealt_leftover[:1])
    if dealt_leftover and leftover_count != LEFTOVER_CARDS:
        findings.append(
            finding_at(
                dealt_leftover[0],
                "PGP-A10d",
                "four_cards_left",
                Severity.CRITICAL,
                expected=LEFTOVER_CARDS,
                seen=leftover_count,
            )
        )
    for event in groups.values():
        if event.face_up:
            findings.append(
                finding_at(event, "PGP-A10c", "deal_face_down", Severity.MAJOR, group=event.group)
            )
    if len(groups) == POSITIONS:
        expected = {
            (group, number): place
            for place, (group, number) in enumerate(serpentine_deal_order(), start=1)
        }
        for number, event in sorted(groups.items()):
            orders = list(event.deal_order)
            # A card beyond the seventh has no place in the deal (None): a group of more than
            # seven cards, reported under PGP-A10a, is not dealt in the serpentine order either.
            wanted = [expected.get((number, card)) for card in range(1, len(orders) + 1)]
            if orders != wanted:
                findings.append(
                    finding_at(
                        event,
                        "PGP-A10f",
                        "serpentine_deal",
                        Severity.MAJOR,
                        group=number,
                        expected=wanted,
                        seen=orders,
                    )
                )
                break
    return findings


def pai_gow_unbet_groups(events: Sequence[Event]) -> list[Finding]:
    """The groups of positions without a bet are collected unseen into the discard rack
    (PGP-A12b): a hand set at a player position that has no bet shows such a group's cards."""
    bettors = {e.seat for e in events if isinstance(e, BetPlaced)}
    return [
        finding_at(e, "PGP-A12b", "unbet_group_unseen", Severity.MAJOR, seat=e.seat)
        for e in events
        if isinstance(e, HandSet) and e.seat != DEALER and e.seat not in bettors
    ]


def pai_gow_dice(events: Sequence[Event]) -> list[Finding]:
    """A Pai Gow deal needs a valid roll of three dice to say who receives group 1 (PGP-A11b);
    a roll marked invalid must be thrown again (PGP-A11c)."""
    dealt = next((e for e in events if isinstance(e, CardsDealt)), None)
    if dealt is None or any(isinstance(e, DiceRolled) and e.valid for e in events):
        return []
    rolls = sum(1 for e in events if isinstance(e, DiceRolled))
    return [finding_at(dealt, "PGP-A11c", "valid_dice_roll", Severity.MAJOR, invalid_rolls=rolls)]


def three_card_hands(events: Sequence[Event]) -> list[Finding]:
    """Every Tripóker hand has exactly 3 cards (TCP-A8, TCP-A10a)."""
    counts: Counter[tuple[str, int | None]] = Counter()
    anchors: dict[tuple[str, int | None], CardsDealt] = {}
    for event in events:
        if isinstance(event, CardsDealt) and event.recipient in (Recipient.SEAT, Recipient.DEALER):
            key = (event.recipient.value, event.seat)
            counts[key] += len(event.cards)
            anchors.setdefault(key, event)
    return [
        finding_at(
            anchors[key],
            "TCP-A8",
            "three_cards",
            Severity.CRITICAL,
            recipient=key[0],
            seat=key[1],
            cards=count,
        )
        for key, count in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0))
        if count != 3
    ]


def tripoker_exposed_card(events: Sequence[Event], exposed: Set[int]) -> list[Finding]:
    """The dealer's cards numbered `exposed` (by deal order, 1..3) are dealt face up and the
    others face down (TCP-A10b under `pe-2005`: the third; `standard`: none)."""
    # Sorted on the deal order alone: two cards given the same place (a device fault) keep
    # their stream order rather than comparing the events themselves, which raised TypeError.
    dealt = sorted(
        (
            (order, event)
            for event in events
            if isinstance(event, CardsDealt) and event.recipient is Recipient.DEALER
            for order in event.deal_order
        ),
        key=lambda pair: pair[0],
    )
    findings: list[Finding] = []
    for number, (_, event) in enumerate(dealt, start=1):
        should_be_up = number in exposed
        if event.face_up != should_be_up:
            findings.append(
                finding_at(
                    event,
                    "TCP-A10b",
                    "dealer_exposed_card",
                    Severity.MAJOR,
                    card_number=number,
                    expected_face_up=should_be_up,
                )
            )
    return findings
