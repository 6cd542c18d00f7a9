"""A model's row-level checks are one test, `row_contract_<model>` (tests/generic/
row_contract.sql): each kind of check it folds fails on the break it exists for, says which
check and what broke, and leaves rows that break nothing alone."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import BuildError, build_marts, connect_marts
from tests.dbt.conftest import settle_night

CONTRACTS = (
    "fct_bets", "fct_positions", "int_dice_rolls", "int_position_expectations", "dim_shifts",
    "agg_revenue",
)  # fmt: skip


def failures(marts: Path) -> dict[str, int]:
    """Contract test name -> failing rows, of the last dbt run."""
    run = json.loads((marts / "_dbt" / "target" / "run_results.json").read_text())
    return {
        r["unique_id"].split(".")[2]: r["failures"]
        for r in run["results"]
        if r["unique_id"].startswith("test.") and r["failures"] is not None
    }


def broken_checks(
    marts: Path, model: str, lake: lakes.Lake | None = None
) -> list[tuple[str, str | None]]:
    """(failed_check, detail) of every row the compiled contract of `model` returns (a staging
    model's reads `lake` too)."""
    [compiled] = (marts / "_dbt" / "target" / "compiled").rglob(f"row_contract_{model}.sql")
    con = connect_marts(marts, lake=lake, latest=True)
    try:
        return sorted(con.execute(compiled.read_text()).fetchall(), key=str)
    finally:
        con.close()


def test_each_folded_check_fails_on_its_break_and_names_it(tmp_path: Path, dbt: DbtWorker) -> None:
    lake = settle_night(tmp_path, tables=1, hours=0.5, seed=11)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    # dbt's file log at info (dbt_project.yml's flags): each node and result, no statements
    log = (marts / "_dbt" / "logs" / "dbt.log").read_text()
    assert "[info ]" in log and "[debug]" not in log and "row_contract_fct_bets" in log
    selection = " ".join(f"row_contract_{model}" for model in CONTRACTS)
    build_marts(lake, marts, command="test", select=selection, quiet=True, dbt=dbt)
    assert set(failures(marts)) == {f"row_contract_{model}" for model in CONTRACTS}
    assert set(failures(marts).values()) == {0}

    con = connect_marts(marts, read_only=False)
    try:
        # rows above every watermark, as new rows of the next build would be
        # one new bet_id twice, on a spot no game has, at no table, in shift 2 (which
        # dim_shifts loses below)
        for copy in (1, 2):
            con.execute(
                f"INSERT INTO fct_bets SELECT * REPLACE (bet_id || '-x' AS bet_id, 'bogus' AS "
                "spot, 'nowhere' AS table_id, 2 AS shift_no, "
                f"lake_row_id + 10**9 + {copy} AS lake_row_id) FROM fct_bets "
                "WHERE bettor = 'player' ORDER BY bet_id LIMIT 1"
            )
        # new rows repeating keys the last build tested: only a look among all rows finds them
        con.execute(
            "INSERT INTO fct_bets SELECT * REPLACE (lake_row_id + 10**9 AS lake_row_id) "
            "FROM fct_bets ORDER BY bet_id DESC LIMIT 1"
        )
        con.execute(
            "INSERT INTO fct_positions SELECT * REPLACE (lake_row_id + 10**9 AS lake_row_id) "
            "FROM fct_positions ORDER BY round_id, seat LIMIT 1"
        )
        con.execute(
            "INSERT INTO intermediate.int_dice_rolls SELECT * REPLACE "
            "(event_id || '-x' AS event_id, 7 AS die_1, NULL AS round_id, "
            "lake_row_id + 10**9 AS lake_row_id) "
            "FROM intermediate.int_dice_rolls LIMIT 1"
        )  # a die showing 7, in no round
        con.execute(
            "INSERT INTO intermediate.int_position_expectations SELECT * REPLACE "
            "(lake_row_id + 10**9 AS lake_row_id) "
            "FROM intermediate.int_position_expectations LIMIT 1"
        )  # one position's expectation twice
        con.execute("UPDATE dim_shifts SET shift_no = NULL WHERE shift_no = 2")
        [(broken_revenue,)] = con.execute(
            "SELECT min(revenue_id) FROM agg_revenue WHERE period = 'shift'"
        ).fetchall()
        con.execute(
            "UPDATE agg_revenue SET shift_no = NULL WHERE revenue_id = ?", [broken_revenue]
        )  # a shift's row without its shift
    finally:
        con.close()

    with pytest.raises(BuildError):
        build_marts(lake, marts, command="test", select=selection, quiet=True, dbt=dbt)
    assert failures(marts) == {
        # the repeated new and old bet_id, the unknown spot, table and shift
        "row_contract_fct_bets": 5,
        "row_contract_fct_positions": 1,
        "row_contract_int_dice_rolls": 2,  # the null round, the die
        "row_contract_int_position_expectations": 1,
        "row_contract_dim_shifts": 1,
        "row_contract_agg_revenue": 1,
    }
    bets = broken_checks(marts, "fct_bets")
    assert [check for check, _ in bets] == [
        "accepted spot", "references shift_no dim_shifts", "references table_id dim_tables",
        "unique bet_id", "unique bet_id",
    ]  # fmt: skip
    assert [detail for _, detail in bets[:3]] == ["bogus", "2", "nowhere"]
    con = connect_marts(marts, latest=True)
    try:
        [(last_bet,)] = con.execute("SELECT max(bet_id) FROM fct_bets").fetchall()
        [(first_key,)] = con.execute(
            "SELECT concat_ws('|', round_id, seat, bettor) FROM fct_positions "
            "ORDER BY round_id, seat LIMIT 1"
        ).fetchall()
    finally:
        con.close()
    repeated = {key for check, key in bets if check == "unique bet_id"}
    assert last_bet in repeated and next(k for k in repeated if k != last_bet).endswith("-x")
    assert broken_checks(marts, "fct_positions") == [
        ("unique_together round_id, seat, bettor", first_key)
    ]
    assert broken_checks(marts, "int_dice_rolls") == [
        ("accepted die_1", "7"),
        ("not_null", "round_id"),
    ]
    [(check, key)] = broken_checks(marts, "int_position_expectations")
    assert check == "unique_together round_id, seat" and key is not None and "|" in key
    assert broken_checks(marts, "dim_shifts") == [("not_null", "shift_no")]
    [(check, row)] = broken_checks(marts, "agg_revenue")
    assert check == "expression (period = 'day') = (shift_no is null)"
    assert f"'revenue_id': {broken_revenue}" in row and "'shift_no': NULL" in row


def test_a_lake_row_repeating_a_key_the_last_build_tested_fails_its_staging_contract(
    tmp_path: Path,
    dbt: DbtWorker,
) -> None:
    """On an incremental build a staging contract reads the new lake rows, and their keys among
    all rows of the lake table (macros/tested_rows.sql all_rows_of): a copy of a row the last
    build tested is found, whichever of the lake's keyed tables it lands in."""
    lake = settle_night(tmp_path, tables=1, hours=0.5, seed=12)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    keys = {
        "events": "event_id",
        "rounds": "round_id",
        "violations": "violation_id",
        "settlements": "concat_ws('|', round_id, seat, spot, bettor)",
        "jackpot_ledger": "concat_ws('|', table_id, round_id, entry_no)",
    }
    con = lakes.connect(lake)
    try:
        copied = {}
        for table, key in keys.items():
            [(copied[table],)] = con.execute(
                f"SELECT {key} FROM {table} ORDER BY rowid LIMIT 1"
            ).fetchall()  # the oldest row: tested by the last build, far from the new ones
            con.execute(f"INSERT INTO {table} SELECT * FROM {table} ORDER BY rowid LIMIT 1")
    finally:
        con.close()

    with pytest.raises(BuildError):
        build_marts(lake, marts, quiet=True, dbt=dbt)
    found = failures(marts)
    for table in keys:
        model = f"stg_lake__{table}"
        assert found[f"row_contract_{model}"] == 1, found
        [(check, detail)] = broken_checks(marts, model, lake)
        assert check.startswith("unique") and detail == str(copied[table]), (check, detail)


def test_an_event_id_repeated_at_another_time_is_left_to_a_full_build(
    tmp_path: Path,
    dbt: DbtWorker,
) -> None:
    """An event stored twice keeps its `occurred_at`, so an incremental build looks a new event
    id up only among the events of the new ones' time range (`repeat_keeps`), which DuckLake
    reads by its files' statistics instead of reading all 34 million ids of the bench lake. An
    id repeated at another time (content the consumer itself reports as a conflicting
    duplicate, and never stores) is outside that range: a full build, which reads every id,
    finds it."""
    lake = settle_night(tmp_path, tables=1, hours=0.5, seed=13)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    con = lakes.connect(lake)
    try:
        [(event_id,)] = con.execute("SELECT event_id FROM events ORDER BY rowid LIMIT 1").fetchall()
        con.execute(
            "INSERT INTO events SELECT * REPLACE (occurred_at + INTERVAL 2 DAY AS occurred_at)"
            " FROM events ORDER BY rowid LIMIT 1"
        )
    finally:
        con.close()

    with contextlib.suppress(BuildError):  # the copy may break other checks: not asserted
        build_marts(lake, marts, quiet=True, dbt=dbt)
    assert failures(marts)["row_contract_stg_lake__events"] == 0
    with pytest.raises(BuildError):
        build_marts(lake, marts, full_refresh=True, quiet=True, dbt=dbt)
    assert failures(marts)["row_contract_stg_lake__events"] == 1
    assert broken_checks(marts, "stg_lake__events", lake) == [("unique event_id", event_id)]
