"""Hand-ranking speed against treys and phevaluator, on the same random hands, on one core.

Run: uv run python bench/bench_rankings.py [--quick]; prints every rate, the ratios and the targets.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from phevaluator import _pheval, evaluate_cards
from treys import Card as TreysCard
from treys import Evaluator as TreysEvaluator

from rules.cards import card_str, every_hand
from rules.rankings import HOLDEM, PAI_GOW_7, SYSTEMS, Category
from rules.rankings.tables import family_tables, size_tables


def random_hands(rng: np.random.Generator, count: int, size: int) -> npt.NDArray[np.uint8]:
    hands = np.empty((count, size), dtype=np.uint8)
    step = 100_000
    for start in range(0, count, step):
        block = rng.random((min(step, count - start), 52))
        hands[start : start + len(block)] = np.argpartition(block, size, axis=1)[:, :size]
    return hands


def rate(count: int, run: Callable[[], object], repeats: int = 3) -> float:
    """Hands per second, best of `repeats` runs."""
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return count / best


def line(label: str, value: str) -> None:
    print(f"{label:<62} {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (CI), under a minute")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the targets say
    n_single, n_batch = (20_000, 1_000_000) if args.quick else (200_000, 5_000_000)
    rng = np.random.default_rng(20240503)
    hands = random_hands(rng, n_batch, 7)
    single = hands[:n_single].tolist()

    start = time.perf_counter()
    HOLDEM.rank_batch(hands[:1])
    PAI_GOW_7.rank_batch(hands[:1])
    line("tables built for Hold'em 7 + Pai Gow 7 (s)", f"{time.perf_counter() - start:.2f}")

    evaluator = TreysEvaluator()
    treys_hands = [[TreysCard.new(card_str(c)) for c in hand] for hand in single]
    treys = rate(len(single), lambda: [evaluator.evaluate(h[:2], h[2:]) for h in treys_hands])
    ours_single = rate(len(single), lambda: [HOLDEM.strength(h) for h in single])
    line("treys 7-card, one call per hand (hands/s)", f"{treys:,.0f}")
    line("croupier HOLDEM.strength, one call per hand (hands/s)", f"{ours_single:,.0f}")
    line("  ratio to treys (target >= 1)", f"{ours_single / treys:.1f}x")

    phe_hands = hands[: n_single * 5].tolist()
    phe_c = rate(len(phe_hands), lambda: [_pheval.evaluate_7cards(*h) for h in phe_hands])
    phe_py = rate(len(phe_hands), lambda: [evaluate_cards(*h) for h in phe_hands])
    ours_batch = rate(len(hands), lambda: HOLDEM.rank_batch(hands))
    pai_gow_hands = hands.copy()
    pai_gow_hands[::7, 0] = 52  # every seventh hand holds the joker, as in a 53-card deal
    ours_pai_gow = rate(len(hands), lambda: PAI_GOW_7.rank_batch(pai_gow_hands))
    line("phevaluator evaluate_cards (public, C inside), per call (/s)", f"{phe_py:,.0f}")
    line("phevaluator _pheval.evaluate_7cards (bare C), per call (/s)", f"{phe_c:,.0f}")
    line(f"croupier HOLDEM.rank_batch, {len(hands):,} hands (hands/s)", f"{ours_batch:,.0f}")
    line(f"croupier PAI_GOW_7.rank_batch, {len(hands):,} hands (hands/s)", f"{ours_pai_gow:,.0f}")
    line("  ratio to phevaluator evaluate_cards (target >= 10)", f"{ours_batch / phe_py:.1f}x")
    line("  ratio to phevaluator's bare C function (stricter)", f"{ours_batch / phe_c:.1f}x")

    # The exhaustive 53-card 7-card Pai Gow count; --quick deals the hands holding the 2c only.
    start = time.perf_counter()
    totals = np.zeros(len(Category), dtype=np.int64)
    dealt = 0
    for chunk in every_hand(53, 7):
        if args.quick and chunk[0, 0] != 0:
            break
        dealt += len(chunk)
        totals += np.bincount(PAI_GOW_7.categories_batch(PAI_GOW_7.rank_batch(chunk)), minlength=11)
    seconds = time.perf_counter() - start
    full = math.comb(53, 7)
    line(f"Pai Gow 53-card 7-card enumeration: {dealt:,} hands (s)", f"{seconds:.1f}")
    line("  rate (hands/s)", f"{dealt / seconds:,.0f}")
    line(f"  all {full:,} hands (s, target < 120)", f"{seconds * full / dealt:.1f}")
    if dealt == full:
        line("  five aces / royal flushes counted", f"{totals[10]:,} / {totals[9]:,}")

    total = sum(
        size_tables(s.family, k).rank.nbytes for s in SYSTEMS.values() for k in s.sizes
    ) + sum(family_tables(f).flush.nbytes for f in {s.family for s in SYSTEMS.values()})
    line("lookup tables, every system and size (MB, target < 200)", f"{total / 2**20:.0f}")


if __name__ == "__main__":
    main()
