"""A demo lake and its marts, built once per run for the dashboards' tests, and the
settings (environment) that point the dashboards at them with a state folder of each test's."""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from dashboards import auth
from infra import lake as lakes
from infra.config import get_settings
from infra.dbt_worker import DbtWorker
from tests.dashboards.browser import write_users


@pytest.fixture(autouse=True)
def fresh_throttle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test signs in with a throttle of its own: the server's is one per process, and
    in-process tests (AppTest) all come from the same unknown client."""
    monkeypatch.setattr(auth, "THROTTLE", auth.Throttle())


@dataclass(frozen=True, kw_only=True)
class DemoStores:
    lake: Path
    marts: Path


@pytest.fixture(scope="session")
def demo_stores(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str, dbt: DbtWorker
) -> DemoStores:
    """One table of each game for three hours, with the default faults, settled and built once
    per test run: the pytest-xdist workers share it (the dashboards only read it), the first
    that needs it builds it while the others wait on a lock."""
    from croupier.commands.demo import run_in_process
    from infra.marts import build_marts

    run = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        run = run.parent  # the run's folder, above each worker's own
    root = run / "dashboards-shared"
    with (run / "dashboards-shared.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "built").exists():
            shutil.rmtree(root, ignore_errors=True)  # what a worker killed half-way left
            lake = lakes.Lake(root=root / "lake")
            run_in_process(lake, tables=1, hours=3.0, seed=2025, faults="default", progress=False)
            build_marts(lake, root / "marts", quiet=True, dbt=dbt)
            (root / "built").touch()
    return DemoStores(lake=root / "lake", marts=root / "marts")


@pytest.fixture
def dashboard_env(
    demo_stores: DemoStores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Settings pointing at the demo stores; yields this test's dashboards state folder."""
    state = tmp_path / "state"
    monkeypatch.setenv("CROUPIER_LAKE_PATH", str(demo_stores.lake))
    monkeypatch.setenv("CROUPIER_MARTS_PATH", str(demo_stores.marts))
    monkeypatch.setenv("CROUPIER_DATA_DIR", str(state))
    monkeypatch.setenv(auth.USERS_ENV, str(write_users(tmp_path / "users.toml")))
    get_settings.cache_clear()
    yield state / "dashboards"
    get_settings.cache_clear()


@pytest.fixture
def marts(demo_stores: DemoStores) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection of the test's own to the demo marts (and the lake)."""
    from infra.marts import connect_marts

    con = connect_marts(demo_stores.marts, lake=lakes.Lake(root=demo_stores.lake))
    con.execute("SET TimeZone = 'UTC'")
    try:
        yield con
    finally:
        con.close()
