"""Tripóker's procedure checks on a round's events: three cards to each hand (TCP-A10) and the
dealer's exposed card (TCP-A10b)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence, Set

from events.models import CardsDealt, Event, Recipient
from games.base import RoundEvents
from games.tripoker.profile import TripokerProfile
from rules.procedure import Finding, Severity, finding_at
from rules.profile import Profile


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


def round_checks(kinds: RoundEvents, profile: Profile) -> list[Finding]:
    findings = three_card_hands(kinds.all)
    if isinstance(profile, TripokerProfile):
        findings += tripoker_exposed_card(kinds.all, set(profile.exposed_dealer_cards))
    return findings
