"""Dashboards speed in a real browser: each page's first render and a filter change, timed
with Playwright on Chromium against `croupier dashboard` serving marts of 1 million rounds.

Run: uv run python bench/bench_dashboards.py [--quick]. The big lake is real demo data cloned
night after night (bench/lake_clone.py), kept under --work; --quick builds a small one.
Reference printed beside: the login page (Streamlit's own floor, no query) in the same browser.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lake_clone import clone_nights, count_rounds, source_night
from playwright.sync_api import sync_playwright

from infra import lake as lakes
from infra.marts import build_marts, connect_marts
from tests.dashboards import browser as web

# What "a filter change" is on each page: (sidebar multiselect, option) or a round search.
FILTERS = {
    "revenue": ("Game", "Tripóker (Three Card Poker)"),
    "integrity": ("Game", "Tripóker (Three Card Poker)"),
    "dealers": ("Game", "Pai Gow Poker with joker"),
    "progressive": ("Table", "TH-01"),
}


def line(label: str, value: str) -> None:
    print(f"{label:<44} {value}", flush=True)


def stores(work: Path, *, quick: bool, rounds: int | None) -> tuple[lakes.Lake, Path, int, str]:
    """The lake and marts to serve (built once and kept under `work`), their rounds and the
    latest round's id."""
    tables, hours, target = (1, 2.0, rounds or 2_000) if quick else (3, 8.0, rounds or 1_000_000)
    night = source_night(work / f"night-{tables}x{hours:g}h", tables=tables, hours=hours)
    per_night = count_rounds(night)
    nights = math.ceil(target / per_night)
    lake = lakes.Lake(root=work / f"dash-lake-{nights}n-{per_night}r")
    marts = work / f"dash-marts-{nights}n-{per_night}r"
    done = marts / "bench-complete"
    if not done.is_file():
        shutil.rmtree(lake.root, ignore_errors=True)
        shutil.rmtree(marts, ignore_errors=True)
        started = time.perf_counter()
        clone_nights(night, lake, first=0, count=nights)
        build_marts(lake, marts, full_refresh=True, quiet=True)
        done.write_text("ok\n")
        line("lake and marts built", f"{time.perf_counter() - started:.0f} s")
    return existing(lake.root, marts)


def existing(lake_root: Path, marts: Path) -> tuple[lakes.Lake, Path, int, str]:
    con = connect_marts(marts)
    try:
        row = con.execute("SELECT count(*) FROM fct_rounds").fetchone()
        latest = con.execute(
            "SELECT round_id FROM fct_rounds ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    if row is None or latest is None:
        raise RuntimeError(f"the marts at {marts} are empty")
    return lakes.Lake(root=lake_root), marts, int(row[0]), str(latest[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small lake (CI), under a minute")
    parser.add_argument("--rounds", type=int, default=None, help="rounds in the lake")
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="cache folder")
    parser.add_argument(
        "--serve", nargs=2, type=Path, metavar=("LAKE", "MARTS"), default=None,
        help="serve these built stores instead (e.g. bench_dbt.py's under var/bench)",
    )  # fmt: skip
    args = parser.parse_args()

    if args.serve:
        lake, marts, rounds, latest_round = existing(*args.serve)
    else:
        lake, marts, rounds, latest_round = stores(args.work, quick=args.quick, rounds=args.rounds)
    line("marts", f"{rounds:,} rounds")

    results: list[tuple[str, float, float | None]] = []
    with (
        tempfile.TemporaryDirectory() as state,
        web.serve(lake.root, marts, Path(state)) as url,
        sync_playwright() as playwright,
    ):
        chromium = web.launch(playwright)
        page = chromium.new_page(viewport={"width": 1400, "height": 900})
        started = time.perf_counter()
        page.goto(url)
        page.get_by_role("textbox", name="User name").wait_for()
        web.wait_idle(page)
        reference = time.perf_counter() - started
        web.log_in(page, url, web.MANAGER)
        for spec in web.VISITS:
            first = web.open_page(page, spec)
            change: float | None = None
            if spec.slug == "round_explorer":
                change = web.search_round(page, latest_round)
            elif spec.slug in FILTERS:
                label, option = FILTERS[spec.slug]
                change = web.pick(page, label, option, spec.charts)
            if page.locator(web.ERRORS).count():
                raise RuntimeError(f"the {spec.title} page shows an error")
            results.append((spec.title, first, change))
        chromium.close()

    line("reference: login page, no query", f"{reference * 1000:.0f} ms")
    print(f"\n{'page':<16} {'first render':>14} {'filter change':>15}   (targets < 3 s, < 1 s)")
    for title, first, change in results:
        shown = "no filters" if change is None else f"{change * 1000:.0f} ms"
        print(f"{title:<16} {first * 1000:>11.0f} ms {shown:>15}")
    line("\nslowest first render", f"{max(r[1] for r in results) * 1000:.0f} ms")
    changes = [r[2] for r in results if r[2] is not None]
    line("slowest filter change", f"{max(changes) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
