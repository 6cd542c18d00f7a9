"""`croupier hand rank|compare`: JSON on stdout, exit 2 and one line on stderr for bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from croupier.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["hand", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--game", "pai-gow", "Jk", "Kc", "Kd", "Kh", "2s"],  # PGP-A3c
            {"category": "three_of_a_kind", "rank": [3, 11, 12, 0],
             "cards": ["Kh", "Kd", "Kc", "Jk", "2s"]},
        ),
        (
            ["--game", "pai-gow", "jk as ah ad ac"],  # PGP-A4a, one quoted argument
            {"category": "five_aces", "rank": [10], "cards": ["As", "Ah", "Ad", "Ac", "Jk"]},
        ),
        (
            ["--game", "pai-gow", "Jk", "As"],  # the 2-card low hand
            {"category": "pair", "rank": [1, 12], "cards": ["As", "Jk"]},
        ),
        (
            ["--game", "tripoker", "Ad", "2c", "3d"],  # TCP-A4c: the lowest straight
            {"category": "straight", "rank": [3, 1], "cards": ["3d", "2c", "Ad"]},
        ),
        (
            ["--game", "holdem", "2c", "7d", "Ah", "Kh", "Qh", "Jh", "10h"],
            {"category": "royal_flush", "rank": [9], "cards": ["Ah", "Kh", "Qh", "Jh", "Th"]},
        ),
    ],
)  # fmt: skip
def test_hand_rank_prints_category_rank_and_cards(args: list[str], expected: object) -> None:
    code, out, err = run("rank", *args)
    assert (code, err) == (0, "")
    assert json.loads(out) == expected


@pytest.mark.parametrize(
    ("game", "a", "b", "winner"),
    [
        ("pai-gow", "Ad 2c 3h 4s 5d", "Kc Qd Jh Ts 9c", "a"),  # PGP-A4g
        ("holdem", "Ad 2c 3h 4s 5d", "Kc Qd Jh Ts 9c", "b"),  # THP-A4
        ("tripoker", "Ad 2c 3h", "Ac Kc 9c", "a"),  # TCP-A4: straight over flush
        ("pai-gow", "Jk Ks Qs Js Ts", "As Ks Qs Js Ts", "tie"),  # PGP-A5b
        ("holdem", "As Ks Qd Jc 9h 2c 3d", "Ah Kd Qs Jd 9c 4h 5h", "tie"),
    ],
)
def test_hand_compare_names_the_winner(game: str, a: str, b: str, winner: str) -> None:
    code, out, err = run("compare", "--game", game, a, b)
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["winner"] == winner
    assert {result["a"]["category"], result["b"]["category"]} <= {
        "straight", "flush", "royal_flush", "high_card",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["rank", "--game", "holdem", "Jk", "Ac", "Kd", "Qh", "Js"],
            "joker is only used in Pai Gow",
        ),
        (["rank", "--game", "holdem", "Ac", "Ac", "Kd", "Qh", "Js"], "duplicate card 'Ac'"),
        (["rank", "--game", "holdem", "Ac", "Xd", "Kd", "Qh", "Js"], "unknown rank 'X'"),
        (["rank", "--game", "tripoker", "Ac", "Kd"], "tripoker ranks hands of 3 cards, got 2"),
        (["rank", "--game", "pai-gow", "Ac", "Kd", "Qd"], "2 cards (low), 5 (high) or 7"),
        (["rank", "--game", "poker", "Ac", "Kd", "Qd"], "Invalid value for '--game'"),
        (["rank", "Ac", "Kd", "Qd"], "Missing option '--game'"),
        (["compare", "--game", "pai-gow", "Ac Kd", "Ac Kd Qh Js 9d"], "2-card Pai Gow hand"),
        (["compare", "--game", "holdem", "Ac Kd Qh Js 9d"], "Missing argument"),
    ],
)
def test_bad_input_exits_2_with_one_line_on_stderr(args: list[str], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_hand_help_and_a_real_subprocess_through_uv() -> None:
    code, out, _ = run("rank", "--help")
    assert code == 0 and "--game" in out
    uv = shutil.which("uv")
    assert uv is not None
    done = subprocess.run(
        [uv, "run", "croupier", "hand", "rank", "--game", "pai-gow", "Jk Ac Ad Ah As"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["category"] == "five_aces"
    bad = subprocess.run(
        [uv, "run", "croupier", "hand", "rank", "--game", "holdem", "Jk Ac Ad Ah As"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "Error: bad card 'Jk': the joker is only used in Pai Gow"
    ]
