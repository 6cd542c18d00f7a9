"""Pai Gow's game math, simulated with the randomness passed in by the caller: seven hands dealt
from one shuffled 53-card deck, each set by the house way, every hand against every other as the
dealer's (42 player-dealer pairs per deal), settled as `settle_pai_gow` settles a seat against the
dealer (`pair_results`; tests check the two agree)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from games.odds_common import (
    Report,
    Simulation,
    compare_simulated,
    needs_simulation,
    published_figure,
    shuffled_decks,
    simulate,
    simulated_wager,
)
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import house_way_batch
from rules.money import commission_cents
from rules.profile import Profile
from rules.rankings import PAI_GOW_HIGH, PAI_GOW_LOW

WAGER_CENTS = 10_000  # S/ 100: the 5 % commission is exact in céntimos
HANDS = 7  # six seats and the dealer, each dealt seven cards from one deck
_PAIRS = [(p, d) for p in range(HANDS) for d in range(HANDS) if p != d]
_PLAYER = np.array([p for p, _ in _PAIRS])
_DEALER = np.array([d for _, d in _PAIRS])


def game_math(profile: Profile, simulation: Simulation | None) -> Report:
    """The game's `GameSpec.odds`: simulated as `simulation` says."""
    if not isinstance(profile, PaiGowProfile):
        raise ValueError(f"{profile.name} is not a Pai Gow profile")
    return pai_gow_simulation(profile, needs_simulation(profile, simulation))


# The game's `GameSpec.spot_wagers`: the one bet.
SPOT_WAGERS: dict[str, str | None] = {"main": "main"}


def published_rules(profile: PaiGowProfile) -> dict[str, object]:
    """The rule fields that change the edge, as the key of the published figures."""
    return {
        "house_way": profile.house_way.name,
        "commission_bp": profile.commission_rate_bp,
        "opponent": "dealer banks, sets by the same house way",
    }


def set_hands(deals: npt.NDArray[np.int64], profile: PaiGowProfile) -> npt.NDArray[np.int64]:
    """(N, 7, 2): the strength of the high and low hand of each of the seven hands of each deal,
    set by the profile's house way."""
    n = len(deals)
    set_cards = house_way_batch(deals[:, : HANDS * 7].reshape(n * HANDS, 7), profile.house_way)
    high = PAI_GOW_HIGH.rank_batch(set_cards[:, :5]).astype(np.int64)
    low = PAI_GOW_LOW.rank_batch(set_cards[:, 5:]).astype(np.int64)
    return np.stack([high, low], axis=1).reshape(n, HANDS, 2)


def pair_results(
    player: npt.NDArray[np.int64], dealer: npt.NDArray[np.int64], profile: PaiGowProfile
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """The player's net per unit wagered and hands won (0 lose, 1 push, 2 win) of set hands
    (..., 2) against the dealer's: high against high, low against low, copies to the dealer
    (PGP-A14b), a win paying even money less the commission (PGP-A17c, DEF-M2)."""
    won = (player[..., 0] > dealer[..., 0]).astype(np.int64) + (player[..., 1] > dealer[..., 1])
    commission = commission_cents(
        WAGER_CENTS, profile.commission_rate_bp, profile.commission_unit_cents
    )
    win = (WAGER_CENTS - commission) / WAGER_CENTS
    net = np.choose(won, [-1.0, 0.0, win])
    return net, won


def pai_gow_simulation(profile: PaiGowProfile, simulation: Simulation) -> Report:
    """House way against house way; the edge per unit wagered, one sample per deal (the mean
    of its 42 pairs)."""
    outcomes = np.zeros(3, dtype=np.int64)

    def draw(
        rng: np.random.Generator, n: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        hands = set_hands(shuffled_decks(rng, n, 53), profile)
        net, won = pair_results(hands[:, _PLAYER], hands[:, _DEALER], profile)
        outcomes[:] += np.bincount(won.ravel(), minlength=3)
        return net.mean(axis=1), np.zeros(n, dtype=np.int64)

    estimate = simulate(simulation, np.ones(1), draw)
    pairs = outcomes.sum()
    wager = simulated_wager(
        estimate,
        simulation,
        "one deal of seven hands from a shuffled 53-card deck, each hand "
        "against each other as the dealer's: the mean of 42 player-dealer pairs",
    )
    wager |= {
        "unit": "per unit wagered (one hand)",
        "strategy": f"player sets by the house way ({profile.house_way.name}) against the dealer "
        "banking with the house way",
        "outcome_frequencies": {
            name: int(outcomes[i]) / pairs for i, name in enumerate(("lose", "push", "win"))
        },
    }
    compare_simulated(wager, published_figure("pai-gow", "main", published_rules(profile)))
    return {
        "game": "pai-gow",
        "profile": profile.name,
        "profile_version": profile.version,
        "method": f"simulation of {estimate.count} deals (x 42 player-dealer pairs), settled as "
        "settle_pai_gow settles a seat against the dealer, 95 % interval",
        "wagers": {"main": wager},
    }
