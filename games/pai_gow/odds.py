"""Pai Gow's game math: simulated through the settlement engine itself, with the randomness
passed in by the caller."""

from __future__ import annotations

import numpy as np

from games.odds_common import Report, needs_rng, shuffled_decks, summary
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import (
    DEALER,
    SEATS,
    HandSet,
    PaiGowRound,
    PaiGowSeat,
    house_way_batch,
    settle_pai_gow,
)
from rules.profile import Profile

# Published figure quoted beside ours (Wizard of Odds' page on the game, as cited in issue 4).
PUBLISHED = {"pai_gow_house_way_vs_house_way": 0.027}


def game_math(profile: Profile, rng: np.random.Generator | None, rounds: int) -> Report:
    """The game's `GameSpec.odds`: `rounds` simulated rounds drawn from `rng`."""
    if not isinstance(profile, PaiGowProfile):
        raise ValueError(f"{profile.name} is not a Pai Gow profile")
    return pai_gow_simulation(profile, rng=needs_rng(profile, rng), rounds=rounds)


# The game's `GameSpec.spot_wagers`: the one bet.
SPOT_WAGERS: dict[str, str | None] = {"main": "main"}


def pai_gow_simulation(profile: PaiGowProfile, *, rng: np.random.Generator, rounds: int) -> Report:
    """Six players set their hands by the house way against the dealer's house way; each round
    is settled by `settle_pai_gow` (commission included)."""
    wager = 10_000  # S/ 100: the 5 % commission is exact in céntimos
    decks = shuffled_decks(rng, rounds, 53)
    groups = decks[:, :49].reshape(rounds * 7, 7)
    set_hands = house_way_batch(groups, profile.house_way).reshape(rounds, 7, 7)
    per_round = np.empty(rounds)
    outcomes: dict[str, int] = {}
    for r in range(rounds):
        seats = tuple(
            PaiGowSeat(
                seat=seat,
                wager_cents=wager,
                cards=tuple(int(x) for x in decks[r, seat * 7 : seat * 7 + 7]),
                hand=HandSet(
                    high=tuple(int(x) for x in set_hands[r, seat, :5]),
                    low=tuple(int(x) for x in set_hands[r, seat, 5:]),
                ),
            )
            for seat in SEATS
        )
        dealer = tuple(int(x) for x in decks[r, DEALER * 7 : DEALER * 7 + 7])
        result = settle_pai_gow(
            PaiGowRound(round_id=str(r), dealer_cards=dealer, seats=seats), profile
        )
        per_round[r] = sum(s.net_cents for s in result.settlements) / (wager * len(SEATS))
        for s in result.settlements:
            outcomes[s.outcome.value] = outcomes.get(s.outcome.value, 0) + 1
    edge, low, high = summary(per_round)
    hands = rounds * len(SEATS)
    return {
        "game": "pai-gow",
        "profile": profile.name,
        "profile_version": profile.version,
        "method": f"simulation through settle_pai_gow: {rounds} rounds x 6 seats, 95 % interval",
        "wagers": {
            "main": {
                "house_edge": edge,
                "ci95": [low, high],
                "strategy": f"player sets by the house way ({profile.house_way.name}) against "
                "the dealer banking with the house way",
                "outcome_frequencies": {k: v / hands for k, v in sorted(outcomes.items())},
                "published_house_edge": PUBLISHED["pai_gow_house_way_vs_house_way"],
            }
        },
    }
