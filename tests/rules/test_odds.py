"""Game math: Tripóker exactly (the figures issue 4 requires), the Hold'em progressive exactly,
Pai Gow and the Hold'em base game by simulation inside their 95 % intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from games.holdem.odds import progressive_exact
from games.holdem.profile import HoldemProfile
from games.odds import game_math
from games.profiles import load_profile

STANDARD = game_math(load_profile("tripoker/standard"), rng=None, rounds=0)
PE_2005 = game_math(load_profile("tripoker/pe-2005"), rng=None, rounds=0)


def test_tripoker_standard_ante_play_house_edge_with_queen_six_four() -> None:
    ante = STANDARD["wagers"]["ante_play"]
    assert round(ante["house_edge"] * 100, 4) == 3.3730
    assert round(ante["element_of_risk"] * 100, 4) == 2.0147


def test_tripoker_optimal_play_without_the_exposed_card_is_queen_six_four() -> None:
    optimal = STANDARD["wagers"]["ante_play_optimal"]
    assert optimal["house_edge"] == pytest.approx(STANDARD["wagers"]["ante_play"]["house_edge"])
    assert optimal["play_rate"] == STANDARD["wagers"]["ante_play"]["play_rate"]


def test_tripoker_pair_plus_house_edge_on_40_30_6_4_1() -> None:
    assert round(STANDARD["wagers"]["pair_plus"]["house_edge"] * 100, 4) == 2.3167


def test_tripoker_pair_plus_hit_frequencies_are_the_three_card_counts() -> None:
    # 22,100 three-card hands: SF 48, trips 52, straight 720, flush 1,096, pair 3,744.
    hits = STANDARD["wagers"]["pair_plus"]["hit_frequencies"]
    counts = {"straight_flush": 48, "three_of_a_kind": 52, "straight": 720, "flush": 1_096,
              "pair": 3_744}  # fmt: skip
    assert hits == {k: pytest.approx(v / 22_100) for k, v in counts.items()}


def test_tcp_a10b_pe_2005_exposed_card_gives_the_player_the_edge_and_is_flagged() -> None:
    exposed = PE_2005["wagers"]["ante_play_exposed_card_optimal"]
    assert round(exposed["house_edge"] * 100, 2) == -3.48
    assert PE_2005["negative_house_edge"] == ["ante_play_exposed_card_optimal"]
    assert "negative house edge" in PE_2005["flags"][0]
    assert STANDARD["negative_house_edge"] == [] and STANDARD["flags"] == []


def test_def_thp4_progressive_exactly_from_the_five_card_counts() -> None:
    profile = load_profile("holdem/pe-2007")
    assert isinstance(profile, HoldemProfile)
    report = progressive_exact(profile)
    total = math.comb(52, 5)
    counts = {"royal_flush": 4, "straight_flush": 36, "four_of_a_kind": 624,
              "full_house": 3_744, "flush": 5_108}  # fmt: skip
    assert report["hit_frequencies"] == {k: pytest.approx(v / total) for k, v in counts.items()}
    # At the S/ 20,000 seed: royal 2,000,000, SF 200,000, then S/ 500, 375, 250; else lose 500.
    paid = {"royal_flush": 2_000_000, "straight_flush": 200_000, "four_of_a_kind": 50_000,
            "full_house": 37_500, "flush": 25_000}  # fmt: skip
    hits = sum(counts.values())
    ev = (sum(counts[k] * paid[k] for k in counts) - (total - hits) * 500) / total
    assert report["house_edge"] == pytest.approx(-ev / 500)


def test_pai_gow_simulation_contains_the_published_edge_in_its_interval() -> None:
    report = game_math(
        load_profile("pai-gow/pe-1999"), rng=np.random.default_rng(20240601), rounds=30_000
    )
    main = report["wagers"]["main"]
    low, high = main["ci95"]
    assert low < main["published_house_edge"] < high
    assert low < main["house_edge"] < high and high - low < 0.012
    assert sum(main["outcome_frequencies"].values()) == pytest.approx(1)


def test_casino_holdem_simulation_contains_the_published_edge_and_calls_like_optimal() -> None:
    report = game_math(load_profile("holdem/pe-2007"), rng=np.random.default_rng(7), rounds=15_000)
    ante_call = report["wagers"]["ante_call"]
    low, high = ante_call["ci95"]
    assert low < ante_call["published_house_edge"] < high
    assert 0.78 < ante_call["call_rate"] < 0.86  # optimal play calls about 82 % of hands


def test_simulations_need_their_randomness_passed_in() -> None:
    with pytest.raises(ValueError, match="random generator"):
        game_math(load_profile("pai-gow/pe-1999"), rng=None, rounds=100)


def test_the_same_seed_gives_the_same_simulation() -> None:
    profile = load_profile("pai-gow/pe-1999")
    first = game_math(profile, rng=np.random.default_rng(1), rounds=300)
    second = game_math(profile, rng=np.random.default_rng(1), rounds=300)
    assert first == second
