"""The lookup tables' own invariants: additive keys that never collide, and their total size."""

from __future__ import annotations

import itertools

import numpy as np

from rules.rankings import SYSTEMS
from rules.rankings.systems import build_tables
from rules.rankings.tables import (
    CARD_BITS,
    CARD_KEYS,
    JOKER_KEY,
    MAX_CARDS,
    RANK_KEYS,
    SUIT_BITS,
    family_tables,
    size_tables,
)


def test_rank_keys_give_every_multiset_of_up_to_seven_cards_its_own_sum() -> None:
    # Sizes are compared separately: the tables are per hand size.
    symbols = [*RANK_KEYS, JOKER_KEY]
    caps = [4] * 13 + [1]
    for size in range(1, MAX_CARDS + 1):
        sums = [
            sum(symbols[s] for s in combo)
            for combo in itertools.combinations_with_replacement(range(14), size)
            if all(combo.count(s) <= cap for s, cap in enumerate(caps))
        ]
        assert len(set(sums)) == len(sums), size


def test_card_keys_count_suits_and_bits_mark_each_card_once() -> None:
    seven = np.array([0, 5, 10, 15, 16, 21, 26])  # 2c 3d 4h 5s 6c 7d 8h
    total = int(CARD_KEYS[seven].sum())
    suits = [total >> 3 * s & 7 for s in range(4)]
    assert suits == [2, 2, 2, 1]
    assert total >> SUIT_BITS == sum(RANK_KEYS[:7])
    assert bin(int(CARD_BITS.sum())).count("1") == 53


def test_lookup_tables_stay_under_200_mb() -> None:
    total = 0
    families = {system.family for system in SYSTEMS.values()}
    for family in families:
        shared = family_tables(family)
        total += shared.flush.nbytes + shared.categories.nbytes
    for system in SYSTEMS.values():
        for size in system.sizes:
            tables = size_tables(system.family, size)
            total += tables.rank.nbytes + tables.flush_suit.nbytes
    assert total < 200 * 2**20, total


def test_build_tables_leaves_no_table_for_a_first_hand_to_build() -> None:
    size_tables.cache_clear()
    build_tables()
    built = size_tables.cache_info()
    for system in SYSTEMS.values():
        for size in system.sizes:
            deck = range(53 if system.family.joker else 52)
            system.strength(list(itertools.islice(deck, 0, 4 * size, 4)))
    after = size_tables.cache_info()
    assert after.misses == built.misses and after.hits > built.hits
    assert built.currsize == len({(s.family, n) for s in SYSTEMS.values() for n in s.sizes})
