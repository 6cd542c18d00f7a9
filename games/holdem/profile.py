"""Progressive Texas Hold'em's rule profile: the dealer's qualifier, the call, the ante paytable,
the payout cap, the decks and the progressive (THP-A2b..d, DEF-THP1..6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from events.models import Game
from rules.profile import Fields, Paytable, Profile, ProfileHeader


@dataclass(frozen=True, kw_only=True, slots=True)
class Progressive:
    wager_cents: int  # DEF-THP4: the fixed progressive wager
    contribution_bp: int  # share of every progressive wager added to the meter
    seed_cents: int  # the meter after a hit that empties it
    meter_pays_bp: Paytable  # hits paid as a share of the meter
    fixed_pays_cents: Paytable  # hits paid as a fixed amount by the house


@dataclass(frozen=True, kw_only=True, slots=True)
class HoldemProfile(Profile):
    dealer_qualifier: tuple[int, ...]  # THP-A2b: the lowest hand with which the dealer plays
    call_multiple: int  # DEF-THP1: call = this × ante
    ante_pays: Paytable  # DEF-THP3, odds to 1
    payout_cap_cents: int  # DEF-THP5 / THP-A2c: per seat and round, base game only
    decks: int  # THP-A2d / DEF-THP6: decks used alternately
    progressive: Progressive  # DEF-THP4

    game = Game.HOLDEM

    @classmethod
    def from_fields(cls, fields: Fields, header: ProfileHeader) -> Self:
        dealer, call = fields.table("dealer"), fields.table("call")
        prog = fields.table("progressive")
        profile = cls(
            **header,
            dealer_qualifier=dealer.cards("qualifies_with", count=5),
            call_multiple=call.integer("multiple_of_ante", minimum=1),
            ante_pays=fields.paytable("ante_pays", minimum=1, complete=True),
            payout_cap_cents=fields.integer("payout_cap_cents", minimum=1),
            decks=fields.integer("decks", minimum=1),
            progressive=Progressive(
                wager_cents=prog.integer("wager_cents", minimum=1),
                contribution_bp=prog.integer("contribution_bp", maximum=10_000),
                seed_cents=prog.integer("seed_cents"),
                meter_pays_bp=prog.paytable("meter_pays_bp", minimum=1, maximum=10_000),
                fixed_pays_cents=prog.paytable("fixed_pays_cents", minimum=1),
            ),
        )
        dealer.done()
        call.done()
        prog.done()
        overlap = [
            c.label
            for c, _ in profile.progressive.meter_pays_bp.lines()
            if profile.progressive.fixed_pays_cents.get(c) is not None
        ]
        if overlap:
            raise fields.error("progressive", f"{overlap} paid both from the meter and fixed")
        return profile
