"""Hand rankings, one test per article: PGP-A3/A4/A5/A15a, TCP-A4, THP-A3/A4, and the joker.

Every example the regulations give is here, checked with `rank`, `compare` and `strength`.
"""

from __future__ import annotations

import itertools

import pytest

from rules.cards import JOKER, CardError, parse_cards
from rules.rankings import (
    HOLDEM,
    PAI_GOW_7,
    PAI_GOW_HIGH,
    PAI_GOW_LOW,
    TRIPOKER,
    Category,
    HandRank,
    RankingSystem,
    get_system,
    pai_gow_low_outranks_high,
)

C = Category


def rank(system: RankingSystem, text: str) -> HandRank:
    return system.rank(parse_cards(text, allow_joker=system.family.joker))


def ordered(system: RankingSystem, *hands: str) -> None:
    """Each hand strictly beats the next, by `rank` keys, `compare` and `strength` alike."""
    for high, low in itertools.pairwise(hands):
        a = parse_cards(high, allow_joker=system.family.joker)
        b = parse_cards(low, allow_joker=system.family.joker)
        assert system.rank(a).key > system.rank(b).key, (high, low)
        assert system.compare(a, b) == 1 and system.compare(b, a) == -1, (high, low)
        assert system.strength(a) > system.strength(b), (high, low)


def tie(system: RankingSystem, a_text: str, b_text: str) -> None:
    a = parse_cards(a_text, allow_joker=system.family.joker)
    b = parse_cards(b_text, allow_joker=system.family.joker)
    assert system.rank(a).key == system.rank(b).key
    assert system.compare(a, b) == 0
    assert system.strength(a) == system.strength(b)


# --- Pai Gow, five-card high hand -----------------------------------------------------------

PAI_GOW_LADDER = [
    (C.FIVE_ACES, "Jk Ac Ad Ah As"),  # PGP-A4a
    (C.ROYAL_FLUSH, "Ah Kh Qh Jh Th"),  # PGP-A4b
    (C.STRAIGHT_FLUSH, "As 2s 3s 4s 5s"),  # PGP-A4c
    (C.FOUR_OF_A_KIND, "Ac Ad Ah As Ks"),  # PGP-A4d
    (C.FULL_HOUSE, "Ac Ad Ah Ks Kd"),  # PGP-A4e
    (C.FLUSH, "Ac Kc Qc Jc 9c"),  # PGP-A4f
    (C.STRAIGHT, "Ac Kd Qh Js Tc"),  # PGP-A4g
    (C.THREE_OF_A_KIND, "Ac Ad Ah Ks Qd"),  # PGP-A4h
    (C.TWO_PAIR, "Ac Ad Kh Ks Qd"),  # PGP-A4i
    (C.PAIR, "Ac Ad Kh Qs Jd"),  # PGP-A4j
    (C.HIGH_CARD, "Ac Kd Qh Js 9d"),  # PGP-A4k
]


def test_pgp_a4_category_order_five_aces_down_to_high_card() -> None:
    for category, hand in PAI_GOW_LADDER:
        assert rank(PAI_GOW_HIGH, hand).category is category
        assert rank(PAI_GOW_HIGH, hand).key[0] == category.value
    ordered(PAI_GOW_HIGH, *(hand for _, hand in PAI_GOW_LADDER))


def test_pgp_a4c_wheel_is_the_highest_straight_flush_below_royal() -> None:
    ordered(
        PAI_GOW_HIGH,
        "Ah Kh Qh Jh Th",
        "Ad 2d 3d 4d 5d",
        "Kc Qc Jc Tc 9c",
        "7s 6s 5s 4s 3s",
        "6h 5h 4h 3h 2h",
    )
    assert rank(PAI_GOW_HIGH, "Ad 2d 3d 4d 5d").category is C.STRAIGHT_FLUSH
    assert rank(PAI_GOW_HIGH, "6h 5h 4h 3h 2h").key == (C.STRAIGHT_FLUSH, 4)


def test_pgp_a4g_wheel_is_the_second_highest_straight() -> None:
    ordered(PAI_GOW_HIGH, "Ah Kd Qc Js Th", "Ad 2c 3h 4s 5d", "Kc Qd Jh Ts 9c", "6s 5d 4h 3c 2s")
    wheel = rank(PAI_GOW_HIGH, "Ad 2c 3h 4s 5d")
    assert wheel.category is C.STRAIGHT
    assert wheel.cards == parse_cards("5d 4s 3h 2c Ad")  # PGP-A3b: the ace plays low


def test_pgp_a4d_a4e_a4i_highest_and_lowest_of_quads_full_houses_two_pairs() -> None:
    ordered(PAI_GOW_HIGH, "Ac Ad Ah As 2c", "Kc Kd Kh Ks Ac", "2c 2d 2h 2s Ac")
    ordered(PAI_GOW_HIGH, "Ac Ad Ah Kc Kd", "Ac Ad Ah Qc Qd", "3c 3d 3h 2c 2d")
    ordered(PAI_GOW_HIGH, "Ac Ad Kh Ks 2c", "Ac Ad Qh Qs Kc", "3c 3d 2h 2s Ac", "Ac Ad Kh Qs Jd")


def test_pgp_a4k_high_cards_compare_highest_first_then_the_next() -> None:
    ordered(PAI_GOW_HIGH, "Ac Kd Qh Js 9d", "Ac Kd Qh Js 8d", "Ac Kd Qh Ts 9d", "Kc Qd Jh Ts 8d")


def test_pgp_a3c_joker_with_three_kings_is_trips_with_an_ace_kicker() -> None:
    hand = rank(PAI_GOW_HIGH, "Jk Kc Kd Kh 2s")
    assert hand.category is C.THREE_OF_A_KIND
    assert hand.key == (C.THREE_OF_A_KIND, 11, 12, 0)
    assert hand.cards == parse_cards("Kh Kd Kc Jk 2s", allow_joker=True)
    tie(PAI_GOW_HIGH, "Jk Kc Kd Kh 2s", "Ac Kd Ks Kh 2d")
    ordered(PAI_GOW_HIGH, "2c 2d 2h 2s 3c", "Jk Kc Kd Kh 2s")


def test_pgp_a4a_four_aces_and_the_joker_are_five_aces_above_a_royal() -> None:
    hand = rank(PAI_GOW_HIGH, "As Ah Jk Ad Ac")
    assert hand.category is C.FIVE_ACES
    assert hand.cards[-1] == JOKER
    ordered(PAI_GOW_HIGH, "As Ah Jk Ad Ac", "As Ks Qs Js Ts", "Ks Qs Js Ts 9s")
    tie(PAI_GOW_HIGH, "Jk Ks Qs Js Ts", "As Ks Qs Js Ts")  # PGP-A5b: a copy


def test_pgp_a3c_joker_is_an_ace_for_pairs_and_quads() -> None:
    assert rank(PAI_GOW_HIGH, "Jk Ac Kd 7h 2s").key == (C.PAIR, 12, 11, 5, 0)
    assert rank(PAI_GOW_HIGH, "Jk Ac Ad 7h 2s").key == (C.THREE_OF_A_KIND, 12, 5, 0)
    assert rank(PAI_GOW_HIGH, "Jk Ac Ad Ah 2s").key == (C.FOUR_OF_A_KIND, 12, 0)
    assert rank(PAI_GOW_HIGH, "Jk 7c 7d 7h 7s").key == (C.FOUR_OF_A_KIND, 5, 12)
    assert rank(PAI_GOW_HIGH, "Jk Kc Kd 7h 7s").key == (C.TWO_PAIR, 11, 5, 12)
    assert rank(PAI_GOW_HIGH, "Jk Ac Ad 7h 7s").key == (C.FULL_HOUSE, 12, 5)
    assert rank(PAI_GOW_HIGH, "Jk Kc Qd 7h 2s").key == (C.HIGH_CARD, 12, 11, 10, 5, 0)


def test_pgp_a3c_def_pgp3_joker_in_a_flush_is_the_highest_rank_of_the_suit_not_held() -> None:
    assert rank(PAI_GOW_HIGH, "Jk Ks Ts 7s 4s").key == (C.FLUSH, 12, 11, 8, 5, 2)
    assert rank(PAI_GOW_HIGH, "Jk As Ks 7s 4s").key == (C.FLUSH, 12, 11, 10, 5, 2)
    assert rank(PAI_GOW_HIGH, "Jk As Ks Qs 4s").key == (C.FLUSH, 12, 11, 10, 9, 2)
    flush = rank(PAI_GOW_HIGH, "Jk As Ks 7s 4s")
    assert flush.cards == parse_cards("As Ks Jk 7s 4s", allow_joker=True)
    tie(PAI_GOW_HIGH, "Jk As Ks 7s 4s", "Ad Kd Qd 7d 4d")


def test_pgp_a3c_joker_completes_the_best_straight_or_straight_flush() -> None:
    assert rank(PAI_GOW_HIGH, "Jk 9c Td Jh Qs").key == (C.STRAIGHT, 11)  # K, not 8
    assert rank(PAI_GOW_HIGH, "Jk 2c 3d 4h 5s").key == (C.STRAIGHT, 12)  # the wheel, not 6-high
    assert rank(PAI_GOW_HIGH, "Jk Kc Qd Jh Ts").key == (C.STRAIGHT, 13)
    assert rank(PAI_GOW_HIGH, "Jk 2s 3s 4s 5s").key == (C.STRAIGHT_FLUSH, 12)
    assert rank(PAI_GOW_HIGH, "Jk 9s Ts Js Qs").key == (C.STRAIGHT_FLUSH, 11)
    assert rank(PAI_GOW_HIGH, "Jk 2s 3s 4s 6s").key == (C.STRAIGHT_FLUSH, 4)
    assert rank(PAI_GOW_HIGH, "Jk As Qs Js Ts").category is C.ROYAL_FLUSH
    assert rank(PAI_GOW_HIGH, "Jk 8c 9d Jh Qs").key == (C.STRAIGHT, 10)  # the joker is the 10


def test_pgp_a5a_same_combination_the_highest_card_held_by_one_only_wins() -> None:
    ordered(PAI_GOW_HIGH, "Ac Kc 9c 7c 3c", "Ad Kd 9d 6d 5d")  # flushes: 7 against 6
    ordered(PAI_GOW_HIGH, "8c 8d Ah Ks Qd", "8h 8s Ac Kd Jd")  # same pair: Q against J
    ordered(PAI_GOW_HIGH, "Kc Kd 5h 5s 2d", "Kh Ks 4c 4d Ac")  # second pair before the kicker


def test_pgp_a5_read_with_a4_pairs_and_trips_compare_before_single_cards() -> None:
    # A5a read alone would let the ace decide; A4 ranks pairs by their rank (AA highest, 22
    # lowest), so the combination's own cards decide first, then the other cards highest first.
    ordered(PAI_GOW_HIGH, "8c 8d 4h 3s 2d", "7c 7d Ah Ks Qd")
    ordered(PAI_GOW_HIGH, "Qc Qd Qh 3s 2d", "Jc Jd Jh As Kd")
    ordered(PAI_GOW_HIGH, "9c 9d 9h 2s 2d", "8c 8d 8h As Ad")


def test_pgp_a5b_otherwise_the_hands_are_equal_suits_never_decide() -> None:
    tie(PAI_GOW_HIGH, "Ac Kd Qh Js 9d", "As Kh Qd Jc 9s")
    tie(PAI_GOW_HIGH, "Ad 2c 3h 4s 5d", "Jk 2d 3c 4h 5s")
    tie(PAI_GOW_HIGH, "Kc Kd 7h 7s 2d", "Kh Ks 7c 7d 2s")


def test_pgp_a4_low_hand_is_a_pair_or_high_cards_joker_as_ace() -> None:
    assert rank(PAI_GOW_LOW, "Jk As").key == (C.PAIR, 12)
    assert rank(PAI_GOW_LOW, "Jk Ks").key == (C.HIGH_CARD, 12, 11)
    assert rank(PAI_GOW_LOW, "2c 2d").category is C.PAIR
    ordered(PAI_GOW_LOW, "Ac Ad", "Kc Kd", "2c 2d", "Ac Kd", "Ac Qd", "Kc Qd", "3c 2d")
    tie(PAI_GOW_LOW, "Jk Kd", "Ac Kh")
    tie(PAI_GOW_LOW, "Jk Ad", "Ac Ah")


@pytest.mark.parametrize(
    ("low", "high", "fouls"),
    [
        ("Qc Qd", "Jc Jd Ah 7s 2d", True),  # a higher pair low
        ("2c 2d", "Ac Kd 9h 7s 4d", True),  # any pair against high cards
        ("Ac Kd", "Ah Qd 9h 7s 4d", True),  # A-K against A-Q-9-7-4: the second card decides
        ("Ac Kd", "Ah Kc 9h 7s 4d", False),  # equal over the low hand's two cards
        ("Ac Qd", "Ah Kc 9h 7s 4d", False),
        ("Jk As", "Kh Kc 9h 7s 4d", True),  # joker low is an ace: aces over kings
        ("Jk As", "Ah Ac 9h 7s 4d", False),  # aces against aces: equal, not higher
        ("Ac Ad", "Kh Kc 9h 9s 4d", False),  # no low hand outranks two pair
        ("Ac Ad", "2h 3c 4h 5s 6d", False),  # nor a straight
        ("Ac Ad", "Jk 7c 5h 4s 3d", False),  # the joker's straight counts too
        ("Kc Kd", "Jk Ac 5h 4s 2d", False),  # ...even when it fills the inside of a wheel
        ("Kc Kd", "Jk Ac 9h 7s 2d", False),  # the joker's ace pairs the high hand's ace
        ("Ac Kd", "Jk Qc 9h 7s 4d", True),  # joker high is an ace: A-K low over A-Q high
        ("Kc Qd", "Jk 7c 9h 3s 2d", False),
    ],
)
def test_pgp_a15a_low_outranks_high_fouls(low: str, high: str, fouls: bool) -> None:
    assert (
        pai_gow_low_outranks_high(
            parse_cards(low, allow_joker=True), parse_cards(high, allow_joker=True)
        )
        is fouls
    )


def test_pai_gow_7_plays_the_best_five_with_the_joker() -> None:
    hand = rank(PAI_GOW_7, "Jk Ks Qs Js Ts 9s 2c")  # the joker makes the royal, not K-high SF
    assert hand.category is C.ROYAL_FLUSH
    assert hand.cards == parse_cards("Jk Ks Qs Js Ts", allow_joker=True)
    assert rank(PAI_GOW_7, "As 2s 3s 4s 5s 6s Kd").key == (C.STRAIGHT_FLUSH, 12)  # PGP-A4c
    assert rank(PAI_GOW_7, "As Ks 9s 3s Ah Ad Jk").key == (C.FOUR_OF_A_KIND, 12, 11)
    assert rank(PAI_GOW_7, "Jk Ac Ad Ah As 2c 3d").category is C.FIVE_ACES
    seven = parse_cards("Jk Ks 9s 7s 4s Kd 2c", allow_joker=True)
    assert PAI_GOW_7.rank(seven).key == (C.FLUSH, 12, 11, 7, 5, 2)


# --- Tripóker ---------------------------------------------------------------------------------


def test_tcp_a4_straight_flush_trips_straight_flush_pair_high_card() -> None:
    ladder = [
        (C.STRAIGHT_FLUSH, "Qh Kh Ah"),
        (C.THREE_OF_A_KIND, "Ac Ad Ah"),
        (C.STRAIGHT, "Qc Kh As"),
        (C.FLUSH, "Ac Kc Jc"),
        (C.PAIR, "Ac Ad Kc"),
        (C.HIGH_CARD, "Ac Kd Jh"),
    ]
    for position, (category, hand) in enumerate(reversed(ladder)):
        assert rank(TRIPOKER, hand).category is category
        assert rank(TRIPOKER, hand).key[0] == position
    ordered(TRIPOKER, *(hand for _, hand in ladder))


def test_tcp_a4a_straight_flush_a_k_q_highest_a_2_3_lowest() -> None:
    ordered(TRIPOKER, "Ah Kh Qh", "Kh Qh Jh", "4c 3c 2c", "Ad 2d 3d")
    assert rank(TRIPOKER, "Ad 2d 3d").key == (5, 1)
    ordered(TRIPOKER, "Ad 2d 3d", "Ac Ad Ah")


def test_tcp_a4c_straight_a_k_q_highest_a_2_3_lowest_and_no_k_a_2() -> None:
    ordered(TRIPOKER, "Ah Kd Qh", "Kh Qd Jh", "4c 3d 2c", "Ad 2c 3d")
    assert rank(TRIPOKER, "Ad 2c 3d").cards == parse_cards("3d 2c Ad")
    assert rank(TRIPOKER, "Kd Ac 2d").category is C.HIGH_CARD
    ordered(TRIPOKER, "Ad 2c 3d", "Ac Kc 9c")  # any straight beats any flush


def test_tcp_a4b_a4d_a4e_trips_flushes_and_pairs_compare_highest_first() -> None:
    ordered(TRIPOKER, "Ac Ad Ah", "Kc Kd Kh", "2c 2d 2h")
    ordered(TRIPOKER, "Ac Kc 9c", "Ac Qc Jc", "Kc Qc 9c", "5c 3c 2c")
    ordered(TRIPOKER, "Ac Ad 2c", "Kc Kd Ac", "Kc Kd Qc", "2c 2d Ac")
    tie(TRIPOKER, "Ac Kc 9c", "Ad Kd 9d")


# --- Hold'em ----------------------------------------------------------------------------------


def test_thp_a4_royal_then_king_high_straight_flush_wheel_lowest() -> None:
    ordered(HOLDEM, "As Ks Qs Js Ts", "Kh Qh Jh Th 9h", "6d 5d 4d 3d 2d", "5c 4c 3c 2c Ac")
    assert rank(HOLDEM, "As Ks Qs Js Ts").category is C.ROYAL_FLUSH
    assert rank(HOLDEM, "5c 4c 3c 2c Ac").key == (C.STRAIGHT_FLUSH, 3)


def test_thp_a3_a4_wheel_is_the_lowest_straight() -> None:
    ordered(HOLDEM, "Ah Kd Qc Js Th", "6c 5d 4h 3s 2c", "5d 4s 3h 2c Ad", "Ac Ad Ah Ks Qd")
    assert rank(HOLDEM, "Ad 2c 3h 4s 5d").cards == parse_cards("5d 4s 3h 2c Ad")


def test_thp_a4_category_order() -> None:
    ordered(HOLDEM, *(hand for category, hand in PAI_GOW_LADDER if category is not C.FIVE_ACES))


def test_thp_a3_best_five_of_seven_returns_the_five_cards() -> None:
    hand = rank(HOLDEM, "2c 7d Ah Kh Qh Jh Th")
    assert hand.category is C.ROYAL_FLUSH
    assert hand.cards == parse_cards("Ah Kh Qh Jh Th")
    full = rank(HOLDEM, "Kc Kd Kh 7c 7d 7h 2s")
    assert full.key == (C.FULL_HOUSE, 11, 5)
    assert sorted(full.cards) == sorted(parse_cards("Kc Kd Kh 7c 7d"))
    assert rank(HOLDEM, "Ac 2d 3h 4s 5c 6d Kh").key == (C.STRAIGHT, 4)
    assert rank(HOLDEM, "Ac 2c 3c 4c 5c Kd Kh").key == (C.STRAIGHT_FLUSH, 3)
    assert rank(HOLDEM, "Ac Kc 9c 7c 3c 2c Ad").key == (C.FLUSH, 12, 11, 7, 5, 1)
    assert len(rank(HOLDEM, "Ac Kc 9c 7c 3c 2c").cards) == 5


# --- the common interface -------------------------------------------------------------------


def test_get_system_names_each_game() -> None:
    assert get_system("pai-gow") is PAI_GOW_HIGH
    assert get_system("tripoker") is TRIPOKER
    assert get_system("holdem") is HOLDEM
    assert get_system("pai-gow-low") is PAI_GOW_LOW
    assert get_system("pai-gow-7") is PAI_GOW_7
    with pytest.raises(ValueError, match="unknown ranking system 'poker'"):
        get_system("poker")


def test_strength_maps_back_to_the_key_and_category() -> None:
    for system, hand in [
        (PAI_GOW_HIGH, "Jk Kc Kd Kh 2s"),
        (PAI_GOW_7, "Jk Ks Qs Js Ts 9s 2c"),
        (PAI_GOW_LOW, "Jk Kd"),
        (TRIPOKER, "Ad 2c 3d"),
        (HOLDEM, "Ac 2c 3c 4c 5c Kd Kh"),
    ]:
        cards = parse_cards(hand, allow_joker=system.family.joker)
        ranked = system.rank(cards)
        strength = system.strength(cards)
        assert system.key_of_strength(strength) == ranked.key
        assert system.category_of_strength(strength) is ranked.category
        assert system.categories_batch([strength]).tolist() == [ranked.category.value]


@pytest.mark.parametrize(
    ("system", "cards", "message"),
    [
        (HOLDEM, [51, 50, 49, 48], "holdem ranks hands of 5 or 6 or 7 cards, got 4"),
        (PAI_GOW_HIGH, [51, 50, 49, 48, 47, 46, 45], "pai-gow ranks hands of 5 cards, got 7"),
        (TRIPOKER, [51, 50, JOKER], "joker is only used in Pai Gow"),
        (HOLDEM, [51, 50, 49, 48, 48], "duplicate card 'Ac'"),
        (PAI_GOW_LOW, [JOKER, JOKER], "duplicate card 'Jk'"),
        (PAI_GOW_HIGH, [51, 50, 49, 48, 53], "bad card 53"),
        (HOLDEM, [51, 50, 49, 48, -1], "bad card -1"),
    ],
)
def test_bad_hands_are_rejected_by_every_entry_point(
    system: RankingSystem, cards: list[int], message: str
) -> None:
    with pytest.raises(CardError, match=message):
        system.rank(cards)
    with pytest.raises(CardError, match=message):
        system.strength(cards)
    with pytest.raises(CardError, match=message):
        system.compare(cards, cards)
