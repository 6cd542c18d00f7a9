"""What a ranking returns: the category of a hand and its comparable rank key.

Shared by every ranking system (Pai Gow high/low, Tripóker, Hold'em) in `rules.rankings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Category(IntEnum):
    """Poker combinations; the value is the five-card (Pai Gow) order, PGP-A4k up to PGP-A4a.

    A system's own order may differ (Tripóker puts straight above flush, TCP-A4), so compare
    hands by `HandRank.key`, never by the category value.
    """

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9
    FIVE_ACES = 10

    @property
    def label(self) -> str:
        """The snake_case name used in JSON, e.g. ``"five_aces"``."""
        return self.name.lower()


@dataclass(frozen=True, slots=True, kw_only=True)
class HandRank:
    """One ranked hand.

    ``key[0]`` is the category's position in its system's table (0 = lowest) and ``key[1:]`` are
    tie-breaks in decreasing importance, as rank indices 0..12 (2..A) where possible; keys of one
    system compare with tuple ordering and equal keys are equal hands (suits never break ties).
    ``cards`` are the cards that make the hand, best first.
    """

    category: Category
    key: tuple[int, ...]
    cards: tuple[int, ...]
