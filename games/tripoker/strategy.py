"""Tripóker's play/fold strategies and the hold test's expectations, by the profile.

`strategy`: what a player who plays well decides from what the player may see (own cards, the
exposed dealer card), for re-deciding recorded rounds (`croupier what-if --decisions strategy`,
`GameSpec.redecide`) and as the legitimate choice of `informed`. `full_information_plays`: the
best choice knowing all the dealer's cards. `expected` (`GameSpec.expected`): each player
position's house result, exact mean and variance over the dealer's cards the players could not
see, given the cards and decisions as played. `informed` (`GameSpec.informed`): each play/fold
decision beside the legitimate and the full-information choice.

Method, everywhere: exact enumeration. The dealer's hidden cards range over every combination of
the cards nobody at the table saw (the deck less the cards considered known), each equally
likely; dealer strengths come from one precomputed (52, 52, 52) table of every 3-card hand's
strength (`games.tripoker.odds`), so an enumeration is a few numpy gathers. Each enumerated hand
is settled as `rules.settle_tripoker` settles it (the tests check this against the engine).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import numpy.typing as npt

from events.models import Decision, PlayerDecided, Spot
from games.base import (
    Decider,
    Expectation,
    Informed,
    RoundEvents,
    RoundExpectation,
    dealt,
    stakes,
)
from games.tripoker import round as tripoker_round
from games.tripoker.odds import _tripoker_groups
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import (
    qualifier_strength,
    settle_tripoker,
)
from rules.profile import Profile
from rules.rankings import TRIPOKER
from rules.settlement import category_table

Plays = Callable[[Sequence[int], Sequence[int], int, int], bool]
_Ints = npt.NDArray[np.int64]


def redecide(profile: Profile) -> Decider:
    """Each ante player's play/fold decided again by `profile`'s strategy (`strategy`); the
    round's other events as played. Returns the round and how many decisions changed."""
    tripoker = _tripoker(profile)
    if len(tripoker.exposed_dealer_cards) > 1:
        raise ValueError(f"{tripoker.name}: the strategy handles one exposed dealer card")
    plays = strategy(tripoker)

    def decide(kinds: RoundEvents) -> tuple[RoundEvents, int]:
        hands, dealer = dealt(kinds)
        by_spot = stakes(kinds, (Spot.ANTE, Spot.PAIR_PLUS))
        antes, pair_plus = by_spot[Spot.ANTE], by_spot[Spot.PAIR_PLUS]
        changed = 0
        events = []
        for event in kinds.all:
            if isinstance(event, PlayerDecided) and event.seat in hands and event.seat in antes:
                play = plays(
                    hands[event.seat], dealer, antes[event.seat], pair_plus.get(event.seat, 0)
                )
                decision = Decision.PLAY if play else Decision.FOLD
                if decision is not event.decision:
                    changed += 1
                    amount = antes[event.seat] * tripoker.play_multiple if play else 0
                    event = event.model_copy(update={"decision": decision, "amount_cents": amount})
            events.append(event)
        return (RoundEvents(events), changed) if changed else (kinds, 0)

    return decide


def strategy(profile: TripokerProfile) -> Plays:
    """The legitimate strategy: play or fold (hand, dealer's cards, ante, pair plus -> play?)
    from what the player may see, the own hand and the profile's exposed dealer cards
    (TCP-A10b; the other dealer cards are not read). Plays exactly when the expected return of
    playing (ante, play, ante bonus; pair plus too when a fold forfeits it, TCP-A11b) beats
    folding, summed exactly over every dealer completion from the cards the player did not see
    (18,424 with every dealer card face down, 1,128 with one exposed). A tie folds. With the
    standard rules this is queen-6-4 or better (the tests check all 22,100 hands)."""
    positions = tuple(p - 1 for p in profile.exposed_dealer_cards)
    rules = _rules(profile)
    strength = TRIPOKER.strength

    def plays(hand: Sequence[int], dealer: Sequence[int], ante: int, pair_plus: int) -> bool:
        exposed = tuple(dealer[p] for p in positions)
        mine = strength(hand)
        units, hands = _play_units(rules, tuple(sorted(hand)), exposed, mine)
        return _margin(rules, mine, units, hands, ante, pair_plus) > 0

    return plays


def full_information_plays(
    profile: TripokerProfile,
    hand: Sequence[int],
    dealer: Sequence[int],
    ante: int,
    pair_plus: int,
) -> bool:
    """Play iff playing returns the player more than folding, knowing all 3 dealer cards (the
    settlement rules applied to this one dealer hand: DEF-TCP1..5, TCP-A11b); a tie folds."""
    rules = _rules(profile)
    mine = TRIPOKER.strength(hand)
    units = int(_showdown(rules, mine, np.array([TRIPOKER.strength(dealer)]))[0])
    return _margin(rules, mine, units, 1, ante, pair_plus) > 0


def expected(kinds: RoundEvents, profile: Profile, meter_cents: int | None) -> RoundExpectation:
    """`GameSpec.expected`: every player position's (seat with an ante and/or pair plus) house
    result in céntimos, its exact mean and variance over the dealer's hidden cards, given every
    player's cards, the exposed dealer cards and the decisions as played.

    The hidden dealer cards range over every combination of the deck less all the players'
    cards and the exposed cards (conditioning on every seat's cards), each equally likely; each
    combination is settled as the engine does: a fold loses the ante (and pair plus when the
    profile forfeits it, TCP-A11b), a pair-plus-only seat stays in, a play wins 1:1 on the ante
    with the play pushed when the dealer does not qualify, else ante and play win, push or lose
    on the showdown; the ante bonus pays on the ante whatever the dealer holds; pair plus on the
    player's hand. Tripóker has no progressive and no payout cap: `meter_cents` is unused.
    `total_variance` is the variance of the seats' sum (they share the dealer's hand)."""
    del meter_cents  # Tripóker has no progressive meter
    profile = _tripoker(profile)
    rules = _rules(profile)
    record = tripoker_round.record(kinds)
    settle_tripoker(record, profile)  # the engine's checks: a round it cannot settle raises
    exposed = tuple(record.dealer_cards[p - 1] for p in profile.exposed_dealer_cards)
    seen = [c for seat in record.seats for c in seat.cards]
    dealer = _completions(exposed, seen)
    seats: dict[int, Expectation] = {}
    total = np.zeros(len(dealer), dtype=np.int64)
    for seat in record.seats:
        mine = TRIPOKER.strength(seat.cards)
        category = _CATEGORY[mine]
        folded = seat.decision is Decision.FOLD
        constant = -_pair_plus_result(rules, category, seat.pair_plus_cents, folded)
        if seat.ante_cents and folded:
            constant += seat.ante_cents
        if seat.ante_cents and not folded:
            ante = seat.ante_cents
            house = constant - ante * (_showdown(rules, mine, dealer) + rules.bonus[category])
            seats[seat.seat] = Expectation(
                mean_cents=float(house.mean()), variance=float(house.var())
            )
            total += house
        else:
            seats[seat.seat] = Expectation(mean_cents=float(constant), variance=0.0)
            total += constant
    return RoundExpectation(seats=seats, total_variance=float(total.var()))


def informed(kinds: RoundEvents, profile: Profile, meter_cents: int | None) -> dict[int, Informed]:
    """`GameSpec.informed`: every seat that made a play/fold decision (an ante), with the
    legitimate choice (`strategy`: own cards and the exposed dealer card), the full-information
    choice (`full_information_plays`: all 3 dealer cards) and `gain_cents`: the player's result
    of the choice played minus that of the legitimate choice, both settled exactly against the
    dealer's actual cards (Tripóker deals nothing after the decision, so the value is exact)."""
    del meter_cents
    profile = _tripoker(profile)
    rules = _rules(profile)
    record = tripoker_round.record(kinds)
    settle_tripoker(record, profile)
    plays = strategy(profile)
    dealer_strength = np.array([TRIPOKER.strength(record.dealer_cards)])
    exposed = tuple(record.dealer_cards[p - 1] for p in profile.exposed_dealer_cards)
    hidden = _completions(exposed, [c for seat in record.seats for c in seat.cards])
    found: dict[int, Informed] = {}
    for seat in record.seats:
        if not seat.ante_cents or seat.decision is None:
            continue
        mine = TRIPOKER.strength(seat.cards)
        category = _CATEGORY[mine]
        ante, pair_plus = seat.ante_cents, seat.pair_plus_cents
        fold = -ante + _pair_plus_result(rules, category, pair_plus, True)
        play = ante * (int(_showdown(rules, mine, dealer_strength)[0]) + rules.bonus[category])
        play += _pair_plus_result(rules, category, pair_plus, False)
        legitimate = plays(seat.cards, record.dealer_cards, ante, pair_plus)
        informed_play = play > fold
        value = {True: play, False: fold}
        played = seat.decision is Decision.PLAY
        # the full-information choice for every way the hidden dealer cards could lie (given
        # every seat's cards and the exposed ones): a player who cannot see them matches it
        # with this probability, whatever their strategy
        margins = ante * (_showdown(rules, mine, hidden) + rules.bonus[category] + 1)
        pays = rules.pair_plus[category]
        if pair_plus and rules.forfeits and pays is not None:
            margins += pair_plus * (pays + 1)
        found[seat.seat] = Informed(
            played=seat.decision,
            legitimate=_DECISION[legitimate],
            full_information=_DECISION[informed_play],
            gain_cents=float(value[played] - value[legitimate]),
            match_probability=float(((margins > 0) == played).mean()),
        )
    return found


# --- the exact tables -------------------------------------------------------------------------

_CATEGORY = tuple(int(c) for c in category_table(TRIPOKER))  # category of every strength
_DECISION = {True: Decision.PLAY, False: Decision.FOLD}


@dataclass(frozen=True, slots=True)
class _Rules:
    """A profile's settlement numbers as plain ints: the qualifier's strength, the play
    multiple, the fold's forfeit, the ante bonus (0: none) and pair plus (None: loses) by
    category value."""

    qualifier: int
    multiple: int
    forfeits: bool
    bonus: tuple[int, ...]
    pair_plus: tuple[int | None, ...]


@lru_cache(maxsize=32)
def _rules(profile: TripokerProfile) -> _Rules:
    return _Rules(
        qualifier=qualifier_strength(profile.dealer_qualifier),
        multiple=profile.play_multiple,
        forfeits=profile.fold_forfeits_pair_plus,
        bonus=tuple(v or 0 for v in profile.ante_bonus.values),
        pair_plus=profile.pair_plus.values,
    )


def _tripoker(profile: Profile) -> TripokerProfile:
    if not isinstance(profile, TripokerProfile):
        raise ValueError(f"{profile.name} is not a Tripóker profile")
    return profile


@cache
def _strengths() -> _Ints:
    """(52, 52, 52): the strength of the 3-card hand {a, b, c} (-1 where cards repeat)."""
    return _tripoker_groups().triple


@cache
def _combinations(n: int, k: int) -> npt.NDArray[np.intp]:
    """Every k-subset of range(n) as rows of indices, in lexicographic order (C(n, k) rows)."""
    rows = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(n), k)),
        dtype=np.intp,
        count=math.comb(n, k) * k,
    )
    return rows.reshape(-1, k)


def _completions(known: Sequence[int], seen: Sequence[int]) -> _Ints:
    """The dealer's strength for every completion of `known` (the dealer cards the players
    saw) from the cards outside `known` and `seen`, one row per equally likely completion."""
    hidden = 3 - len(known)
    rest = np.ones(52, dtype=bool)
    rest[list(known)] = False
    rest[list(seen)] = False
    unseen = np.flatnonzero(rest)
    drawn = unseen[_combinations(len(unseen), hidden)]
    columns = [np.full(len(drawn), c, dtype=np.intp) for c in known]
    columns += [drawn[:, i] for i in range(hidden)]
    return _strengths()[columns[0], columns[1], columns[2]]


def _showdown(rules: _Rules, mine: int, dealer: _Ints) -> _Ints:
    """The player's result on ante and play, in antes, against each dealer strength: +1 when the
    dealer does not qualify (the play pushes), else ±(1 + multiple) or 0 on the showdown."""
    sign = np.sign(mine - dealer)
    return np.where(dealer >= rules.qualifier, sign * (1 + rules.multiple), 1).astype(np.int64)


@lru_cache(maxsize=1 << 16)
def _play_units(
    rules: _Rules, hand: tuple[int, ...], exposed: tuple[int, ...], mine: int
) -> tuple[int, int]:
    """The play's showdown result in antes summed over every dealer completion the player
    cannot tell apart, and their number (cached: it depends on the hand and exposed cards)."""
    dealer = _completions(exposed, hand)
    return int(_showdown(rules, mine, dealer).sum()), len(dealer)


def _margin(rules: _Rules, mine: int, units: int, hands: int, ante: int, pair_plus: int) -> int:
    """Play's return minus fold's, in céntimos × `hands`: the ante comes back from −1 to the
    showdown and bonus, and where a fold forfeits pair plus (TCP-A11b) a paying hand keeps
    its pays + 1."""
    category = _CATEGORY[mine]
    margin = ante * (units + (rules.bonus[category] + 1) * hands)
    pays = rules.pair_plus[category]
    if pair_plus and rules.forfeits and pays is not None:
        margin += pair_plus * (pays + 1) * hands
    return margin


def _pair_plus_result(rules: _Rules, category: int, wager: int, folded: bool) -> int:
    """The player's result on pair plus (DEF-TCP5; lost on a fold where TCP-A11b forfeits it)."""
    if not wager:
        return 0
    pays = rules.pair_plus[category]
    if (folded and rules.forfeits) or pays is None:
        return -wager
    return wager * pays
