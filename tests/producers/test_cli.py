"""`croupier simulate` writes the night and its truth log, refuses bad input with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from croupier.cli import main
from events import InvalidEvent, parse_event
from producers.simulator import Fault, simulate


def test_simulate_writes_the_messages_and_the_truth_log(tmp_path: Path) -> None:
    out, truth = tmp_path / "night.jsonl", tmp_path / "truth.jsonl"
    args = ["simulate", "--tables-per-game", "1", "--hours", "2", "--seed", "4", "--quiet"]
    faults = "none,house_way:0.2,malformed:0.002"
    result = CliRunner().invoke(
        main, [*args, "--faults", faults, "--out", str(out), "--truth", str(truth)]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    lines = out.read_bytes().splitlines()
    records = [json.loads(line) for line in truth.read_text().splitlines()]
    assert summary["messages"] == len(lines) and summary["faults"] == len(records) > 0
    assert {r["fault"] for r in records} == {"house_way", "malformed"}
    assert {r["rule_id"] for r in records} == {"PGP-A13c", "EVT-INVALID"}
    invalid = 0
    for line in lines:
        try:
            parse_event(line)
        except InvalidEvent:
            invalid += 1
    assert invalid == sum(r["fault"] == "malformed" for r in records)
    # The file is the simulator's output for the same arguments, byte for byte.
    same = simulate(
        tables=1, hours=2, seed=4, faults={Fault.HOUSE_WAY: 0.2, Fault.MALFORMED: 0.002}
    )
    assert lines == [m.value for m in same]


def test_a_games_own_option_overrides_the_tables_per_game(tmp_path: Path) -> None:
    out = tmp_path / "night.jsonl"
    args = ["simulate", "--tables-per-game", "2", "--tripoker", "0", "--holdem", "1"]
    result = CliRunner().invoke(
        main, [*args, "--hours", "0.5", "--faults", "none", "--quiet", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["tables"] == 3
    games: dict[str, set[str]] = {}
    for line in out.read_bytes().splitlines():
        event = parse_event(line)
        games.setdefault(event.game.value, set()).add(event.table_id)
    assert {game: len(tables) for game, tables in games.items()} == {"pai_gow": 2, "holdem": 1}


def test_a_profile_option_opens_its_games_tables_under_that_released_version(
    tmp_path: Path,
) -> None:
    out = tmp_path / "night.jsonl"
    args = ["simulate", "--tables-per-game", "1", "--hours", "0.5", "--faults", "none", "--quiet"]
    result = CliRunner().invoke(
        main, [*args, "--profile", "tripoker/standard@1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    opened = {}
    for line in out.read_bytes().splitlines():
        event = parse_event(line)
        if event.event_type == "table_opened":
            opened[event.game.value] = (event.profile, event.profile_version)
    assert opened == {
        "pai_gow": ("pai-gow/pe-1999", 1),
        "tripoker": ("tripoker/standard", 1),
        "holdem": ("holdem/pe-2007", 1),
    }


def test_bad_input_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    runner = CliRunner()
    out = str(tmp_path / "x.jsonl")
    cases = [
        (["simulate", "--hours", "1"], "exactly one of --out FILE or --kafka"),
        (["simulate", "--out", out, "--kafka"], "exactly one of --out FILE or --kafka"),
        (["simulate", "--out", out, "--faults", "bogus:0.1"], "unknown fault 'bogus'"),
        (["simulate", "--out", out, "--hours", "0"], "--hours"),
        (["simulate", "--out", out, "--tables-per-game", "0"], "no tables"),
        (["simulate", "--out", out, "--start", "2025-01-10T23:00"], "UTC offset"),
        (["publish", str(tmp_path / "missing.jsonl")], "does not exist"),
        (["simulate", "--out", out, "--profile", "tripoker/vegas"], "unknown profile"),
        (["simulate", "--out", out, "--profile", "tripoker/standard@9"], "v9 is not released"),
        (
            [
                "simulate",
                "--out",
                out,
                "--profile",
                "tripoker/standard",
                "--profile",
                "tripoker/pe-2005",
            ],
            "two profiles for tripoker",
        ),
    ]
    for args, words in cases:
        result = runner.invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert words in result.output, (args, result.output)
