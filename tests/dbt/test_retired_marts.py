"""A mart renamed away leaves no stale table behind in a store built before the rename."""

from __future__ import annotations

from pathlib import Path

from infra.dbt_worker import DbtWorker
from infra.marts import build_marts, connect_marts
from tests.dbt.conftest import settle_night


def tables(marts: Path) -> set[str]:
    con = connect_marts(marts, latest=True)
    try:
        rows = con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_catalog = 'marts' AND table_schema = 'main'"
        ).fetchall()
    finally:
        con.close()
    return {name for (name,) in rows}


def test_the_next_build_drops_the_table_of_a_renamed_mart(tmp_path: Path, dbt: DbtWorker) -> None:
    lake = settle_night(tmp_path / "a", tables=1, hours=0.5, seed=3)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    # a store built before dealer_scorecard became agg_dealer_scorecard_daily
    con = connect_marts(marts, read_only=False)
    try:
        con.execute("CREATE TABLE dealer_scorecard AS SELECT * FROM agg_dealer_scorecard_daily")
    finally:
        con.close()
    assert {"dealer_scorecard", "agg_dealer_scorecard_daily"} <= tables(marts)
    build_marts(lake, marts, quiet=True, dbt=dbt)
    after = tables(marts)
    assert "dealer_scorecard" not in after
    assert {"agg_dealer_scorecard_daily", "agg_revenue_hourly", "fct_rounds"} <= after
