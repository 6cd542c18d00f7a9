"""Card notation: parsing, printing and decks (PGP-A7a: 53 cards with the joker)."""

from __future__ import annotations

import doctest
import itertools

import pytest

import rules.cards
import rules.rankings.systems
from rules.cards import (
    JOKER,
    RANKS,
    SUITS,
    CardError,
    card_str,
    cards_str,
    deck,
    every_hand,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)


def test_card_int_is_rank_times_four_plus_suit() -> None:
    assert parse_card("2c") == 0
    assert parse_card("2s") == 3
    assert parse_card("Td") == 8 * 4 + 1
    assert parse_card("As") == 51
    assert (rank_of(parse_card("Qh")), suit_of(parse_card("Qh"))) == (10, 2)


@pytest.mark.parametrize("text", ["Th", "th", "TH", "10h", "10H", " 10h "])
def test_ten_accepts_t_or_10_in_any_case(text: str) -> None:
    assert parse_card(text) == parse_card("Th")


def test_every_card_prints_and_parses_back() -> None:
    names = cards_str(deck(jokers=1))
    assert names[-1] == "Jk"
    assert len(set(names)) == 53
    assert parse_cards(" ".join(names), allow_joker=True) == deck(jokers=1)
    assert all(card_str(parse_card(n, allow_joker=True)) == n for n in names)


def test_deck_has_52_cards_or_53_with_the_joker_last() -> None:
    assert deck() == tuple(range(52))
    assert deck(jokers=1) == (*range(52), JOKER)
    assert {r + s for r in RANKS for s in SUITS} == set(cards_str(deck()))
    with pytest.raises(CardError):
        deck(jokers=2)


def test_parse_cards_reads_strings_with_spaces_or_commas_and_token_lists() -> None:
    assert parse_cards("As Kd,Qh ,  Jc") == (51, 45, 42, 36)
    assert parse_cards(["As", "Kd"]) == (51, 45)
    assert parse_cards("jk As", allow_joker=True) == (JOKER, 51)
    assert parse_cards("") == ()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Xs", "'Xs'"),
        ("Az", "'Az'"),
        ("1c", "'1c'"),
        ("11c", "'11c'"),
        ("A", "'A'"),
        ("As Kd Asx", "'Asx'"),
    ],
)
def test_unknown_ranks_and_suits_are_rejected_naming_the_card(text: str, named: str) -> None:
    with pytest.raises(CardError, match=named):
        parse_cards(text)


def test_duplicates_within_one_hand_are_rejected_naming_the_card() -> None:
    with pytest.raises(CardError, match="duplicate card 'Ah'"):
        parse_cards("Ah Kd ah")
    with pytest.raises(CardError, match="duplicate card 'Jk'"):
        parse_cards("Jk 2c jk", allow_joker=True)


def test_joker_outside_pai_gow_is_rejected() -> None:
    with pytest.raises(CardError, match="joker is only used in Pai Gow"):
        parse_cards("As Jk")
    with pytest.raises(CardError, match="joker is only used in Pai Gow"):
        parse_card("JK")


def test_the_joker_has_no_rank_or_suit_and_bad_ints_are_rejected() -> None:
    with pytest.raises(CardError):
        rank_of(JOKER)
    with pytest.raises(CardError):
        suit_of(JOKER)
    for bad in (-1, 53, 1.0, "As", True):
        with pytest.raises(CardError):
            card_str(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("deck_size", "size"), [(10, 2), (10, 3), (12, 5), (13, 7), (7, 7)])
def test_every_hand_deals_each_combination_exactly_once(deck_size: int, size: int) -> None:
    dealt = [tuple(row) for chunk in every_hand(deck_size, size) for row in chunk.tolist()]
    assert dealt == list(itertools.combinations(range(deck_size), size))
    with pytest.raises(CardError):
        next(every_hand(5, 6))


@pytest.mark.parametrize("module", [rules.cards, rules.rankings.systems])
def test_docstring_examples(module: object) -> None:
    failed, attempted = doctest.testmod(module)  # type: ignore[arg-type]
    assert attempted > 0
    assert failed == 0
