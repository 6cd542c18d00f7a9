"""False alarms of the statistical tests on clean simulated nights (issue 18).

Simulates N nights with no fault at all (every dealer and device by the rules, every player
deciding from their own cards), each night with tables, dealers and players of its own, settles
them into one lake with the consumer's pipeline and builds the marts once: every p-value below
is the marts' own (stat_*). Per test it prints:

- the share of individual tests below 0.05, 0.01 and 0.001 against those nominal levels (a
  calibrated test is at or below them);
- the nights on which the test raised any alert, against the stated rate: alerts are decided by
  Benjamini-Hochberg at `alert_false_discovery_rate` (0.01) within each family (the test and
  casino day in the marts), so a fair night raises any alert of a test with probability at most
  0.01. Tests over all history (dice, cards, jackpot, pairs, players) are one family in the
  marts; here each night's subjects (its own tables, dealers and players) are taken as that
  night's family and decided by the same procedure, so every test gets a per-night rate;
- the alerts at p < 0.001, which on clean nights must be none.

Run: uv run python bench/bench_false_alarms.py [--quick] [--nights N] [--hours H]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from croupier.commands.demo import run_in_process
from infra import lake as lakes
from infra.marts import build_marts, connect_marts
from producers.simulator import DEFAULT_START

RATE = 0.01  # dbt_project.yml alert_false_discovery_rate
STATS = (
    "stat_hold_vs_theoretical",
    "stat_dealer_player_pairs",
    "stat_player_decisions",
    "stat_dice_fit",
    "stat_card_rank_frequency",
    "stat_jackpot_frequency",
)


def night_of(subject: str, tables_per_night: int) -> int | None:
    """The night a subject belongs to, from its table number (tables are numbered per night);
    None for a subject of no one night (a game, the casino, a player who came back)."""
    for part in subject.replace(" x ", "-").split("-"):
        if part.isdigit():
            return (int(part) - 1) // tables_per_night
    return None


def bh_alerts(p: np.ndarray, q: float = RATE) -> int:
    """Alerts of one family by Benjamini-Hochberg at q (as macros/stats.sql fdr_cutoff)."""
    ranked = np.sort(p[~np.isnan(p)])
    if not ranked.size:
        return 0
    passing = np.flatnonzero(ranked <= q * np.arange(1, ranked.size + 1) / ranked.size)
    return 0 if not passing.size else int(passing[-1] + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 short nights (CI)")
    parser.add_argument("--nights", type=int, default=None, help="clean nights (default 200)")
    parser.add_argument("--hours", type=float, default=None, help="hours a night (default 2)")
    parser.add_argument("--tables", type=int, default=1, help="tables of each game a night")
    parser.add_argument("--seed", type=int, default=18_000)
    args = parser.parse_args()
    nights = args.nights or (6 if args.quick else 200)
    hours = args.hours or (0.5 if args.quick else 2.0)
    with tempfile.TemporaryDirectory(prefix="false-alarms-") as tmp:
        lake = lakes.Lake(root=Path(tmp) / "lake")
        started = time.perf_counter()
        for night in range(nights):
            run_in_process(
                lake, tables=args.tables, hours=hours, seed=args.seed + night, faults="none",
                progress=False, start=DEFAULT_START + timedelta(days=night),
                first_table=1 + night * args.tables,
            )  # fmt: skip
        simulated = time.perf_counter() - started
        started = time.perf_counter()
        build_marts(lake, Path(tmp) / "marts", quiet=True)
        built = time.perf_counter() - started
        con = connect_marts(Path(tmp) / "marts")
        frames = [
            con.execute(
                f"SELECT test_name, subject_type, subject_id, gaming_date, p_value, is_alert "
                f"FROM {name}"
            ).df()
            for name in STATS
        ]
        rounds = con.execute("SELECT count(*) FROM fct_rounds").fetchone()
        seated = dict(  # a player sits at one table: their night is its night
            con.execute(
                "SELECT player_ref, min(table_id) FROM fct_positions "
                "WHERE player_ref IS NOT NULL GROUP BY player_ref"
            ).fetchall()
        )
        con.close()
    tests = pd.concat(frames, ignore_index=True)
    print(f"{nights} clean nights, {args.tables} table(s) of each game for {hours:g} h each, seeds")
    print(f"{args.seed}..{args.seed + nights - 1}: {rounds[0] if rounds else 0:,} rounds;")
    print(f"simulated and settled in {simulated:.0f} s, marts built in {built:.0f} s")
    print(f"alerts: Benjamini-Hochberg at {RATE} per family; nominal rate per night {RATE}\n")
    header = (
        f"{'test':<26}{'tests':>7}{'p<.05':>8}{'p<.01':>8}{'p<.001':>8}"
        f"{'nights alerting':>17}{'marts alerts':>14}"
    )
    print(header)
    print("-" * len(header))
    worst = 0.0
    for name, group in tests.groupby("test_name"):
        p = group["p_value"].astype(float).to_numpy()
        n = int((~np.isnan(p)).sum())
        if group["gaming_date"].notna().all():
            family = group["gaming_date"].astype(str)
        else:
            family = group["subject_id"].map(lambda s: night_of(str(seated.get(s, s)), args.tables))
        per_night = [
            bh_alerts(g["p_value"].astype(float).to_numpy()) > 0
            for key, g in group.groupby(family.to_numpy(), dropna=True)
        ]
        alerting = sum(per_night) / max(nights, 1)
        worst = max(worst, alerting)
        share = {level: (p < level).sum() / max(n, 1) for level in (0.05, 0.01, 0.001)}
        print(
            f"{name:<26}{n:>7}{share[0.05]:>8.3f}{share[0.01]:>8.3f}{share[0.001]:>8.4f}"
            f"{f'{sum(per_night)}/{nights} = {alerting:.3f}':>17}"
            f"{int(group['is_alert'].sum()):>14}"
        )
    alerts = tests[tests["is_alert"].astype(bool)].sort_values("p_value")
    print(f"\nthe marts' alerts on these clean nights ({len(alerts)}):")
    for row in alerts.itertuples():
        print(f"  {row.test_name:<24} {row.subject_type:<8} {row.subject_id:<28} "
              f"{row.gaming_date}  p = {float(row.p_value):.2e}")  # fmt: skip
    # the binomial 95 % upper bound of a per-night rate of RATE over this many nights
    bound = RATE + 1.96 * math.sqrt(RATE * (1 - RATE) / max(nights, 1))
    print(f"\nnominal {RATE} a night per test; with {nights} nights, up to {bound:.3f} is within")
    print(f"sampling error (95 %). Highest measured: {worst:.3f}.")


if __name__ == "__main__":
    main()
