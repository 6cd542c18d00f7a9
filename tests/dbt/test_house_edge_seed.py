"""The committed game-math seeds equal a fresh computation from the rule profiles (DEF-ACC2).

Tripóker and the Hold'em progressive are exact, so their rows must match to the last digit;
the published Wizard of Odds figures are checked beside them as an independent source.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from games.holdem.profile import HoldemProfile
from games.profiles import load_profile
from games.tripoker.profile import TripokerProfile

PROJECT = Path(__file__).resolve().parents[2] / "dbt_project"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("house_edges", PROJECT / "scripts/house_edges.py")
    if spec is None or spec.loader is None:
        raise ImportError("dbt_project/scripts/house_edges.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["house_edges"] = module
    spec.loader.exec_module(module)
    return module


def committed(name: str) -> list[dict[str, str]]:
    with (PROJECT / "seeds" / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def as_text(rows: list[dict[str, object]]) -> list[dict[str, str]]:
    return [{k: str(v) for k, v in row.items()} for row in rows]


@pytest.mark.parametrize("name", ["tripoker/pe-2005", "tripoker/standard"])
def test_def_acc2_tripoker_house_edges_in_the_seed_equal_a_fresh_exact_computation(
    name: str,
) -> None:
    script = load_script()
    profile = load_profile(name)
    assert isinstance(profile, TripokerProfile)
    fresh = as_text(script.edge_rows(profile))
    seed = [r for r in committed("house_edges.csv") if r["profile"] == name]
    assert seed == fresh
    edges = {r["spot"]: float(r["house_edge"]) for r in seed}
    # Wizard of Odds, Three Card Poker: ante & play 3.37 % (queen-6-4), pair plus 40-30-6-4-1 2.32 %
    assert edges["ante"] == pytest.approx(0.033730, abs=5e-7)
    assert edges["pair_plus"] == pytest.approx(0.023167, abs=5e-7)
    assert edges["play"] == edges["ante_bonus"] == 0.0  # counted once, in the ante's edge


def test_def_thp4_progressive_edge_and_paytable_equal_a_fresh_exact_computation() -> None:
    script = load_script()
    profile = load_profile("holdem/pe-2007")
    assert isinstance(profile, HoldemProfile)
    fresh = as_text(script.edge_rows(profile, precision=0.1))  # the progressive is exact
    seed = [r for r in committed("house_edges.csv") if r["profile"] == profile.name]
    by_spot = {r["spot"]: r for r in seed}
    assert by_spot["progressive"] == next(r for r in fresh if r["spot"] == "progressive")
    assert as_text(script.paytable_rows(profile)) == committed("progressive_paytable.csv")
    # the 5-card frequencies are textbook counts: 4 royal flushes and 624 quads of 2,598,960
    paytable = {r["hand"]: float(r["probability"]) for r in committed("progressive_paytable.csv")}
    assert paytable["royal_flush"] == 4 / 2_598_960
    assert paytable["four_of_a_kind"] == 624 / 2_598_960
    assert paytable["flush"] == 5_108 / 2_598_960


def test_every_builtin_profile_has_an_edge_for_each_of_its_spots() -> None:
    seed = committed("house_edges.csv")
    spots = {(r["profile"], r["spot"]) for r in seed}
    assert spots == {
        ("pai-gow/pe-1999", "main"),
        *(("holdem/pe-2007", s) for s in ("ante", "call", "progressive")),
        *((p, s) for p in ("tripoker/pe-2005", "tripoker/standard")
          for s in ("ante", "ante_bonus", "pair_plus", "play")),
    }  # fmt: skip
    assert all(r["method"] for r in seed)
