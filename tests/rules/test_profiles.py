"""Rule profiles: the built-ins hold the numbers of defaults.md; a bad profile names its field."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from games.holdem.profile import HoldemProfile
from games.pai_gow.profile import PaiGowProfile
from games.profiles import load_profile, parse_profile
from games.tripoker.profile import TripokerProfile
from rules.cards import parse_cards
from rules.profile import (
    BUILTIN_HOUSE_WAYS,
    BUILTIN_PROFILES,
    Band,
    ProfileError,
    load_house_way,
    parse_house_way,
)
from rules.rankings import Category

C = Category


def builtin_text(name: str, version: int = 1) -> str:
    game, _, variant = name.partition("/")
    return (
        resources.files("rules").joinpath("profiles", game, variant, f"v{version}.toml").read_text()
    )


@pytest.mark.parametrize("name", BUILTIN_PROFILES)
def test_every_builtin_profile_loads_with_its_name_and_version(name: str) -> None:
    profile = load_profile(name)
    assert profile.name == name and profile.version >= 1
    assert profile.game.slug == name.partition("/")[0]


def test_def_pgp1_m2_pai_gow_profile() -> None:
    profile = load_profile("pai-gow/pe-1999")
    assert isinstance(profile, PaiGowProfile)
    assert profile.house_way.name == "foxwoods"  # DEF-PGP1
    assert profile.commission_rate_bp == 500  # PGP-A17c: 5 %
    assert profile.commission_unit_cents == 1  # DEF-M2


@pytest.mark.parametrize(
    ("name", "exposed", "forfeits"),
    [("tripoker/pe-2005", (3,), True), ("tripoker/standard", (), False)],
)
def test_def_tcp_tripoker_profiles(name: str, exposed: tuple[int, ...], forfeits: bool) -> None:
    profile = load_profile(name)
    assert isinstance(profile, TripokerProfile)
    assert profile.dealer_qualifier == parse_cards("Qc 3d 2h")  # DEF-TCP1
    assert profile.exposed_dealer_cards == exposed  # TCP-A10b / DEF-TCP6
    assert profile.fold_forfeits_pair_plus is forfeits  # TCP-A11b / DEF-TCP6
    assert profile.play_multiple == 1  # DEF-TCP2
    assert dict(profile.ante_bonus.lines()) == {  # DEF-TCP4
        C.STRAIGHT: 1, C.THREE_OF_A_KIND: 4, C.STRAIGHT_FLUSH: 5,
    }  # fmt: skip
    assert dict(profile.pair_plus.lines()) == {  # DEF-TCP5
        C.PAIR: 1, C.FLUSH: 4, C.STRAIGHT: 6, C.THREE_OF_A_KIND: 30, C.STRAIGHT_FLUSH: 40,
    }  # fmt: skip


def test_def_thp_holdem_profile() -> None:
    profile = load_profile("holdem/pe-2007")
    assert isinstance(profile, HoldemProfile)
    assert profile.call_multiple == 2  # DEF-THP1
    assert profile.dealer_qualifier == parse_cards("4c 4d 5h 3s 2c")  # THP-A2b
    assert dict(profile.ante_pays.lines()) == {  # DEF-THP3
        C.ROYAL_FLUSH: 100, C.STRAIGHT_FLUSH: 20, C.FOUR_OF_A_KIND: 10, C.FULL_HOUSE: 3,
        C.FLUSH: 2, C.STRAIGHT: 1, C.THREE_OF_A_KIND: 1, C.TWO_PAIR: 1, C.PAIR: 1,
        C.HIGH_CARD: 1,
    }  # fmt: skip
    assert profile.payout_cap_cents == 5_000_000  # DEF-THP5: S/ 50,000
    assert profile.decks == 2  # THP-A2d
    prog = profile.progressive  # DEF-THP4
    assert (prog.wager_cents, prog.contribution_bp, prog.seed_cents) == (500, 2_000, 2_000_000)
    assert dict(prog.meter_pays_bp.lines()) == {C.ROYAL_FLUSH: 10_000, C.STRAIGHT_FLUSH: 1_000}
    assert dict(prog.fixed_pays_cents.lines()) == {
        C.FOUR_OF_A_KIND: 50_000, C.FULL_HOUSE: 37_500, C.FLUSH: 25_000,
    }  # fmt: skip


def test_def_pgp1_house_ways_differ_only_as_data() -> None:
    fox, trump = (load_house_way(name) for name in BUILTIN_HOUSE_WAYS)
    assert fox.two_pair[0] == Band(from_rank=9, together_if_single_at_least=Band.NEVER)
    assert fox != trump


def test_a_profile_file_with_the_builtin_text_loads_equal() -> None:
    for name in BUILTIN_PROFILES:
        assert parse_profile(builtin_text(name), source="copy.toml") == load_profile(name)


PE = builtin_text("tripoker/pe-2005")
HOLDEM = builtin_text("holdem/pe-2007")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (PE.replace("\nflush = 4", "\nflush = -4"), "pair_plus.flush"),
        (PE.replace("\nflush = 4", '\nflush = "4"'), "pair_plus.flush"),
        (PE.replace("\nflush = 4", "\nflush = 4\nfive_of_a_kind = 9"), "pair_plus.five_of_a_kind"),
        (PE.replace('qualifies_with = "Qc 3d 2h"', 'qualifies_with = "Qc 3d 2x"'),
         "dealer.qualifies_with"),
        (PE.replace('qualifies_with = "Qc 3d 2h"', 'qualifies_with = "Qc 3d"'),
         "dealer.qualifies_with"),
        (PE.replace("exposed_cards = [3]", "exposed_cards = [4]"), "dealer.exposed_cards"),
        (PE.replace("fold_forfeits_pair_plus = true", "fold_forfeits_pair_plus = 1"),
         "play.fold_forfeits_pair_plus"),
        (PE.replace("multiple_of_ante = 1", ""), "play.multiple_of_ante"),
        (PE.replace("version = 1", "version = 0"), "version"),
        (PE.replace('game = "tripoker"', 'game = "baccarat"'), "game"),
        (PE.replace('name = "tripoker/pe-2005"', 'name = "holdem/pe-2005"'), "name"),
        ("colour = 'green'\n" + PE, "colour"),
        (HOLDEM.replace("high_card = 1\n", ""), "ante_pays.high_card"),
        (HOLDEM.replace("contribution_bp = 2_000", "contribution_bp = 20_000"),
         "progressive.contribution_bp"),
        (HOLDEM.replace("payout_cap_cents = 5_000_000", "payout_cap_cents = 0"),
         "payout_cap_cents"),
        (HOLDEM.replace("full_house = 37_500", "full_house = 37_500\nroyal_flush = 1"),
         "progressive"),
        (builtin_text("pai-gow/pe-1999").replace('"foxwoods"', '"caesars"'), "house_way"),
        (builtin_text("pai-gow/pe-1999").replace("unit_cents = 1", "unit_cents = 0"),
         "commission.unit_cents"),
    ],
)  # fmt: skip
def test_a_bad_profile_is_refused_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(ProfileError, match=f"field '{field}'"):
        parse_profile(text, source="casino.toml")


def test_a_profile_that_is_not_toml_is_refused() -> None:
    with pytest.raises(ProfileError, match="not valid TOML"):
        parse_profile("name = [", source="casino.toml")


def test_an_unknown_builtin_is_refused_with_the_list() -> None:
    with pytest.raises(ProfileError, match="tripoker/pe-2005"):
        load_profile("tripoker/vegas")


def test_the_builtins_are_the_profile_files_shipped_sorted_without_the_house_ways() -> None:
    released = {"holdem/pe-2007", "pai-gow/pe-1999", "tripoker/pe-2005", "tripoker/standard"}
    assert released <= set(BUILTIN_PROFILES)
    assert list(BUILTIN_PROFILES) == sorted(BUILTIN_PROFILES)
    assert not any(name.startswith("house-ways/") for name in BUILTIN_PROFILES)


def test_a_games_profile_type_loads_only_its_own_games_profiles() -> None:
    assert TripokerProfile.load("tripoker/standard") == load_profile("tripoker/standard")
    assert HoldemProfile.load("holdem/pe-2007") == load_profile("holdem/pe-2007")
    with pytest.raises(ProfileError, match="field 'game': expected 'tripoker', got 'holdem'"):
        TripokerProfile.load("holdem/pe-2007")
    with pytest.raises(ProfileError, match="unknown profile 'pai-gow/vegas'"):
        PaiGowProfile.load("pai-gow/vegas")


FOXWOODS = resources.files("rules").joinpath("profiles", "house-ways", "foxwoods.toml").read_text()


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('from = "7"        # 10-7', 'from = "Q"        # 10-7', "two_pair"),  # out of order
        ('together = "A"', 'together = "B"', "two_pair[1].together"),
        ('pair_low_from = "K"', 'pair_low_from = "14"', "five_aces.pair_low_from"),
        ("split_aces = true", "split_aces = 'yes'", "trips.split_aces"),
        ("[full_house]", "[full_house]\ntogether_if_pair_at_most = \"2\"",
         "full_house.together_if_low_at_least"),
    ],
)  # fmt: skip
def test_a_bad_house_way_is_refused_naming_the_field(old: str, new: str, field: str) -> None:
    assert old in FOXWOODS
    with pytest.raises(ProfileError, match=re.escape(f"field '{field}")):
        parse_house_way(FOXWOODS.replace(old, new), source="way.toml")
