"""A Hold'em round from its events to the rules engine's record, settled."""

from __future__ import annotations

from events.models import (
    BetPlaced,
    CardsDealt,
    CommunityDealt,
    Decision,
    PlayerDecided,
    Recipient,
    RoundVoided,
    Spot,
)
from games.base import RoundEvents, cards, dealt, decision_amounts, played, stakes, started
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, settle_holdem
from rules.procedure import Finding, Severity, finding_at
from rules.profile import Profile
from rules.settlement import RoundError, RoundSettlement


def round_checks(kinds: RoundEvents, profile: Profile) -> list[Finding]:
    """Hold'em's round procedures (the decks alternating, THP-A2d, is checked at round start).

    A seat plays by its ante (DEF-THP1: the player folds, losing the ante, or calls 2 x
    ante): a seat dealt hole cards, deciding or betting the progressive with no ante in the
    round breaks it. The rules engine settles the round without such a seat (its cards, its
    call and a progressive bet win or lose nothing; the consumer returns the money in its
    boxes), so that money is named here. One finding per seat, at its first such event; none
    for a voided round (ALL-5: nobody played it). A call of another amount than DEF-THP1's,
    or a fold recording one, is `decision_amount`."""
    if kinds.of(RoundVoided):
        return []
    findings = []
    if isinstance(profile, HoldemProfile):
        findings += decision_amounts(kinds, Decision.CALL, profile.call_multiple, "DEF-THP1")
    anted = kinds.seats_betting(Spot.ANTE)
    first: dict[int, BetPlaced | CardsDealt | PlayerDecided] = {}
    for event in kinds.all:
        if (
            isinstance(event, (BetPlaced, CardsDealt, PlayerDecided))
            and event.seat is not None
            and event.seat not in anted
            and (
                isinstance(event, PlayerDecided)
                or (isinstance(event, CardsDealt) and event.recipient is Recipient.SEAT)
                or (isinstance(event, BetPlaced) and event.spot is Spot.PROGRESSIVE)
            )
        ):
            first.setdefault(event.seat, event)
    decided = {e.seat: e for e in kinds.of(PlayerDecided)}
    return findings + [
        finding_at(
            event, "DEF-THP1", "play_without_ante", Severity.MAJOR,
            seat=seat,
            decision=decided[seat].decision.value if seat in decided else None,
            call_cents=decided[seat].amount_cents if seat in decided else None,
            progressive_cents=sum(
                b.amount_cents
                for b in kinds.of(BetPlaced)
                if b.seat == seat and b.spot is Spot.PROGRESSIVE
            ),
        )
        for seat, event in sorted(first.items())
    ]  # fmt: skip


def settle(kinds: RoundEvents, profile: Profile, meter_cents: int | None) -> RoundSettlement:
    if not isinstance(profile, HoldemProfile):
        raise ValueError(f"{profile.name} is not a Hold'em profile")
    start = started(kinds)
    holes, dealer = dealt(kinds)
    board: list[int] = []
    community = kinds.of(CommunityDealt)
    for street in ("flop", "turn", "river"):
        for e in community:
            if e.street == street:
                board.extend(cards(e.cards))
    found = seats(kinds, holes)
    called = any(seat.decision is Decision.CALL for seat in found)
    if meter_cents is None:
        raise RoundError("the progressive meter was never set (progressive_meter_reset)")
    record = HoldemRound(
        round_id=start.round_id,
        dealer_hole=dealer if called else (),
        board=tuple(board),
        seats=found,
        meter_cents=meter_cents,
    )
    return settle_holdem(record, profile)


def seats(kinds: RoundEvents, holes: dict[int, tuple[int, ...]]) -> tuple[HoldemSeat, ...]:
    """Every seat with an ante, in seat order: its ante, progressive, hole cards (`holes`, as
    `dealt` gives them), decision and the call recorded."""
    by_spot = stakes(kinds, (Spot.ANTE, Spot.PROGRESSIVE))  # the call is a decision's
    antes, progressive = by_spot[Spot.ANTE], by_spot[Spot.PROGRESSIVE]
    decided = {e.seat: e for e in kinds.of(PlayerDecided)}
    return tuple(
        HoldemSeat(
            seat=seat,
            ante_cents=antes[seat],
            progressive_cents=progressive.get(seat, 0),
            hole=holes[seat],
            decision=decided[seat].decision,
            call_cents=played(decided[seat], Decision.CALL),
        )
        for seat in sorted(antes)
    )
