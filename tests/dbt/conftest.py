"""A real casino night settled into a lake on disk and built into marts, shared by the dbt tests.

Seed 3 gives a night whose table PG-02 rolls loaded dice (the simulator's `biased_dice` fault),
so the dice test has something real to find.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from croupier.commands.demo import run_in_process
from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import BuildResult, build_marts, connect_marts

NIGHT_SEED = 3


@dataclass(frozen=True)
class BuiltNight:
    lake: lakes.Lake
    marts: Path
    build: BuildResult
    faults: list[dict[str, object]]

    def lake_con(self) -> duckdb.DuckDBPyConnection:
        return lakes.connect(self.lake, read_only=True)

    def marts_con(self) -> duckdb.DuckDBPyConnection:
        return connect_marts(self.marts)


def settle_night(folder: Path, *, tables: int, hours: float, seed: int) -> lakes.Lake:
    """Simulate a night and settle it with the consumer's pipeline into `folder/lake`."""
    lake = lakes.Lake(root=folder / "lake")
    run_in_process(
        lake, tables=tables, hours=hours, seed=seed, faults="default",
        truth=folder / "truth.jsonl", progress=False,
    )  # fmt: skip
    return lake


@pytest.fixture(scope="session")
def built_night(tmp_path_factory: pytest.TempPathFactory, dbt: DbtWorker) -> BuiltNight:
    """The demo's size (3 tables of each game, 8 hours, faults on), settled and built."""
    folder = tmp_path_factory.mktemp("night")
    lake = settle_night(folder, tables=3, hours=8.0, seed=NIGHT_SEED)
    result = build_marts(lake, folder / "marts", quiet=True, dbt=dbt)
    faults = [json.loads(line) for line in (folder / "truth.jsonl").read_text().splitlines()]
    return BuiltNight(lake=lake, marts=folder / "marts", build=result, faults=faults)
