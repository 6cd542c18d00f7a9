"""A Hold'em round record as JSON (`croupier settle`'s input) to the rules engine, settled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from events.models import Decision
from games.base import RecordModel
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, settle_holdem
from rules.cards import parse_cards
from rules.profile import Profile
from rules.settlement import RoundSettlement


class SeatIn(RecordModel):
    seat: int
    ante_cents: Annotated[int, Field(gt=0)]
    progressive_cents: Annotated[int, Field(ge=0)] = 0
    hole: list[str]
    decision: Literal["call", "fold"]


class RoundIn(RecordModel):
    game: Literal["holdem"] = "holdem"
    round_id: str
    dealer_hole: list[str] = Field(default_factory=list)
    board: list[str]
    seats: list[SeatIn]
    meter_cents: Annotated[int, Field(ge=0)] | None = None


def settle_record(
    record: Mapping[str, Any], profile: Profile, meter_cents: int | None
) -> RoundSettlement:
    """The round's own `meter_cents` if it gives one, else the table's (`meter_cents`), else
    the profile's seed."""
    if not isinstance(profile, HoldemProfile):
        raise ValueError(f"{profile.name} is not a Hold'em profile")
    model = RoundIn.model_validate(record)
    seats = tuple(
        HoldemSeat(
            seat=s.seat,
            ante_cents=s.ante_cents,
            progressive_cents=s.progressive_cents,
            hole=parse_cards(s.hole),
            decision=Decision(s.decision),
        )
        for s in model.seats
    )
    if model.meter_cents is not None:
        meter = model.meter_cents
    else:
        meter = profile.progressive.seed_cents if meter_cents is None else meter_cents
    game = HoldemRound(
        round_id=model.round_id,
        dealer_hole=parse_cards(model.dealer_hole),
        board=parse_cards(model.board),
        seats=seats,
        meter_cents=meter,
    )
    return settle_holdem(game, profile)
