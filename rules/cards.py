"""Playing cards as small ints, the notation shared by the CLI, the events and the tests.

A card is ``rank_index * 4 + suit_index`` (ranks 2..A = 0..12, suits c d h s = 0..3); the Pai Gow
joker (PGP-A3c) is ``JOKER = 52``.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

RANKS = "23456789TJQKA"
SUITS = "cdhs"
JOKER = 52
JOKER_TEXT = "Jk"

_TOKEN_SPLIT = re.compile(r"[\s,]+")


class CardError(ValueError):
    """A card or a hand that cannot be read or is not allowed (the message names the card)."""


def parse_card(text: str, *, allow_joker: bool = False) -> int:
    """Read one card such as ``"As"``, ``"td"``, ``"10h"`` or ``"Jk"``.

    >>> parse_card("As"), parse_card("10h"), parse_card("2c")
    (51, 34, 0)
    >>> parse_card("jk", allow_joker=True)
    52
    """
    card = CANONICAL.get(text)
    if card is not None and (card != JOKER or allow_joker):
        return card  # the canonical spelling, as on the wire: one dict lookup
    token = text.strip()
    if token.lower() == JOKER_TEXT.lower():
        if not allow_joker:
            raise CardError(f"bad card {token!r}: the joker is only used in Pai Gow")
        return JOKER
    if len(token) == 3 and token[:2] == "10":
        token = "T" + token[2]
    if len(token) != 2:
        raise CardError(f"bad card {text!r}: expected a rank (2-9, T or 10, J, Q, K, A) and a suit")
    rank = RANKS.find(token[0].upper())
    suit = SUITS.find(token[1].lower())
    if rank < 0:
        raise CardError(f"bad card {text!r}: unknown rank {token[0]!r}")
    if suit < 0:
        raise CardError(f"bad card {text!r}: unknown suit {token[1]!r} (use c, d, h or s)")
    return rank * 4 + suit


CANONICAL: dict[str, int] = {
    **{rank + suit: r * 4 + s for r, rank in enumerate(RANKS) for s, suit in enumerate(SUITS)},
    JOKER_TEXT: JOKER,
}
"""Canonical spelling (as events carry it) -> card."""


def parse_cards(text: str | Iterable[str], *, allow_joker: bool = False) -> tuple[int, ...]:
    """Read a hand: a space/comma separated string or an iterable of card tokens.

    >>> parse_cards("As Kd, 10h")
    (51, 45, 34)
    """
    tokens = [t for t in _TOKEN_SPLIT.split(text) if t] if isinstance(text, str) else list(text)
    cards: list[int] = []
    for token in tokens:
        card = parse_card(token, allow_joker=allow_joker)
        if card in cards:
            raise CardError(f"duplicate card {card_str(card)!r} in one hand")
        cards.append(card)
    return tuple(cards)


def _check(card: int) -> int:
    # operator.index accepts NumPy integers too (hands often come from arrays).
    try:
        value = operator.index(card)
    except TypeError:
        value = -1
    if isinstance(card, bool) or not 0 <= value <= JOKER:
        raise CardError(f"bad card {card!r}: cards are ints 0..51, or 52 for the joker")
    return value


def card_str(card: int) -> str:
    """The two-character name of a card: ``card_str(51) == "As"``, ``card_str(52) == "Jk"``."""
    value = _check(card)
    if value == JOKER:
        return JOKER_TEXT
    return RANKS[value >> 2] + SUITS[value & 3]


def cards_str(cards: Iterable[int]) -> list[str]:
    """Names of several cards, in order."""
    return [card_str(c) for c in cards]


def rank_of(card: int) -> int:
    """Rank index 0..12 (2..A); the joker has no rank of its own."""
    value = _check(card)
    if value == JOKER:
        raise CardError("the joker has no rank of its own")
    return value >> 2


def suit_of(card: int) -> int:
    """Suit index 0..3 (c, d, h, s); the joker has no suit."""
    value = _check(card)
    if value == JOKER:
        raise CardError("the joker has no suit")
    return value & 3


def deck(*, jokers: int = 0) -> tuple[int, ...]:
    """The 52-card deck in card order, plus the joker last when ``jokers=1`` (PGP-A7a: 53)."""
    if jokers not in (0, 1):
        raise CardError(f"a deck has 0 or 1 joker, not {jokers}")
    return tuple(range(52 + jokers))


def every_hand(deck_size: int, size: int) -> Iterator[npt.NDArray[np.uint8]]:
    """Every `size`-card hand of the cards ``0..deck_size-1`` exactly once, for exhaustive counts.

    Yields arrays of shape (n, size) with cards ascending; each chunk shares its two lowest cards.
    """
    if not 2 <= size <= deck_size <= JOKER + 1:
        raise CardError(f"cannot deal {size}-card hands from {deck_size} cards")
    # The other size-2 cards of every hand, lexicographic: those above a card are a suffix.
    flat = itertools.chain.from_iterable(itertools.combinations(range(deck_size), size - 2))
    count = math.comb(deck_size, size - 2)
    tails = np.fromiter(flat, dtype=np.uint8, count=count * (size - 2)).reshape(count, size - 2)
    for low in range(deck_size):
        for second in range(low + 1, deck_size):
            tail = tails if size == 2 else tails[np.searchsorted(tails[:, 0], second + 1) :]
            if len(tail) == 0:
                break
            chunk = np.empty((len(tail), size), dtype=np.uint8)
            chunk[:, 0], chunk[:, 1], chunk[:, 2:] = low, second, tail
            yield chunk
