"""Rules through time in the lake: rounds recorded under two versions of one Tripóker profile each
settle under their own version (the paytable that was posted), with the version and the hash of
its file on every round; without the newer version installed its rounds stay unsettled, saying
why, and every event is kept for a replay; settling the same events again gives the same lake."""

from __future__ import annotations

from pathlib import Path

import pytest

from events import Game
from games.profiles import load_profile
from infra.dbt_worker import DbtWorker
from producers.simulator import Message, parse_faults, simulate
from rules.profile import PROFILES_ENV, builtin_profile_text
from tests.consumers.helpers import derived_hashes, open_lake
from tests.consumers.test_file_source import in_process


def standard_v2_folder(root: Path) -> Path:
    """A casino's folder releasing tripoker/standard v2: pair plus 1-3-6-30-40 (flush 3, not 4)."""
    text = builtin_profile_text("tripoker/standard", 1)
    v2 = text.replace("version = 1\n", "version = 2\n").replace("\nflush = 4\n", "\nflush = 3\n")
    assert v2.count("version = 2") == 1 and "\nflush = 3\n" in v2
    folder = root / "profiles"
    (folder / "tripoker" / "standard").mkdir(parents=True)
    (folder / "tripoker" / "standard" / "v2.toml").write_text(v2, encoding="utf-8")
    return folder


def table_night(version: int, seed: int, table_id: str) -> list[Message]:
    """Two hours of one Tripóker table opened under tripoker/standard@version, no faults."""
    messages = simulate(
        tables={Game.TRIPOKER: 1},
        hours=2,
        seed=seed,
        faults=parse_faults("none"),
        profiles={Game.TRIPOKER: f"tripoker/standard@{version}"},
    )
    # the simulator numbers its tables from TP-01: the second table gets its own id
    return [
        Message(
            key=m.key.replace("TP-01", table_id), value=m.value.replace(b"TP-01", table_id.encode())
        )
        for m in messages
    ]


@pytest.fixture
def two_versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    monkeypatch.setenv(PROFILES_ENV, str(standard_v2_folder(tmp_path)))
    return table_night(1, seed=3, table_id="TP-01") + table_night(2, seed=4, table_id="TP-02")


def test_each_round_settles_under_the_version_its_table_opened_with(
    tmp_path: Path, two_versions: list[Message]
) -> None:
    in_process(two_versions, tmp_path / "lake", "night")
    v1, v2 = load_profile("tripoker/standard@1"), load_profile("tripoker/standard@2")
    con = open_lake(tmp_path / "lake")
    try:
        rounds = con.execute(
            "SELECT table_id, profile, profile_version, profile_hash, status, count(*) "
            "FROM rounds GROUP BY ALL ORDER BY table_id"
        ).fetchall()
        assert rounds == [
            ("TP-01", "tripoker/standard", 1, v1.content_hash, "settled", rounds[0][-1]),
            ("TP-02", "tripoker/standard", 2, v2.content_hash, "settled", rounds[1][-1]),
        ]
        assert min(r[-1] for r in rounds) > 50
        # the dealer paid by the posted table; under the wrong version a flush would differ
        (differences,) = con.execute(
            "SELECT count(*) FROM settlements WHERE coalesce(payout_difference_cents, 0) <> 0"
        ).fetchone()
        assert differences == 0
        assert con.execute("SELECT count(*) FROM violations").fetchone() == (0,)
        pays = dict(
            con.execute(
                "SELECT profile_version, list(DISTINCT payout_cents // wager_cents ORDER BY 1) "
                "FROM settlements WHERE spot = 'pair_plus' AND outcome = 'win' GROUP BY 1"
            ).fetchall()
        )
        # pair 1, flush 4 or 3, straight 6 (trips and straight flushes are rare in two hours)
        assert {1, 4, 6} <= set(pays[1]) and 3 not in pays[1]
        assert {1, 3, 6} <= set(pays[2]) and 4 not in pays[2]
    finally:
        con.close()
    # the same events settled again: the same lake
    in_process(two_versions, tmp_path / "again", "night")
    assert derived_hashes(tmp_path / "again") == derived_hashes(tmp_path / "lake")


def test_rounds_of_a_version_not_installed_stay_unsettled_and_lose_nothing(
    tmp_path: Path, two_versions: list[Message], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PROFILES_ENV)
    in_process(two_versions, tmp_path / "lake", "night")
    con = open_lake(tmp_path / "lake")
    try:
        statuses = con.execute(
            "SELECT table_id, status, any_value(status_reason), count(*) FROM rounds GROUP BY ALL "
            "ORDER BY table_id"
        ).fetchall()
        (events,) = con.execute("SELECT count(*) FROM events").fetchone()
    finally:
        con.close()
    assert [s[:2] for s in statuses] == [("TP-01", "settled"), ("TP-02", "unsettled")]
    assert "tripoker/standard v2 is not released (released: v1)" in statuses[1][2]
    assert events == len(two_versions)


def test_the_marts_build_over_versions_without_house_edges_and_list_them(
    tmp_path: Path, two_versions: list[Message], dbt: DbtWorker
) -> None:
    """A casino's own version (no row in the house-edge seed yet) and a version not released
    here (a device's typo) do not stop `croupier build`: dim_profiles lists each version tables
    opened under, says which have no house edges, and the settled rounds are in the facts."""
    from infra import lake as lakes
    from infra.marts import build_marts, connect_marts

    typo = [
        Message(
            key=m.key.replace("TP-01", "TP-03"),
            value=m.value.replace(b"TP-01", b"TP-03").replace(
                b'"profile_version":1,', b'"profile_version":5,'
            ),
        )
        for m in table_night(1, seed=5, table_id="TP-01")
    ]
    in_process(two_versions + typo, tmp_path / "lake", "night")
    build_marts(lakes.Lake(root=tmp_path / "lake"), tmp_path / "marts", quiet=True, dbt=dbt)
    con = connect_marts(tmp_path / "marts")
    try:
        profiles = con.execute(
            "SELECT profile_key, has_house_edges, tables_using FROM dim_profiles "
            "WHERE profile = 'tripoker/standard' ORDER BY profile_version"
        ).fetchall()
        statuses = dict(
            con.execute(
                "SELECT table_id, list(DISTINCT status) FROM fct_rounds GROUP BY 1"
            ).fetchall()
        )
    finally:
        con.close()
    assert profiles == [
        ("tripoker/standard@1", True, 1),
        ("tripoker/standard@2", False, 1),
        ("tripoker/standard@5", False, 1),
    ]
    assert statuses == {"TP-01": ["settled"], "TP-02": ["settled"], "TP-03": ["unsettled"]}


def test_a_lake_made_before_profile_hash_still_builds(tmp_path: Path, dbt: DbtWorker) -> None:
    """The consumer adds a new lake column when it next writes; the build only reads, so a lake
    no consumer opened since still builds (the column is null in staging; before, staging
    failed on it and the build stopped)."""
    from infra import lake as lakes
    from infra.marts import build_marts, connect_marts

    lake = lakes.Lake(root=tmp_path / "lake")
    in_process(table_night(1, seed=3, table_id="TP-01"), lake.root, "night")
    con = lakes.connect(lake)
    try:
        con.execute("ALTER TABLE rounds DROP COLUMN profile_hash")  # as a lake made before it
    finally:
        con.close()
    build_marts(lake, tmp_path / "marts", quiet=True, dbt=dbt)
    marts = connect_marts(tmp_path / "marts")
    try:
        row = marts.execute("SELECT count(*) FILTER (WHERE status = 'settled') FROM fct_rounds")
        settled = row.fetchone()
    finally:
        marts.close()
    assert settled is not None and settled[0] > 50
