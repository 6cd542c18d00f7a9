"""A Hold'em round from its events to the rules engine's record, settled."""

from __future__ import annotations

from events.models import CommunityDealt, Decision, PlayerDecided, Spot
from games.base import RoundEvents, cards, dealt, stakes, started
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, settle_holdem
from rules.procedure import Finding
from rules.profile import Profile
from rules.settlement import RoundError, RoundSettlement


def round_checks(kinds: RoundEvents, profile: Profile) -> list[Finding]:
    return []  # Hold'em's procedures (decks alternating, THP-A2d) are checked at round start


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
    `dealt` gives them) and decision."""
    by_spot = stakes(kinds, (Spot.ANTE, Spot.PROGRESSIVE))  # the call is a decision's
    antes, progressive = by_spot[Spot.ANTE], by_spot[Spot.PROGRESSIVE]
    decisions = {e.seat: e.decision for e in kinds.of(PlayerDecided)}
    return tuple(
        HoldemSeat(
            seat=seat,
            ante_cents=antes[seat],
            progressive_cents=progressive.get(seat, 0),
            hole=holes[seat],
            decision=decisions[seat],
        )
        for seat in sorted(antes)
    )
