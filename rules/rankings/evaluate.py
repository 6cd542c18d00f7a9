"""Direct evaluation of one five-, three- or two-card hand, written to read like the regulations.

The lookup tables behind the fast paths are built from these functions, so they are the one place
where PGP-A3/A4, TCP-A4 and THP-A3/A4 are spelled out, and the differences between the games
that ALL-6 lists (the wheel, the joker and five aces, a straight above a flush in three cards).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rules.cards import JOKER
from rules.rankings.hand import Category

# (category, tie-break values in decreasing importance, the cards best first)
Evaluation = tuple[Category, tuple[int, ...], tuple[int, ...]]

ACE = 12
_FIVE = 3  # rank index of the 5, the top card of the wheel A-2-3-4-5

# Every five-card straight as its top rank and its ranks from the top down; the ace plays low
# only in the wheel (PGP-A3b, THP-A3).
STRAIGHTS: tuple[tuple[int, tuple[int, ...]], ...] = tuple(
    (top, tuple(range(top, top - 5, -1)) if top > _FIVE else (3, 2, 1, 0, ACE))
    for top in range(_FIVE, ACE + 1)
)

_SHAPES: dict[tuple[int, ...], Category] = {
    (5,): Category.FIVE_ACES,
    (4, 1): Category.FOUR_OF_A_KIND,
    (3, 2): Category.FULL_HOUSE,
    (3, 1, 1): Category.THREE_OF_A_KIND,
    (2, 2, 1): Category.TWO_PAIR,
    (2, 1, 1, 1): Category.PAIR,
    (1, 1, 1, 1, 1): Category.HIGH_CARD,
}


def straight_value(top: int, *, pai_gow: bool) -> int:
    """Tie-break value of a straight (flush) by its top rank.

    Hold'em: the top card, so the wheel (top 5) is the lowest (THP-A4). Pai Gow: the wheel ranks
    just below A-K-Q-J-10 (PGP-A4g) and above K-high in straight flushes (PGP-A4c), so it gets 12
    and A-K-Q-J-10 gets 13.
    """
    if not pai_gow:
        return top
    if top == _FIVE:
        return ACE
    return ACE + 1 if top == ACE else top


def _in_order(naturals: Sequence[int], ranks: Sequence[int]) -> tuple[int, ...]:
    """The cards laid out in the given rank order, the joker standing for the missing rank."""
    by_rank = {c >> 2: c for c in naturals}
    return tuple(by_rank.get(r, JOKER) for r in ranks)


def _grouped(naturals: Sequence[int], joker: bool) -> Evaluation:
    """Pairs, trips, quads and high cards; the joker counts as an ace (PGP-A3c)."""
    played = [(c >> 2, c) for c in naturals] + ([(ACE, JOKER)] if joker else [])
    counts = Counter(rank for rank, _ in played)
    # PGP-A5 read with A4: the groups first (pair, trips...), then single cards highest first.
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    category = _SHAPES[tuple(counts[r] for r in order)]
    played.sort(key=lambda p: (counts[p[0]], p[0], p[1] != JOKER, p[1]), reverse=True)
    tail = () if category is Category.FIVE_ACES else tuple(order)
    return category, tail, tuple(card for _, card in played)


def five_card(cards: Sequence[int], *, pai_gow: bool) -> Evaluation:
    """Rank exactly five cards (PGP-A3/A4 with the joker, or THP-A3/A4).

    The joker is an ace, or whichever card completes a straight, flush, straight flush or royal
    flush (PGP-A3c); in a plain flush it is the highest rank of that suit not already held
    (DEF-PGP3). The best of these readings is the hand.
    """
    naturals = sorted((c for c in cards if c != JOKER), reverse=True)
    joker = len(naturals) < len(cards)
    best = _grouped(naturals, joker)
    ranks = {c >> 2 for c in naturals}
    if len(ranks) < len(naturals):
        return best  # a natural pair rules out straights and flushes
    flush = len({c & 3 for c in naturals}) == 1
    tail: tuple[int, ...]
    for top, run in STRAIGHTS:
        if ranks.issubset(run):
            if flush and top == ACE:
                category, tail = Category.ROYAL_FLUSH, ()
            else:
                category = Category.STRAIGHT_FLUSH if flush else Category.STRAIGHT
                tail = (straight_value(top, pai_gow=pai_gow),)
            best = max(best, (category, tail, _in_order(naturals, run)), key=_order)
    if flush:
        held = sorted(ranks | ({max(set(range(ACE + 1)) - ranks)} if joker else set()))[::-1]
        best = max(best, (Category.FLUSH, tuple(held), _in_order(naturals, held)), key=_order)
    return best


def _order(evaluation: Evaluation) -> tuple[Category, tuple[int, ...]]:
    return evaluation[0], evaluation[1]


def three_card(cards: Sequence[int]) -> Evaluation:
    """Rank three cards (TCP-A4): A-K-Q the highest and A-2-3 the lowest straight, no K-A-2."""
    ordered = sorted(cards, reverse=True)
    ranks = [c >> 2 for c in ordered]
    if ranks[0] == ranks[2]:
        return Category.THREE_OF_A_KIND, (ranks[0],), tuple(ordered)
    if ranks[0] == ranks[1] or ranks[1] == ranks[2]:
        pair = ranks[1]
        kicker = ranks[2] if ranks[0] == pair else ranks[0]
        laid = [c for c in ordered if c >> 2 == pair] + [c for c in ordered if c >> 2 != pair]
        return Category.PAIR, (pair, kicker), tuple(laid)
    flush = len({c & 3 for c in cards}) == 1
    if ranks[0] - ranks[2] == 2:
        top = ranks[0]
    elif ranks == [ACE, 1, 0]:
        top, ordered = 1, [*ordered[1:], ordered[0]]  # A-2-3: the ace plays low, 3 is the top
    else:
        category = Category.FLUSH if flush else Category.HIGH_CARD
        return category, tuple(ranks), tuple(ordered)
    category = Category.STRAIGHT_FLUSH if flush else Category.STRAIGHT
    return category, (top,), tuple(ordered)


def two_card(cards: Sequence[int]) -> Evaluation:
    """Rank the Pai Gow low hand: a pair or two high cards, the joker an ace (PGP-A3c, A4)."""
    played = sorted(((ACE if c == JOKER else c >> 2), c != JOKER, c) for c in cards)[::-1]
    ranks = tuple(p[0] for p in played)
    category = Category.PAIR if ranks[0] == ranks[1] else Category.HIGH_CARD
    return category, ranks[:1] if category is Category.PAIR else ranks, tuple(p[2] for p in played)
