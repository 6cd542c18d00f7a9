"""How long `croupier odds` takes per game to reach its interval, on one core.

Tripóker exactly; Pai Gow and the Hold'em ante + call simulated until the 95 % interval is at
most ±0.1 point (the command's default), or ±0.5 point with --quick. Prints, per game, the
samples drawn, the wall and CPU seconds, the edge and its interval.

Run: uv run python bench/bench_odds.py [--quick] [--seed N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from games.odds import game_math
from games.profiles import load_profile

PROFILES = ("tripoker/pe-2005", "pai-gow/pe-1999", "holdem/pe-2007")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="±0.5 point instead of ±0.1")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    precision = 0.005 if args.quick else 0.001
    for name in PROFILES:
        profile = load_profile(name)
        wall, cpu = time.perf_counter(), time.process_time()
        report = game_math(profile, rng=np.random.default_rng(args.seed), precision=precision)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        for wager_name, wager in report["wagers"].items():
            if "ci95" not in wager:
                continue
            print(
                f"{name:18} {wager_name:10} {wager['samples']:>10,} samples  "
                f"{wall:7.1f} s wall  {cpu:7.1f} s CPU  edge {wager['house_edge']:.4%} "
                f"± {wager['ci95_half_width']:.4%} {wager['unit']}"
            )
        if not any("ci95" in w for w in report["wagers"].values()):
            print(f"{name:18} exact      {wall:7.1f} s wall  {cpu:7.1f} s CPU")


if __name__ == "__main__":
    main()
