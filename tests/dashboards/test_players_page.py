"""The Players page and the hole-carding test behind it (issue 18), on real simulated nights:
a Tripóker night with hole-carders (players who see the dealer's hidden cards, the simulator's
`--players hole-carder:0.2`, logged in the truth) flags hole-carders and nobody else, and the
page lists them with their evidence and opens their rounds in the Round explorer; the demo
night, whose players all decide from their own cards, flags nobody."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboards import auth
from events.models import Game
from infra import lake as lakes
from infra.config import get_settings
from infra.dbt_worker import DbtWorker
from infra.marts import build_marts, connect_marts
from tests.dashboards.browser import MANAGER, SURVEILLANCE, write_users
from tests.dashboards.test_pages import _logged_in, _nothing_wrong, _titles, _visit


@pytest.fixture(scope="module")
def hole_carding_night(
    tmp_path_factory: pytest.TempPathFactory, dbt: DbtWorker
) -> tuple[Path, Path, dict]:
    """Two Tripóker tables (Peru's exposed-card profile) for four hours, no procedure
    faults, a fifth of the players hole-carders; settled and built. Returns the lake, the
    marts and each player's archetype from the truth."""
    from croupier.commands.demo import run_in_process

    root = tmp_path_factory.mktemp("hole_carding")
    lake = lakes.Lake(root=root / "lake")
    run_in_process(
        lake, tables={Game.TRIPOKER: 2, Game.HOLDEM: 0, Game.PAI_GOW: 0}, hours=4.0, seed=5,
        faults="none", truth=root / "truth.jsonl", progress=False, players="hole-carder:0.2",
    )  # fmt: skip
    build_marts(lake, root / "marts", quiet=True, dbt=dbt)
    truth = [json.loads(line) for line in (root / "truth.jsonl").read_text().splitlines()]
    archetypes = {r["player_ref"]: r["archetype"] for r in truth if r.get("kind") == "player"}
    return lake.root, root / "marts", archetypes


@pytest.fixture
def night_env(
    hole_carding_night: tuple[Path, Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    lake, marts, _ = hole_carding_night
    monkeypatch.setenv("CROUPIER_LAKE_PATH", str(lake))
    monkeypatch.setenv("CROUPIER_MARTS_PATH", str(marts))
    monkeypatch.setenv("CROUPIER_DATA_DIR", str(tmp_path / "state"))
    monkeypatch.setenv(auth.USERS_ENV, str(write_users(tmp_path / "users.toml")))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _flagged(marts: Path) -> dict[str, int]:
    con = connect_marts(marts)
    try:
        rows = con.execute(
            "SELECT player_ref, sample_size FROM stat_player_decisions "
            "WHERE test_name = 'player_decisions' AND is_alert"
        ).fetchall()
        assert con.execute(
            "SELECT count(*) FROM fct_statistical_alerts WHERE test_name = 'player_decisions'"
        ).fetchone() == (len(rows),)
        return dict(rows)
    finally:
        con.close()


def test_hole_carders_are_flagged_and_nobody_else(
    hole_carding_night: tuple[Path, Path, dict],
) -> None:
    _, marts, archetypes = hole_carding_night
    flagged = _flagged(marts)
    assert flagged, "no hole-carder was flagged"
    assert {archetypes[p] for p in flagged} == {"hole-carder"}
    con = connect_marts(marts)
    try:
        tested = dict(
            con.execute(
                "SELECT player_ref, sample_size FROM stat_player_decisions "
                "WHERE test_name = 'player_decisions'"
            ).fetchall()
        )
        alerts = con.execute(
            "SELECT test_name, count(*) FROM fct_statistical_alerts GROUP BY ALL"
        ).fetchall()
    finally:
        con.close()
    # a hole-carder with 30 decisions that can tell matches them all: p < 1e-5, always found
    for player, archetype in archetypes.items():
        if archetype == "hole-carder" and tested.get(player, 0) >= 30:
            assert player in flagged, player
    # and the night's other statistical tests stay quiet: the players' skill is not the house's
    assert {name for name, _ in alerts} <= {"player_decisions", "dealer_player_decisions"}


def test_the_page_lists_the_flagged_and_opens_their_rounds(
    night_env: None, hole_carding_night: tuple[Path, Path, dict]
) -> None:
    flagged = _flagged(hole_carding_night[1])
    at = _visit(_logged_in(SURVEILLANCE), "players")
    _nothing_wrong(at)
    assert _titles(at) == ["Players"]
    shown = at.dataframe[0].value
    assert set(shown["player_ref"]) == set(flagged)
    assert "gain_cents" not in shown.columns  # surveillance sees no money
    decisions = at.dataframe[2].value
    assert len(decisions) > 0 and decisions["round_id"].is_unique
    round_id = at.selectbox(key="players_round").value
    at.button(key="players_open").click().run()
    assert _titles(at) == ["Round explorer"]
    assert at.text_input(key="find_round_id").value == round_id
    assert "Settlement" in [s.value for s in at.subheader]  # the round was found and shown


def test_a_manager_sees_what_the_players_won(
    night_env: None, hole_carding_night: tuple[Path, Path, dict]
) -> None:
    at = _visit(_logged_in(MANAGER), "players")
    _nothing_wrong(at)
    assert "gain_cents" in at.dataframe[0].value.columns


def test_a_night_of_honest_players_flags_nobody(dashboard_env: Path) -> None:
    at = _visit(_logged_in(SURVEILLANCE), "players")
    _nothing_wrong(at)
    assert [s.value for s in at.success] == [
        "No player's decisions are improbable for someone who cannot see the hidden cards."
    ]


@pytest.mark.parametrize("value", ["TP-01-R00005\x00", "x" * 5_000, "'; DROP TABLE rounds; --"])
def test_a_hostile_round_link_finds_nothing_and_breaks_nothing(
    dashboard_env: Path, value: str
) -> None:
    at = _logged_in(SURVEILLANCE)
    at.query_params["round"] = value
    at = _visit(at, "round_explorer")
    _nothing_wrong(at)
    assert "Settlement" not in [s.value for s in at.subheader]
