"""The four ranking systems (Pai Gow high and low, Tripóker, Hold'em) behind one interface.

Each has a direct `rank` (category, key, cards) and fast table paths (`strength`, `rank_batch`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from rules.cards import JOKER, CardError, card_str
from rules.rankings.evaluate import five_card, three_card, two_card
from rules.rankings.hand import Category, HandRank
from rules.rankings.tables import (
    CARD_BITS,
    CARD_KEYS,
    NONE,
    PAIR_BITS,
    PAIR_KEYS,
    SUIT_BITS,
    SUIT_MASK,
    Family,
    SizeTables,
    column_sums,
    family_tables,
    size_tables,
)

C = Category
_BLOCK = 1 << 16
_FIVE_CARD = (
    C.HIGH_CARD, C.PAIR, C.TWO_PAIR, C.THREE_OF_A_KIND, C.STRAIGHT, C.FLUSH, C.FULL_HOUSE,
    C.FOUR_OF_A_KIND, C.STRAIGHT_FLUSH, C.ROYAL_FLUSH,
)  # fmt: skip

PAI_GOW_FAMILY = Family(
    name="pai-gow",
    categories=(*_FIVE_CARD, C.FIVE_ACES),  # PGP-A4k .. PGP-A4a
    hand_size=5,
    joker=True,
    flushes=True,
    evaluate=partial(five_card, pai_gow=True),
)
HOLDEM_FAMILY = Family(
    name="holdem",
    categories=_FIVE_CARD,  # THP-A4
    hand_size=5,
    joker=False,
    flushes=True,
    evaluate=partial(five_card, pai_gow=False),
)
TRIPOKER_FAMILY = Family(
    name="tripoker",
    # TCP-A4: a straight outranks a flush in three cards.
    categories=(C.HIGH_CARD, C.PAIR, C.FLUSH, C.STRAIGHT, C.THREE_OF_A_KIND, C.STRAIGHT_FLUSH),
    hand_size=3,
    joker=False,
    flushes=True,
    evaluate=three_card,
)
PAI_GOW_LOW_FAMILY = Family(
    name="pai-gow-low",
    categories=(C.HIGH_CARD, C.PAIR),  # the low hand is a pair or high cards (PGP-A4)
    hand_size=2,
    joker=True,
    flushes=False,
    evaluate=two_card,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RankingSystem:
    """Rank hands of `sizes` cards; larger hands play their best `family.hand_size` cards.

    Strengths are dense ints (0 = the weakest hand of the family) ordered like the rank keys;
    they compare only within one family and are not meant to be stored (store `HandRank.key`).
    """

    name: str
    family: Family
    sizes: tuple[int, ...]

    def _cards(self, cards: Sequence[int]) -> tuple[int, ...]:
        hand: list[int] = []
        for card in cards:
            try:
                value = operator.index(card)
            except TypeError:
                raise CardError(f"bad card {card!r}: cards are ints") from None
            limit = JOKER if self.family.joker else JOKER - 1
            if not 0 <= value <= limit:
                if value == JOKER:
                    raise CardError("bad card 'Jk': the joker is only used in Pai Gow")
                raise CardError(f"bad card {card!r}: cards are ints 0..{limit}")
            if value in hand:
                raise CardError(f"duplicate card {card_str(value)!r} in one hand")
            hand.append(value)
        if len(hand) not in self.sizes:
            raise CardError(
                f"{self.name} ranks hands of {self._sizes_text()} cards, got {len(hand)}"
            )
        return tuple(hand)

    def _sizes_text(self) -> str:
        return " or ".join(str(n) for n in self.sizes)

    def rank(self, cards: Sequence[int]) -> HandRank:
        """Category, rank key and the cards that make the hand (direct evaluation).

        >>> from rules.cards import cards_str, parse_cards
        >>> hand = PAI_GOW_HIGH.rank(parse_cards("Jk Kc Kd Kh 2s", allow_joker=True))
        >>> hand.category.label, hand.key, cards_str(hand.cards)
        ('three_of_a_kind', (3, 11, 12, 0), ['Kh', 'Kd', 'Kc', 'Jk', '2s'])
        >>> HOLDEM.rank(parse_cards("2c 7d Ah Kh Qh Jh Th")).category.label
        'royal_flush'
        """
        hand = self._cards(cards)
        family = self.family
        best = max(
            (family.evaluate(five) for five in itertools.combinations(hand, family.hand_size)),
            key=family.key,
        )
        return HandRank(category=best[0], key=family.key(best), cards=best[2])

    def compare(self, a: Sequence[int], b: Sequence[int]) -> int:
        """1 if hand `a` ranks higher, -1 if lower, 0 if the hands are equal.

        >>> from rules.cards import parse_cards
        >>> wheel, king_high = parse_cards("Ad 2c 3h 4s 5d"), parse_cards("Kc Qd Jh Ts 9c")
        >>> PAI_GOW_HIGH.compare(wheel, king_high), HOLDEM.compare(wheel, king_high)
        (1, -1)
        """
        sa, sb = self.strength(a), self.strength(b)
        return (sa > sb) - (sa < sb)

    def strength(self, cards: Sequence[int]) -> int:
        """One int ordered like `rank(cards).key` (fast path through the lookup tables)."""
        if len(cards) not in self.sizes:
            self._reject(cards)
        tables = size_tables(self.family, len(cards))
        total = bits = 0
        entries = tables.card_entries
        for card in cards:
            entry = entries.get(card)
            if entry is None:
                self._reject(cards)
            total += entry[0]
            bits |= entry[1]
        if bits.bit_count() != len(cards):
            self._reject(cards)  # a repeated card
        value: int = tables.rank_view[total >> SUIT_BITS]
        suit = tables.flush_suit_list[total & SUIT_MASK]
        if suit >= 0:
            suited = (bits >> 13 * suit) & 0x1FFF | (bits >> 52) << 13
            value = max(value, tables.flush_list[suited])
        return value

    def _reject(self, cards: Sequence[int]) -> NoReturn:
        """Raise the error that `_cards` gives for a hand the fast path cannot take."""
        self._cards(cards)
        raise CardError(f"{self.name}: cannot rank {list(cards)!r}")

    def rank_batch(self, hands: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """Strengths of many hands at once: `hands` has shape (N, k), one card int per entry.

        Card values are checked; that a row holds distinct cards is not (hands are expected to
        come from dealt decks), so a repeated card gives an undefined strength or an error.
        """
        array = np.asarray(hands)
        if array.ndim != 2 or array.shape[1] not in self.sizes:
            raise CardError(
                f"{self.name}: expected an array of shape (N, {self._sizes_text()}), "
                f"got {array.shape}"
            )
        if not np.issubdtype(array.dtype, np.integer):
            raise CardError(f"{self.name}: card arrays must hold ints, got {array.dtype}")
        if array.size == 0:
            return np.zeros(len(array), dtype=np.int32)
        low, high = int(array.min()), int(array.max())
        limit = JOKER if self.family.joker else JOKER - 1
        if low < 0 or high > limit:
            bad = low if low < 0 else high
            raise CardError(f"{self.name}: bad card {bad} in the batch (cards are 0..{limit})")
        tables = size_tables(self.family, array.shape[1])
        strengths = np.empty(len(array), dtype=np.int32)
        # Blocks small enough for the intermediate arrays to stay in cache: ~1.5x faster.
        for start in range(0, len(array), _BLOCK):
            block = array[start : start + _BLOCK]
            strengths[start : start + len(block)] = self._block_strengths(tables, block)
        if int(strengths.max()) == NONE:
            raise CardError(f"{self.name}: a hand in the batch repeats a card")
        return strengths

    def _block_strengths(
        self, tables: SizeTables, block: npt.NDArray[np.integer[Any]]
    ) -> npt.NDArray[np.uint16]:
        columns = np.ascontiguousarray(block.T, dtype=np.uint16)
        totals = column_sums(columns, CARD_KEYS, PAIR_KEYS)
        strengths = tables.rank.take(totals >> SUIT_BITS)
        if self.family.flushes:
            suits = tables.flush_suit.take(totals & SUIT_MASK)
            rows = np.flatnonzero(suits >= 0)
            if rows.size:
                bits = column_sums(columns[:, rows], CARD_BITS, PAIR_BITS)
                shift = 13 * suits[rows].astype(np.int64)
                suited = ((bits >> shift) & 0x1FFF) | ((bits >> 52) << 13)
                strengths[rows] = np.maximum(strengths[rows], tables.flush.take(suited))
        return strengths

    def key_of_strength(self, strength: int) -> tuple[int, ...]:
        """The rank key that a strength stands for."""
        return family_tables(self.family).keys[strength]

    def category_of_strength(self, strength: int) -> Category:
        return self.family.categories[self.key_of_strength(strength)[0]]

    def categories_batch(self, strengths: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """Category values (`Category`) of an array of strengths, e.g. for `np.bincount`."""
        categories: npt.NDArray[np.int8] = family_tables(self.family).categories[
            np.asarray(strengths)
        ]
        return categories


PAI_GOW_HIGH = RankingSystem(name="pai-gow", family=PAI_GOW_FAMILY, sizes=(5,))
PAI_GOW_7 = RankingSystem(name="pai-gow-7", family=PAI_GOW_FAMILY, sizes=(5, 6, 7))
PAI_GOW_LOW = RankingSystem(name="pai-gow-low", family=PAI_GOW_LOW_FAMILY, sizes=(2,))
TRIPOKER = RankingSystem(name="tripoker", family=TRIPOKER_FAMILY, sizes=(3,))
HOLDEM = RankingSystem(name="holdem", family=HOLDEM_FAMILY, sizes=(5, 6, 7))

SYSTEMS: dict[str, RankingSystem] = {
    s.name: s for s in (PAI_GOW_HIGH, PAI_GOW_LOW, PAI_GOW_7, TRIPOKER, HOLDEM)
}


def build_tables() -> None:
    """Build every system's lookup tables now (~1 s, once per process) rather than in the first
    hand that needs each: a consumer calls it before it reads, so no event waits for them."""
    for system in SYSTEMS.values():
        for size in system.sizes:
            size_tables(system.family, size)


def get_system(name: str) -> RankingSystem:
    """The ranking system of a game: "pai-gow" (the 5-card high hand), "tripoker", "holdem";
    also "pai-gow-low" (2 cards) and "pai-gow-7" (best five of seven, for the house way)."""
    try:
        return SYSTEMS[name]
    except KeyError:
        raise ValueError(f"unknown ranking system {name!r}; known: {', '.join(SYSTEMS)}") from None


def pai_gow_low_outranks_high(low: Sequence[int], high: Sequence[int]) -> bool:
    """PGP-A15a: does the 2-card low hand outrank the 5-card high hand (a foul)?

    Read with PGP-A4: a low hand is only a pair or high cards, so it never outranks two pair or
    better; a pair outranks high cards; between two pairs, or two high-card hands, the cards are
    compared one by one over as many cards as the low hand has (the pair's rank, or its two
    cards against the high hand's two highest). Equal does not outrank.
    """
    lo = PAI_GOW_LOW.key_of_strength(PAI_GOW_LOW.strength(low))
    hi = PAI_GOW_HIGH.key_of_strength(PAI_GOW_HIGH.strength(high))
    # Both tables start high card = 0, pair = 1, so key[0] compares across the two systems.
    if hi[0] > Category.PAIR:
        return False
    if lo[0] != hi[0]:
        return lo[0] == Category.PAIR
    return lo[1:] > hi[1 : len(lo)]
