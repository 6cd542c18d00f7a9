"""What an incremental `croupier build` runs again. With the project unchanged since the last
build that passed, the seeds, the unit tests and the models made from the project alone (tag
project_only) are as that build left them and are not run; every test that reads what the lake
feeds still runs, a foreign key from new rows into a seed included. A build of a selection tests
only its part, so the next whole build still tests every row the last whole build did not, and
rebuilds from scratch if the lake was replaced since."""

from __future__ import annotations

import importlib.util
import json
import shutil
from datetime import timedelta
from pathlib import Path
from types import ModuleType

import pytest

from consumers.increments import source_version
from consumers.schema import create_tables
from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.maintenance import maintain
from infra.marts import BuildError, BuildResult, build_marts, connect_marts
from tests.dbt.conftest import settle_night
from tests.dbt.test_build_concurrency import card_counts, differences

PROJECT_ONLY = {"dim_games", "dim_rules", "dim_shifts", "int_dice_position_odds"}
SEEDS = {"games", "rules", "shifts", "house_edges", "progressive_paytable"}
# tests that read only seeds or project-only models, and tests that also read the lake's rows
ON_THE_PROJECT = {
    "row_contract_games",
    "row_contract_dim_shifts",
    "assert_shifts_cover_the_gaming_day",
}
ON_NEW_ROWS = {
    "row_contract_stg_lake__events",  # its game references the games seed
    "row_contract_fct_bets",  # shift_no references dim_shifts
    "row_contract_fct_violations",  # rule_id references dim_rules
    "relationships_dim_games_default_profile__profile__ref_dim_profiles_",
    "row_contract_stg_lake__violations",
}


def ran(marts: Path) -> dict[str, str]:
    """Node name (without dbt's hash suffix) -> resource type, of the last dbt run."""
    return {name: kind for name, (kind, _) in results(marts).items()}


def results(marts: Path) -> dict[str, tuple[str, str]]:
    """Node name -> (resource type, status), of the last dbt run."""
    run = json.loads((marts / "_dbt" / "target" / "run_results.json").read_text())
    nodes = {}
    for result in run["results"]:
        kind, _, name, *rest = result["unique_id"].split(".")
        if kind == "unit_test":  # unit_test.croupier.<model>.<test>
            name = ".".join([name, *rest])
        nodes[name] = (kind, result["status"])
    return nodes


def last_logged(marts: Path) -> tuple[str | None, dict[str, int]]:
    """The last build_log row's selection and the lake row ids up to which it tested."""
    con = connect_marts(marts)
    try:
        row = con.execute(
            "SELECT selection, tested_up_to FROM build_log ORDER BY finished_at DESC LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    return row[0], {k: int(v) for k, v in json.loads(row[1]).items()}


def add_bad_violation(lake: lakes.Lake) -> None:
    """A copy of a violation under a new id, with a severity no rule has."""
    con = lakes.connect(lake)
    try:
        con.execute(
            "INSERT INTO violations SELECT * REPLACE (violation_id || '-x' AS violation_id, "
            "'bogus' AS severity) FROM violations LIMIT 1"
        )
        assert con.execute(
            "SELECT count(*) FROM violations WHERE severity = 'bogus'"
        ).fetchone() == (1,)
    finally:
        con.close()


def test_an_unchanged_project_reruns_only_what_the_lake_feeds_and_a_selection_advances_nothing(
    tmp_path: Path,
    dbt: DbtWorker,
) -> None:
    lake = settle_night(tmp_path, tables=1, hours=0.5, seed=7)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    first = ran(marts)
    assert first.keys() >= SEEDS | PROJECT_ONLY | ON_THE_PROJECT | ON_NEW_ROWS
    assert "unit_test" in first.values()

    build_marts(lake, marts, quiet=True, dbt=dbt)
    again = ran(marts)
    assert not (SEEDS | PROJECT_ONLY | ON_THE_PROJECT) & again.keys()
    assert "unit_test" not in again.values()
    assert ON_NEW_ROWS | {"fct_bets", "agg_player_decisions"} <= again.keys()

    # hole-carding rows another version of consumers/evidence.py computed are computed again
    con = connect_marts(marts, read_only=False)
    try:
        con.execute("UPDATE agg_player_decisions SET code_version = 'older', p_value = -1")
    finally:
        con.close()
    build_marts(lake, marts, quiet=True, dbt=dbt)
    con = connect_marts(marts)
    try:
        versions = con.execute(
            "SELECT code_version, count(*), count(*) FILTER (WHERE p_value = -1) "
            "FROM agg_player_decisions GROUP BY ALL"
        ).fetchall()
    finally:
        con.close()
    assert len(versions) == 1 and versions[0][1] > 0
    assert versions[0][0] == source_version("consumers.evidence") and versions[0][2] == 0

    # a violation of unknown severity arrives; a build of one model does not test it...
    selection, whole = last_logged(marts)
    assert selection is None
    add_bad_violation(lake)
    build_marts(lake, marts, select="fct_bets", quiet=True, dbt=dbt)
    selection, marks = last_logged(marts)  # logged as a selection: the next build reads past it
    assert selection == "fct_bets" and marks["violations"] > whole["violations"]
    # ...so the next whole build does, and fails on it
    with pytest.raises(BuildError):
        build_marts(lake, marts, quiet=True, dbt=dbt)
    failed = {name for name, (_, status) in results(marts).items() if status in ("fail", "error")}
    assert "row_contract_stg_lake__violations" in failed

    # the lake is replaced: a build of a selection rebuilds its part from scratch, and the next
    # whole build rebuilds everything (its last whole build read another lake)
    shutil.rmtree(lake.root)
    lake = settle_night(tmp_path, tables=1, hours=0.5, seed=8)
    assert build_marts(lake, marts, select="dim_games", quiet=True, dbt=dbt).full_refresh
    assert build_marts(lake, marts, quiet=True, dbt=dbt).full_refresh


def cloned_nights(
    folder: Path, *, seed: int, count: int
) -> tuple[ModuleType, lakes.Lake, lakes.Lake]:
    """bench/lake_clone.py, a half-hour night of one table of each game settled in
    `folder/night`, and `folder/lake` holding `count` clones of it a casino day apart."""
    clone = _lake_clone()
    night = settle_night(folder / "night", tables=1, hours=0.5, seed=seed)
    lake = lakes.Lake(root=folder / "lake")
    clone.clone_nights(night, lake, first=0, count=count, evidence=False)
    return clone, night, lake


def assert_equal_to_a_full_build(
    marts: Path, lake: lakes.Lake, full: Path, dbt: DbtWorker | None
) -> None:
    """The marts built incrementally equal a full build of the same lake into `full`, in the
    dbt process `dbt` (None: a new one)."""
    build_marts(lake, full, full_refresh=True, quiet=True, dbt=dbt)
    diff = differences(marts, full, leaving=("source_lake_row_id",))
    diff.pop("intermediate.int_card_rank_counts", None)  # partial sums per build, by design
    assert diff == {}
    assert card_counts(marts) == card_counts(full)


def _lake_clone() -> ModuleType:
    """bench/lake_clone.py: whole nights cloned a casino day apart, as the 1M-round bench does."""
    path = Path(__file__).resolve().parents[2] / "bench" / "lake_clone.py"
    spec = importlib.util.spec_from_file_location("lake_clone", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_per_day_aggregates_recompute_only_the_days_with_new_rows(
    tmp_path: Path, dbt: DbtWorker
) -> None:
    # The hold test and the revenue aggregates are within a casino day: a build that brings a
    # new day replaces that day's rows and keeps the others as they were (their watermark is
    # the earlier build's), and the marts equal a full build's all the same.
    clone, night, lake = cloned_nights(tmp_path, seed=7, count=2)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    per_day = (
        "SELECT gaming_date, alert_id, source_lake_row_id, p_value, is_alert "
        "FROM stat_hold_vs_theoretical"
    )
    before = set(marts_rows(marts, per_day))
    revenue_before = set(marts_rows(marts, "SELECT * FROM agg_revenue"))
    clone.clone_nights(night, lake, first=2, count=1, evidence=False)
    build_marts(lake, marts, quiet=True, dbt=dbt)
    after = set(marts_rows(marts, per_day))
    days = sorted({row[0] for row in after})
    assert len(days) == 3 and {row[0] for row in before} == set(days[:2])
    assert {row for row in after if row[0] in days[:2]} == before  # kept, not recomputed
    newest = max(row[2] for row in before)
    assert {row[2] for row in after if row[0] == days[2]} == {max(row[2] for row in after)} and max(
        row[2] for row in after
    ) > newest
    revenue_after = set(marts_rows(marts, "SELECT * FROM agg_revenue"))
    assert revenue_before <= revenue_after  # the first two days' revenue rows, as they were
    assert_equal_to_a_full_build(marts, lake, tmp_path / "full", dbt)


def marts_rows(marts: Path, sql: str) -> list[tuple[object, ...]]:
    con = connect_marts(marts)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_event_models_read_the_lake_change_feed_unless_a_snapshot_since_is_expired(
    tmp_path: Path,
    dbt: DbtWorker,
) -> None:
    # An incremental build reads the events inserted since the last whole build's lake snapshot
    # through ducklake_table_insertions, also after a maintenance pass merged their files; with
    # a snapshot in between expired, which cannot tell whether it deleted rows, it is a full
    # refresh. Either way the marts equal a full build's.
    clone, night, lake = cloned_nights(tmp_path, seed=9, count=1)
    marts = tmp_path / "marts"
    compiled = marts / "_dbt" / "target" / "compiled" / "croupier" / "models" / "intermediate"

    def reads_change_feed() -> bool:
        return "ducklake_table_insertions" in (compiled / "int_table_events.sql").read_text()

    build_marts(lake, marts, quiet=True, dbt=dbt)
    assert not reads_change_feed()  # the first build reads every event
    for first in (1, 2):  # two commits, then the first of them expired
        clone.clone_nights(night, lake, first=first, count=1, evidence=False)
    con = lakes.connect(lake)
    try:  # and a maintenance pass merges their files, expiring nothing
        done = maintain(con, lake, retention=timedelta(days=3650), grace=timedelta(0))
    finally:
        con.close()
    assert done.files_merged > 0 and done.snapshots_expired == 0
    build_marts(lake, marts, quiet=True, dbt=dbt)
    assert reads_change_feed()
    build_marts(lake, marts, quiet=True, dbt=dbt)  # nothing new: no change feed to read, no error
    clone.clone_nights(night, lake, first=3, count=1, evidence=False)
    clone.clone_nights(night, lake, first=4, count=1, evidence=False)
    con = lakes.connect(lake)
    try:
        alias = lakes.LAKE_ALIAS
        [(newest,)] = con.execute(f"SELECT max(snapshot_id) FROM {alias}.snapshots()").fetchall()
        con.execute(f"CALL ducklake_expire_snapshots('{alias}', versions => [{newest - 1}])")
    finally:
        con.close()
    assert build_marts(lake, marts, quiet=True, dbt=dbt).full_refresh
    assert not reads_change_feed()

    assert_equal_to_a_full_build(marts, lake, tmp_path / "full", dbt)


def test_rows_added_and_deleted_since_the_last_build_are_no_new_rows(
    tmp_path: Path, dbt: DbtWorker
) -> None:
    # The lake's change feed still lists a row inserted and then deleted (an operator's repair
    # of a bad row): read through it, the staging contracts failed on rows the lake no longer
    # holds, build after build, and the event models would have built them. A delete since the
    # last build makes that build a full refresh: the operator also deleted a violation the last
    # build had taken in, which the incremental fct_violations kept (1 row more than a full
    # build). The next build, with only inserts since, reads the change feed again. Each passes
    # and the marts equal a full build's.
    clone, night, lake = cloned_nights(tmp_path, seed=13, count=1)
    marts = tmp_path / "marts"
    compiled = marts / "_dbt" / "target" / "compiled" / "croupier"

    def reads_change_feed() -> dict[str, bool]:
        return {
            name: "ducklake_table_insertions" in next(compiled.rglob(f"{name}.sql")).read_text()
            for name in ("int_table_events", "row_contract_stg_lake__violations")
        }

    build_marts(lake, marts, quiet=True, dbt=dbt)
    clone.clone_nights(night, lake, first=1, count=1, evidence=False)
    add_bad_violation(lake)
    con = lakes.connect(lake)
    try:  # and an event that never was: a copy of one under a new id
        con.execute(
            "INSERT INTO events SELECT * REPLACE (event_id || '-x' AS event_id) "
            "FROM events WHERE event_type = 'round_started' LIMIT 1"
        )
        con.execute("DELETE FROM violations WHERE severity = 'bogus'")
        con.execute("DELETE FROM events WHERE event_id LIKE '%-x'")
        built = con.execute(  # one the first build took in
            "SELECT violation_id FROM violations ORDER BY rowid LIMIT 1"
        ).fetchone()
        assert built is not None
        con.execute("DELETE FROM violations WHERE violation_id = ?", [built[0]])
    finally:
        con.close()
    assert build_marts(lake, marts, quiet=True, dbt=dbt).full_refresh
    assert marts_rows(
        marts, f"SELECT count(*) FROM fct_violations WHERE violation_id = '{built[0]}'"
    ) == [(0,)]
    assert reads_change_feed() == {
        "int_table_events": False,
        "row_contract_stg_lake__violations": False,
    }
    assert marts_rows(
        marts, "SELECT count(*) FROM intermediate.int_round_starts WHERE event_id LIKE '%-x'"
    ) == [(0,)]

    clone.clone_nights(night, lake, first=2, count=1, evidence=False)
    assert not build_marts(lake, marts, quiet=True, dbt=dbt).full_refresh
    assert reads_change_feed() == {
        "int_table_events": True,
        "row_contract_stg_lake__violations": True,
    }
    assert_equal_to_a_full_build(marts, lake, tmp_path / "full", dbt)


def test_a_lake_rewritten_since_the_last_build_gets_a_full_refresh(
    tmp_path: Path, dbt: DbtWorker
) -> None:
    # Three rewrites of rows a build had taken in, each followed by a new night, that an
    # incremental build kept (a hostile tester's findings; fct_violations differed from a full
    # build's by 1, 6 and 8 rows): a delete whose snapshot then expired (a maintenance pass
    # expires snapshots a day old), a table renamed away and created again empty (its row ids
    # from 0 again, under the marks), a column dropped and added back with a default (a new
    # value in every old row; DuckLake records both as `tables_altered`). Each makes the next
    # build a full refresh; a build with only inserts since stays incremental, and so does one
    # after a table altered with every row kept (a comment, as `croupier evidence` writes every
    # batch, and a column added: a build after any worker batch was a full refresh).
    clone, night, lake = cloned_nights(tmp_path, seed=17, count=1)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)

    def rewrite(*statements: str) -> None:
        con = lakes.connect(lake)
        try:
            for statement in statements:
                con.execute(statement)
            create_tables(con)  # what a consumer does when it starts: no-op DDL, no snapshot
        finally:
            con.close()

    def built(first: int) -> BuildResult:
        clone.clone_nights(night, lake, first=first, count=1, evidence=False)
        return build_marts(lake, marts, quiet=True, dbt=dbt)

    alias = lakes.LAKE_ALIAS
    con = lakes.connect(lake)
    try:
        [(deleted,)] = con.execute(
            "DELETE FROM violations WHERE violation_id = (SELECT min(violation_id) FROM violations)"
        ).fetchall()
        assert deleted == 1
        [(snapshot,)] = con.execute(f"SELECT max(snapshot_id) FROM {alias}.snapshots()").fetchall()
        clone.clone_nights(night, lake, first=1, count=1, evidence=False)
        con.execute(f"CALL ducklake_expire_snapshots('{alias}', versions => [{snapshot}])")
    finally:
        con.close()
    assert build_marts(lake, marts, quiet=True, dbt=dbt).full_refresh
    assert not built(2).full_refresh  # only inserts since
    rewrite(  # what `croupier evidence` does every batch, and an upgrade adding a column
        "COMMENT ON TABLE evaluated_rounds IS 'rounds croupier evidence evaluated'",
        "ALTER TABLE violations ADD COLUMN reviewed VARCHAR DEFAULT 'no'",
    )
    assert not built(3).full_refresh  # tables altered, every row as it was
    rewrite("ALTER TABLE violations RENAME TO violations_archive")
    assert built(4).full_refresh
    rewrite(
        "ALTER TABLE violations DROP COLUMN evidence",
        "ALTER TABLE violations ADD COLUMN evidence VARCHAR DEFAULT '{\"redacted\": true}'",
    )
    assert built(5).full_refresh
    [(redacted,)] = marts_rows(
        marts, "SELECT count(*) FROM fct_violations WHERE evidence = '{\"redacted\": true}'"
    )
    assert redacted > 0  # the rows built before the column came back with its default
    assert_equal_to_a_full_build(marts, lake, tmp_path / "full", dbt)


def test_late_tray_events_regroup_the_table_sessions_as_a_full_build_would(
    tmp_path: Path, dbt: DbtWorker
) -> None:
    # fct_table_sessions replaces only the sessions from each table's first change on. Rounds
    # belong to sessions by time, so a late opening count (sent last, dated inside an old
    # session) takes that session's later rounds into a new session, and a late fill changes
    # a session's tray: the marts still equal a full build's, and the sessions of the other
    # tables are kept as they were.
    clone, night, lake = cloned_nights(tmp_path, seed=17, count=2)
    marts = tmp_path / "marts"
    build_marts(lake, marts, quiet=True, dbt=dbt)
    sessions = "SELECT * FROM fct_table_sessions ORDER BY session_id"
    before = marts_rows(marts, sessions)
    con = lakes.connect(lake)
    try:
        [(table_id, late)] = con.execute(  # a quarter into the first night's rounds
            "SELECT table_id, quantile_disc(occurred_at, 0.25) FROM events "
            "WHERE event_type = 'round_started' GROUP BY ALL ORDER BY table_id LIMIT 1"
        ).fetchall()
        fill = (  # a fill of S/ 1,000 made of the opening count's event
            ", 'fill_recorded' AS event_type, json_merge_patch(payload, '{\"event_type\": "
            '"fill_recorded", "amount_cents": 100000, "kind": null}\') AS payload'
        )
        for suffix, replace, at in (
            ("-late", "", late),  # an opening count
            ("-fill", fill, late + timedelta(minutes=1)),
        ):
            con.execute(
                f"INSERT INTO events SELECT * REPLACE (event_id || '{suffix}' AS event_id, "
                "(SELECT max(seq) + 1 FROM events WHERE table_id = $table) AS seq, "
                f"$at::TIMESTAMPTZ AS occurred_at{replace}) FROM events WHERE table_id = $table "
                "AND event_type = 'inventory_counted' AND (payload->>'$.kind') = 'opening' "
                "ORDER BY seq LIMIT 1",
                {"table": table_id, "at": at},
            )
        added = "SELECT count(*) FROM events WHERE event_id LIKE '%-late' OR event_id LIKE '%-fill'"
        assert con.execute(added).fetchone() == (2,)
    finally:
        con.close()
    clone.clone_nights(night, lake, first=2, count=1, evidence=False)
    build_marts(lake, marts, quiet=True, dbt=dbt)
    after = marts_rows(marts, sessions)
    assert len(after) > len(before) + 1  # the late opening's session and the new night's
    kept = [row for row in before if row[1] != table_id]
    assert set(kept) <= set(after)  # the other tables' sessions as they were
    assert_equal_to_a_full_build(marts, lake, tmp_path / "full", dbt)
