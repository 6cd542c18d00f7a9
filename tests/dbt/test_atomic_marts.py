"""Readers see the marts of the last successful build, whole: a build that fails half-way or is
SIGKILLed changes nothing they see, and the next good build catches up exactly.

dbt commits model by model into the marts' DuckLake store; `croupier build` publishes the marts
snapshot of a build that passed in `<marts>/published.json`, and every reader (`connect_marts`,
the dashboards, `croupier sql`) attaches the marts pinned there. Each test hashes every table a
reader can see before and after the bad build, and proves the test could fail: the store's
latest snapshot does hold the bad build's half-written marts.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from infra import lake as lakes
from infra import marts as build_module
from infra.config import get_settings
from infra.dbt_worker import DbtWorker
from infra.marts import (
    PROJECT_DIR,
    BuildError,
    build_marts,
    connect_marts,
    published_build,
)
from tests.dbt.conftest import settle_night
from tests.dbt.test_build_concurrency import card_counts, differences

# A singular test that fails as soon as a build brings new settlements: fct_bets is written
# (and committed) before it runs, the models below fct_bets (agg_revenue, ...) are skipped, and
# models on other branches (fct_violations, ...) are built: a build failed half-way.
FAILING_TEST = """
select lake_row_id from {{ ref('fct_bets') }}
where lake_row_id > {{ tested_up_to('settlements') }}
"""


@dataclass(frozen=True)
class Night:
    lake: lakes.Lake
    snapshots: list[int]  # the lake's snapshot ids holding settlements, in order (3 or more)

    @property
    def first(self) -> int:
        return self.snapshots[0]

    @property
    def middle(self) -> int:
        return self.snapshots[len(self.snapshots) // 2]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Night:
    """One table of each game for three hours, settled batch by batch into a lake: its
    snapshots stand for the lake growing between builds."""
    lake = settle_night(tmp_path_factory.mktemp("atomic"), tables=1, hours=3.0, seed=11)
    con = lakes.connect(lake, read_only=True)
    try:
        last = lakes.current_snapshot(con)
        # the snapshots that added settlements (not the lake's identity or binding rows)
        counts = []
        for s in range(last + 1):
            try:
                sql = f"SELECT count(*) FROM settlements AT (VERSION => {s})"
                counts.append(int(con.execute(sql).fetchall()[0][0]))
            except duckdb.Error:  # before the table existed
                counts.append(0)
    finally:
        con.close()
    grew = [s for s in range(1, last + 1) if counts[s] > counts[s - 1]]
    night = Night(lake=lake, snapshots=list(range(grew[0], last + 1)))
    assert len(night.snapshots) >= 3, night
    return night


@pytest.fixture(scope="module")
def full_marts(night: Night, tmp_path_factory: pytest.TempPathFactory, dbt: DbtWorker) -> Path:
    """The marts of the whole lake, built once from scratch."""
    marts = tmp_path_factory.mktemp("full") / "marts"
    build_marts(night.lake, marts, full_refresh=True, quiet=True, dbt=dbt)
    return marts


@pytest.fixture(scope="module")
def broken_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dbt_project/ with FAILING_TEST added."""
    project = tmp_path_factory.mktemp("broken") / "dbt_project"
    shutil.copytree(PROJECT_DIR, project, ignore=shutil.ignore_patterns("target", "logs"))
    (project / "tests" / "assert_injected_failure.sql").write_text(FAILING_TEST)
    return project


def mart_hashes(marts: Path, *, latest: bool = False) -> dict[str, tuple[int, int]]:
    """Row count and an order-free hash of the rows of every table a reader sees (or, with
    `latest`, of every table at the store's latest snapshot)."""
    con = connect_marts(marts, latest=latest)
    try:
        tables = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_catalog = 'marts' AND table_type = 'BASE TABLE' ORDER BY ALL"
        ).fetchall()
        assert len(tables) > 30, tables
        found = {}
        for schema, table in tables:
            row = con.execute(
                f'SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM "{schema}"."{table}" t'
            ).fetchone()
            assert row is not None
            found[f"{schema}.{table}"] = (int(row[0]), int(row[1]))
        return found
    finally:
        con.close()


def appended_since(marts: Path, snapshot: int) -> bool:
    """Whether a snapshot after `snapshot` appended rows to an existing table (an incremental
    model took new rows: the marts at the latest snapshot differ), read straight from the
    marts catalog in SQLite, read-only."""
    con = sqlite3.connect(f"file:{marts / 'catalog.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        row = con.execute(
            "SELECT count(*) FROM ducklake_snapshot_changes WHERE snapshot_id > ? "
            "AND changes_made LIKE '%inserted_into_table%'",
            [snapshot],
        ).fetchone()
    finally:
        con.close()
    return bool(row and row[0])


def equal_to_full_refresh(marts: Path, full: Path) -> None:
    diff = differences(marts, full)
    # partial card counts are appended per build by design: their sums must agree
    diff.pop("intermediate.int_card_rank_counts", None)
    assert diff == {}
    assert card_counts(marts) == card_counts(full)


@pytest.fixture
def dashboards_on(tmp_path: Path, night: Night, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The dashboards' settings pointed at a marts store of this test's own, read as a manager
    (the Floor's figures are money)."""
    from dashboards import auth, data

    marts = tmp_path / "marts"
    monkeypatch.setenv("CROUPIER_LAKE_PATH", str(night.lake.root))
    monkeypatch.setenv("CROUPIER_MARTS_PATH", str(marts))
    monkeypatch.setenv("CROUPIER_DATA_DIR", str(tmp_path / "state"))
    get_settings.cache_clear()
    with data.viewing_as(auth.GRANTS[auth.Role.MANAGER]):
        yield marts
    get_settings.cache_clear()


def test_a_build_failed_half_way_changes_nothing_readers_see(
    night: Night,
    full_marts: Path,
    broken_project: Path,
    dashboards_on: Path,
    monkeypatch: pytest.MonkeyPatch,
    dbt: DbtWorker,
) -> None:
    from dashboards import data

    marts = dashboards_on
    build_marts(night.lake, marts, quiet=True, lake_snapshot=night.first, dbt=dbt)
    published = published_build(marts)
    assert published is not None and published.lake_snapshot_id == night.first
    before = mart_hashes(marts)
    assert mart_hashes(marts, latest=True) == before
    # the dashboards (Floor page) say which build and lake snapshot they show
    info = data.build_info()
    assert info is not None and info.lake_snapshot_id == night.first
    assert info.marts_snapshot_id == published.marts_snapshot_id
    assert info.finished_at == published.finished_at
    day = data.filter_options().last_day
    floor = data.floor(day)

    with pytest.raises(BuildError):
        build_marts(
            night.lake, marts, quiet=True, lake_snapshot=night.middle,
            project_dir=broken_project,
        )  # fmt: skip

    assert published_build(marts) == published
    assert mart_hashes(marts) == before
    data.st.cache_data.clear()  # not the cache: the marts themselves show the same build
    assert data.build_info() == info
    again = data.floor(day)
    pd.testing.assert_frame_equal(again.tables, floor.tables)
    assert again.rounds == floor.rounds
    # the test could fail: the store's latest snapshot holds the failed build's half
    half = mart_hashes(marts, latest=True)
    assert half["main.fct_bets"] != before["main.fct_bets"]  # written, then its test failed
    assert half["main.fct_violations"] != before["main.fct_violations"]  # another branch
    assert half["main.agg_revenue"] == before["main.agg_revenue"]  # skipped below fct_bets

    # the next good build publishes; expiring every snapshot it may (no retention) keeps the
    # one published before it, which readers may still hold
    monkeypatch.setattr(build_module, "KEEP_SNAPSHOTS", "0 seconds")
    result = build_marts(night.lake, marts, quiet=True, dbt=dbt)
    assert not result.full_refresh
    now = published_build(marts)
    assert now is not None and now.lake_snapshot_id == night.snapshots[-1]
    assert now.marts_snapshot_id > published.marts_snapshot_id
    assert mart_hashes(marts) == mart_hashes(marts, latest=True) != before
    held = connect_marts(marts, snapshot=published.marts_snapshot_id)
    try:
        kept = held.execute("SELECT min(snapshot_id) FROM marts.snapshots()").fetchall()
        row = held.execute("SELECT count(*), sum(hash(t)::HUGEINT) FROM fct_bets t").fetchone()
    finally:
        held.close()
    assert kept[0][0] == published.marts_snapshot_id  # everything older was expired
    assert row is not None and (int(row[0]), int(row[1])) == before["main.fct_bets"]
    # the dashboards move to the new build (the cache key moves with the published snapshot)
    info = data.build_info()
    assert info is not None and info.lake_snapshot_id == night.snapshots[-1]
    assert info.marts_snapshot_id == now.marts_snapshot_id
    last_day = data.filter_options().last_day
    assert last_day > day or data.floor(last_day).rounds > floor.rounds
    # the failed build in between left the incremental state right
    equal_to_full_refresh(marts, full_marts)


def test_a_sigkilled_build_changes_nothing_readers_see(
    night: Night, full_marts: Path, tmp_path: Path, dbt: DbtWorker
) -> None:
    marts = tmp_path / "marts"
    build_marts(night.lake, marts, quiet=True, lake_snapshot=night.middle, dbt=dbt)
    published = published_build(marts)
    assert published is not None
    before = mart_hashes(marts)

    croupier = Path(sys.executable).with_name("croupier")
    command = [str(croupier), "build", "--lake", str(night.lake.root), "--marts", str(marts)]
    # its own process group: the kill takes dbt down with it, as a killed container would
    build = subprocess.Popen(
        [*command, "--quiet"], start_new_session=True, stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 180
        while not appended_since(marts, published.marts_snapshot_id) or (
            mart_hashes(marts, latest=True) == before
        ):
            assert build.poll() is None, "the build ended before it was killed"
            assert time.monotonic() < deadline, "the build changed no mart in 3 minutes"
            time.sleep(0.05)
        os.killpg(build.pid, signal.SIGKILL)
    finally:
        if build.poll() is None:
            os.killpg(build.pid, signal.SIGKILL)
        build.wait()
    assert build.returncode == -signal.SIGKILL

    assert published_build(marts) == published
    assert mart_hashes(marts) == before
    assert mart_hashes(marts, latest=True) != before  # the killed build did write

    done = subprocess.run([*command, "--quiet"], check=False, stdout=subprocess.DEVNULL)
    assert done.returncode == 0
    now = published_build(marts)
    assert now is not None and now.lake_snapshot_id == night.snapshots[-1]
    assert mart_hashes(marts) != before
    equal_to_full_refresh(marts, full_marts)
