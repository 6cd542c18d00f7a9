"""A Tripóker round from its events to the rules engine's record, settled."""

from __future__ import annotations

from events.models import DealerRevealed, Decision, PlayerDecided, Spot
from games.base import RoundEvents, cards, dealt, played, stakes, started
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, settle_tripoker
from rules.profile import Profile
from rules.settlement import RoundError, RoundSettlement


def settle(kinds: RoundEvents, profile: Profile, meter_cents: int | None) -> RoundSettlement:
    if not isinstance(profile, TripokerProfile):
        raise ValueError(f"{profile.name} is not a Tripóker profile")
    return settle_tripoker(record(kinds), profile)


def record(kinds: RoundEvents) -> TripokerRound:
    """The rules engine's record of the round: every seat with an ante or pair plus (its cards,
    decision and the play bet recorded), the dealer's cards; a dealer reveal of other cards
    than dealt is refused."""
    start = started(kinds)
    hands, dealer = dealt(kinds)
    revealed = kinds.first(DealerRevealed)
    if revealed is not None and sorted(cards(revealed.cards)) != sorted(dealer):
        raise RoundError("the dealer revealed cards other than those dealt")
    by_spot = stakes(kinds, (Spot.ANTE, Spot.PAIR_PLUS))  # the play bet is a decision's
    antes, pair_plus = by_spot[Spot.ANTE], by_spot[Spot.PAIR_PLUS]
    decided = {e.seat: e for e in kinds.of(PlayerDecided)}
    seats = []
    for seat in sorted(set(antes) | set(pair_plus)):
        decision = decided.get(seat)
        if seat not in antes and decision is not None and decision.decision is Decision.PLAY:
            # a play needs the ante (DEF-TCP2): a seat without one (its ante lost or late) is
            # settled on its pair plus alone; the consumer returns the play, a check reports it
            decision = None
        seats.append(
            TripokerSeat(
                seat=seat,
                ante_cents=antes.get(seat, 0),
                pair_plus_cents=pair_plus.get(seat, 0),
                cards=hands[seat],
                decision=None if decision is None else decision.decision,
                play_cents=played(decision, Decision.PLAY),
            )
        )
    return TripokerRound(round_id=start.round_id, dealer_cards=dealer, seats=tuple(seats))
