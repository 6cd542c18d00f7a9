"""Game math of a rule profile: house edge of every wager and hit frequency of each paytable line.

Each game's math is in its folder (`games/<game>/odds.py`, its `GameSpec.odds`): Tripóker and the
Hold'em progressive exactly by enumeration; Pai Gow and the Hold'em base game by simulation
settled as the settlement engine settles (tests check the two agree), with the randomness passed
in by the caller, to a stated precision; the published figures each is compared with (only those
of its exact rules, `games/published_odds.toml`); and the
wager whose edge each bet spot carries (its `GameSpec.spot_wagers`). Here, what every report
carries: the edges per bet spot and the flags of negative house edges.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from events.models import Game
from games.odds_common import DEFAULT_PRECISION, Report, Simulation
from games.registry import GAMES
from rules.profile import Profile


def game_math(
    profile: Profile,
    *,
    rng: np.random.Generator | None,
    rounds: int | None = None,
    precision: float | None = None,
    progress: Callable[[float], None] | None = None,
) -> Report:
    """The report `croupier odds` prints. The simulated parts (Pai Gow, the Hold'em base game)
    draw from `rng` exactly `rounds` samples when given (each game says what a sample is), else
    until the 95 % interval is at most `precision` either side (house edge per unit: 0.001 is
    ±0.1 point, the default); `progress` hears the fraction done. Tripóker needs none of them."""
    if rounds is not None and precision is not None:
        raise ValueError("give rounds or precision, not both")
    simulation = (
        None
        if rng is None
        else Simulation(
            rng=rng,
            rounds=rounds,
            precision=DEFAULT_PRECISION if precision is None else precision,
            progress=progress,
        )
    )
    report = GAMES[profile.game].odds(profile, simulation)
    report["house_edge_by_spot"] = house_edge_by_spot(report)
    negative = sorted(k for k, w in report["wagers"].items() if w["house_edge"] < 0)
    report["negative_house_edge"] = negative
    report["flags"] = [
        f"{name}: negative house edge ({report['wagers'][name]['house_edge']:.4%}) for a "
        f"player who follows this strategy: {report['wagers'][name]['strategy']}"
        for name in negative
    ]
    return report


def house_edge_by_spot(report: Report) -> dict[str, float]:
    """Edges per unit wagered on each bet spot, for theoretical win (DEF-ACC2: Σ wager × edge),
    from the report's wagers by the game's `GameSpec.spot_wagers`.

    The bets decided with the ante (play, call, ante bonus) are already in the ante's edge (which
    is per ante), so they carry 0."""
    wagers = report["wagers"]
    spots = GAMES[Game.from_slug(report["game"])].spot_wagers
    return {spot: wagers[w]["house_edge"] if w else 0.0 for spot, w in spots.items()}
