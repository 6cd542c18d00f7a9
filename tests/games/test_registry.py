"""The game registry: every game the event contract knows is registered once, and what a spec
states agrees with the regulation's pages and the game's own profile."""

from __future__ import annotations

import pytest

from events.models import Game
from games.profiles import load_profile
from games.registry import GAMES


def test_every_game_of_the_contract_is_registered_under_its_own_name() -> None:
    assert set(GAMES) == set(Game)
    assert all(spec.game is game for game, spec in GAMES.items())


@pytest.mark.parametrize("game", list(Game))
def test_a_games_default_profile_is_one_of_its_own(game: Game) -> None:
    spec = GAMES[game]
    profile = load_profile(spec.default_profile)
    assert profile.game is game
    assert spec.default_profile.startswith(f"{game.slug}/")
    assert spec.simulator.__module__ == f"games.{game.value}.simulator"


@pytest.mark.parametrize("game", list(Game))
def test_a_games_profile_type_is_its_own(game: Game) -> None:
    profile_type = GAMES[game].profile_type
    assert profile_type.game is game
    assert profile_type.__module__ == f"games.{game.value}.profile"
    assert type(load_profile(GAMES[game].default_profile)) is profile_type


def test_deck_sizes_and_jokers_are_the_pages() -> None:
    # PGP-A7a: 52 cards and one joker; ALL-3: 52 cards; TCP-A5b, THP-A5: no joker in play.
    rules = {game: spec.table_rules for game, spec in GAMES.items()}
    assert (rules[Game.PAI_GOW].deck_size, rules[Game.PAI_GOW].jokers_in_play) == (53, 1)
    assert (rules[Game.TRIPOKER].deck_size, rules[Game.TRIPOKER].jokers_in_play) == (52, 0)
    assert (rules[Game.HOLDEM].deck_size, rules[Game.HOLDEM].jokers_in_play) == (52, 0)


@pytest.mark.parametrize("game", list(Game))
def test_every_article_a_spec_names_is_one_of_the_regulation(game: Game) -> None:
    from pathlib import Path

    spec_text = (Path(__file__).parents[2] / "dbt_project" / "seeds" / "rules.csv").read_text()
    known = {line.split(",", 1)[0] for line in spec_text.splitlines()[1:]}
    spec = GAMES[game]
    t = spec.table_rules
    named = {t.deck_count, t.shuffle, t.cut, t.joker, t.one_zone, t.payment, *spec.void_rules}
    named |= {rule for rule in (t.bets_close, t.count_and_wash, t.alternate_decks) if rule}
    assert named <= known, named - known


def test_slugs_round_trip_and_refuse_what_is_no_game() -> None:
    for game in Game:
        assert Game.from_slug(game.slug) is game
    assert Game.PAI_GOW.slug == "pai-gow" and Game.PAI_GOW.value == "pai_gow"
    with pytest.raises(ValueError, match="unknown game"):
        Game.from_slug("pai_gow")  # the wire name is not a slug
    with pytest.raises(ValueError, match="unknown game"):
        Game.from_slug("baccarat")


def test_the_games_seed_names_every_registered_game_with_its_default_profile() -> None:
    # The marts check game codes against this seed (relationships tests), not lists of their own.
    import csv
    from pathlib import Path

    seed = Path(__file__).parents[2] / "dbt_project" / "seeds" / "games.csv"
    with seed.open(newline="", encoding="utf-8") as f:
        rows = {row["game"]: row["default_profile"] for row in csv.DictReader(f)}
    assert rows == {game.value: spec.default_profile for game, spec in GAMES.items()}
