"""Game math: Tripóker exactly (the figures issue 4 requires), the Hold'em progressive exactly,
Pai Gow and the Hold'em base game by simulation inside their 95 % intervals, settled as the
settlement engine settles; published figures quoted only beside the rules they belong to
(issue 17)."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from events.models import Decision
from games.holdem.odds import _completions, call_results, progressive_exact
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, settle_holdem
from games.odds import game_math
from games.odds_common import (
    PUBLISHED_FILE,
    Estimate,
    Simulation,
    distinct_draws,
    published_figure,
    simulate,
)
from games.pai_gow.odds import WAGER_CENTS, pair_results, set_hands
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import (
    DEALER,
    SEATS,
    HandSet,
    PaiGowRound,
    PaiGowSeat,
    house_way_batch,
    settle_pai_gow,
)
from games.profiles import load_profile, parse_profile
from games.tripoker.profile import TripokerProfile
from rules.rankings import HOLDEM

STANDARD = game_math(load_profile("tripoker/standard"), rng=None)
PE_2005 = game_math(load_profile("tripoker/pe-2005"), rng=None)
PROFILES = Path(__file__).resolve().parents[2] / "rules" / "profiles"


def tripoker_with(pair_plus: dict[str, int]) -> TripokerProfile:
    """The standard Tripóker profile with another pair plus paytable, as a casino's file."""
    text = (PROFILES / "tripoker" / "standard" / "v1.toml").read_text(encoding="utf-8")
    head, _, _ = text.partition("[pair_plus]")
    table = "\n".join(f"{hand} = {pays}" for hand, pays in pair_plus.items())
    text = head.replace('name = "tripoker/standard"', 'name = "tripoker/casino-lima"')
    profile = parse_profile(f"{text}[pair_plus]\n{table}\n", source="casino-lima.toml")
    assert isinstance(profile, TripokerProfile)
    return profile


def test_tripoker_standard_ante_play_house_edge_with_queen_six_four() -> None:
    ante = STANDARD["wagers"]["ante_play"]
    assert round(ante["house_edge"] * 100, 4) == 3.3730
    assert round(ante["element_of_risk"] * 100, 4) == 2.0147


def test_tripoker_exact_figures_agree_with_the_published_ones_to_their_last_digit() -> None:
    ante, pair_plus = STANDARD["wagers"]["ante_play"], STANDARD["wagers"]["pair_plus"]
    assert ante["published"]["house_edge_percent"] == round(ante["house_edge"] * 100, 2) == 3.37
    assert ante["published"]["element_of_risk_percent"] == round(ante["element_of_risk"] * 100, 2)
    assert pair_plus["published"]["house_edge_percent"] == 2.32
    assert round(pair_plus["house_edge"] * 100, 2) == 2.32
    assert ante["published"]["agrees"] and pair_plus["published"]["agrees"]
    assert "Wizard of Odds" in pair_plus["published"]["source"]


def test_tripoker_optimal_play_without_the_exposed_card_is_queen_six_four() -> None:
    optimal = STANDARD["wagers"]["ante_play_optimal"]
    assert optimal["house_edge"] == pytest.approx(STANDARD["wagers"]["ante_play"]["house_edge"])
    assert optimal["play_rate"] == STANDARD["wagers"]["ante_play"]["play_rate"]


def test_tripoker_pair_plus_house_edge_on_40_30_6_4_1() -> None:
    assert round(STANDARD["wagers"]["pair_plus"]["house_edge"] * 100, 4) == 2.3167


def test_pair_plus_1_3_6_30_40_gets_7_28_and_its_own_published_figure_not_2_32() -> None:
    profile = tripoker_with(
        {"pair": 1, "flush": 3, "straight": 6, "three_of_a_kind": 30, "straight_flush": 40}
    )
    pair_plus = game_math(profile, rng=None)["wagers"]["pair_plus"]
    # By hand: 22,100 hands pay 48 x 41 + 52 x 31 + 720 x 7 + 1,096 x 4 + 3,744 x 2 back.
    assert pair_plus["house_edge"] == pytest.approx(1 - 20_492 / 22_100)
    assert round(pair_plus["house_edge"] * 100, 2) == 7.28
    assert pair_plus["published"]["house_edge_percent"] == 7.28
    assert pair_plus["published"]["agrees"]


def test_a_paytable_nobody_published_gets_no_figure_and_says_so() -> None:
    profile = tripoker_with(
        {"pair": 1, "flush": 3, "straight": 5, "three_of_a_kind": 25, "straight_flush": 40}
    )
    report = game_math(profile, rng=None)
    published = report["wagers"]["pair_plus"]["published"]
    assert published["house_edge"] is None and "no published figure" in published["note"]
    assert published["rules"]["pair_plus"]["flush"] == 3
    assert report["wagers"]["ante_play"]["published"]["house_edge_percent"] == 3.37  # unchanged


def test_published_figures_are_keyed_by_every_rule_field_of_the_wager() -> None:
    rules = STANDARD["wagers"]["ante_play"]["published"]["rules"]
    assert published_figure("tripoker", "ante_play", rules)["house_edge_percent"] == 3.37
    for field, other in (("dealer_qualifies_with", "J32"), ("play_multiple", 2)):
        assert (
            published_figure("tripoker", "ante_play", rules | {field: other})["house_edge"] is None
        )
    assert published_figure("holdem", "ante_play", rules)["house_edge"] is None


def test_a_payout_cap_that_cuts_the_best_win_gets_no_published_holdem_figure() -> None:
    """The published 2.16 % is for uncapped play: a cap of S/ 10 per seat (THP-A2c) cuts most
    wins of a S/ 10 ante, so the figure does not belong to these rules."""
    from games.holdem.odds import published_rules

    pe = load_profile("holdem/pe-2007")
    assert isinstance(pe, HoldemProfile)
    assert published_figure("holdem", "ante_call", published_rules(pe))["house_edge_percent"] == (
        2.16
    )
    capped = dataclasses.replace(pe, payout_cap_cents=1_000)
    assert published_rules(capped)["payout_cap_binds"] is True
    assert published_figure("holdem", "ante_call", published_rules(capped))["house_edge"] is None


def test_tripoker_pair_plus_hit_frequencies_are_the_three_card_counts() -> None:
    # 22,100 three-card hands: SF 48, trips 52, straight 720, flush 1,096, pair 3,744.
    hits = STANDARD["wagers"]["pair_plus"]["hit_frequencies"]
    counts = {"straight_flush": 48, "three_of_a_kind": 52, "straight": 720, "flush": 1_096,
              "pair": 3_744}  # fmt: skip
    assert hits == {k: pytest.approx(v / 22_100) for k, v in counts.items()}


def test_tcp_a10b_pe_2005_exposed_card_gives_the_player_the_edge_and_is_flagged() -> None:
    exposed = PE_2005["wagers"]["ante_play_exposed_card_optimal"]
    assert round(exposed["house_edge"] * 100, 2) == -3.48
    assert exposed["published"]["house_edge"] is None  # computed here, not quoted
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


# ---------------------------------------------------------------------------------------------
# simulation


def test_pai_gow_per_hand_results_are_settle_pai_gow_s() -> None:
    profile = load_profile("pai-gow/pe-1999")
    assert isinstance(profile, PaiGowProfile)
    rng = np.random.default_rng(11)
    decks = rng.permuted(np.tile(np.arange(53), (150, 1)), axis=1)
    hands = set_hands(decks, profile)
    cards = house_way_batch(decks[:, :49].reshape(-1, 7), profile.house_way).reshape(150, 7, 7)
    for r in range(150):
        seats = tuple(
            PaiGowSeat(
                seat=seat,
                wager_cents=WAGER_CENTS,
                cards=tuple(int(x) for x in decks[r, seat * 7 : seat * 7 + 7]),
                hand=HandSet(
                    high=tuple(int(x) for x in cards[r, seat, :5]),
                    low=tuple(int(x) for x in cards[r, seat, 5:]),
                ),
            )
            for seat in SEATS
        )
        dealer = tuple(int(x) for x in decks[r, DEALER * 7 : DEALER * 7 + 7])
        settled = settle_pai_gow(
            PaiGowRound(round_id=str(r), dealer_cards=dealer, seats=seats), profile
        )
        ours, _ = pair_results(hands[r, list(SEATS)], hands[r, [DEALER] * len(SEATS)], profile)
        assert [s.net_cents / WAGER_CENTS for s in settled.settlements] == pytest.approx(ours)


def test_holdem_call_results_are_settle_holdem_s() -> None:
    profile = load_profile("holdem/pe-2007")
    assert isinstance(profile, HoldemProfile)
    rng = np.random.default_rng(12)
    for r in range(300):
        deck = [int(x) for x in rng.permutation(52)[:9]]
        hole, dealer, board = deck[:2], deck[2:4], deck[4:]
        seat = HoldemSeat(seat=1, ante_cents=1_000, progressive_cents=0, hole=tuple(hole),
                          decision=Decision.CALL)  # fmt: skip
        game = HoldemRound(round_id=str(r), dealer_hole=tuple(dealer), board=tuple(board),
                           seats=(seat,), meter_cents=2_000_000)  # fmt: skip
        net = sum(s.net_cents for s in settle_holdem(game, profile).settlements) / 1_000
        p = np.array([HOLDEM.strength((*hole, *board))])
        d = np.array([HOLDEM.strength((*dealer, *board))])
        assert call_results(profile, p, d)[0] == net


def test_pai_gow_simulation_interval_and_frequencies() -> None:
    report = game_math(load_profile("pai-gow/pe-1999"), rng=np.random.default_rng(5), rounds=2_000)
    main = report["wagers"]["main"]
    low, high = main["ci95"]
    assert low < main["house_edge"] < high and main["samples"] == 2_000
    assert main["unit"].startswith("per unit wagered")
    assert 0.02 < main["house_edge"] < 0.035  # 2.7 % with the Foxwoods way on both sides
    assert main["published"]["house_edge"] is None  # none known for this house way
    assert sum(main["outcome_frequencies"].values()) == pytest.approx(1)


def test_the_interval_shrinks_as_one_over_the_square_root_of_the_samples() -> None:
    profile = load_profile("pai-gow/pe-1999")
    small = game_math(profile, rng=np.random.default_rng(1), rounds=400)["wagers"]["main"]
    large = game_math(profile, rng=np.random.default_rng(2), rounds=6_400)["wagers"]["main"]
    assert small["ci95_half_width"] / large["ci95_half_width"] == pytest.approx(4, rel=0.25)


def test_simulation_runs_until_the_precision_asked() -> None:
    profile = load_profile("pai-gow/pe-1999")
    seen: list[float] = []
    report = game_math(
        profile, rng=np.random.default_rng(3), precision=0.0004, progress=seen.append
    )
    main = report["wagers"]["main"]
    assert main["ci95_half_width"] <= 0.0004 < 0.001
    assert "at most 0.0400%" in main["stopping_rule"]
    assert seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen)


def test_casino_holdem_simulation_calls_like_optimal_and_states_its_unit() -> None:
    profile = load_profile("holdem/pe-2007")
    report = game_math(profile, rng=np.random.default_rng(7), rounds=3_000)
    ante_call = report["wagers"]["ante_call"]
    low, high = ante_call["ci95"]
    assert low < ante_call["house_edge"] < high and ante_call["samples"] == 3_000
    assert 0.74 < ante_call["call_rate"] < 0.86  # optimal play calls about 82 % of hands
    assert ante_call["unit"].startswith("per ante")
    assert ante_call["published"]["house_edge_percent"] == 2.16
    assert ante_call["published"]["agrees"] == (low - 0.00005 <= 0.0216 <= high + 0.00005)


def test_stratified_estimate_weights_strata_by_their_exact_probability() -> None:
    estimate = Estimate(np.array([0.25, 0.75]))
    assert estimate.half_width() == math.inf
    estimate.add(np.array([1.0, 3.0, 10.0, 10.0, 12.0, 14.0]), np.array([0, 0, 1, 1, 1, 1]))
    assert estimate.mean() == pytest.approx(0.25 * 2 + 0.75 * 11.5)
    variance = 0.25**2 * 2.0 / 2 + 0.75**2 * (11.0 / 3) / 4  # p² s²/n per stratum
    assert estimate.half_width() == pytest.approx(1.959964 * math.sqrt(variance))


def test_simulate_stops_at_the_rounds_or_the_precision() -> None:
    def draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.normal(0.0, 1.0, n), np.zeros(n, dtype=np.int64)

    fixed = simulate(Simulation(rng=np.random.default_rng(0), rounds=2_500, batch=1_000),
                     np.ones(1), draw)  # fmt: skip
    assert fixed.count == 2_500
    target = simulate(Simulation(rng=np.random.default_rng(0), precision=0.05, batch=1_000),
                      np.ones(1), draw)  # fmt: skip
    # sd 1: about (1.96 / 0.05)² = 1,537 samples, checked after each batch of 1,000
    assert target.half_width() <= 0.05 and target.count == 2_000


def test_simulations_need_their_randomness_passed_in() -> None:
    with pytest.raises(ValueError, match="random generator"):
        game_math(load_profile("pai-gow/pe-1999"), rng=None, rounds=100)


def test_the_same_seed_gives_the_same_simulation() -> None:
    profile = load_profile("pai-gow/pe-1999")
    first = game_math(profile, rng=np.random.default_rng(1), rounds=300)
    second = game_math(profile, rng=np.random.default_rng(1), rounds=300)
    assert first == second


def test_holdem_shared_sum_strengths_are_rank_batch_s() -> None:
    profile = load_profile("holdem/pe-2007")
    assert isinstance(profile, HoldemProfile)
    rng = np.random.default_rng(13)
    seen = np.array([rng.permutation(52)[:5] for _ in range(400)])
    unseen = np.array([np.setdiff1d(np.arange(52), row) for row in seen], dtype=np.uint8)
    results, p = _completions(profile, np.random.default_rng(14), seen, unseen, 30)
    # the same draws again, ranked card by card through rank_batch
    draws = distinct_draws(np.random.default_rng(14), unseen, (30, 4)).astype(np.int64)
    n = len(seen)
    player = np.concatenate([np.broadcast_to(seen[:, None], (n, 30, 5)), draws[..., :2]], axis=2)
    dealer = np.concatenate([draws[..., 2:], np.broadcast_to(seen[:, None, 2:], (n, 30, 3)),
                             draws[..., :2]], axis=2)  # fmt: skip
    expected_p = HOLDEM.rank_batch(player.reshape(-1, 7)).reshape(n, 30)
    expected_d = HOLDEM.rank_batch(dealer.reshape(-1, 7)).reshape(n, 30)
    assert (p == expected_p).all()
    assert (results == call_results(profile, expected_p, expected_d)).all()


def test_every_published_figure_names_its_source_unit_and_rules() -> None:
    figures = tomllib.loads(PUBLISHED_FILE.read_text(encoding="utf-8"))["figure"]
    known = {"tripoker": {"pair_plus", "ante_play", "ante_play_optimal",
                          "ante_play_exposed_card_optimal"}, "holdem": {"ante_call"},
             "pai-gow": {"main"}}  # fmt: skip
    for figure in figures:
        assert set(figure["wagers"]) <= known[figure["game"]]
        assert figure["source"] and figure["unit"].startswith("per") and figure["rules"]
        assert 0 < figure["house_edge_percent"] < 20


def test_each_published_pair_plus_figure_is_its_paytable_s_exact_edge() -> None:
    figures = tomllib.loads(PUBLISHED_FILE.read_text(encoding="utf-8"))["figure"]
    pair_plus = [f for f in figures if f["wagers"] == ["pair_plus"]]
    assert len(pair_plus) == 3
    for figure in pair_plus:
        wager = game_math(tripoker_with(figure["rules"]["pair_plus"]), rng=None)["wagers"]
        assert wager["pair_plus"]["published"]["agrees"], figure["rules"]
