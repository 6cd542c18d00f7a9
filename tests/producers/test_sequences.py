"""Every simulated table sends exactly the event order docs/events.md documents for its game."""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache

import pytest

from events import EVENT_MODELS, Game, parse_event
from producers.simulator import simulate
from tests.events.test_docs import DOC

PARTS = ("opening", "before_round", "round", "closing")


@cache
def grammar() -> dict[tuple[str, str], str]:
    """(game, part) -> the pattern line of docs/events.md's `sequence` blocks."""
    text = DOC.read_text(encoding="utf-8")
    lines = {}
    for block in re.findall(r"```sequence\n(.*?)```", text, flags=re.S):
        for line in block.strip().splitlines():
            head, pattern = line.split(":", 1)
            game, part = head.split()
            lines[(game, part)] = pattern.strip()
    return lines


def compile_pattern(pattern: str) -> str:
    """A pattern over event types -> a regex over 'type type ... ' strings."""
    tokens = re.findall(r"[a-z_]+|[()|?*+]|\{\d+\}|\S", pattern)
    out = []
    for token in tokens:
        if token[0].isalpha():
            if token not in EVENT_MODELS:
                raise ValueError(f"docs/events.md names an unknown event type {token!r}")
            out.append(f"(?:{token} )")
        elif token == "(":
            out.append("(?:")
        elif token in ")|?*+" or token.startswith("{"):
            out.append(token)
        else:
            raise ValueError(f"unexpected {token!r} in a sequence pattern")
    return "".join(out)


def table_regex(game: Game) -> re.Pattern[str]:
    part = {p: compile_pattern(grammar()[(game.value, p)]) for p in PARTS}
    return re.compile(
        f"{part['opening']}(?:{part['before_round']}{part['round']})*{part['closing']}"
    )


def test_docs_give_the_four_parts_of_every_game() -> None:
    assert set(grammar()) == {(g.value, p) for g in Game for p in PARTS}


@pytest.mark.parametrize("game", list(Game))
def test_each_table_sends_the_documented_sequence(game: Game) -> None:
    types: dict[str, list[str]] = defaultdict(list)
    rounds = 0
    for message in simulate(tables={game: 3}, hours=8, seed=13, faults={}):
        event = parse_event(message.value)
        types[message.key].append(event.event_type)
        rounds += event.event_type == "round_started"
    assert len(types) == 3 and rounds > 600
    regex = table_regex(game)
    for table_id, sequence in types.items():
        text = "".join(f"{t} " for t in sequence)
        assert regex.fullmatch(text), f"{table_id} departs from docs/events.md"


def test_a_sequence_out_of_the_documented_order_does_not_match() -> None:
    round_ = re.compile(compile_pattern(grammar()[("tripoker", "round")]))
    good = "round_started bet_placed bets_closed cards_dealt cards_dealt cards_dealt "
    good += "player_decided dealer_revealed payout_recorded round_ended "
    assert round_.fullmatch(good)
    assert not round_.fullmatch(good.replace("bets_closed cards_dealt", "cards_dealt bets_closed"))
