"""Writes the game-math seeds dbt needs (house edge per bet spot, progressive paytable) from the
rule profiles through `games.odds` (each game's math is its `games/<game>/odds.py`), so
theoretical win (DEF-ACC2) is the engine's math as data.

    uv run python dbt_project/scripts/house_edges.py           # rewrite seeds/*.csv
    uv run python dbt_project/scripts/house_edges.py --check   # exit 1 if the CSVs are stale

Tripóker and the Hold'em progressive are exact; Pai Gow and the Hold'em ante + call are
simulated until the 95 % interval is at most ±0.1 point, the seed, samples and interval
written in each row.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from games.holdem.odds import progressive_exact
from games.holdem.profile import HoldemProfile
from games.odds import game_math
from games.profiles import iter_released_profiles
from games.registry import GAMES
from rules.profile import Profile
from rules.rankings import Category

SEEDS = Path(__file__).resolve().parent.parent / "seeds"
SIMULATION_SEED = 2024
SIMULATION_PRECISION = 0.001  # the 95 % interval at most ±0.1 point of edge

EDGE_COLUMNS = (
    "profile",
    "profile_version",
    "spot",
    "house_edge",
    "optimal_house_edge",
    "edge_unit",
    "strategy",
    "method",
)
PAYTABLE_COLUMNS = (
    "profile",
    "profile_version",
    "hand",
    "probability",
    "meter_share_bp",
    "fixed_pay_cents",
)


def edge_rows(profile: Profile, *, precision: float = SIMULATION_PRECISION) -> list[dict[str, Any]]:
    """One row per bet spot of the profile: the house edge theoretical win multiplies by
    (`house_edge_by_spot` of games.odds), the strategy it assumes and how it was computed."""
    report = game_math(profile, rng=np.random.default_rng(SIMULATION_SEED), precision=precision)
    wagers = report["wagers"]
    # the wager whose edge and strategy a spot's edge comes from (None: decided with the ante)
    sources = GAMES[profile.game].spot_wagers
    best = min(
        (w["house_edge"] for name, w in wagers.items() if name.startswith("ante_play")),
        default=None,
    )
    rows = []
    for spot, edge in sorted(report["house_edge_by_spot"].items()):
        source = sources.get(spot)
        wager = wagers.get(source) if source else None
        if wager is None:
            unit = "0: decided with the ante, inside the ante's edge"
            strategy, method = "", "by construction (games.odds.house_edge_by_spot)"
        else:
            unit = (
                f"per unit of {spot}"
                + (f", meter at {wager['meter_cents']} cents" if "meter_cents" in wager else "")
                + ("; includes the bets decided with it" if spot == "ante" else "")
            )
            strategy = wager["strategy"]
            method = (
                f"simulation, seed {SIMULATION_SEED}, {wager['samples']} samples, 95 % "
                f"interval ±{wager['ci95_half_width']:.4%}"
                if "ci95" in wager
                else "exact enumeration"
            )
        rows.append(
            {
                "profile": profile.name,
                "profile_version": profile.version,
                "spot": spot,
                "house_edge": repr(float(edge)),
                # the best-strategy player's edge, where it differs (DEF-TCP6, TCP-A10b)
                "optimal_house_edge": repr(float(best))
                if spot == "ante" and best is not None
                else "",
                "edge_unit": unit,
                "strategy": strategy,
                "method": method,
            }
        )
    return rows


def paytable_rows(profile: HoldemProfile) -> list[dict[str, Any]]:
    """The progressive's paying hands (DEF-THP4) with their exact probability on 5 cards."""
    table = profile.progressive
    frequencies = progressive_exact(profile)["hit_frequencies"]
    rows = []
    for category in sorted(Category, reverse=True):
        share = table.meter_pays_bp.get(category)
        fixed = table.fixed_pays_cents.get(category)
        if share is None and fixed is None:
            continue
        rows.append(
            {
                "profile": profile.name,
                "profile_version": profile.version,
                "hand": category.label,
                "probability": repr(float(frequencies[category.label])),
                "meter_share_bp": "" if share is None else share,
                "fixed_pay_cents": "" if fixed is None else fixed,
            }
        )
    return rows


def render(columns: Iterable[str], rows: Iterable[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def seeds(precision: float = SIMULATION_PRECISION) -> dict[str, str]:
    """File name -> content of every seed this script owns."""
    profiles = list(iter_released_profiles())  # every version: each round's own edge
    edges = [r for p in profiles for r in edge_rows(p, precision=precision)]
    paytables = [r for p in profiles if isinstance(p, HoldemProfile) for r in paytable_rows(p)]
    return {
        "house_edges.csv": render(EDGE_COLUMNS, edges),
        "progressive_paytable.csv": render(PAYTABLE_COLUMNS, paytables),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    stale = []
    for name, content in seeds().items():
        path = SEEDS / name
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != content:
                stale.append(name)
        else:
            path.write_text(content, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print(f"stale seeds (rerun without --check): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
