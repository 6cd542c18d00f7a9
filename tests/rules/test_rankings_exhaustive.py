"""Exhaustive category counts: every hand of every table in issue 3 is dealt and ranked.

Expected numbers are from Alspach's poker computations and Wizard of Odds' Pai Gow and Three
Card Poker pages, never from this code.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rules.cards import JOKER, every_hand
from rules.rankings import HOLDEM, PAI_GOW_7, PAI_GOW_HIGH, TRIPOKER, Category, RankingSystem

C = Category


def category_counts(system: RankingSystem, deck_size: int, size: int) -> dict[Category, int]:
    totals = np.zeros(len(Category), dtype=np.int64)
    dealt = 0
    for chunk in every_hand(deck_size, size):
        dealt += len(chunk)
        totals += np.bincount(system.categories_batch(system.rank_batch(chunk)), minlength=11)
    assert dealt == math.comb(deck_size, size)
    return {category: int(totals[category]) for category in Category if totals[category]}


def test_every_52_card_five_card_hand() -> None:
    assert category_counts(HOLDEM, 52, 5) == {
        C.ROYAL_FLUSH: 4,
        C.STRAIGHT_FLUSH: 36,
        C.FOUR_OF_A_KIND: 624,
        C.FULL_HOUSE: 3_744,
        C.FLUSH: 5_108,
        C.STRAIGHT: 10_200,
        C.THREE_OF_A_KIND: 54_912,
        C.TWO_PAIR: 123_552,
        C.PAIR: 1_098_240,
        C.HIGH_CARD: 1_302_540,
    }


def test_every_53_card_five_card_pai_gow_hand() -> None:
    expected = {
        C.FIVE_ACES: 1,
        C.ROYAL_FLUSH: 24,
        C.STRAIGHT_FLUSH: 180,
        C.FOUR_OF_A_KIND: 828,
        C.FULL_HOUSE: 4_368,
        C.FLUSH: 7_804,
        C.STRAIGHT: 20_532,
        C.THREE_OF_A_KIND: 63_360,
        C.TWO_PAIR: 138_600,
        C.PAIR: 1_215_024,
        C.HIGH_CARD: 1_418_964,
    }
    assert sum(expected.values()) == 2_869_685
    assert category_counts(PAI_GOW_HIGH, 53, 5) == expected


def test_every_three_card_tripoker_hand() -> None:
    assert category_counts(TRIPOKER, 52, 3) == {
        C.STRAIGHT_FLUSH: 48,
        C.THREE_OF_A_KIND: 52,
        C.STRAIGHT: 720,
        C.FLUSH: 1_096,
        C.PAIR: 3_744,
        C.HIGH_CARD: 16_440,
    }


def test_tripoker_direct_rank_agrees_with_the_tables_on_every_hand() -> None:
    hands = np.array(list(itertools.combinations(range(52), 3)), dtype=np.uint8)
    strengths = TRIPOKER.rank_batch(hands)
    keys = [TRIPOKER.rank(hand).key for hand in hands.tolist()]
    assert keys == [TRIPOKER.key_of_strength(s) for s in strengths.tolist()]


@pytest.mark.slow
def test_pai_gow_direct_rank_agrees_with_the_tables_on_every_joker_hand() -> None:
    four = np.array(list(itertools.combinations(range(52), 4)), dtype=np.uint8)
    hands = np.hstack([four, np.full((len(four), 1), JOKER, dtype=np.uint8)])
    strengths = PAI_GOW_HIGH.rank_batch(hands).tolist()
    for hand, strength in zip(hands.tolist(), strengths, strict=True):
        assert PAI_GOW_HIGH.rank(hand).key == PAI_GOW_HIGH.key_of_strength(strength), hand


@pytest.mark.slow
def test_every_52_card_seven_card_hand_best_five() -> None:
    expected = {
        C.ROYAL_FLUSH: 4_324,
        C.STRAIGHT_FLUSH: 37_260,
        C.FOUR_OF_A_KIND: 224_848,
        C.FULL_HOUSE: 3_473_184,
        C.FLUSH: 4_047_644,
        C.STRAIGHT: 6_180_020,
        C.THREE_OF_A_KIND: 6_461_620,
        C.TWO_PAIR: 31_433_400,
        C.PAIR: 58_627_800,
        C.HIGH_CARD: 23_294_460,
    }
    assert sum(expected.values()) == 133_784_560
    assert category_counts(HOLDEM, 52, 7) == expected


@pytest.mark.slow
def test_every_53_card_seven_card_pai_gow_hand_best_five() -> None:
    expected = {
        C.FIVE_ACES: 1_128,
        C.ROYAL_FLUSH: 26_132,
        C.STRAIGHT_FLUSH: 184_832,
        C.FOUR_OF_A_KIND: 307_472,
        C.FULL_HOUSE: 4_188_528,
        C.FLUSH: 6_172_088,
        C.STRAIGHT: 11_236_028,
        C.THREE_OF_A_KIND: 7_470_676,
        C.TWO_PAIR: 35_553_816,
        C.PAIR: 64_221_960,
        C.HIGH_CARD: 24_780_420,
    }
    assert sum(expected.values()) == 154_143_080
    assert category_counts(PAI_GOW_7, 53, 7) == expected
