"""Pai Gow Poker by the 1999 regulation: deal procedure, house way, hand setting and settlement.

Positions go clockwise 0..6 with 0 the dealer's and 1..6 the player seats from the dealer's left.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from operator import itemgetter
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from events.models import Spot
from games.pai_gow.profile import PaiGowProfile
from rules.cards import JOKER, CardError
from rules.money import commission_cents
from rules.profile import Band, HouseWay, load_house_way
from rules.rankings import PAI_GOW_HIGH, PAI_GOW_LOW, Category
from rules.settlement import (
    Bettor,
    Outcome,
    RoundError,
    RoundSettlement,
    Settlement,
    category_table,
    line_builder,
    strengths_with,
)

POSITIONS = 7  # PGP-A10a: seven groups of seven, one per position, the dealer's included
DEALER = 0
SEATS = tuple(range(1, POSITIONS))
_SEAT_NUMBERS = frozenset(SEATS)
_DECK = frozenset(range(JOKER + 1))  # 52 cards and the joker
GROUP_SIZE = 7
LEFTOVER_CARDS = 4  # PGP-A10d: 53 - 49
ACE = 12
_HIGH_CATEGORY = category_table(PAI_GOW_HIGH)
_LOW_CATEGORY = category_table(PAI_GOW_LOW)

# ---------------------------------------------------------------------------------------------
# The deal (PGP-A10, A11)


def group_one_position(dice_total: int, positions: int = POSITIONS, banker: int = DEALER) -> int:
    """The position that receives group 1 (PGP-A11b, A12a).

    Count clockwise from the banker as 1, every position counted, until the count equals the
    total of the three dice. Positions are numbered clockwise `0..positions-1`.

    >>> group_one_position(8)       # the regulation's example: 8 -> the banker
    0
    >>> group_one_position(10)      # 10 -> two positions to the banker's left
    2
    >>> group_one_position(10, banker=6)
    1
    """
    if not 3 <= dice_total <= 18:
        raise ValueError(f"three dice total 3..18, got {dice_total}")
    if not 0 <= banker < positions:
        raise ValueError(f"banker position must be 0..{positions - 1}, got {banker}")
    return (banker + dice_total - 1) % positions


def serpentine_deal_order(
    groups: int = POSITIONS, cards_per_group: int = GROUP_SIZE
) -> tuple[tuple[int, int], ...]:
    """(group, card number) of each dealt card in order, both 1-based (PGP-A10f).

    Cards 1, 3, 5, 7 of every group go left to right (group 1 to 7), cards 2, 4, 6 right to left.

    >>> serpentine_deal_order()[:9]
    ((1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 1), (7, 1), (7, 2), (6, 2))
    """
    order: list[tuple[int, int]] = []
    for card in range(1, cards_per_group + 1):
        sweep = range(1, groups + 1) if card % 2 else range(groups, 0, -1)
        order.extend((group, card) for group in sweep)
    return tuple(order)


# ---------------------------------------------------------------------------------------------
# Hand setting


@dataclass(frozen=True, kw_only=True, slots=True)
class HandSet:
    """A participant's two hands (PGP-A13a): the 5-card high hand and the 2-card low hand."""

    high: tuple[int, ...]
    low: tuple[int, ...]


def foul_rules(hand: HandSet) -> tuple[str, ...]:
    """The fouls a setting commits (PGP-A15a-c); empty when the setting is valid."""
    fouls = []
    if len(hand.low) != 2:
        fouls.append("PGP-A15b")
    if len(hand.high) != 5:
        fouls.append("PGP-A15c")
    if not fouls and _low_outranks_high(
        PAI_GOW_LOW.strength(hand.low), PAI_GOW_HIGH.strength(hand.high)
    ):
        fouls.append("PGP-A15a")
    return tuple(fouls)


@lru_cache(maxsize=1 << 16)
def _low_outranks_high(low_strength: int, high_strength: int) -> bool:
    """PGP-A15a on strengths, read as `rankings.pai_gow_low_outranks_high` reads it: a low hand
    (pair or high cards) never outranks two pair or better; a pair beats high cards; otherwise
    the low hand's ranks are compared with the high hand's first ranks; equal is no foul."""
    high_category = _HIGH_CATEGORY[high_strength]
    if high_category > Category.PAIR:
        return False
    low_category = _LOW_CATEGORY[low_strength]
    if low_category != high_category:
        return low_category is Category.PAIR
    low_key = PAI_GOW_LOW.key_of_strength(low_strength)[1:]
    return low_key > PAI_GOW_HIGH.key_of_strength(high_strength)[1 : 1 + len(low_key)]


def house_way(cards7: Sequence[int], way: HouseWay | str = "foxwoods") -> HandSet:
    """Set seven cards by a posted house way (DEF-PGP1, PGP-A13c); `way` is a `HouseWay` or the
    name of a built-in one (`foxwoods`, `trump-plaza`).

    >>> from rules.cards import parse_cards, cards_str
    >>> hand = house_way(parse_cards("As Kd 9c 7h 6s 4d 2c"))      # no pair: 2nd and 3rd low
    >>> cards_str(hand.high), cards_str(hand.low)
    (['As', '7h', '6s', '4d', '2c'], ['Kd', '9c'])
    """
    if isinstance(way, str):
        way = load_house_way(way)
    if len(cards7) != GROUP_SIZE or len(set(cards7)) != GROUP_SIZE:
        raise CardError(f"the house way sets 7 distinct cards, got {list(cards7)!r}")
    for card in cards7:
        if not 0 <= card <= JOKER:
            raise CardError(f"bad card {card!r}: cards are ints 0..52")
    return _house_way(cards7, way)


def _house_way(cards7: Sequence[int], way: HouseWay) -> HandSet:
    """`house_way` on seven cards already checked (a checked round's)."""
    hand, order = _canonical(cards7)
    i, j = _memo(way, hand)
    low = (cards7[order[i]], cards7[order[j]])
    high = tuple(cards7[order[k]] for k in range(GROUP_SIZE) if k != i and k != j)
    return HandSet(high=high, low=low)


def house_way_batch(
    hands: npt.ArrayLike, way: HouseWay | str = "foxwoods"
) -> npt.NDArray[np.int16]:
    """House way for an (N, 7) array of hands: returns (N, 7), the 5 high cards then the 2 low.

    Hands are reduced to a canonical form (ranks, and which cards share the one suit that can
    make a flush); each distinct form is set once and remembered, so repeated shapes are free.
    """
    if isinstance(way, str):
        way = load_house_way(way)
    cards = np.asarray(hands, dtype=np.int64)
    if cards.ndim != 2 or cards.shape[1] != GROUP_SIZE:
        raise CardError(f"expected an array of shape (N, 7), got {cards.shape}")
    if cards.size and (cards.min() < 0 or cards.max() > JOKER):
        raise CardError("cards are ints 0..52")
    n = len(cards)
    joker = cards == JOKER
    suit = np.where(joker, -1, cards & 3)
    counts = np.stack([(suit == s).sum(axis=1) for s in range(4)], axis=1)
    need = np.where(joker.any(axis=1), 4, 5)
    has_flush = counts.max(axis=1) >= need
    flush_suit = np.where(has_flush, counts.argmax(axis=1), -9)
    flagged = (suit == flush_suit[:, None]) & ~joker
    rank = np.where(joker, 13, cards >> 2)
    # The same ordering as `_canonical`: rank, then the flush suit, then suit, highest first.
    sort_key = rank * 8 + flagged * 4 + np.where(joker, 0, suit)
    order = np.argsort(-sort_key, axis=1, kind="stable")
    s_rank = np.take_along_axis(rank, order, axis=1)
    s_flag = np.take_along_axis(flagged, order, axis=1)
    s_joker = np.take_along_axis(joker, order, axis=1)
    plain = ~s_flag & ~s_joker
    k = np.cumsum(plain, axis=1) - 1
    s_suit = np.where(s_flag, 0, np.where(has_flush[:, None], 1 + k % 3, k % 4))
    canonical = np.where(s_joker, JOKER, s_rank * 4 + s_suit)
    packed = np.zeros(n, dtype=np.int64)
    for col in range(GROUP_SIZE):
        packed = packed * 64 + canonical[:, col]
    keys, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    lows = np.array(
        [_memo(way, tuple(row)) for row in canonical[first].tolist()], dtype=np.int64
    ).reshape(len(keys), 2)
    low_pos = lows[inverse.reshape(-1)]
    is_low = np.zeros((n, GROUP_SIZE), dtype=bool)
    rows = np.arange(n)
    is_low[rows, low_pos[:, 0]] = True
    is_low[rows, low_pos[:, 1]] = True
    sorted_cards = np.take_along_axis(cards, order, axis=1)
    # A stable sort on the low flag puts the 5 high cards first, each part highest first.
    layout = np.argsort(is_low, axis=1, kind="stable")
    result: npt.NDArray[np.int16] = np.take_along_axis(sorted_cards, layout, axis=1).astype(
        np.int16
    )
    return result


def _canonical(cards: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A representative of the hand's class for the house way, and where each card came from.

    Only ranks and membership of the one suit that can make a flush (5 cards, or 4 and the
    joker) matter to a setting, so the flush suit becomes clubs and the other cards are dealt
    round the remaining suits, which can never make a second flush.
    """
    counts = [0, 0, 0, 0]
    joker = False
    for card in cards:
        if card == JOKER:
            joker = True
        else:
            counts[card & 3] += 1
    most = max(counts)  # seven cards hold at most one suit that can make a flush
    if most < (4 if joker else 5):
        # No flush: highest card first (the joker, 52, above all), suits dealt round 0..3.
        order = tuple(sorted(range(len(cards)), key=cards.__getitem__, reverse=True))
        first = 1 if joker else 0
        dealt = (cards[i] & ~3 | k % 4 for k, i in enumerate(order[first:]))
        return (JOKER,) * first + tuple(dealt), order
    flush_suit = counts.index(most)
    keys = [
        (13 * 8 if c == JOKER else (c >> 2) * 8 + 4 * ((c & 3) == flush_suit) + (c & 3))
        for c in cards
    ]
    order = tuple(sorted(range(len(cards)), key=keys.__getitem__, reverse=True))
    hand: list[int] = []
    k = 0
    for i in order:
        card = cards[i]
        if card == JOKER:
            hand.append(JOKER)
        elif (card & 3) == flush_suit:
            hand.append((card >> 2) * 4)
        else:
            hand.append((card >> 2) * 4 + 1 + k % 3)
            k += 1
    return tuple(hand), order


# Settings already worked out, per house way. Keyed by id() with the way kept beside it (a way
# is a frozen dataclass whose hash costs more than the lookup it guards).
_MEMOS: dict[int, tuple[HouseWay, dict[tuple[int, ...], tuple[int, int]]]] = {}
_MEMO_LIMIT = 1 << 20  # far above the number of canonical hands that occur in practice


def _memo(way: HouseWay, hand: tuple[int, ...]) -> tuple[int, int]:
    entry = _MEMOS.get(id(way))
    if entry is None or entry[0] is not way:
        if len(_MEMOS) >= 16:  # ways are loaded once (cached); this only bounds misuse
            _MEMOS.clear()
        entry = _MEMOS[id(way)] = (way, {})
    memo = entry[1]
    low = memo.get(hand)
    if low is None:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        low = memo[hand] = _HouseWayRules(hand, way).low()
    return low


class _HouseWayRules:
    """The house way on one canonical hand (sorted: joker first, then rank, highest first).

    `low()` returns the positions of the two cards that go low. The joker counts as an ace for
    pairs and singles and as any card in a straight or flush (PGP-A3c, DEF-PGP3).
    """

    def __init__(self, hand: tuple[int, ...], way: HouseWay) -> None:
        self.hand = hand
        self.way = way
        self.rank = [ACE if c == JOKER else c >> 2 for c in hand]
        counts: dict[int, int] = {}
        for rank in self.rank:
            counts[rank] = counts.get(rank, 0) + 1
        self.count = counts
        # Groups of equal rank, largest group first, then highest rank: (count, rank) packed in
        # one int (ranks are below 16) sorts the same without a key function.
        packed = sorted([n << 4 | rank for rank, n in counts.items()], reverse=True)
        self.groups = [code & 15 for code in packed]
        self.shape = tuple(code >> 4 for code in packed)

    # -- helpers: positions of cards -------------------------------------------------------
    def of_rank(self, rank: int) -> list[int]:
        """Positions of a rank's cards, natural cards before the joker (the joker keeps its
        freedom in the high hand)."""
        found = [i for i, r in enumerate(self.rank) if r == rank]
        return sorted(found, key=lambda i: self.hand[i] == JOKER)

    def singles(self) -> list[int]:
        """Positions of unpaired cards, highest first."""
        return [i for i, r in enumerate(self.rank) if self.count[r] == 1]

    def pair_of(self, rank: int) -> tuple[int, int]:
        first, second = self.of_rank(rank)[:2]
        return first, second

    # -- straights and flushes ---------------------------------------------------------------
    def straight_or_flush_splits(self) -> list[_Split]:
        """Every split that keeps a straight, flush, straight flush or royal flush high, best
        first: the best such high-hand category, then the best low hand, then the best high.

        "The 5-card hand" of the rows on straights and flushes is ambiguous when the cards hold
        more than one (a flush and a straight, a straight flush and a straight); defaults.md
        says to read it so as to maximise the high hand, so the best category comes first."""
        if not self._may_hold_straight_or_flush():
            return []
        hand = self.hand
        highs = [itemgetter(*rest)(hand) for rest in _HIGH_POSITIONS]
        found = []
        for (i, j), high in zip(
            _LOW_POSITIONS, strengths_with(PAI_GOW_HIGH, (), highs), strict=True
        ):
            category = _HIGH_CATEGORY[high]
            if category in _MADE_HANDS:
                low = PAI_GOW_LOW.strength((hand[i], hand[j]))
                found.append(_Split(category, low, high, i, j))
        found.sort(reverse=True)
        return found

    def _may_hold_straight_or_flush(self) -> bool:
        """A quick test before trying the 21 splits: five of a suit, or five ranks in a row,
        counting the joker as the missing one."""
        wild = JOKER in self.hand
        suits = [0, 0, 0, 0]
        held = 0
        for card in self.hand:
            if card != JOKER:
                suits[card & 3] += 1
                held |= 1 << (card >> 2)
        if max(suits) + wild >= 5:
            return True
        return _straight_possible(held, 5 - wild)

    # -- the rows of the house way ---------------------------------------------------------------
    def low(self) -> tuple[int, int]:
        shape, groups, way = self.shape, self.groups, self.way
        if shape[0] == 5:  # five aces: a pair of aces low, unless a good enough pair can go
            if len(shape) > 1 and shape[1] == 2 and groups[1] >= way.five_aces_pair_low_from:
                return self.pair_of(groups[1])
            return self.pair_of(ACE)
        if shape[0] == 4:
            return self._quads()
        if shape[:2] == (3, 3):  # two sets of trips: a pair from the higher set low
            return self.pair_of(groups[0])
        if shape[:2] == (3, 2):
            return self._full_house()
        if shape[0] == 3:
            return self._trips()
        if shape[:3] == (2, 2, 2):  # three pair: the highest pair low
            return self.pair_of(groups[0])
        if shape[:2] == (2, 2):
            return self._two_pair()
        if shape[0] == 2:
            return self._one_pair()
        return self._no_pair()

    def _together(self, bands: Sequence[Band], rank: int) -> bool:
        band = next(b for b in bands if b.from_rank <= rank)
        best_single = self.rank[self.singles()[0]]
        return best_single >= band.together_if_single_at_least

    def _quads(self) -> tuple[int, int]:
        quads = self.groups[0]
        if self.shape[1] >= 2:  # quads with a pair or trips: the pair low
            return self.pair_of(self.groups[1])
        if self._together(self.way.quads, quads):
            first, second = self.singles()[:2]
            return first, second
        return self.pair_of(quads)

    def _full_house(self) -> tuple[int, int]:
        way = self.way
        pair = self.groups[1]
        singles = self.singles()
        if (
            way.full_house_together_pair_at_most is not None
            and way.full_house_together_low_at_least is not None
            and self.shape == (3, 2, 1, 1)
            and pair <= way.full_house_together_pair_at_most
            and (self.rank[singles[0]], self.rank[singles[1]])
            >= way.full_house_together_low_at_least
        ):
            return singles[0], singles[1]
        # "Highest permissible pair": the trips stay high, so any pair may go low without a
        # foul; with two pairs beside the trips the higher one goes (groups are by rank).
        return self.pair_of(pair)

    def _trips(self) -> tuple[int, int]:
        with_pair_low = [
            s for s in self.straight_or_flush_splits() if _LOW_CATEGORY[s.low] is Category.PAIR
        ]
        if with_pair_low:  # a straight or flush high with a pair low
            return with_pair_low[0].i, with_pair_low[0].j
        trips = self.groups[0]
        singles = self.singles()
        if trips == ACE and self.way.split_trips_of_aces:
            return self.of_rank(ACE)[0], singles[0]
        return singles[0], singles[1]

    def _two_pair(self) -> tuple[int, int]:
        high_pair, low_pair = self.groups[0], self.groups[1]
        if self._together(self.way.two_pair, high_pair):
            first, second = self.singles()[:2]
            return first, second
        return self.pair_of(low_pair)

    def _one_pair(self) -> tuple[int, int]:
        singles = self.singles()
        pair_high = (singles[0], singles[1])
        splits = self.straight_or_flush_splits()
        if not splits:
            return pair_high
        best = splits[0]
        if (
            self.groups[0] in self.way.ace_low_over_straight_pairs
            and self.rank[singles[0]] == ACE
            and PAI_GOW_LOW.strength([self.hand[k] for k in pair_high]) > best.low
        ):
            return pair_high
        return best.i, best.j

    def _no_pair(self) -> tuple[int, int]:
        splits = self.straight_or_flush_splits()
        if splits:
            return splits[0].i, splits[0].j
        return 1, 2  # the 2nd and 3rd highest cards (the joker, if held, is the top card)


class _Split(NamedTuple):
    """A way to keep a straight or better high; orders best first under `sort(reverse=True)`."""

    category: Category
    low: int
    high: int
    i: int
    j: int


@cache  # at most 8,192 rank masks × 2
def _straight_possible(held: int, need: int) -> bool:
    """Whether the ranks in the mask `held` fill `need` places of some five-card straight."""
    return any((held & window).bit_count() >= need for window in _STRAIGHT_WINDOWS)


# The 21 splits: the low hand's two positions, and the high hand's five (both in order).
_LOW_POSITIONS = tuple(itertools.combinations(range(GROUP_SIZE), 2))
_HIGH_POSITIONS = tuple(
    tuple(k for k in range(GROUP_SIZE) if k not in low) for low in _LOW_POSITIONS
)
# Rank masks of the ten five-card straights; the ace also plays low in A-2-3-4-5 (PGP-A3b).
_STRAIGHT_WINDOWS = tuple(
    0b11111 << (top - 4) if top >= 4 else 0b1111 | 1 << ACE for top in range(3, 13)
)
_MADE_HANDS = frozenset(
    {Category.STRAIGHT, Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH}
)

# ---------------------------------------------------------------------------------------------
# Settlement


@dataclass(frozen=True, kw_only=True, slots=True)
class PaiGowSeat:
    """One betting position in a round.

    `cards` are the 7 cards the position received. `hand` is how it set them (None: it set no
    hands before the banker's were shown, DEF-PGP4). `surrendered`: it gave up its cards
    (PGP-A16a). For the player-banker, `wager_cents` is the bank that covers the other bets.
    """

    seat: int
    wager_cents: int
    cards: tuple[int, ...]
    hand: HandSet | None
    surrendered: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class PaiGowRound:
    """A Pai Gow round as the consumer rebuilds it from events.

    `dealer_cards`: the 7 cards of the dealer's position, always set by the house way
    (PGP-A13c). `banker_seat`: the player seat that banks (DEF-PGP2), or None when the dealer
    banks. `house_wager_cents`: when a player banks, the house's own bet at the dealer's
    position against that banker (0: the dealer's position plays no money).
    """

    round_id: str
    dealer_cards: tuple[int, ...]
    seats: tuple[PaiGowSeat, ...]
    banker_seat: int | None = None
    house_wager_cents: int = 0


def settle_pai_gow(game: PaiGowRound, profile: PaiGowProfile) -> RoundSettlement:
    """Settle every bet of a round (PGP-A13..A17, DEF-PGP2, DEF-PGP4, DEF-M2).

    Dealer-banked: each seat against the dealer's house-way hands. Player-banked: every other
    position, the dealer's included, against the banker, in seat order from the banker's left;
    winners and the banker's net win pay commission, the house's own bet pays none.

    DEF-PGP2 says bets the bank cannot cover are returned, in seat order; read here as whole
    bets: each bet, in that order, takes action if it fits in what is left of the bank (the
    banker's wager) and is otherwise returned in full, so a smaller bet further on may still fit.
    """
    _check_round(game)
    dealer_hand = _house_way(game.dealer_cards, profile.house_way)
    if game.banker_seat is None:
        return _settle_against_dealer(game, profile, dealer_hand)
    return _settle_against_player_banker(game, profile, dealer_hand)


def _check_round(game: PaiGowRound) -> None:
    cards = list(game.dealer_cards)
    if len(cards) != GROUP_SIZE:
        raise RoundError(
            f"round {game.round_id}: the dealer's position holds 7 cards, got {len(cards)}"
        )
    seats: set[int] = set()
    for seat in game.seats:
        number, held, hand = seat.seat, seat.cards, seat.hand
        if number not in _SEAT_NUMBERS or number in seats:
            raise RoundError(f"round {game.round_id}: seat {number} is repeated or not one of 1..6")
        seats.add(number)
        if seat.wager_cents <= 0:
            raise RoundError(f"round {game.round_id}: seat {number} wager must be positive")
        if len(held) != GROUP_SIZE:
            raise RoundError(f"round {game.round_id}: seat {number} must hold 7 cards (PGP-A10a)")
        cards += held
        if hand is not None:
            placed = hand.high + hand.low  # fewer than 7 is a foul by count (PGP-A15b, A15c)
            if sorted(placed) == sorted(held):  # the usual case, quicker than the sets below
                continue
            distinct = set(placed)
            if len(distinct) != len(placed) or not distinct.issubset(held):
                raise RoundError(f"round {game.round_id}: seat {number} set cards it was not dealt")
    distinct = set(cards)
    if len(distinct) != len(cards) or not distinct <= _DECK:
        raise RoundError(f"round {game.round_id}: a card is repeated or not a card")
    if game.house_wager_cents < 0:
        raise RoundError(f"round {game.round_id}: negative house wager")
    if game.banker_seat is None:
        if game.house_wager_cents:
            raise RoundError(f"round {game.round_id}: a house wager needs a player-banker")
    elif game.banker_seat not in seats:
        raise RoundError(f"round {game.round_id}: banker seat {game.banker_seat} has no bet")


def _judge(seat: PaiGowSeat, banker_high: int, banker_low: int) -> tuple[Outcome, tuple[str, ...]]:
    """One seat's hands against the banker's: its outcome and the rules that decided it."""
    return _verdicts([seat], banker_high, banker_low)[0]


def _verdicts(
    seats: Sequence[PaiGowSeat], banker_high: int, banker_low: int
) -> list[tuple[Outcome, tuple[str, ...]]]:
    """Each seat's hands against the banker's (PGP-A14, A15, A16; DEF-PGP4), in order.

    High against high, low against low; copies go to the banker (A14b). A foul, a surrender or
    no hands set loses before any comparison. The hands compared are ranked in one batch."""
    verdicts: list[tuple[Outcome, tuple[str, ...]] | None] = []
    compared: list[int] = []  # where the verdicts of the hands ranked below go
    highs: list[tuple[int, ...]] = []
    lows: list[tuple[int, ...]] = []
    for seat in seats:
        hand = seat.hand
        if seat.surrendered:
            verdicts.append(_SURRENDERED)
        elif hand is None:
            verdicts.append(_NOT_SET)
        elif len(hand.low) != 2 or len(hand.high) != 5:
            verdicts.append((Outcome.FOUL, (*foul_rules(hand), "PGP-A17a")))
        else:
            compared.append(len(verdicts))
            verdicts.append(None)
            highs.append(hand.high)
            lows.append(hand.low)
    high_strengths = strengths_with(PAI_GOW_HIGH, (), highs)
    low_strengths = strengths_with(PAI_GOW_LOW, (), lows)
    for index, high, low in zip(compared, high_strengths, low_strengths, strict=True):
        if _HIGH_CATEGORY[high] <= Category.PAIR and _low_outranks_high(low, high):
            verdicts[index] = _FOULED
        else:  # hands won (two win, one pushes, none loses), then whether either is a copy
            won = (high > banker_high) + (low > banker_low)
            verdicts[index] = _VERDICTS[2 * won + (high == banker_high or low == banker_low)]
    return verdicts  # type: ignore[return-value]  # every None was replaced


_SURRENDERED = (Outcome.SURRENDER, ("PGP-A16a", "PGP-A17a"))
_NOT_SET = (Outcome.SURRENDER, ("PGP-A16a", "DEF-PGP4", "PGP-A17a"))
_FOULED = (Outcome.FOUL, ("PGP-A15a", "PGP-A17a"))
# Indexed by 2 × hands won + (a copy in either hand).
_VERDICTS = tuple(
    (outcome, ("PGP-A14a", *(("PGP-A14b",) if copy else ()), *rules))
    for outcome, rules in (
        (Outcome.LOSE, ("PGP-A16a", "PGP-A17a")),
        (Outcome.PUSH, ("PGP-A16b", "PGP-A17b")),
        (Outcome.WIN, ("PGP-A16c", "PGP-A17c", "DEF-M2")),
    )
    for copy in (False, True)
)


def _settle_against_dealer(
    game: PaiGowRound, profile: PaiGowProfile, dealer: HandSet
) -> RoundSettlement:
    banker_high = PAI_GOW_HIGH.strength(dealer.high)
    banker_low = PAI_GOW_LOW.strength(dealer.low)
    rate, unit = profile.commission_rate_bp, profile.commission_unit_cents
    line = line_builder(game.round_id, profile.name, profile.version)
    lines = []
    for seat, (outcome, rules) in zip(
        game.seats, _verdicts(game.seats, banker_high, banker_low), strict=True
    ):
        wager = seat.wager_cents
        payout = commission = 0
        if outcome is Outcome.WIN:
            payout, commission = wager, commission_cents(wager, rate, unit)
            net = wager - commission
        else:
            net = 0 if outcome is Outcome.PUSH else -wager
        rules = _DEALER_BANKS.get(rules) or ("PGP-A13c", *rules)
        lines.append(
            line(seat.seat, Spot.MAIN, wager, outcome, payout, commission, net, -net, rules)
        )
    return RoundSettlement(round_id=game.round_id, settlements=tuple(lines))


# A verdict's rules when the dealer banks: the dealer's hands were set by the house way (the
# rare foul by card count, whose rules vary, is prefixed where it happens).
_DEALER_BANKS = {
    rules: ("PGP-A13c", *rules) for _, rules in (_SURRENDERED, _NOT_SET, _FOULED, *_VERDICTS)
}


def _settle_against_player_banker(
    game: PaiGowRound, profile: PaiGowProfile, dealer: HandSet
) -> RoundSettlement:
    by_seat = {s.seat: s for s in game.seats}
    banker = by_seat[game.banker_seat or 0]
    banker_seat = banker.seat
    if banker.surrendered:
        raise RoundError(f"round {game.round_id}: the banker cannot surrender")
    banker_rules: tuple[str, ...] = ("DEF-PGP2",)
    banker_hand = banker.hand
    if banker_hand is None or foul_rules(banker_hand):
        banker_hand = house_way(banker.cards, profile.house_way)  # PGP-A13b: re-set, not lost
        banker_rules += ("PGP-A13b",)
    banker_high = PAI_GOW_HIGH.strength(banker_hand.high)
    banker_low = PAI_GOW_LOW.strength(banker_hand.low)

    # Every other position, clockwise from the banker's left; the dealer's position plays the
    # house's wager with its house-way hands (DEF-PGP2).
    entries: list[tuple[PaiGowSeat, Bettor]] = []
    for step in range(1, POSITIONS):
        position = (banker_seat + step) % POSITIONS
        if position == DEALER:
            if game.house_wager_cents:
                house = PaiGowSeat(
                    seat=DEALER,
                    wager_cents=game.house_wager_cents,
                    cards=game.dealer_cards,
                    hand=dealer,
                )
                entries.append((house, Bettor.HOUSE))
        elif position in by_seat:
            entries.append((by_seat[position], Bettor.PLAYER))

    cover = banker.wager_cents
    banker_gross = banker_commission = 0
    lines: list[Settlement] = []
    verdicts = _verdicts([seat for seat, _ in entries], banker_high, banker_low)
    for (seat, bettor), verdict in zip(entries, verdicts, strict=True):
        wager = seat.wager_cents
        payout = commission = net = 0
        rules: tuple[str, ...]
        if wager > cover:
            outcome, rules = Outcome.RETURNED, ("DEF-PGP2",)
        else:
            cover -= wager
            outcome, rules = verdict
            rules = (*rules, "DEF-PGP2")
            if outcome is Outcome.WIN:
                payout = wager
                if bettor is Bettor.PLAYER:  # the house pays itself no commission
                    commission = commission_cents(
                        wager, profile.commission_rate_bp, profile.commission_unit_cents
                    )
                net = payout - commission
            elif outcome is not Outcome.PUSH:
                net = -wager
            if bettor is Bettor.HOUSE:
                rules = ("PGP-A13c", *rules)
        banker_gross -= payout if outcome is Outcome.WIN else net
        lines.append(
            Settlement(
                round_id=game.round_id,
                seat=seat.seat,
                spot=Spot.MAIN,
                wager_cents=wager,
                outcome=outcome,
                payout_cents=payout,
                commission_cents=commission,
                net_cents=net,
                house_result_cents=net if bettor is Bettor.HOUSE else commission,
                profile=profile.name,
                profile_version=profile.version,
                rule_ids=rules,
                bettor=bettor,
            )
        )
    if banker_gross > 0:
        banker_commission = commission_cents(
            banker_gross, profile.commission_rate_bp, profile.commission_unit_cents
        )
        banker_outcome = Outcome.WIN
        banker_rules += ("PGP-A17c", "DEF-M2")
    else:
        banker_outcome = Outcome.LOSE if banker_gross < 0 else Outcome.PUSH
    banker_line = Settlement(
        round_id=game.round_id,
        seat=banker_seat,
        spot=Spot.MAIN,
        wager_cents=banker.wager_cents,
        outcome=banker_outcome,
        payout_cents=max(banker_gross, 0),
        commission_cents=banker_commission,
        net_cents=banker_gross - banker_commission,
        house_result_cents=banker_commission,
        profile=profile.name,
        profile_version=profile.version,
        rule_ids=banker_rules,
        bettor=Bettor.BANKER,
    )
    return RoundSettlement(round_id=game.round_id, settlements=(banker_line, *lines))
