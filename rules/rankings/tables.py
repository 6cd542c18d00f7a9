"""Lookup tables behind the fast paths (`strength`, `rank_batch`), built in memory on first use.

A hand's rank multiset is identified by the sum of per-rank keys, its suit counts by a 12-bit
field; only the ~3 % of hands with a flush need their suited ranks (a 13-bit mask) looked up.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rules.cards import JOKER
from rules.rankings.evaluate import Evaluation
from rules.rankings.hand import Category

# The smallest keys, chosen greedily, for which every multiset of at most seven symbols (each
# rank 2..A at most four times, the joker at most once) has a sum of its own among multisets of
# its size; test_rankings_tables.py checks that property.
RANK_KEYS: tuple[int, ...] = (
    0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181,
)  # fmt: skip
JOKER_KEY = 3262558
SUIT_BITS = 12  # three bits per suit count: 7 cards never overflow a suit's field
SUIT_MASK = (1 << SUIT_BITS) - 1
MAX_CARDS = 7
NONE = np.iinfo(np.uint16).max  # no hand has this rank-key sum (or this suited mask)

_SYMBOL_KEYS = np.array([*RANK_KEYS, JOKER_KEY], dtype=np.int64)

# Per card: rank key above the suit field, and one bit per card laid out suit by suit so that
# `(bits >> 13 * suit) & 0x1FFF` is the mask of ranks held in that suit (bit 52: the joker).
CARD_KEYS = np.array(
    [(RANK_KEYS[c >> 2] << SUIT_BITS) | (1 << 3 * (c & 3)) for c in range(52)]
    + [JOKER_KEY << SUIT_BITS],
    dtype=np.int64,
)
CARD_BITS = np.array(
    [1 << (13 * (c & 3) + (c >> 2)) for c in range(52)] + [1 << 52], dtype=np.int64
)

# The same for two cards at once (index 53 * a + b): half as many gathers, the batch path's main
# cost. Sums, not ORs, so that bits and keys add up the same way.
PAIR_KEYS = (CARD_KEYS[:, None] + CARD_KEYS[None, :]).ravel()
PAIR_BITS = (CARD_BITS[:, None] + CARD_BITS[None, :]).ravel()


def column_sums(
    columns: npt.NDArray[np.uint16], single: npt.NDArray[np.int64], pairs: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Per hand, the sum of a per-card value; `columns` is (cards per hand, hands)."""
    # `take` is faster than fancy indexing for these one-dimensional gathers.
    size, count = columns.shape
    totals = single.take(columns[-1]) if size % 2 else np.zeros(count, dtype=np.int64)
    for i in range(0, size - 1, 2):
        totals += pairs.take(columns[i] * 53 + columns[i + 1])
    return totals


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Family:
    """One ranking family: its categories (lowest first) and its direct evaluator.

    Compared and hashed by identity (each family is a module-level singleton), which keeps the
    table cache lookup on the one-hand path cheap.
    """

    name: str
    categories: tuple[Category, ...]
    hand_size: int
    joker: bool
    flushes: bool
    evaluate: Callable[[Sequence[int]], Evaluation]

    def key(self, evaluation: Evaluation) -> tuple[int, ...]:
        category, tail, _ = evaluation
        return (self.categories.index(category), *tail)


@dataclass(frozen=True, slots=True, kw_only=True)
class FamilyTables:
    """Dense strengths: strength ``s`` is the index of the rank key ``keys[s]`` in sorted order."""

    keys: tuple[tuple[int, ...], ...]
    categories: npt.NDArray[np.int8]  # strength -> Category value
    flush: npt.NDArray[np.uint16]  # (suited rank mask | joker << 13) -> best flush strength
    levels: dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.uint16]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class SizeTables:
    """Everything `strength` and `rank_batch` need for hands of one size."""

    rank: npt.NDArray[np.uint16]  # rank-key sum -> best strength ignoring flushes
    flush_suit: npt.NDArray[np.int8]  # suit field -> the suit that can make a flush, or -1
    flush: npt.NDArray[np.uint16]
    # The same, as plain Python objects for the one-hand path (NumPy scalars are slow there).
    rank_view: memoryview
    flush_suit_list: list[int]
    flush_list: list[int]
    card_entries: dict[int, tuple[int, int]]  # card -> (key, bit), only the cards allowed


def _multisets(size: int, joker: bool) -> npt.NDArray[np.int64]:
    """Every count vector (13 ranks at most 4 each, then the joker at most once) summing to size."""
    rows = np.zeros((1, 0), dtype=np.int64)
    caps = [4] * 13 + [1 if joker else 0]
    for cap in caps:
        parts = [np.hstack([rows, np.full((len(rows), 1), c)]) for c in range(cap + 1)]
        rows = np.vstack(parts)
        rows = rows[rows.sum(axis=1) <= size]
    exact: npt.NDArray[np.int64] = rows[rows.sum(axis=1) == size]
    return exact


def _representative(counts: Sequence[int]) -> list[int]:
    """A hand with these rank counts and no flush: the j-th rank's copies start at suit j."""
    cards: list[int] = []
    present = [r for r in range(13) if counts[r]]
    for j, rank in enumerate(present):
        cards += [rank * 4 + (j + t) % 4 for t in range(counts[rank])]
    return cards + [JOKER] * counts[13]


def _suited_size(index: int) -> int:
    return (index & 0x1FFF).bit_count() + (index >> 13)


def _suited_indices(family: Family) -> list[int]:
    """Suited-rank masks (bit 13: the joker) that can make a flush, smallest sets first."""
    if not family.flushes:
        return []
    top = 1 << 14 if family.joker else 1 << 13
    fits = [i for i in range(top) if family.hand_size <= _suited_size(i) <= MAX_CARDS]
    return sorted(fits, key=_suited_size)


@functools.cache
def family_tables(family: Family) -> FamilyTables:
    base = _multisets(family.hand_size, family.joker)
    plain = [family.key(family.evaluate(_representative(row))) for row in base.tolist()]
    # Suited ranks (+ the joker) of exactly hand_size cards: flushes and straight flushes.
    suited: dict[int, tuple[int, ...]] = {}
    for index in _suited_indices(family):
        if _suited_size(index) == family.hand_size:
            hand = [r * 4 for r in range(13) if index >> r & 1] + [JOKER] * (index >> 13)
            suited[index] = family.key(family.evaluate(hand))
    keys = tuple(sorted(set(plain) | set(suited.values())))
    dense = {key: s for s, key in enumerate(keys)}
    categories = np.array([family.categories[k[0]] for k in keys], dtype=np.int8)

    flush = np.full(1 << 14, NONE, dtype=np.uint16)
    for index in _suited_indices(family):
        if index in suited:
            flush[index] = dense[suited[index]]
        else:  # six or seven suited cards: the best five-card subset, by dropping one card
            subs = [index & ~(1 << b) for b in range(14) if index >> b & 1]
            flush[index] = max(int(flush[sub]) for sub in subs)
    levels = {
        family.hand_size: (
            base @ _SYMBOL_KEYS,
            np.array([dense[k] for k in plain], dtype=np.uint16),
        )
    }
    return FamilyTables(keys=keys, categories=categories, flush=flush, levels=levels)


def _level(family: Family, size: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint16]]:
    """Rank-key sums of every rank multiset of `size` cards and its best strength, no flush."""
    tables = family_tables(family)
    if size not in tables.levels:
        sub_sums, sub_values = _level(family, size - 1)
        order = np.argsort(sub_sums)
        sub_sums, sub_values = sub_sums[order], sub_values[order]
        counts = _multisets(size, family.joker)
        sums = counts @ _SYMBOL_KEYS
        best = np.zeros(len(sums), dtype=np.uint16)
        # The best hand of n cards is the best over its (n-1)-card subsets: drop each rank held.
        for symbol, key in enumerate(_SYMBOL_KEYS.tolist()):
            held = counts[:, symbol] > 0
            where = np.searchsorted(sub_sums, sums[held] - key)
            best[held] = np.maximum(best[held], sub_values[where])
        tables.levels[size] = (sums, best)
    return tables.levels[size]


@functools.cache
def size_tables(family: Family, size: int) -> SizeTables:
    sums, values = _level(family, size)
    rank = np.full(int(sums.max()) + 1, NONE, dtype=np.uint16)
    rank[sums] = values
    flush_suit = np.full(1 << SUIT_BITS, -1, dtype=np.int8)
    if family.flushes:
        for field in range(1 << SUIT_BITS):
            counts = [field >> 3 * s & 7 for s in range(4)]
            jokers = size - sum(counts)
            if jokers in ((0, 1) if family.joker else (0,)):
                for suit, count in enumerate(counts):
                    if count + jokers >= family.hand_size:
                        flush_suit[field] = suit
    flush = family_tables(family).flush
    allowed = range(53 if family.joker else 52)
    return SizeTables(
        rank=rank,
        flush_suit=flush_suit,
        flush=flush,
        rank_view=rank.data,
        flush_suit_list=flush_suit.tolist(),
        flush_list=flush.tolist(),
        card_entries={c: (int(CARD_KEYS[c]), int(CARD_BITS[c])) for c in allowed},
    )
