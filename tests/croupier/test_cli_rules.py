"""`croupier house-way`, `croupier settle`, `croupier odds`: JSON out, exit 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from croupier.cli import main


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_house_way_prints_the_two_hands() -> None:
    code, out, _ = run("house-way", "As", "Kd", "9c", "7h", "6s", "4d", "2c")
    assert code == 0
    assert json.loads(out) == {"high": ["As", "7h", "6s", "4d", "2c"], "low": ["Kd", "9c"]}


def test_house_way_accepts_one_quoted_hand_and_the_way() -> None:
    code, out, _ = run("house-way", "--way", "trump-plaza", "Ts Td Tc 2h 2s Ad Kc")
    assert code == 0
    assert sorted(json.loads(out)["low"]) == ["Ad", "Kc"]  # Trump Plaza keeps 2s with trips


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["As", "Kd", "9c"], "expected 7 cards, got 3"),
        (["As", "Kd", "9c", "7h", "6s", "4d", "2x"], "unknown suit"),
        (["As", "As", "9c", "7h", "6s", "4d", "2c"], "duplicate card"),
        (["--way", "caesars", "As", "Kd", "9c", "7h", "6s", "4d", "2c"], "caesars"),
    ],
)
def test_house_way_bad_input_exits_2_with_a_clear_error(args: list[str], message: str) -> None:
    code, out, err = run("house-way", *args)
    assert code == 2 and out == ""
    assert message in err


TRIPOKER_ROUNDS = [
    {
        "game": "tripoker",
        "round_id": "t1",
        "dealer_cards": ["Qs", "5d", "3c"],
        "seats": [
            {"seat": 1, "ante_cents": 1000, "pair_plus_cents": 500,
             "cards": ["Ah", "Kh", "Jh"], "decision": "play"},
            {"seat": 2, "pair_plus_cents": 500, "cards": ["7s", "7d", "2c"], "decision": "fold"},
        ],
    },
]  # fmt: skip


def settle(rounds: list[dict[str, object]], *args: str) -> tuple[int, list[dict[str, object]], str]:
    code, out, err = run("settle", *args, stdin="".join(json.dumps(r) + "\n" for r in rounds))
    return code, [json.loads(line) for line in out.splitlines()], err


def test_settle_prints_one_json_line_per_bet() -> None:
    code, lines, _ = settle(TRIPOKER_ROUNDS)
    assert code == 0
    assert [(x["seat"], x["spot"], x["outcome"], x["net_cents"]) for x in lines] == [
        (1, "ante", "win", 1000),
        (1, "play", "win", 1000),
        (1, "pair_plus", "win", 2000),  # a flush pays 4 to 1 (DEF-TCP5)
        (2, "pair_plus", "fold", -500),  # pe-2005 by default: a fold forfeits it (TCP-A11b)
    ]
    assert all(x["profile"] == "tripoker/pe-2005" and x["profile_version"] == 1 for x in lines)
    assert set(lines[0]) >= {
        "round_id", "seat", "spot", "wager_cents", "outcome", "payout_cents",
        "commission_cents", "net_cents", "profile", "rule_ids",
    }  # fmt: skip


def test_settle_under_another_profile() -> None:
    code, lines, _ = settle(TRIPOKER_ROUNDS, "--profile", "tripoker/standard")
    assert code == 0
    assert lines[-1]["outcome"] == "win" and lines[-1]["profile"] == "tripoker/standard"


def test_settle_under_a_profile_file(tmp_path: Path) -> None:
    from importlib import resources

    text = (
        resources.files("rules").joinpath("profiles", "tripoker", "standard", "v1.toml").read_text()
    )
    path = tmp_path / "casino.toml"
    path.write_text(text.replace('name = "tripoker/standard"', 'name = "tripoker/casino-x"'))
    code, lines, _ = settle(TRIPOKER_ROUNDS, "--profile", str(path))
    assert code == 0 and lines[0]["profile"] == "tripoker/casino-x"


def test_settle_pai_gow_and_holdem_rounds() -> None:
    pai_gow = {
        "game": "pai-gow",
        "round_id": "p1",
        "dealer_cards": ["9c", "9d", "Kc", "Qd", "7h", "4s", "2h"],
        "seats": [
            {"seat": 2, "wager_cents": 1010, "cards": ["Ts", "Td", "8c", "5h", "3s", "As", "Jd"],
             "high": ["Ts", "Td", "8c", "5h", "3s"], "low": ["As", "Jd"]},
        ],
    }  # fmt: skip
    code, lines, _ = settle([pai_gow])
    assert code == 0
    assert (lines[0]["outcome"], lines[0]["commission_cents"], lines[0]["net_cents"]) == (
        "win", 50, 960,  # 5 % of 10.10 is 50.5 céntimos, rounded down (DEF-M2)
    )  # fmt: skip
    holdem = {
        "game": "holdem",
        "round_id": "h1",
        "dealer_hole": ["5d", "6d"],
        "board": ["Qh", "Jh", "Th", "4c", "3s"],
        "seats": [{"seat": 1, "ante_cents": 1000, "progressive_cents": 500,
                   "hole": ["Ah", "Kh"], "decision": "call"}],
    }  # fmt: skip
    code, lines, _ = settle([holdem, {**holdem, "round_id": "h2"}])
    assert code == 0
    progressive = [x for x in lines if x["spot"] == "progressive"]
    # Round 1 pays the seed meter plus its own 1 S/ contribution; the meter carries over to
    # round 2, reset to the seed, plus round 2's contribution.
    assert [x["payout_cents"] for x in progressive] == [2_000_100, 2_000_100]


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("not json\n", "line 1"),
        ('{"game": "tripoker", "round_id": "t1"}\n', "field 'dealer_cards'"),
        (json.dumps({**TRIPOKER_ROUNDS[0], "dealer_cards": ["Qs", "5d", "Ah"]}) + "\n",
         "repeated"),
        (json.dumps({**TRIPOKER_ROUNDS[0], "dealer_cards": ["Qs", "5d", "1c"]}) + "\n",
         "unknown rank"),
        ('{"game": "baccarat"}\n', "line 1"),
    ],
)  # fmt: skip
def test_settle_bad_input_exits_2_naming_the_line(stdin: str, message: str) -> None:
    code, out, err = run("settle", stdin=stdin)
    assert code == 2 and out == ""
    assert message in err and "line 1" in err


def test_settle_refuses_a_round_of_another_game_than_the_profile() -> None:
    code, _, err = settle(TRIPOKER_ROUNDS, "--profile", "holdem/pe-2007")
    assert code == 2 and "cannot be settled under holdem/pe-2007" in err


def test_odds_tripoker_prints_the_exact_figures_and_flags_pe_2005() -> None:
    code, out, _ = run("odds", "--game", "tripoker", "--profile", "tripoker/pe-2005")
    assert code == 0
    report = json.loads(out)
    assert round(report["wagers"]["ante_play"]["house_edge"] * 100, 4) == 3.3730
    assert report["negative_house_edge"] == ["ante_play_exposed_card_optimal"]


def test_odds_simulates_pai_gow_with_a_seed() -> None:
    code, out, err = run("odds", "--game", "pai-gow", "--rounds", "200", "--seed", "5")
    assert code == 0
    report = json.loads(out)
    main = report["wagers"]["main"]
    assert report["seed"] == 5 and len(main["ci95"]) == 2 and main["samples"] == 200
    assert main["ci95_half_width"] == pytest.approx((main["ci95"][1] - main["ci95"][0]) / 2)
    assert "simulating pai-gow/pe-1999" in err  # the progress bar, on stderr
    _, again, _ = run("odds", "--game", "pai-gow", "--rounds", "200", "--seed", "5", "--quiet")
    assert json.loads(again) == report


def test_odds_simulates_until_the_precision_asked() -> None:
    code, out, _ = run("odds", "--game", "pai-gow", "--precision", "0.05", "--quiet")
    assert code == 0
    main = json.loads(out)["wagers"]["main"]
    assert main["ci95_half_width"] <= 0.0005 and "at most 0.0500%" in main["stopping_rule"]


def test_odds_quotes_a_published_figure_only_beside_its_own_paytable(tmp_path: Path) -> None:
    """Issue 17: pair plus 1-3-6-30-40 printed 2.32 % (the 1-4-6-30-40 figure) beside 7.28 %."""
    profiles = Path(__file__).resolve().parents[2] / "rules" / "profiles" / "tripoker"
    text = (profiles / "standard" / "v1.toml").read_text(encoding="utf-8")
    text = text.replace('name = "tripoker/standard"', 'name = "tripoker/casino-lima"')
    path = tmp_path / "casino.toml"
    path.write_text(text.replace("\nflush = 4", "\nflush = 3"), encoding="utf-8")
    code, out, err = run("odds", "--profile", str(path))
    assert code == 0 and err == ""  # exact: no progress bar, no seed
    pair_plus = json.loads(out)["wagers"]["pair_plus"]
    assert round(pair_plus["house_edge"] * 100, 2) == 7.28
    assert pair_plus["published"]["house_edge_percent"] == 7.28
    assert "0.0232" not in out and "2.32" not in out
    path.write_text(text.replace("\nflush = 4", "\nflush = 2"), encoding="utf-8")
    code, out, _ = run("odds", "--profile", str(path))
    published = json.loads(out)["wagers"]["pair_plus"]["published"]
    assert code == 0 and published["house_edge"] is None
    assert "no published figure" in published["note"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "--game or --profile"),
        (["--game", "tripoker", "--profile", "holdem/pe-2007"], "not tripoker"),
        (["--profile", "nowhere.toml"], "nor a profile file"),
        (["--game", "pai-gow", "--rounds", "5"], "--rounds"),
        (["--game", "pai-gow", "--precision", "0"], "--precision"),
        (["--game", "pai-gow", "--rounds", "500", "--precision", "0.1"], "not both"),
    ],
)
def test_odds_bad_input_exits_2(args: list[str], message: str) -> None:
    code, out, err = run("odds", *args)
    assert code == 2 and out == ""
    assert message in err


def test_a_profile_file_whose_path_has_an_at_sign_or_bad_bytes(tmp_path: Path) -> None:
    from importlib import resources

    text = resources.files("rules").joinpath("profiles", "tripoker", "standard", "v1.toml")
    at = tmp_path / "my@casino.toml"
    at.write_text(text.read_text().replace("tripoker/standard", "tripoker/casino-x"))
    code, out, err = run("odds", "--profile", str(at))
    assert code == 0, err
    assert json.loads(out)["profile"] == "tripoker/casino-x"
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"name = '\xe9'\n")
    code, _, err = run("odds", "--profile", str(bad))
    assert code == 2 and "not UTF-8" in err and "Traceback" not in err
    code, _, err = run("odds", "--profile", "tripoker/standard@²")
    assert code == 2 and "version after '@'" in err and "Traceback" not in err
