"""The singular tests fail on a lake that breaks the invariants they state, and `croupier build`
rebuilds from scratch when the lake it reads was replaced.

A small real night is built (all tests pass), then rows that break one invariant each are
appended the way the consumer appends (one transaction): the incremental build fails and leaves
the marts as they were, and the tests run on the rebuilt models fail exactly where the
invariants break.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from croupier.cli import main as cli
from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import BuildError, build_marts, connect_marts
from tests.dbt.conftest import settle_night
from tests.dbt.test_row_contract import broken_checks

BROKEN_ROUND = "PG-01-R99999"
SINGULAR = {
    "assert_no_settlement_without_a_round",
    "assert_house_result_identity",
    "assert_meter_never_drops_without_hit",
    "assert_every_ended_round_has_a_settlement_per_bet",
}


def last_results(marts: Path) -> dict[str, dict[str, Any]]:
    """The last dbt run's result of each node, by name."""
    results = json.loads((marts / "_dbt" / "target" / "run_results.json").read_text())
    return {r["unique_id"].split(".")[2]: r for r in results["results"]}


def failed_tests(marts: Path) -> set[str]:
    return {name for name, r in last_results(marts).items() if r["status"] in ("fail", "error")}


def failures(marts: Path, test: str) -> int:
    """The rows the last build's `test` returned."""
    return int(last_results(marts)[test]["failures"] or 0)


def bets_in_marts(marts: Path) -> tuple[int, int]:
    con = connect_marts(marts)
    try:
        row = con.execute("SELECT count(*), sum(wager_cents) FROM fct_bets").fetchone()
    finally:
        con.close()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def append_breaks(lake: lakes.Lake) -> None:
    """Rows that each break one invariant, committed together."""
    con = lakes.connect(lake)
    try:
        con.execute("BEGIN TRANSACTION")
        # a settlement line of a round the lake never closed (no settlement without a round)
        con.execute(
            "INSERT INTO settlements SELECT * REPLACE (? AS round_id) FROM settlements "
            "WHERE game = 'pai_gow' LIMIT 1",
            [BROKEN_ROUND],
        )
        # a line whose house result is not minus the player's net (house result identity)
        con.execute(
            "INSERT INTO settlements SELECT * REPLACE (house_result_cents + 1 AS "
            "house_result_cents, round_id || 'x' AS round_id) FROM settlements "
            "WHERE game = 'tripoker' AND outcome = 'win' LIMIT 1"
        )
        con.execute(
            "INSERT INTO rounds SELECT * REPLACE (round_id || 'x' AS round_id) FROM rounds "
            "WHERE round_id || 'x' IN (SELECT round_id FROM settlements WHERE round_id LIKE '%x')"
        )
        # a contribution that lowers the meter (the meter never drops except by a hit)
        con.execute(
            "INSERT INTO jackpot_ledger SELECT * REPLACE (entry_no + 100 AS entry_no, "
            "meter_after_cents - 1000 AS meter_before_cents, meter_after_cents - 2000 AS "
            "meter_after_cents, occurred_at + INTERVAL 1 HOUR AS occurred_at) "
            "FROM jackpot_ledger WHERE kind = 'contribution' "
            "ORDER BY occurred_at DESC, entry_no DESC LIMIT 1"
        )
        # a bet taken in a settled round with no settlement line for it (settlement per bet)
        con.execute(
            "INSERT INTO events SELECT * REPLACE ('00000000-0000-4000-8000-00000000beef' AS "
            "event_id, seq + 1000000 AS seq, json_object('seat', 7, 'spot', 'pair_plus', "
            "'amount_cents', 1000)::VARCHAR AS payload) FROM events "
            "WHERE event_type = 'bet_placed' AND game = 'tripoker' LIMIT 1"
        )
        con.execute("COMMIT")
    finally:
        con.close()


def test_singular_tests_fail_on_broken_invariants_and_a_replaced_lake_is_rebuilt(
    tmp_path: Path,
    dbt: DbtWorker,
) -> None:
    lake = settle_night(tmp_path / "a", tables=1, hours=2.0, seed=11)
    marts = tmp_path / "marts"
    first = build_marts(lake, marts, quiet=True, dbt=dbt)
    assert not first.full_refresh and failed_tests(marts) == set()
    first_bets = bets_in_marts(marts)

    append_breaks(lake)
    with pytest.raises(BuildError):
        build_marts(lake, marts, quiet=True, dbt=dbt)
    # `dbt build` stops at the first failed test: the marts below it keep their last good state
    assert failed_tests(marts)
    assert bets_in_marts(marts) == first_bets
    # build the models anyway, then run every test on them
    build_marts(lake, marts, command="run", quiet=True, dbt=dbt)
    with pytest.raises(BuildError):
        build_marts(lake, marts, command="test", quiet=True, dbt=dbt)
    failed = failed_tests(marts)
    assert failed >= SINGULAR
    others = failed - SINGULAR
    # the orphan line also breaks the revenue totals (a mart has no round to put it in), the
    # revenue cells (its line counts in its hour's cell, its round does not), the hold test's
    # coverage (no round to evaluate it in) and the references to its round in the contracts of
    # the models that hold it; nothing else fails
    cells = {
        "assert_settlements_per_day_equal_revenue_totals",
        "assert_revenue_cells_sum_to_the_facts",
        "assert_every_player_position_is_evaluated",
    }
    assert cells <= others
    assert "row_contract_fct_bets" in others and "row_contract_stg_lake__settlements" in others
    checks = {
        check
        for name in others - cells
        for check, _ in broken_checks(marts, name.removeprefix("row_contract_"), lake)
    }
    assert {"references round_id fct_rounds", "references round_id stg_lake__rounds"} <= checks
    # its hour's cell may hold no round of its own
    assert {c for c in checks if not c.startswith("expression rounds > 0")} == {
        "references round_id fct_rounds",
        "references round_id stg_lake__rounds",
    }, checks

    # the lake is replaced by another night (as `croupier demo` does): the watermarks in the
    # marts belong to the old lake, so the build must start again from scratch
    shutil.rmtree(lake.root)
    replaced = settle_night(tmp_path / "a", tables=1, hours=1.0, seed=12)
    result = CliRunner().invoke(
        cli, ["build", "--lake", str(replaced.root), "--marts", str(marts), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert "(full refresh)" in result.output
    con = lakes.connect(replaced, read_only=True)
    try:
        expected = con.execute("SELECT count(*), sum(wager_cents) FROM settlements").fetchone()
    finally:
        con.close()
    con = connect_marts(marts)
    try:
        got = con.execute("SELECT count(*), sum(wager_cents) FROM fct_bets").fetchone()
        builds = con.execute("SELECT count(*) FROM build_log WHERE full_refresh").fetchone()
    finally:
        con.close()
    assert got == expected
    assert builds == (1,)


def test_a_late_meter_movement_is_tested_with_the_movements_after_it(
    tmp_path: Path, dbt: DbtWorker
) -> None:
    # The meter test reads only the movements not yet tested and those after them: a late
    # contribution, dated between two movements already tested and consistent with the one
    # before it, leaves the meter 10 soles above where the next one starts. Only that next,
    # already tested movement shows the jump, and the incremental build fails on it.
    lake = settle_night(tmp_path / "a", tables=1, hours=2.0, seed=11)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    con = lakes.connect(lake)
    try:
        con.execute(
            "INSERT INTO jackpot_ledger SELECT * REPLACE (entry_no + 100 AS entry_no, "
            "meter_after_cents AS meter_before_cents, meter_after_cents + 1000 AS "
            "meter_after_cents, occurred_at + INTERVAL 1 MILLISECOND AS occurred_at) "
            "FROM jackpot_ledger WHERE kind = 'contribution' ORDER BY occurred_at LIMIT 1 OFFSET 10"
        )
    finally:
        con.close()
    with pytest.raises(BuildError) as failed:
        build_marts(lake, marts, quiet=True, dbt=dbt)
    assert "assert_meter_never_drops_without_hit" in failed_tests(marts)
    # the error shows the failing row itself, read again from the marts dbt left
    message = str(failed.value)
    assert "assert_meter_never_drops_without_hit: 1 failing row(s), the first:" in message
    [shown] = [line for line in message.splitlines() if line.startswith("  problem=")]
    assert shown.startswith("  problem=meter jumped between movements, table_id="), message
    # a dbt that could not run left that build's results: they are not this one's
    with pytest.raises(BuildError) as failed:
        build_marts(lake, marts, select="nosuchmethod:x", quiet=True, dbt=dbt)
    assert "(exit 2)" in str(failed.value) and "failing row" not in str(failed.value)


def test_build_without_a_lake_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["build", "--lake", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "no lake at" in result.output


def test_re_evaluating_without_a_full_refresh_is_a_usage_error(tmp_path: Path) -> None:
    """Evaluating every round again only makes sense over marts rebuilt from scratch."""
    result = CliRunner().invoke(cli, ["build", "--lake", str(tmp_path), "--re-evaluate"])
    assert result.exit_code == 2
    assert "--full-refresh" in result.output


def test_build_every_keeps_building_incrementally_until_stopped(tmp_path: Path) -> None:
    lake = settle_night(tmp_path, tables=1, hours=0.5, seed=5)
    marts = tmp_path / "marts"
    command = [sys.executable, "-m", "croupier", "build", "--quiet", "--every", "1"]
    proc = subprocess.Popen(
        [*command, "--lake", str(lake.root), "--marts", str(marts)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    built = [proc.stdout.readline() for _ in range(2)]
    proc.terminate()
    proc.communicate(timeout=60)
    assert all(line.startswith("marts built") for line in built), built
    assert "(full refresh)" not in built[1]
    con = connect_marts(marts)
    try:
        rows = con.execute("SELECT count(*), count(DISTINCT lake_snapshot_id) FROM build_log")
        assert rows.fetchone() == (2, 1)
    finally:
        con.close()
