"""`croupier what-if`: the lake's rounds re-settled under another profile, read-only."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from consumers import what_if as wi
from croupier.cli import main
from events.models import Decision, Game
from games.profiles import load_profile
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import (
    TripokerRound,
    TripokerSeat,
    plays_queen_six_four,
    settle_tripoker,
)
from games.tripoker.strategy import strategy as tripoker_strategy
from infra import lake as lakes
from rules.cards import parse_cards
from rules.rankings import TRIPOKER
from rules.settlement import category_table

TRIPOKER_CATEGORY = category_table(TRIPOKER)


@pytest.fixture(scope="module")
def demo_lake(tmp_path_factory: pytest.TempPathFactory) -> lakes.Lake:
    """One table of each game for two hours, default faults, settled (no marts)."""
    from croupier.commands.demo import run_in_process

    lake = lakes.Lake(root=tmp_path_factory.mktemp("what_if") / "lake")
    run_in_process(lake, tables=1, hours=2.0, seed=77, faults="default", progress=False)
    return lake


def _lake_content(lake: lakes.Lake) -> dict[str, str]:
    """A hash of every table's rows (sorted), the snapshot id and the data files."""
    con = lakes.connect(lake, read_only=True)
    try:
        out = {"snapshot": str(lakes.current_snapshot(con))}
        for name in lakes.table_counts(con):
            rows = con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall()
            out[name] = hashlib.sha256(repr(rows).encode()).hexdigest()
    finally:
        con.close()
    out["files"] = "\n".join(sorted(str(p) for p in lake.data_path.rglob("*")))
    out["catalog"] = hashlib.sha256(lake.catalog.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("name", ["tripoker/pe-2005", "holdem/pe-2007", "pai-gow/pe-1999"])
def test_the_recorded_profile_gives_back_every_recorded_result(
    demo_lake: lakes.Lake, name: str
) -> None:
    """The same engine on the stored events reproduces the lake's settlements to the céntimo,
    Hold'em's jackpot rounds included (each against the meter recorded before it)."""
    profile = load_profile(name)
    found = wi.compare(demo_lake, profile, wi.Selection(game=profile.game))
    assert found.not_resettled == 0
    total = found.total()
    assert total.rounds > 20
    assert all(c.difference_cents == 0 for c in found.cells)
    assert total.handle_cents == total.whatif_handle_cents
    con = lakes.connect(demo_lake, read_only=True)
    try:
        recorded = con.execute(
            "SELECT count(*), sum(house_result_cents) FROM rounds "
            "WHERE status = 'settled' AND game = ?",
            [profile.game.value],
        ).fetchone()
    finally:
        con.close()
    assert recorded == (total.rounds, total.house_result_cents)


def test_standard_tripoker_differs_only_where_pair_plus_was_forfeited(
    demo_lake: lakes.Lake,
) -> None:
    """Decisions as played: pe-2005 and standard differ only by TCP-A11b (a fold forfeits pair
    plus), which the house gains by: a forfeited line with a paying hand is paid under
    standard, a losing one loses either way. So the difference is never positive, and is 0 on
    every table and day without a forfeit."""
    standard = load_profile("tripoker/standard")
    found = wi.compare(demo_lake, standard, wi.Selection(game=Game.TRIPOKER))
    total = found.total()
    assert total.decisions_changed == 0 and total.handle_cents == total.whatif_handle_cents
    con = lakes.connect(demo_lake, read_only=True)
    try:
        forfeited = {
            (table, day)
            for table, day in con.execute(
                "SELECT s.table_id, (r.started_at AT TIME ZONE 'UTC')::DATE FROM settlements s "
                "JOIN rounds r USING (round_id) WHERE s.spot = 'pair_plus' "
                "AND s.outcome = 'fold' AND list_contains(s.rule_ids, 'TCP-A11b')"
            ).fetchall()
        }
    finally:
        con.close()
    assert forfeited
    for cell in found.cells:
        assert cell.difference_cents <= 0
        if (cell.table_id, cell.day) not in forfeited:
            assert cell.difference_cents == 0


def test_strategy_without_an_exposed_card_is_queen_six_four() -> None:
    standard = load_profile("tripoker/standard")
    assert isinstance(standard, TripokerProfile)
    plays = tripoker_strategy(standard)
    dealer = parse_cards("2c 7d Ks")
    for hand in ("Qs 6d 4c", "Qs 6d 3c", "As 2d 3h", "2s 2d 9c", "Js Td 8c"):
        cards = parse_cards(hand)
        assert plays(cards, dealer, 1_000, 0) is plays_queen_six_four(cards)


def test_strategy_with_an_exposed_card_reads_it() -> None:
    """pe-2005 exposes the dealer's third card: a pair always plays; a weak hand plays
    against a low exposed card and folds against an ace."""
    pe = load_profile("tripoker/pe-2005")
    assert isinstance(pe, TripokerProfile) and pe.exposed_dealer_cards == (3,)
    plays = tripoker_strategy(pe)
    pair = parse_cards("3s 3d 9c")
    weak = parse_cards("Js 7d 5c")
    assert plays(pair, parse_cards("Kc Kd As"), 1_000, 0)
    assert plays(weak, parse_cards("Kc Qd 2s"), 1_000, 0)
    assert not plays(weak, parse_cards("Kc Qd Ah"), 1_000, 0)
    assert not plays_queen_six_four(weak)


def test_exposed_card_strategy_plays_when_the_engine_says_playing_returns_more() -> None:
    """Against the engine itself: for high-card hands (where the decision turns) and a random
    exposed card, the ante-play return of play and of fold summed by settling every one of the
    1,128 dealer hands left; the strategy plays exactly when play returns more."""
    pe = load_profile("tripoker/pe-2005")
    assert isinstance(pe, TripokerProfile)
    plays = tripoker_strategy(pe)
    rng = random.Random(17)
    checked = turned = 0
    while checked < 10:
        hand = tuple(rng.sample(range(52), 3))
        if TRIPOKER_CATEGORY[TRIPOKER.strength(hand)] != 0:  # pairs and better always play
            continue
        exposed = rng.choice([c for c in range(52) if c not in hand])
        rest = [c for c in range(52) if c not in (*hand, exposed)]
        returns = {}
        for decision in (Decision.PLAY, Decision.FOLD):
            seat = TripokerSeat(
                seat=1, ante_cents=100, pair_plus_cents=0, cards=hand, decision=decision
            )
            returns[decision] = -sum(
                settle_tripoker(
                    TripokerRound(round_id="r", dealer_cards=(a, b, exposed), seats=(seat,)), pe
                ).house_result_cents
                for a, b in itertools.combinations(rest, 2)
            )
        expected = returns[Decision.PLAY] > returns[Decision.FOLD]
        assert plays(hand, (rest[0], rest[1], exposed), 100, 0) is expected
        turned += expected is not plays_queen_six_four(hand)
        checked += 1
    assert turned  # the exposed card changed some decisions from queen-6-4's


def test_the_cli_never_changes_the_lake(demo_lake: lakes.Lake) -> None:
    before = _lake_content(demo_lake)
    runner = CliRunner()
    for args in (
        ["--profile", "tripoker/standard"],
        ["--profile", "tripoker/standard", "--decisions", "strategy", "--format", "csv"],
        ["--profile", "tripoker/pe-2005", "--decisions", "strategy", "--format", "json"],
        ["--profile", "holdem/pe-2007"],
        ["--profile", "pai-gow/pe-1999", "--format", "json"],
    ):
        result = runner.invoke(main, ["what-if", "--lake", str(demo_lake.root), *args])
        assert result.exit_code == 0, result.output
    assert _lake_content(demo_lake) == before


def test_the_cli_prints_per_table_and_day_and_the_total(demo_lake: lakes.Lake) -> None:
    runner = CliRunner()
    lake = ["what-if", "--lake", str(demo_lake.root), "--profile", "tripoker/standard"]
    text = runner.invoke(main, lake)
    assert text.exit_code == 0, text.output
    assert "tripoker/pe-2005@v1" in text.output and "tripoker/standard@v1" in text.output
    assert "decisions as played" in text.output
    assert text.output.splitlines()[-1].startswith("total")
    lines = runner.invoke(main, [*lake, "--format", "json"]).output.splitlines()
    rows = [json.loads(line) for line in lines]
    assert rows and all(r["whatif_profile"] == "tripoker/standard@v1" for r in rows)
    assert all(
        r["difference_cents"] == r["whatif_house_result_cents"] - r["house_result_cents"]
        for r in rows
    )
    one = rows[0]
    only = runner.invoke(
        main,
        [*lake, "--format", "json", "--table", one["table_id"], "--from", one["day"], "--to",
         one["day"]],
    )  # fmt: skip
    assert [json.loads(line) for line in only.output.splitlines()] == [one]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--profile", "tripoker/nope"], 2, "unknown profile"),
        (["--profile", "tripoker/standard", "--game", "holdem"], 2, "cannot settle holdem"),
        (["--profile", "holdem/pe-2007", "--decisions", "strategy"], 2, "Tripóker"),
        (["--profile", "tripoker/standard", "--from", "2031-01-02", "--to", "2031-01-01"], 2,
         "before"),
        (["--profile", "tripoker/standard", "--from", "2031-01-01"], 3, "no settled tripoker"),
    ],
)  # fmt: skip
def test_the_cli_refuses_with_a_clear_error(
    demo_lake: lakes.Lake, args: list[str], code: int, says: str
) -> None:
    result = CliRunner().invoke(main, ["what-if", "--lake", str(demo_lake.root), *args])
    assert result.exit_code == code, result.output
    assert says in result.output


def test_the_cli_refuses_a_missing_lake(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["what-if", "--lake", str(tmp_path / "none"), "--profile", "tripoker/standard"]
    )
    assert result.exit_code == 2 and "no lake" in result.output


def test_the_last_day_there_is_and_a_marts_store_are_no_traceback(demo_lake: lakes.Lake) -> None:
    base = ["what-if", "--lake", str(demo_lake.root), "--profile", "tripoker/standard"]
    whole = CliRunner().invoke(main, [*base, "--format", "json"])
    to_the_end = CliRunner().invoke(main, [*base, "--format", "json", "--to", "9999-12-31"])
    assert whole.exit_code == to_the_end.exit_code == 0, to_the_end.output
    assert to_the_end.output == whole.output
    marts = demo_lake.root.parent / "not-a-lake"
    built = lakes.Lake(root=marts)
    con = lakes.connect(built, create=True)
    con.close()
    result = CliRunner().invoke(main, ["what-if", "--lake", str(marts), "--profile",
                                       "tripoker/standard"])  # fmt: skip
    assert result.exit_code == 1 and "not a settlement lake" in result.output
    assert "Traceback" not in result.output
