"""Pai Gow Poker: the deal procedure (PGP-A10, A11), fouls (A15), comparison and outcome (A14,
A16), payment and commission (A17, DEF-M2), surrender (DEF-PGP4) and player-banker (DEF-PGP2)."""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter

import pytest

from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import (
    DEALER,
    HandSet,
    PaiGowRound,
    PaiGowSeat,
    foul_rules,
    group_one_position,
    serpentine_deal_order,
    settle_pai_gow,
)
from games.profiles import load_profile
from rules.cards import parse_cards
from rules.money import commission_cents
from rules.profile import load_house_way
from rules.settlement import Bettor, Outcome, RoundError, Settlement

PROFILE = load_profile("pai-gow/pe-1999")
assert isinstance(PROFILE, PaiGowProfile)


def cards(text: str) -> tuple[int, ...]:
    return parse_cards(text, allow_joker=True)


def hand(high: str, low: str) -> HandSet:
    return HandSet(high=cards(high), low=cards(low))


def seat(number: int, high: str, low: str, wager: int = 1_000, **extra: object) -> PaiGowSeat:
    setting = hand(high, low)
    return PaiGowSeat(
        seat=number,
        wager_cents=wager,
        cards=setting.high + setting.low,
        hand=setting,
        **extra,  # type: ignore[arg-type]
    )


# The dealer's seven cards and what the Foxwoods way makes of them: one pair (9s) high with
# K-Q low (one pair: pair high, two highest singles low).
DEALER_CARDS = "9c 9d Kc Qd 7h 4s 2h"


def settle_one(player: PaiGowSeat, dealer: str = DEALER_CARDS, profile: PaiGowProfile = PROFILE):
    game = PaiGowRound(round_id="r1", dealer_cards=cards(dealer), seats=(player,))
    (line,) = settle_pai_gow(game, profile).settlements
    return line


# ---------------------------------------------------------------------------------------------
# The deal


def test_pgp_a11b_dice_eight_gives_group_one_to_the_banker() -> None:
    assert group_one_position(8) == DEALER


def test_pgp_a11b_dice_ten_gives_group_one_two_positions_left_of_the_banker() -> None:
    assert group_one_position(10) == 2
    assert group_one_position(10, banker=3) == 5


def test_pgp_a11b_counting_starts_at_the_banker_as_one() -> None:
    assert [group_one_position(t) for t in range(3, 19)] == [
        2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3,
    ]  # fmt: skip


def test_pgp_a11b_three_dice_reach_six_positions_31_times_in_216_and_one_30() -> None:
    # platform.md's expected cells for the dice goodness-of-fit check.
    totals = Counter(
        group_one_position(sum(dice)) for dice in itertools.product(range(1, 7), repeat=3)
    )
    assert sorted(totals.values()) == [30, 31, 31, 31, 31, 31, 31]
    assert sum(totals.values()) == 216


def test_pgp_a11_rejects_impossible_totals() -> None:
    for total in (2, 19):
        with pytest.raises(ValueError, match=r"3\.\.18"):
            group_one_position(total)


def test_pgp_a10f_serpentine_deal_order() -> None:
    order = serpentine_deal_order()
    assert len(order) == 49 and len(set(order)) == 49  # PGP-A10a: seven groups of seven
    for card in range(1, 8):
        groups = [g for g, n in order if n == card]
        expected = list(range(1, 8)) if card % 2 else list(range(7, 0, -1))
        assert groups == expected  # 1, 3, 5, 7 left to right; 2, 4, 6 right to left
    assert order[6:8] == ((7, 1), (7, 2))  # the turn at the right end
    assert order[13:15] == ((1, 2), (1, 3))  # and at the left end


# ---------------------------------------------------------------------------------------------
# Fouls


def test_pgp_a15a_low_outranks_high_fouls() -> None:
    setting = hand("As Kd 8c 7d 6s", "Qs Qh")
    assert foul_rules(setting) == ("PGP-A15a",)
    line = settle_one(seat(1, "As Kd 8c 7d 6s", "Qs Qh"))
    assert line.outcome is Outcome.FOUL and line.net_cents == -1_000
    assert "PGP-A15a" in line.rule_ids


def test_pgp_a15a_equal_pair_low_is_not_a_foul() -> None:
    # A pair of 8s low under a pair of 8s high: the low hand does not outrank the high hand.
    assert foul_rules(hand("8s 8d Kc 5h 3s", "8c 8h")) == ()


def test_pgp_a15a_high_cards_low_above_high_cards_high_fouls() -> None:
    assert foul_rules(hand("Ks 9d 7c 5h 3s", "As 2d")) == ("PGP-A15a",)
    assert foul_rules(hand("As 9d 7c 5h 3s", "Ks 2d")) == ()


def test_pgp_a15b_a15c_foul_by_card_count() -> None:
    line = settle_one(seat(1, "As Kd 8c 7d", "6s 5d 3c"))
    assert line.outcome is Outcome.FOUL
    assert line.rule_ids[:3] == ("PGP-A13c", "PGP-A15b", "PGP-A15c")
    assert line.net_cents == -1_000 and line.house_result_cents == 1_000


def test_pgp_a15_setting_cards_not_dealt_is_refused() -> None:
    player = dataclasses.replace(
        seat(1, "As Kd 9c 7h 6s", "5d 2c"), cards=cards("As Kd 9c 7h 6s 5d 3c")
    )
    with pytest.raises(RoundError, match="not dealt"):
        settle_one(player)


# ---------------------------------------------------------------------------------------------
# Comparison and outcome (dealer: 9-9 + K-Q-7 high, K-Q low)


def test_pgp_a16c_player_higher_in_both_wins_even_money_less_commission() -> None:
    line = settle_one(seat(1, "Ts Td 8c 5h 3s", "As Jd"))
    assert line.outcome is Outcome.WIN
    assert (line.payout_cents, line.commission_cents, line.net_cents) == (1_000, 50, 950)
    assert line.house_result_cents == -950
    assert {"PGP-A16c", "PGP-A17c", "DEF-M2"} <= set(line.rule_ids)


def test_pgp_a16b_one_hand_each_pushes_and_the_bet_stays() -> None:
    line = settle_one(seat(1, "Ts Td 8c 5h 3s", "Js 6d"))
    assert line.outcome is Outcome.PUSH
    assert (line.payout_cents, line.net_cents) == (0, 0)
    assert {"PGP-A16b", "PGP-A17b"} <= set(line.rule_ids)


def test_pgp_a16a_banker_higher_in_both_wins() -> None:
    line = settle_one(seat(1, "8s 8h Jc 5h 3s", "Js 6d"))
    assert line.outcome is Outcome.LOSE and line.net_cents == -1_000
    assert {"PGP-A16a", "PGP-A17a"} <= set(line.rule_ids)


def test_pgp_a14b_copy_in_one_hand_and_win_in_the_other_goes_to_the_banker_as_a_push() -> None:
    # Low K-Q copies the dealer's K-Q (banker's), the high hand wins: one each -> push.
    line = settle_one(seat(1, "Ts Td 8c 5h 3s", "Ks Qh"))
    assert line.outcome is Outcome.PUSH
    assert "PGP-A14b" in line.rule_ids


def test_pgp_a14b_a16a_copies_in_both_hands_lose() -> None:
    # Equal in both (the same ranks in other suits): the banker wins (A16a: equal in both).
    line = settle_one(seat(1, "9h 9s 7c 4d 2c", "Kh Qs"))
    assert line.outcome is Outcome.LOSE
    assert "PGP-A14b" in line.rule_ids


def test_pgp_a16a_equal_in_one_and_higher_in_the_other_goes_to_the_banker() -> None:
    line = settle_one(seat(1, "9h 9s 7c 4d 2c", "Kh Js"))
    assert line.outcome is Outcome.LOSE


def test_pgp_a4a_five_aces_beat_a_royal_flush_when_settling() -> None:
    # One deck cannot deal both (each needs the joker or an ace), so the banker's royal is
    # given to the comparison directly: A-K-Q-J-10 of spades high, 3-2 low.
    from games.pai_gow.rules import _judge
    from rules.rankings import PAI_GOW_HIGH, PAI_GOW_LOW

    royal = PAI_GOW_HIGH.strength(cards("As Ks Qs Js Ts"))
    low = PAI_GOW_LOW.strength(cards("3d 2c"))
    five_aces = seat(1, "Ah Ad Ac As Jk", "Kd Qh")
    assert _judge(five_aces, royal, low)[0] is Outcome.WIN
    royal_player = seat(2, "As Ks Qs Js Ts", "Kd Qh")
    five = PAI_GOW_HIGH.strength(cards("Ah Ad Ac As Jk"))
    assert _judge(royal_player, five, low)[0] is Outcome.PUSH  # loses high, wins low


def test_pgp_a13c_the_dealer_is_set_by_the_profile_house_way() -> None:
    # Dealer J-J-4-4 with A-9-7: Foxwoods splits (J-J-A-9-7 / 4-4), Trump Plaza keeps the two
    # pair with A-9 low. A player with K-K / 5-5 wins both hands against the first only.
    dealer = "Js Jd 4c 4h As 9d 7c"
    player = seat(1, "Ks Kh 8c 6h 3s", "5s 5d")
    trump = dataclasses.replace(PROFILE, house_way=load_house_way("trump-plaza"))
    assert settle_one(player, dealer=dealer).outcome is Outcome.WIN
    assert settle_one(player, dealer=dealer, profile=trump).outcome is Outcome.PUSH


def test_pgp_a16a_surrender_loses_the_bet() -> None:
    player = dataclasses.replace(seat(1, "Ts Td 8c 5h 3s", "As Jd"), surrendered=True)
    line = settle_one(player)
    assert line.outcome is Outcome.SURRENDER and line.net_cents == -1_000


def test_def_pgp4_no_hands_set_is_a_surrender() -> None:
    player = dataclasses.replace(seat(1, "Ts Td 8c 5h 3s", "As Jd"), hand=None)
    line = settle_one(player)
    assert line.outcome is Outcome.SURRENDER
    assert "DEF-PGP4" in line.rule_ids


# ---------------------------------------------------------------------------------------------
# Commission (PGP-A17c, DEF-M2)


@pytest.mark.parametrize(
    ("win", "unit", "commission"),
    [
        (1_000, 1, 50),  # S/ 10.00 -> 50 céntimos
        (1_010, 1, 50),  # 50.5 -> rounded down
        (1_039, 1, 51),  # 51.95 -> 51
        (999, 1, 49),  # 49.95 -> 49
        (1, 1, 0),
        (3_900, 100, 100),  # S/ 1.95 collected in S/ 1 chips -> S/ 1
        (1_999, 100, 0),  # S/ 0.9995 -> nothing in S/ 1 chips
        (2_000, 100, 100),
        (10_010, 5, 500),  # 500.5 -> 500 in 5-céntimo units
    ],
)
def test_def_m2_commission_rounds_down_to_the_unit(win: int, unit: int, commission: int) -> None:
    assert commission_cents(win, 500, unit) == commission


def test_def_m2_the_profile_unit_applies_to_a_winning_bet() -> None:
    in_soles = dataclasses.replace(PROFILE, commission_unit_cents=100)
    line = settle_one(seat(1, "Ts Td 8c 5h 3s", "As Jd", wager=3_900), profile=in_soles)
    assert (line.payout_cents, line.commission_cents, line.net_cents) == (3_900, 100, 3_800)


# ---------------------------------------------------------------------------------------------
# Player-banker (DEF-PGP2) and the banker's re-set (PGP-A13b)


def banked_round(
    *players: PaiGowSeat, banker: PaiGowSeat, house_wager: int = 0
) -> list[Settlement]:
    game = PaiGowRound(
        round_id="b1",
        dealer_cards=cards(DEALER_CARDS),
        seats=(banker, *players),
        banker_seat=banker.seat,
        house_wager_cents=house_wager,
    )
    return list(settle_pai_gow(game, PROFILE).settlements)


def test_def_pgp2_player_banker_pays_and_collects_and_pays_commission_on_its_net_win() -> None:
    banker = seat(3, "Js Jd 4c 4h 2d", "Ah Ks", wager=10_000)  # two pair high, A-K low
    copier = seat(4, "Qs Qh Qc 5h 3s", "As Kd", wager=1_000)  # wins high, copies A-K low
    loser = seat(5, "Ts Th 9s 8h 6s", "Jh 5c", wager=2_500)  # loses both
    lines = banked_round(copier, loser, banker=banker)
    assert [line.seat for line in lines] == [3, 4, 5]  # the banker, then from its left
    by_seat = {line.seat: line for line in lines}
    assert by_seat[4].outcome is Outcome.PUSH  # the copy goes to the banker (PGP-A14b)
    assert by_seat[5].outcome is Outcome.LOSE
    assert by_seat[5].house_result_cents == 0  # the house is not seat 5's counterparty
    bank = by_seat[3]
    assert bank.bettor is Bettor.BANKER and bank.outcome is Outcome.WIN
    assert bank.payout_cents == 2_500  # collected from seat 5
    assert bank.commission_cents == 125  # 5 % of the banker's net win
    assert bank.net_cents == 2_375 and bank.house_result_cents == 125


def test_def_pgp2_winner_against_a_player_banker_pays_commission_to_the_house() -> None:
    banker = seat(1, "8s 8d 5c 4h 2d", "Jh 9s", wager=10_000)
    player = seat(2, "Ks Kh 7c 6h 3s", "Qs Td", wager=2_000)
    by_seat = {line.seat: line for line in banked_round(player, banker=banker)}
    assert by_seat[2].outcome is Outcome.WIN
    assert (by_seat[2].commission_cents, by_seat[2].house_result_cents) == (100, 100)
    assert by_seat[1].outcome is Outcome.LOSE
    assert (by_seat[1].net_cents, by_seat[1].commission_cents) == (-2_000, 0)


def test_def_pgp2_bets_the_bank_cannot_cover_are_returned_in_seat_order_from_its_left() -> None:
    # A bank of 3,000 at seat 5: its left is seat 6, then the dealer's position (no house bet),
    # then seats 1, 2. Seat 6 (2,000) and seat 1 (1,000) use up the bank; seat 2 is returned.
    banker = seat(5, "8s 8d 5c 4h 2d", "Jh 9s", wager=3_000)
    six = seat(6, "Ks Kh 7c 6h 3s", "Qs Td", wager=2_000)
    one = seat(1, "As Ah 7d 6d 3c", "Qc Th", wager=1_000)
    two = seat(2, "Ac Ad 9h 6s 3h", "Jd Tc", wager=500)
    lines = banked_round(one, two, six, banker=banker)
    assert [line.seat for line in lines] == [5, 6, 1, 2]
    by_seat = {line.seat: line for line in lines}
    assert by_seat[2].outcome is Outcome.RETURNED and by_seat[2].net_cents == 0
    assert by_seat[6].outcome is Outcome.WIN and by_seat[1].outcome is Outcome.WIN
    assert by_seat[5].net_cents == -3_000 and by_seat[5].outcome is Outcome.LOSE


def test_def_pgp2_the_dealer_position_plays_the_house_wager_by_the_house_way() -> None:
    # The dealer's 9-9-7-4-2 / K-Q (house way) against the banker's 8-8 / J-9: the house wins.
    banker = seat(2, "8s 8d 5c 4h 2d", "Jh 9s", wager=5_000)
    lines = banked_round(banker=banker, house_wager=1_000)
    house = next(line for line in lines if line.bettor is Bettor.HOUSE)
    assert house.seat == DEALER and house.outcome is Outcome.WIN
    assert house.commission_cents == 0
    assert house.net_cents == house.house_result_cents == 1_000
    bank = next(line for line in lines if line.bettor is Bettor.BANKER)
    assert bank.net_cents == -1_000


def test_pgp_a13b_a_fouled_banker_is_re_set_by_the_house_way_not_forfeited() -> None:
    # The banker puts A-A low under a king-high hand (a foul); re-set by the house way it holds
    # A-A-8-6-5 high and K-9 low, which beats the player's 7-7 and J-10.
    fouled = seat(1, "Kd 9h 8c 6s 5d", "As Ah", wager=10_000)
    player = seat(2, "7s 7d Qc 4h 3s", "Js Td", wager=1_000)
    by_seat = {line.seat: line for line in banked_round(player, banker=fouled)}
    assert "PGP-A13b" in by_seat[1].rule_ids
    assert by_seat[2].outcome is Outcome.LOSE
    assert by_seat[1].outcome is Outcome.WIN and by_seat[1].net_cents == 950


def test_def_pgp2_a_banker_cannot_surrender() -> None:
    banker = dataclasses.replace(seat(1, "8s 8d 5c 4h 2d", "Jh 9s"), surrendered=True)
    with pytest.raises(RoundError, match="surrender"):
        banked_round(seat(2, "Ks Kh 7c 6h 3s", "Qs Td"), banker=banker)


def test_def_pgp2_uncovered_bets_are_returned_whole_and_a_smaller_one_after_may_still_fit() -> None:
    # Reading of DEF-PGP2 (documented in settle_pai_gow): a bet takes action only if it fits
    # whole in what is left of the bank. Bank 3,000: seat 6 takes 2,000, seat 1's 1,500 does
    # not fit in the 1,000 left and is returned, seat 2's 500 fits.
    banker = seat(5, "8s 8d 5c 4h 2d", "Jh 9s", wager=3_000)
    six = seat(6, "Ks Kh 7c 6h 3s", "Qs Td", wager=2_000)
    one = seat(1, "As Ah 7d 6d 3c", "Qc Th", wager=1_500)
    two = seat(2, "Ac Ad 9h 6s 3h", "Jd Tc", wager=500)
    by_seat = {line.seat: line for line in banked_round(one, two, six, banker=banker)}
    assert by_seat[1].outcome is Outcome.RETURNED
    assert by_seat[2].outcome is Outcome.WIN and by_seat[6].outcome is Outcome.WIN
    assert by_seat[5].net_cents == -2_500
