"""Pai Gow's procedure checks on a round's events: the 7x7 deal (PGP-A10), the dice (PGP-A11),
the groups to the positions (PGP-A12a), the house way (PGP-A13c) and when and in which order
bets are paid (PGP-A17d)."""

from __future__ import annotations

from collections.abc import Sequence

from events.models import (
    BetPlaced,
    CardsDealt,
    Decision,
    DiceRolled,
    Event,
    HandSet,
    PayoutRecorded,
    PlayerDecided,
    Recipient,
    RoundStarted,
    RoundVoided,
)
from games.base import RoundEvents, cards
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.round import deal
from games.pai_gow.rules import (
    DEALER,
    GROUP_SIZE,
    LEFTOVER_CARDS,
    POSITIONS,
    house_way,
    serpentine_deal_order,
)
from rules.cards import cards_str
from rules.procedure import Finding, Severity, finding_at
from rules.profile import Profile
from rules.rankings import PAI_GOW_HIGH, PAI_GOW_LOW
from rules.settlement import RoundError


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


def pai_gow_payment_order(events: Sequence[Event]) -> list[Finding]:
    """PGP-A17d: pay only after every hand is shown, from one end of the table to the other.

    - Every hand shown: each position in play (a seat with a bet, the dealer's position 0, and
      the banker's position of `round_started`) has its `hand_set` (or, for a player, a
      surrender: a `player_decided` giving up the cards, which leaves no hand to show) before
      the round's first `payout_recorded`; else one finding there ("paid_before_hands_shown").
      A player position that sets no hand at all in the round is treated as having surrendered
      (DEF-PGP4): it has no hand to show, so only a player's hand set after the first payment
      counts against it; the dealer's and the banker's hands must be shown before it. A hand
      set again later (staff re-setting the banker's hands, PGP-A13b) is not judged once it
      was shown before; a hand shown at a position without a bet is PGP-A12b's.
    - One end to the other: the seats of the payments (`payout_recorded` with winnings paid,
      `paid_cents` > 0), in stream order, only rise or only fall (seats are numbered around the
      table from the dealer's left; the same seat twice in a row is one payment). Losing bets
      go to the tray as soon as they lose (PGP-A17a) and pushes move nothing, so collections
      and pushes, wherever they fall, are not payments and are not judged; position 0, the
      dealer's, is not along that line either. One finding, at the first payment against the
      direction the first two seats set ("payment_order").

    A voided round pays nothing (its bets are returned): not judged. Never raises."""
    if any(isinstance(e, RoundVoided) for e in events):
        return []
    findings: list[Finding] = []
    started = next((e for e in events if isinstance(e, RoundStarted)), None)
    # The banker's side must show; a player who never sets a hand surrendered (DEF-PGP4).
    set_at_all = {e.seat for e in events if isinstance(e, HandSet)}
    bettors = {e.seat for e in events if isinstance(e, BetPlaced)}
    in_play = (bettors & set_at_all) | {DEALER}
    if started is not None and started.banker_position is not None:
        in_play.add(started.banker_position)
    shown: set[int] = set()
    payouts: list[PayoutRecorded] = []
    for event in events:
        if isinstance(event, PayoutRecorded):
            payouts.append(event)
        elif payouts:
            continue  # after the first payment: only the payments' order is judged
        elif isinstance(event, HandSet) or (
            isinstance(event, PlayerDecided) and event.decision is Decision.SURRENDER
        ):
            shown.add(event.seat)
    if payouts and not in_play <= shown:
        findings.append(
            finding_at(
                payouts[0],
                "PGP-A17d",
                "paid_before_hands_shown",
                Severity.MAJOR,
                not_shown=sorted(in_play - shown),
            )
        )
    direction = 0
    last: int | None = None
    paid = [p for p in payouts if p.paid_cents > 0]
    for payout in paid:
        if payout.seat == DEALER:
            continue
        if last is not None and payout.seat != last:
            step = 1 if payout.seat > last else -1
            if direction == 0:
                direction = step
            elif step != direction:
                findings.append(
                    finding_at(
                        payout,
                        "PGP-A17d",
                        "payment_order",
                        Severity.MAJOR,
                        seat=payout.seat,
                        after_seat=last,
                        seats=[p.seat for p in paid],
                    )
                )
                break
        last = payout.seat
    return findings


def decisions_wager_nothing(kinds: RoundEvents) -> list[Finding]:
    """A Pai Gow player's one decision, to surrender (PGP-A16a), wagers nothing: a decision
    recording an amount names money no bet holds, which no settlement line and no mart counts;
    this finding names it."""
    return [
        finding_at(
            event, "PGP-A16a", "decision_amount", Severity.MAJOR,
            seat=event.seat,
            decision=event.decision.value,
            recorded_cents=event.amount_cents,
            rule_cents=0,
        )
        for event in kinds.of(PlayerDecided)
        if event.amount_cents
    ]  # fmt: skip


def round_checks(kinds: RoundEvents, profile: Profile) -> list[Finding]:
    findings = [
        *pai_gow_deal(kinds.all),
        *pai_gow_dice(kinds.all),
        *pai_gow_unbet_groups(kinds.all),
        *pai_gow_payment_order(kinds.all),
        *decisions_wager_nothing(kinds),
    ]
    started = kinds.first(RoundStarted)
    if started is not None and started.banker_position not in (None, *range(POSITIONS)):
        # PGP-A11b counts from the banker: from a position the table lacks, nobody can.
        findings.append(
            finding_at(
                started,
                "PGP-A11b",
                "banker_position",
                Severity.MAJOR,
                banker_position=started.banker_position,
                positions=POSITIONS,
            )
        )
    if not isinstance(profile, PaiGowProfile):
        return findings
    try:
        groups, group_of = deal(kinds)
    except RoundError:
        return findings
    hands = {e.seat: e for e in kinds.of(HandSet)}
    for position, hand in sorted(hands.items()):
        # A position the table does not have was dealt no group (expected_group None).
        expected = group_of.get(position)
        if sorted(cards([*hand.high, *hand.low])) != sorted(groups.get(expected or 0, ())):
            findings.append(
                finding_at(
                    hand,
                    "PGP-A12a",
                    "hand_from_wrong_group",
                    Severity.CRITICAL,
                    position=position,
                    expected_group=expected,
                )
            )
    dealer_set = hands.get(DEALER)
    dealer_cards = groups.get(group_of[DEALER], ())
    # The house way is judged only on a well-formed setting of seven distinct dealt cards: a
    # repeated card is reported by the duplicate-card check, a setting of other cards above.
    if (
        dealer_set is not None
        and len(set(dealer_cards)) == 7
        and sorted(cards([*dealer_set.high, *dealer_set.low])) == sorted(dealer_cards)
    ):
        way = house_way(dealer_cards, profile.house_way)
        low, high = cards(dealer_set.low), cards(dealer_set.high)
        # Equal strengths are the same setting (suits never matter, PGP-A5).
        if (
            len(low) != 2
            or len(high) != 5
            or (PAI_GOW_LOW.strength(low), PAI_GOW_HIGH.strength(high))
            != (PAI_GOW_LOW.strength(way.low), PAI_GOW_HIGH.strength(way.high))
        ):
            findings.append(
                finding_at(
                    dealer_set,
                    "PGP-A13c",
                    "house_way",
                    Severity.MAJOR,
                    house_way={"high": cards_str(way.high), "low": cards_str(way.low)},
                    set={"high": list(dealer_set.high), "low": list(dealer_set.low)},
                )
            )
    return findings
