"""dbt marts speed: full `croupier build` on a lake of 1M rounds, the incremental build after
10,000 new rounds (with the hold and hole-carding evaluations done by `croupier evidence` beside
the consumer, and without: the build evaluates them; as a `croupier build` command, and in a
running `croupier build --every`, whose dbt process is started and has parsed the project), and
the 10 dashboard queries; DuckDB alone on the same lake as the reference.

Run: uv run python bench/bench_dbt.py [--quick]. The 1M-round lake is real demo data: one casino
night settled by the consumer's pipeline, cloned night after night (bench/lake_clone.py).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lake_clone import clone_nights, count_rounds, source_night

from consumers.schema import EVALUATION_VERSION
from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import build_marts, connect_marts

# The dashboards' ten most used queries (`?` = the latest casino day, `$` = a table, `#` = a round).
QUERIES: dict[str, str] = {
    "KPIs of the day by game": """
        SELECT dimension_value AS game, handle_cents, house_result_cents, commission_cents,
               theoretical_win_cents, hold_pct, theoretical_hold_pct, rounds, players
        FROM agg_revenue WHERE period = 'day' AND dimension = 'game' AND gaming_date = ?""",
    "hold vs theoretical, every day": """
        SELECT gaming_date, hold_pct, theoretical_hold_pct, handle_cents
        FROM agg_revenue WHERE period = 'day' AND dimension = 'casino' ORDER BY gaming_date""",
    "revenue by table and shift": """
        SELECT shift_no, dimension_value AS table_id, handle_cents, house_result_cents,
               rounds_per_hour, average_bet_cents
        FROM agg_revenue WHERE period = 'shift' AND dimension = 'table' AND gaming_date = ?
        ORDER BY shift_no, table_id""",
    "table accounting of the day": """
        SELECT table_id, drop_cents, win_cents, hold_pct, settled_house_result_cents
        FROM agg_table_accounting_daily WHERE gaming_date = ? ORDER BY table_id""",
    "dealer scorecard of the day": """
        SELECT dealer_id, rounds, rounds_per_hour, error_rate, payout_accuracy, void_rate,
               house_way_compliance
        FROM agg_dealer_scorecard_daily WHERE gaming_date = ?
        ORDER BY error_rate DESC, dealer_id""",
    "violations by rule, last 7 days": """
        SELECT rule_id, severity, sum(violations) AS violations
        FROM agg_violations WHERE gaming_date > ?::DATE - 7
        GROUP BY rule_id, severity ORDER BY violations DESC""",
    "statistical alerts": """
        SELECT test_name, subject_type, subject_id, statistic, p_value, z_score, threshold
        FROM fct_statistical_alerts ORDER BY p_value NULLS LAST LIMIT 200""",
    "progressive liability of a table": """
        SELECT occurred_at, kind, amount_cents, meter_after_cents
        FROM fct_progressive_ledger WHERE table_id = $ AND gaming_date = ?
        ORDER BY occurred_at, entry_no""",
    "violations of the day, detail": """
        SELECT occurred_at, table_id, dealer_id, rule_id, severity, rule_summary
        FROM fct_violations WHERE gaming_date = ? ORDER BY occurred_at DESC LIMIT 500""",
    "a round's bets (drill-down)": """
        SELECT seat, spot, bettor, wager_cents, outcome, payout_cents, commission_cents,
               house_result_cents, payout_difference_cents, rule_ids
        FROM fct_bets WHERE round_id = # ORDER BY seat, spot""",
}


def line(label: str, value: str) -> None:
    print(f"{label:<74} {value}", flush=True)


def dbt_split(marts: Path) -> str:
    """Seconds dbt spent executing models and tests, from its run_results.json."""
    results = json.loads((marts / "_dbt" / "target" / "run_results.json").read_text())
    spent: dict[str, float] = {}
    for node in results["results"]:
        kind = node["unique_id"].split(".")[0]
        spent[kind] = spent.get(kind, 0.0) + node["execution_time"]
    return ", ".join(f"{k} {v:.1f} s" for k, v in sorted(spent.items()))


def reference(lake: lakes.Lake) -> float:
    """DuckDB alone: read every settlement once and total it by day and table (no dbt, no
    marts): the floor under any build of the revenue marts."""
    con = lakes.connect(lake, read_only=True)
    try:
        start = time.perf_counter()
        con.execute(
            "CREATE TEMP TABLE ref AS SELECT table_id, settled_at::DATE AS day, count(*) AS n, "
            "sum(wager_cents) AS handle, sum(house_result_cents) AS result "
            "FROM settlements GROUP BY ALL"
        )
        return time.perf_counter() - start
    finally:
        con.close()


def evidence_pass(night: lakes.Lake) -> tuple[int, float]:
    """`croupier evidence`'s work on the source night, once (the lake keeps it): rounds evaluated
    (each evaluation counted) and seconds."""
    from consumers.evaluation import evaluate_pending
    from consumers.schema import EVALUATION_TABLES
    from consumers.sink import LakeSink

    sink = LakeSink(night)
    try:
        start, done = time.perf_counter(), 0
        for evaluation in EVALUATION_TABLES:
            while (step := evaluate_pending(sink.con, evaluation, rounds=500)).picked:
                done += step.evaluated
        return done, time.perf_counter() - start
    finally:
        sink.close()


def run_queries(marts: Path, repeats: int) -> list[tuple[str, float, float]]:
    con = connect_marts(marts)
    try:
        day_row = con.execute("SELECT max(gaming_date) FROM fct_rounds").fetchone()
        pick = con.execute(
            "SELECT table_id, round_id FROM fct_bets WHERE spot = 'progressive' "
            "ORDER BY lake_row_id DESC LIMIT 1"
        ).fetchone()
        if day_row is None or pick is None:
            raise RuntimeError("the marts are empty")
        day, (table_id, round_id) = str(day_row[0]), pick
        timings = []
        for name, sql in QUERIES.items():
            text = sql.replace("?", f"'{day}'").replace("$", f"'{table_id}'")
            text = text.replace("#", f"'{round_id}'")
            runs = []
            for _ in range(repeats):
                start = time.perf_counter()
                con.execute(text).fetchall()
                runs.append(time.perf_counter() - start)
            timings.append((name, runs[0], statistics.median(runs[1:] or runs)))
        return timings
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small lake (CI), under a minute")
    parser.add_argument("--rounds", type=int, default=None, help="rounds in the big lake")
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="cache folder")
    args = parser.parse_args()
    if args.quick:
        tables, hours, target, new_rounds = 1, 2.0, args.rounds or 2_000, 500
    else:
        tables, hours, target, new_rounds = 3, 8.0, args.rounds or 1_000_000, 10_000

    started = time.perf_counter()
    night = source_night(args.work / f"night-{tables}x{hours:g}h", tables=tables, hours=hours)
    per_night = count_rounds(night)
    nights = math.ceil(target / per_night)
    extra = math.ceil(new_rounds / per_night)
    line("source night (demo pipeline, faults on)", f"{per_night:,} rounds")
    evaluated, seconds = evidence_pass(night)
    if evaluated:
        line(
            "croupier evidence on the source night (off the build)",
            f"{evaluated:,} round evaluations (hold and hole-carding tests) in {seconds:.1f} s "
            f"({evaluated / seconds:,.0f}/s)",
        )

    # the evidence cloned with the nights is of one evaluation version: another is a new lake
    kept = f"{nights}n-{per_night}r-evidence-v{EVALUATION_VERSION}"
    lake = lakes.Lake(root=args.work / f"lake-{kept}")
    marts = args.work / f"marts-{kept}"
    if not lake.exists:
        clone_nights(night, lake, first=0, count=nights)
    total = count_rounds(lake)
    if total != nights * per_night:  # a previous run appended nights: start again
        shutil.rmtree(lake.root)
        clone_nights(night, lake, first=0, count=nights)
        total = count_rounds(lake)
    line("lake ready", f"{total:,} rounds in {time.perf_counter() - started:.0f} s")

    ref = reference(lake)
    line("reference: DuckDB alone, settlements by day and table", f"{ref:.2f} s")

    shutil.rmtree(marts, ignore_errors=True)
    # `croupier build --every` keeps one dbt process from build to build (infra/dbt_worker.py):
    # it serves the full build here, and the last incremental build finds it started and parsed
    with DbtWorker() as builder:
        full = build_marts(lake, marts, full_refresh=True, quiet=True, dbt=builder)
        line(f"full croupier build ({total:,} rounds)", f"{full.seconds:.1f} s  (target < 120 s)")
        line("  of which dbt executing", dbt_split(marts))

        # Each clone repeats the source night's hands, so a build evaluating them itself hits
        # its cache after the first night: its figure is a floor (a real night's hands are all
        # new).
        for label, with_evidence, dbt in (
            ("in the build", False, None),
            ("by the worker", True, None),
            ("by the worker, `build --every`", True, builder),
        ):
            before = count_rounds(lake)
            first = before // per_night
            clone_nights(night, lake, first=first, count=extra, evidence=with_evidence)
            added = count_rounds(lake) - before
            incremental = build_marts(lake, marts, quiet=True, dbt=dbt)
            line(
                f"incremental build (+{added:,} rounds), evidence {label}",
                f"{incremental.seconds:.1f} s  (target < 10 s)",
            )
            line("  of which dbt executing", dbt_split(marts))

    timings = run_queries(marts, repeats=3 if args.quick else 6)
    print(f"\n{'dashboard query':<42} {'first':>9} {'median':>9}   (target < 500 ms)")
    for name, first, median in timings:
        print(f"{name:<42} {first * 1000:>7.0f} ms {median * 1000:>7.0f} ms")
    slowest = max(max(first, median) for _, first, median in timings)
    line("\nslowest dashboard query", f"{slowest * 1000:.0f} ms")


if __name__ == "__main__":
    main()
