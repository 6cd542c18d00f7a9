"""A Tripóker round record as JSON (`croupier settle`'s input) to the rules engine, settled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from events.models import Decision
from games.base import RecordModel
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, settle_tripoker
from rules.cards import parse_cards
from rules.profile import Profile
from rules.settlement import RoundSettlement


class SeatIn(RecordModel):
    seat: int
    ante_cents: Annotated[int, Field(ge=0)] = 0
    pair_plus_cents: Annotated[int, Field(ge=0)] = 0
    cards: list[str]
    decision: Literal["play", "fold"] | None = None


class RoundIn(RecordModel):
    game: Literal["tripoker"] = "tripoker"
    round_id: str
    dealer_cards: list[str]
    seats: list[SeatIn]


def settle_record(
    record: Mapping[str, Any], profile: Profile, meter_cents: int | None
) -> RoundSettlement:
    if not isinstance(profile, TripokerProfile):
        raise ValueError(f"{profile.name} is not a Tripóker profile")
    model = RoundIn.model_validate(record)
    seats = tuple(
        TripokerSeat(
            seat=s.seat,
            ante_cents=s.ante_cents,
            pair_plus_cents=s.pair_plus_cents,
            cards=parse_cards(s.cards),
            decision=None if s.decision is None else Decision(s.decision),
        )
        for s in model.seats
    )
    game = TripokerRound(
        round_id=model.round_id, dealer_cards=parse_cards(model.dealer_cards), seats=seats
    )
    return settle_tripoker(game, profile)
