"""A Pai Gow round from its events to the rules engine's record, settled."""

from __future__ import annotations

from events.models import (
    BetPlaced,
    CardsDealt,
    DiceRolled,
    HandSet,
    PlayerDecided,
    Recipient,
    Spot,
)
from games.base import RoundEvents, cards, stakes, started
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import (
    DEALER,
    POSITIONS,
    PaiGowRound,
    PaiGowSeat,
    group_one_position,
    settle_pai_gow,
)
from games.pai_gow.rules import HandSet as PaiGowHand
from rules.profile import Profile
from rules.settlement import RoundError, RoundSettlement


def deal(kinds: RoundEvents) -> tuple[dict[int, tuple[int, ...]], dict[int, int]]:
    """(group number -> cards, position -> group number) from the deal and the dice."""
    start = started(kinds)
    banker = start.banker_position if start.banker_position is not None else DEALER
    groups = {
        e.group: cards(e.cards)
        for e in kinds.of(CardsDealt)
        if e.recipient is Recipient.GROUP and e.group is not None
    }
    rolls = [e for e in kinds.of(DiceRolled) if e.valid]
    if not rolls:
        raise RoundError("no valid dice roll: nobody knows who holds which group")
    if not 0 <= banker < POSITIONS:
        raise RoundError(f"banker position {banker} is not one of the table's {POSITIONS}")
    first = group_one_position(sum(rolls[-1].dice), POSITIONS, banker)
    # PGP-A12a: group 1 to the position the dice chose, then clockwise.
    return groups, {(first + g - 1) % POSITIONS: g for g in range(1, POSITIONS + 1)}


def settle(kinds: RoundEvents, profile: Profile, meter_cents: int | None) -> RoundSettlement:
    if not isinstance(profile, PaiGowProfile):
        raise ValueError(f"{profile.name} is not a Pai Gow profile")
    stakes(kinds, (Spot.MAIN,))  # every bet is on the main spot, or the round is not settled
    groups, group_of = deal(kinds)
    record = PaiGowRound(
        round_id=started(kinds).round_id,
        dealer_cards=groups[group_of[DEALER]],
        seats=tuple(seats(kinds, groups, group_of)),
    )
    return settle_pai_gow(record, profile)


def seats(
    kinds: RoundEvents, groups: dict[int, tuple[int, ...]], group_of: dict[int, int]
) -> list[PaiGowSeat]:
    """The round's betting positions, in seat order: each one's wager (its bets added up, as
    every game adds a spot's bets), its cards (its group by the dice, `deal`), the hand set, a
    surrender."""
    hands = {e.seat: e for e in kinds.of(HandSet)}
    surrendered = {e.seat for e in kinds.of(PlayerDecided) if e.decision.value == "surrender"}
    wagers: dict[int, int] = {}
    for bet in kinds.of(BetPlaced):
        wagers[bet.seat] = wagers.get(bet.seat, 0) + bet.amount_cents
    found: list[PaiGowSeat] = []
    for seat, wager in sorted(wagers.items()):
        hand = hands.get(seat)
        found.append(
            PaiGowSeat(
                seat=seat,
                wager_cents=wager,
                cards=groups[group_of[seat]],
                hand=None
                if hand is None
                else PaiGowHand(high=cards(hand.high), low=cards(hand.low)),
                surrendered=seat in surrendered,
            )
        )
    return found
