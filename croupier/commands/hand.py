"""`croupier hand rank|compare`: rank poker hands by the Peruvian rules, JSON on stdout.

For disputes at the table and for scripts; the rules themselves live in `rules.rankings`.
"""

from __future__ import annotations

import json
from typing import Any

import click

from rules.cards import CardError, cards_str, parse_cards
from rules.rankings import (
    HOLDEM,
    PAI_GOW_7,
    PAI_GOW_HIGH,
    PAI_GOW_LOW,
    TRIPOKER,
    HandRank,
    RankingSystem,
)

GAMES = ("pai-gow", "tripoker", "holdem")


class BadInput(click.ClickException):
    """Bad input: exit code 2 and a single line on stderr."""

    exit_code = 2


class OneLineErrors(click.Command):
    """A command whose usage errors are one line (no usage block), like its input errors."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise BadInput(" ".join(exc.format_message().split())) from None


def _system(game: str, size: int) -> RankingSystem:
    if game == "tripoker":
        return TRIPOKER
    if game == "holdem":
        return HOLDEM
    by_size = {2: PAI_GOW_LOW, 5: PAI_GOW_HIGH, 7: PAI_GOW_7}
    if size not in by_size:
        raise BadInput(
            f"a Pai Gow hand has 2 cards (low), 5 (high) or 7 (best five of seven), got {size}"
        )
    return by_size[size]


def _rank(game: str, text: str) -> tuple[RankingSystem, int, HandRank]:
    try:
        cards = parse_cards(text, allow_joker=game == "pai-gow")
        system = _system(game, len(cards))
        return system, len(cards), system.rank(cards)
    except CardError as exc:
        raise BadInput(str(exc)) from None


def _as_json(ranked: HandRank) -> dict[str, Any]:
    return {
        "category": ranked.category.label,
        "rank": list(ranked.key),
        "cards": cards_str(ranked.cards),
    }


_GAME = click.option(
    "--game",
    type=click.Choice(GAMES),
    required=True,
    help="Ranking rules: pai-gow (PGP-A4, joker Jk allowed), tripoker (TCP-A4), holdem (THP-A4).",
)


@click.group()
def hand() -> None:
    """Rank or compare poker hands (cards like As Td 10h Jk; JSON on stdout)."""


@hand.command("rank", cls=OneLineErrors)
@_GAME
@click.argument("cards", nargs=-1, required=True)
def rank(game: str, cards: tuple[str, ...]) -> None:
    """Rank one hand: category, rank key (compare keys element by element) and its cards.

    Pai Gow takes 2 cards (low hand), 5 (high hand) or 7 (best five); Tripóker 3; Hold'em 5 to 7
    (best five). Bad input: exit code 2 and one line on stderr.

    \b
    Example: croupier hand rank --game pai-gow Jk Kc Kd Kh 2s
    """
    _, _, ranked = _rank(game, " ".join(cards))
    click.echo(json.dumps(_as_json(ranked)))


@hand.command("compare", cls=OneLineErrors)
@_GAME
@click.argument("hand_a")
@click.argument("hand_b")
def compare(game: str, hand_a: str, hand_b: str) -> None:
    """Say which of two hands of the same game and size wins: {"winner": "a"|"b"|"tie"}.

    \b
    Example:
      croupier hand compare --game holdem "As Ks Qd Jc 9h 2c 3d" "Ah Kd Qs Jd 9c 4h 5h"
    """
    system_a, size_a, a = _rank(game, hand_a)
    system_b, size_b, b = _rank(game, hand_b)
    if system_a is not system_b:
        raise BadInput(f"cannot compare a {size_a}-card Pai Gow hand with a {size_b}-card one")
    winner = "a" if a.key > b.key else "b" if b.key > a.key else "tie"
    click.echo(json.dumps({"winner": winner, "a": _as_json(a), "b": _as_json(b)}))
