"""Tripóker settlement (TCP-A9..A11, DEF-TCP1..6) under the `pe-2005` and `standard` profiles."""

from __future__ import annotations

import pytest

from events.models import Decision, Spot
from games.profiles import load_profile
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, plays_queen_six_four, settle_tripoker
from rules.cards import parse_cards
from rules.settlement import Outcome, RoundError, Settlement

PE = load_profile("tripoker/pe-2005")
STANDARD = load_profile("tripoker/standard")
assert isinstance(PE, TripokerProfile) and isinstance(STANDARD, TripokerProfile)

QUALIFIED = "Qs 5d 3c"  # queen-high: the dealer plays (DEF-TCP1)
NOT_QUALIFIED = "Js Td 8c"  # jack-high: the dealer does not


def settle(
    cards: str,
    dealer: str,
    decision: Decision | None,
    *,
    ante: int = 1_000,
    pair_plus: int = 0,
    profile: TripokerProfile = PE,
) -> dict[Spot, Settlement]:
    player = TripokerSeat(
        seat=1,
        ante_cents=ante,
        pair_plus_cents=pair_plus,
        cards=parse_cards(cards),
        decision=decision,
    )
    game = TripokerRound(round_id="t1", dealer_cards=parse_cards(dealer), seats=(player,))
    lines = settle_tripoker(game, profile).settlements
    assert len({line.spot for line in lines}) == len(lines)
    return {line.spot: line for line in lines}


def test_def_tcp1_queen_high_dealer_qualifies_and_the_higher_hand_wins_ante_and_play() -> None:
    lines = settle("As 4d 2c", QUALIFIED, Decision.PLAY)
    assert lines[Spot.ANTE].outcome is Outcome.WIN and lines[Spot.ANTE].payout_cents == 1_000
    assert lines[Spot.PLAY].outcome is Outcome.WIN and lines[Spot.PLAY].payout_cents == 1_000
    assert lines[Spot.PLAY].wager_cents == 1_000  # DEF-TCP2: play = ante
    assert "TCP-A11c" in lines[Spot.ANTE].rule_ids


def test_def_tcp3_dealer_does_not_qualify_ante_pays_even_and_play_pushes() -> None:
    lines = settle("2s 4d 6c", NOT_QUALIFIED, Decision.PLAY)  # the player's hand is lower
    assert lines[Spot.ANTE].outcome is Outcome.WIN and lines[Spot.ANTE].net_cents == 1_000
    assert lines[Spot.PLAY].outcome is Outcome.PUSH and lines[Spot.PLAY].net_cents == 0
    assert lines[Spot.PLAY].rule_ids == ("DEF-TCP1", "DEF-TCP3")


def test_def_tcp3_equal_hands_push_both() -> None:
    lines = settle("Qh 5c 3d", QUALIFIED, Decision.PLAY)
    assert lines[Spot.ANTE].outcome is Outcome.PUSH and lines[Spot.PLAY].outcome is Outcome.PUSH
    assert lines[Spot.ANTE].net_cents == lines[Spot.PLAY].net_cents == 0


def test_def_tcp3_a_higher_dealer_takes_ante_and_play() -> None:
    lines = settle("Ks 9d 2h", "8s 8d 3c", Decision.PLAY)
    assert lines[Spot.ANTE].net_cents == -1_000 and lines[Spot.PLAY].net_cents == -1_000
    assert lines[Spot.ANTE].house_result_cents == 1_000


@pytest.mark.parametrize(
    ("cards", "pays"),
    [("9h 8d 7c", 1), ("4s 4d 4h", 4), ("9s 8s 7s", 5)],  # straight, trips, straight flush
)
def test_def_tcp4_ante_bonus_is_paid_whatever_the_dealer_holds(cards: str, pays: int) -> None:
    lines = settle(cards, "Ah Kh Qh", Decision.PLAY)  # the best straight flush beats them all
    assert lines[Spot.ANTE].outcome is Outcome.LOSE
    bonus = lines[Spot.ANTE_BONUS]
    assert bonus.wager_cents == 0 and bonus.outcome is Outcome.WIN
    assert bonus.payout_cents == bonus.net_cents == pays * 1_000
    assert bonus.rule_ids == ("DEF-TCP4",)


def test_def_tcp4_no_ante_bonus_line_below_a_straight_or_after_a_fold() -> None:
    assert Spot.ANTE_BONUS not in settle("Ah Jh 4h", QUALIFIED, Decision.PLAY)  # a flush
    assert Spot.ANTE_BONUS not in settle("9h 8d 7c", QUALIFIED, Decision.FOLD)


@pytest.mark.parametrize(
    ("cards", "pays"),
    [
        ("7s 7d Kc", 1),  # pair
        ("Ah Jh 4h", 4),  # flush
        ("9h 8d 7c", 6),  # straight
        ("4s 4d 4h", 30),  # three of a kind
        ("Kd Qd Jd", 40),  # straight flush
    ],
)
def test_def_tcp5_pair_plus_paytable(cards: str, pays: int) -> None:
    line = settle(cards, QUALIFIED, Decision.PLAY, pair_plus=500)[Spot.PAIR_PLUS]
    assert line.outcome is Outcome.WIN and line.payout_cents == pays * 500


def test_def_tcp5_pair_plus_loses_below_a_pair_whatever_the_dealer() -> None:
    line = settle("Ah Jd 4c", NOT_QUALIFIED, Decision.PLAY, pair_plus=500)[Spot.PAIR_PLUS]
    assert line.outcome is Outcome.LOSE and line.net_cents == -500


def test_tcp_a11a_a_fold_loses_the_ante_and_makes_no_play_bet() -> None:
    lines = settle("7s 4d 2c", QUALIFIED, Decision.FOLD)
    assert set(lines) == {Spot.ANTE}
    assert lines[Spot.ANTE].outcome is Outcome.FOLD and lines[Spot.ANTE].net_cents == -1_000


def test_tcp_a11b_pe_2005_a_fold_forfeits_pair_plus_too() -> None:
    lines = settle("7s 7d 2c", QUALIFIED, Decision.FOLD, pair_plus=500)
    assert lines[Spot.PAIR_PLUS].outcome is Outcome.FOLD
    assert lines[Spot.PAIR_PLUS].net_cents == -500
    assert lines[Spot.PAIR_PLUS].rule_ids == ("TCP-A11b",)


def test_def_tcp6_standard_pair_plus_stands_on_a_fold() -> None:
    lines = settle("7s 7d 2c", QUALIFIED, Decision.FOLD, pair_plus=500, profile=STANDARD)
    assert lines[Spot.ANTE].outcome is Outcome.FOLD
    assert lines[Spot.PAIR_PLUS].outcome is Outcome.WIN and lines[Spot.PAIR_PLUS].net_cents == 500


def test_tcp_a11b_pair_plus_only_fold_under_pe_2005_loses_it() -> None:
    lines = settle("7s 7d 2c", QUALIFIED, Decision.FOLD, ante=0, pair_plus=500)
    assert set(lines) == {Spot.PAIR_PLUS}
    assert lines[Spot.PAIR_PLUS].outcome is Outcome.FOLD


def test_def_tcp6_pair_plus_only_fold_under_standard_is_still_paid() -> None:
    lines = settle("7s 7d 2c", QUALIFIED, Decision.FOLD, ante=0, pair_plus=500, profile=STANDARD)
    assert lines[Spot.PAIR_PLUS].outcome is Outcome.WIN and lines[Spot.PAIR_PLUS].net_cents == 500


def test_def_tcp6_a_pair_plus_only_player_stays_in_without_a_play_bet() -> None:
    lines = settle("Kd Qd Jd", QUALIFIED, None, ante=0, pair_plus=500)
    assert set(lines) == {Spot.PAIR_PLUS}
    assert lines[Spot.PAIR_PLUS].payout_cents == 40 * 500


@pytest.mark.parametrize(
    ("seat", "message"),
    [
        (TripokerSeat(seat=1, ante_cents=100, pair_plus_cents=0, cards=parse_cards("As Kd 2c"),
                      decision=None), "did not decide"),
        (TripokerSeat(seat=1, ante_cents=0, pair_plus_cents=100, cards=parse_cards("As Kd 2c"),
                      decision=Decision.PLAY), "without an ante"),
        (TripokerSeat(seat=1, ante_cents=0, pair_plus_cents=0, cards=parse_cards("As Kd 2c"),
                      decision=None), "no bet"),
        (TripokerSeat(seat=1, ante_cents=100, pair_plus_cents=0, cards=parse_cards("Qs Kd 2c"),
                      decision=Decision.PLAY), "repeated"),
        (TripokerSeat(seat=8, ante_cents=100, pair_plus_cents=0, cards=parse_cards("As Kd 2c"),
                      decision=Decision.PLAY), "1..7"),
        (TripokerSeat(seat=1, ante_cents=-100, pair_plus_cents=0, cards=parse_cards("As Kd 2c"),
                      decision=Decision.PLAY), "negative"),
    ],
)  # fmt: skip
def test_tcp_a9_a11_impossible_records_are_refused(seat: TripokerSeat, message: str) -> None:
    game = TripokerRound(round_id="t1", dealer_cards=parse_cards(QUALIFIED), seats=(seat,))
    with pytest.raises(RoundError, match=message):
        settle_tripoker(game, PE)


def test_every_line_names_the_profile_and_version() -> None:
    for line in settle("As 4d 2c", QUALIFIED, Decision.PLAY, pair_plus=100).values():
        assert (line.profile, line.profile_version) == ("tripoker/pe-2005", 1)


@pytest.mark.parametrize(
    ("cards", "plays"),
    [
        ("Qs 6d 4c", True),
        ("Qs 6d 3c", False),
        ("Qs 7d 2c", True),
        ("Qs 5d 4c", False),
        ("Js Td 8c", False),
        ("Ks 3d 2c", True),
        ("2s 2d 3c", True),
        ("Qh 6h 4h", True),  # a flush
    ],
)
def test_queen_six_four_strategy(cards: str, plays: bool) -> None:
    assert plays_queen_six_four(parse_cards(cards)) is plays
