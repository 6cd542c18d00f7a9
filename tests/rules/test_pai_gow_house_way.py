"""The house way (DEF-PGP1, PGP-A13c): every row of the Foxwoods and Trump Plaza ways, by hand.

Each case gives seven cards and the low hand the written rule asks for (ranks; `Jk` is the
joker), worked out from the rows in defaults.md and rules/profiles/house-ways/*.toml, plus the
high hand's category where a straight or flush is at stake.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from games.pai_gow.rules import HandSet, foul_rules, house_way, house_way_batch
from rules.cards import JOKER, RANKS, parse_cards
from rules.profile import load_house_way
from rules.rankings import PAI_GOW_HIGH, Category

C = Category


def low_ranks(hand: HandSet) -> list[str]:
    return sorted(("Jk" if c == JOKER else RANKS[c >> 2]) for c in hand.low)


def check(text: str, low: str, high_category: Category | None, way: str) -> None:
    cards = parse_cards(text, allow_joker=True)
    hand = house_way(cards, way)
    assert sorted(hand.high + hand.low) == sorted(cards)
    assert len(hand.high) == 5 and len(hand.low) == 2
    assert low_ranks(hand) == sorted(low.split()), hand
    assert foul_rules(hand) == ()  # PGP-A15: a house way never fouls
    if high_category is not None:
        assert PAI_GOW_HIGH.rank(hand.high).category is high_category


FOXWOODS = [
    # no pair: 2nd and 3rd highest low (the joker is an ace)
    ("As Kd 9c 7h 6s 4d 2c", "K 9", None),
    ("Kh Qd Tc 8s 6h 4d 2c", "Q T", None),
    ("Jk Kd 9c 7h 5s 4d 2c", "K 9", None),
    # one pair: pair high, two highest singles low
    ("8s 8d Ac Kh 9s 5d 3c", "A K", C.PAIR),
    ("2s 2d Jc Th 7s 5d 3c", "J T", C.PAIR),
    ("Jk As Kc Th 7s 5d 3c", "K T", C.PAIR),  # ace + joker are a pair of aces
    # two pair, high pair A/K/Q/J: split, smaller pair low
    ("As Ad 5c 5h Ks 9d 3c", "5 5", C.PAIR),
    ("Ks Kd 3c 3h As 9d 7c", "3 3", C.PAIR),
    ("Js Jd Tc Th As 4d 2c", "T T", C.PAIR),  # boundary: jacks split even with an ace
    ("Qs Qd 2c 2h 9s 8d 4c", "2 2", C.PAIR),
    # two pair, high pair 10-7: both high if an ace can go low, else split
    ("Ts Td 4c 4h As 9d 7c", "A 9", C.TWO_PAIR),
    ("Ts Td 4c 4h Ks 9d 7c", "4 4", C.PAIR),  # boundary: tens without an ace split
    ("7s 7d 3c 3h As Kd 2c", "A K", C.TWO_PAIR),
    ("7s 7d 3c 3h Ks Qd 2c", "3 3", C.PAIR),  # a king is not enough at 7
    ("9s 9d 4c 4h Jk Qd 2c", "Jk Q", C.TWO_PAIR),  # the joker single is the ace
    # two pair, high pair 6-3: both high if a king or better can go low, else split
    ("6s 6d 3c 3h Ks 9d 8c", "K 9", C.TWO_PAIR),
    ("6s 6d 3c 3h Qs 9d 8c", "3 3", C.PAIR),
    ("4s 4d 3c 3h As 9d 8c", "A 9", C.TWO_PAIR),
    ("6s 6d 2c 2h Ks Td 8c", "K T", C.TWO_PAIR),  # boundary 6: a king keeps them together
    ("7s 7d 2c 2h Ks Td 8c", "2 2", C.PAIR),  # boundary 7: the same hand a rank up splits
    # three pair: highest pair low
    ("9s 9d 6c 6h 3s 3d Kc", "9 9", C.TWO_PAIR),
    ("Jk As Kc Kh 4s 4d 8c", "A Jk", C.TWO_PAIR),
    # trips of aces: one ace + the next highest single low
    ("As Ad Ac Kh 9s 5d 3c", "A K", C.PAIR),
    ("Jk As Ad Qh 9s 5d 3c", "A Q", C.PAIR),
    # trips, kings or lower: trips high, two highest singles low
    ("Ks Kd Kc Qh 9s 5d 3c", "Q 9", C.THREE_OF_A_KIND),
    ("5s 5d 5c Ah 9s 7d 3c", "A 9", C.THREE_OF_A_KIND),
    ("2s 2d 2c Jh 9s 7d 4c", "J 9", C.THREE_OF_A_KIND),
    # two sets of trips: a pair from the higher set low
    ("Qs Qd Qc 8h 8s 8d 3c", "Q Q", C.THREE_OF_A_KIND),
    ("Jk As Ad 7h 7s 7d 2c", "A A", C.THREE_OF_A_KIND),
    # straight / flush / straight flush, no pair: the best low that leaves it high
    ("Ah Kd 9c 8s 7h 6d 5c", "A K", C.STRAIGHT),
    ("Ts 9d 8c 7h 6s 5d Kc", "K T", C.STRAIGHT),  # 6-card straight: T goes low
    ("8s 7d 6c 5h 4s 3d 2c", "8 7", C.STRAIGHT),  # 7-card straight
    ("Ah 9h 7h 5h 3h Kd Qc", "K Q", C.FLUSH),
    ("Ah Kh 9h 7h 5h 3h Qc", "A Q", C.FLUSH),  # 6-card flush: the ace goes low
    ("Ah Kh Th 8h 6h 4h 2h", "A K", C.FLUSH),  # 7-card flush
    ("Ah Kh 9h 6h 3h Qd Jc", "Q J", C.FLUSH),
    ("9s 8s 7s 6s 5s Ad Kc", "A K", C.STRAIGHT_FLUSH),
    ("As 2d 3c 4h 5s Kd 9c", "K 9", C.STRAIGHT),  # the wheel
    ("Jk Kd Qc Jh 9s 4d 2c", "4 2", C.STRAIGHT),  # the joker fills the ten
    ("Jk 9h 7h 5h 3h Kd Qc", "K Q", C.FLUSH),  # the joker fills the flush
    # Ambiguous "the 5-card hand" when the cards hold two: read to maximise the high hand
    # (defaults.md), so the straight flush stays (not K-9 low over an 8-high straight) ...
    ("9s 8s 7s 6s 5s 4d Kc", "K 4", C.STRAIGHT_FLUSH),
    # ... and the flush beats the straight (8-6 low, not A-3 low over a straight).
    ("Th 9h 8d 7h 6c 3h Ah", "8 6", C.FLUSH),
    # straight / flush with one pair: the best low that keeps it high, pair or not ...
    ("8s 8d 9c Th Js Qd 2c", "8 2", C.STRAIGHT),
    ("6s 6d 7c 8h 9s Td Ac", "A 6", C.STRAIGHT),
    ("Ah Kh 9h 7h 3h 3d 2c", "3 2", C.FLUSH),
    ("Js Jd Tc 9h 8s 7d Ac", "A J", C.STRAIGHT),  # ace + pair of J, A-T would not improve A-J
    # ... but ace + pair of K/Q/J/10: ace low, pair high, when that improves the low hand
    ("Ks Kd Qc Jh Ts As 2c", "A Q", C.PAIR),
    ("Ts Td Jc Qh Kc As 9d", "A K", C.PAIR),
    # straight / flush with trips: a pair low under a complete high hand where possible
    ("7c 7d 7h 8s 9d Tc Jh", "7 7", C.STRAIGHT),
    ("5h 5d 5c Ah Kh 9h 2h", "5 5", C.FLUSH),
    ("As Ad Ac 2h 3s 4d 5c", "A A", C.STRAIGHT),
    # straight with two pair: the two-pair rule (9s and 8s, no ace: split)
    ("9s 9d 8c 8h 7s 6d Tc", "8 8", C.PAIR),
    # full house: the highest pair low
    ("Ks Kd Kc 4h 4s Ad 9c", "4 4", C.THREE_OF_A_KIND),
    ("9s 9d 9c Ah As 5d 2c", "A A", C.THREE_OF_A_KIND),
    ("7s 7d 7c Qh Qs 3d 3c", "Q Q", C.FULL_HOUSE),
    ("As Ad Ac 8h 8s Kd 2c", "8 8", C.THREE_OF_A_KIND),  # a full house, not trips of aces
    ("Jk As Ad 6h 6s Kd 2c", "6 6", C.THREE_OF_A_KIND),
    # quads A/K/Q/J: always split
    ("Js Jd Jc Jh As Kd 2c", "J J", C.PAIR),
    ("Jk As Ad Ac 9h 5s 2c", "A A", C.PAIR),  # three aces and the joker
    ("Jk Ks Kd Kc Kh 5s 2c", "K K", C.PAIR),
    # quads 10-7: together if a king or better can go low, else split
    ("9s 9d 9c 9h Ks 5d 2c", "K 5", C.FOUR_OF_A_KIND),
    ("9s 9d 9c 9h Qs 5d 2c", "9 9", C.PAIR),
    ("7s 7d 7c 7h As 5d 2c", "A 5", C.FOUR_OF_A_KIND),
    ("Ts Td Tc Th Qs 5d 2c", "T T", C.PAIR),
    # quads 6 and lower: never split
    ("6s 6d 6c 6h As Kd 2c", "A K", C.FOUR_OF_A_KIND),
    ("2s 2d 2c 2h 7s 5d 3c", "7 5", C.FOUR_OF_A_KIND),
    # quads with a pair or trips: the pair low
    ("8s 8d 8c 8h 5s 5d Ac", "5 5", C.FOUR_OF_A_KIND),
    ("4s 4d 4c 4h Qs Qd Qc", "Q Q", C.FOUR_OF_A_KIND),
    # five aces: a pair of aces low, unless a pair of kings can go low
    ("As Ad Ah Ac Jk Kd 7c", "A A", C.THREE_OF_A_KIND),
    ("As Ad Ah Ac Jk Kd Kc", "K K", C.FIVE_ACES),
    ("As Ad Ah Ac Jk Qd Qc", "A A", C.FULL_HOUSE),
]

TRUMP_PLAZA = [
    # rows it shares with Foxwoods
    ("As Kd 9c 7h 6s 4d 2c", "K 9", None),
    ("8s 8d Ac Kh 9s 5d 3c", "A K", C.PAIR),
    ("9s 9d 6c 6h 3s 3d Kc", "9 9", C.TWO_PAIR),
    ("As Ad Ac Kh 9s 5d 3c", "A K", C.PAIR),
    ("Ks Kd Kc Qh 9s 5d 3c", "Q 9", C.THREE_OF_A_KIND),
    ("Qs Qd Qc 8h 8s 8d 3c", "Q Q", C.THREE_OF_A_KIND),
    ("As Ad Ah Ac Jk Kd Kc", "K K", C.FIVE_ACES),
    ("Ts 9d 8c 7h 6s 5d Kc", "K T", C.STRAIGHT),
    ("8s 8d 8c 8h 5s 5d Ac", "5 5", C.FOUR_OF_A_KIND),
    # two pair: jacks stay together with an ace (Foxwoods splits), queens split
    ("Js Jd 4c 4h As 9d 7c", "A 9", C.TWO_PAIR),
    ("Qs Qd 4c 4h As 9d 7c", "4 4", C.PAIR),
    # two pair 6-3: a queen is enough to keep them together (Foxwoods needs a king)
    ("6s 6d 3c 3h Qs 9d 8c", "Q 9", C.TWO_PAIR),
    ("6s 6d 3c 3h Js 9d 8c", "3 3", C.PAIR),
    # quads 10-7: together only with an ace low (Foxwoods: a king will do)
    ("9s 9d 9c 9h Ks 5d 2c", "9 9", C.PAIR),
    ("9s 9d 9c 9h As 5d 2c", "A 5", C.FOUR_OF_A_KIND),
    ("Ks Kd Kc Kh As 5d 2c", "K K", C.PAIR),  # J-K and aces: always split
    ("5s 5d 5c 5h As Kd 2c", "A K", C.FOUR_OF_A_KIND),  # 6 and lower: never split
    # full house: 2s stay with the trips when an ace and a king can go low
    ("Ts Td Tc 2h 2s Ad Kc", "A K", C.FULL_HOUSE),
    ("Ts Td Tc 3h 3s Ad Kc", "3 3", C.THREE_OF_A_KIND),
    ("Ts Td Tc 2h 2s Ad Qc", "2 2", C.THREE_OF_A_KIND),
    # straight with a pair of kings and an ace: the straight stays (no ace-low exception)
    ("Ks Kd Qc Jh Ts As 2c", "K 2", C.STRAIGHT),
]


@pytest.mark.parametrize(("cards", "low", "high_category"), FOXWOODS)
def test_def_pgp1_foxwoods_house_way(cards: str, low: str, high_category: Category | None) -> None:
    check(cards, low, high_category, "foxwoods")


@pytest.mark.parametrize(("cards", "low", "high_category"), TRUMP_PLAZA)
def test_def_pgp1_trump_plaza_house_way(
    cards: str, low: str, high_category: Category | None
) -> None:
    check(cards, low, high_category, "trump-plaza")


def test_def_pgp1_the_profile_chooses_the_way() -> None:
    cards = parse_cards("Js Jd 4c 4h As 9d 7c")
    assert low_ranks(house_way(cards, load_house_way("foxwoods"))) == ["4", "4"]
    assert low_ranks(house_way(cards, load_house_way("trump-plaza"))) == ["9", "A"]


def random_hands(n: int, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    deck = list(range(53))
    return [tuple(rng.sample(deck, 7)) for _ in range(n)]


@pytest.mark.parametrize("way", ["foxwoods", "trump-plaza"])
def test_pgp_a13c_house_way_never_fouls_and_uses_the_seven_cards(way: str) -> None:
    for cards in random_hands(4_000, seed=7):
        hand = house_way(cards, way)
        assert sorted(hand.high + hand.low) == sorted(cards)
        assert foul_rules(hand) == (), cards


@pytest.mark.parametrize("way", ["foxwoods", "trump-plaza"])
def test_pgp_a13c_batch_house_way_sets_like_one_hand_at_a_time(way: str) -> None:
    hands = random_hands(6_000, seed=11)
    hands += [parse_cards(c, allow_joker=True) for c, _, _ in FOXWOODS + TRUMP_PLAZA]
    batch = house_way_batch(np.array(hands), way)
    for cards, row in zip(hands, batch, strict=True):
        one = house_way(cards, way)
        assert sorted(row[:5].tolist()) == sorted(one.high)
        assert sorted(row[5:].tolist()) == sorted(one.low)


def test_pgp_a13c_the_setting_does_not_depend_on_card_order_or_suit_names() -> None:
    # The same hand with its suits renamed and its cards shuffled sets the same ranks.
    rng = random.Random(3)
    rename = {0: 2, 1: 3, 2: 0, 3: 1}
    for cards in random_hands(1_000, seed=5):
        moved = [c if c == JOKER else (c & ~3) | rename[c & 3] for c in cards]
        rng.shuffle(moved)
        first, second = house_way(cards), house_way(tuple(moved))
        assert low_ranks(first) == low_ranks(second)
        assert PAI_GOW_HIGH.strength(first.high) == PAI_GOW_HIGH.strength(second.high)
