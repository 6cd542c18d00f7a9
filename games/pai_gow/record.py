"""A Pai Gow round record as JSON (`croupier settle`'s input) to the rules engine, settled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from games.base import RecordModel
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import HandSet, PaiGowRound, PaiGowSeat, settle_pai_gow
from rules.cards import parse_cards
from rules.profile import Profile
from rules.settlement import RoundSettlement


class SeatIn(RecordModel):
    seat: int
    wager_cents: Annotated[int, Field(gt=0)]
    cards: list[str]
    high: list[str] | None = None
    low: list[str] | None = None
    surrendered: bool = False


class RoundIn(RecordModel):
    game: Literal["pai-gow"] = "pai-gow"
    round_id: str
    dealer_cards: list[str]
    seats: list[SeatIn]
    banker_seat: int | None = None
    house_wager_cents: Annotated[int, Field(ge=0)] = 0


def _cards(values: list[str]) -> tuple[int, ...]:
    return parse_cards(values, allow_joker=True)


def settle_record(
    record: Mapping[str, Any], profile: Profile, meter_cents: int | None
) -> RoundSettlement:
    if not isinstance(profile, PaiGowProfile):
        raise ValueError(f"{profile.name} is not a Pai Gow profile")
    model = RoundIn.model_validate(record)
    seats = []
    for s in model.seats:
        hand = None
        if s.high is not None or s.low is not None:
            hand = HandSet(high=_cards(s.high or []), low=_cards(s.low or []))
        seats.append(
            PaiGowSeat(
                seat=s.seat,
                wager_cents=s.wager_cents,
                cards=_cards(s.cards),
                hand=hand,
                surrendered=s.surrendered,
            )
        )
    game = PaiGowRound(
        round_id=model.round_id,
        dealer_cards=_cards(model.dealer_cards),
        seats=tuple(seats),
        banker_seat=model.banker_seat,
        house_wager_cents=model.house_wager_cents,
    )
    return settle_pai_gow(game, profile)
