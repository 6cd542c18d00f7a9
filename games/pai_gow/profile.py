"""Pai Gow Poker's rule profile: the house way it posts and its commission (DEF-PGP1, PGP-A17c)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from events.models import Game
from rules.profile import Fields, HouseWay, Profile, ProfileHeader


@dataclass(frozen=True, kw_only=True, slots=True)
class PaiGowProfile(Profile):
    house_way: HouseWay  # DEF-PGP1
    commission_rate_bp: int  # PGP-A17c: 5 % of the win
    commission_unit_cents: int  # DEF-M2: rounded down to this unit

    game = Game.PAI_GOW

    @classmethod
    def from_fields(cls, fields: Fields, header: ProfileHeader) -> Self:
        commission = fields.table("commission")
        profile = cls(
            **header,
            house_way=fields.house_way("house_way"),
            commission_rate_bp=commission.integer("rate_bp", maximum=10_000),
            commission_unit_cents=commission.integer("unit_cents", minimum=1),
        )
        commission.done()
        return profile
