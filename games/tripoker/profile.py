"""Tripóker's rule profile: the dealer's qualifier and exposed card, the play bet, the ante bonus
and pair plus paytables (DEF-TCP1..5, TCP-A10b, TCP-A11b)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from events.models import Game
from rules.profile import Fields, Paytable, Profile, ProfileHeader


@dataclass(frozen=True, kw_only=True, slots=True)
class TripokerProfile(Profile):
    dealer_qualifier: tuple[int, ...]  # DEF-TCP1: the lowest hand with which the dealer plays
    exposed_dealer_cards: tuple[int, ...]  # TCP-A10b: dealer cards dealt face up, 1-based
    play_multiple: int  # DEF-TCP2: play bet = this × ante
    fold_forfeits_pair_plus: bool  # TCP-A11b (pe-2005) or the common rule (standard)
    ante_bonus: Paytable  # DEF-TCP4, odds to 1 on the ante
    pair_plus: Paytable  # DEF-TCP5, odds to 1

    game = Game.TRIPOKER

    @classmethod
    def from_fields(cls, fields: Fields, header: ProfileHeader) -> Self:
        dealer, play = fields.table("dealer"), fields.table("play")
        profile = cls(
            **header,
            dealer_qualifier=dealer.cards("qualifies_with", count=3),
            exposed_dealer_cards=dealer.positions("exposed_cards", count=3),
            play_multiple=play.integer("multiple_of_ante", minimum=1),
            fold_forfeits_pair_plus=play.boolean("fold_forfeits_pair_plus"),
            ante_bonus=fields.paytable("ante_bonus", minimum=1),
            pair_plus=fields.paytable("pair_plus", minimum=1),
        )
        dealer.done()
        play.done()
        return profile
