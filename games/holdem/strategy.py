"""Casino Hold'em's call/fold strategies as data, and the hold test's expectation and decision
evidence (issue 18: `GameSpec.expected`, `GameSpec.informed`).

Card ints as everywhere (`rank = card >> 2`, `suit = card & 3`); money in céntimos. A call's
result is settled here as `settle_holdem` settles a called seat (`_call_nets`, integer céntimos,
the cap included; tests compare it with the engine card for card): the dealer not qualifying
pays the ante by the paytable and pushes the call; qualifying, the better hand wins both (the
ante by the paytable, the call 1:1), equal hands push both; the winnings capped (THP-A2c). The
progressive is judged on the hole cards and the flop and paid after a fold too (DEF-THP4), so it
never depends on the call/fold decision nor on the cards still to come.

Strategies:

- `legitimate_calls` / `call_value`: what the player may see (own hole cards, the flop). Exact:
  every completion of the 47 unseen cards (1,081 turns and rivers × 990 dealer hands, 1,070,190
  completions). The dealer's 7 cards are the flop plus 4 of the 47 whichever 2 of the 4 are the
  turn and river, so the dealer is evaluated once per 4-card set (178,365 evaluations) and the
  player once per turn/river pair (1,081); each 4-card set's 6 splits into board pair and dealer
  pair are then compared by array lookups (tests check it against brute-force enumeration).
  About 15 ms a decision (median, one core; 20-40 ms on a loaded machine); cached per
  suit-canonical hole + flop (a suit permutation changes no hand's strength). Over 15,000 random
  hands it called 81.5 % (sd 0.3 point), Wizard of Odds publishes about 82 %; their mean value,
  -3.5 % of the ante (sd 0.8 point), is the published house edge of 2.16 % within 2 sd.
- `full_information_calls` / `full_information_value`: knowing the dealer's 2 hole cards too,
  exact over the 990 turn/river pairs of the 45 unseen cards (about 1 ms).

The round functions (`GameSpec`): `expected` (the house's result per seat given every seat's
hole cards, the flop and the decisions: exact without a call, else sampled, a few ms a round)
and `informed` (each decision beside the legitimate and the full-information one).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import numpy.typing as npt

from events.models import CommunityDealt, Decision, PlayerDecided, Spot
from games.base import (
    Expectation,
    Informed,
    RoundEvents,
    RoundExpectation,
    cards,
    dealt,
    stakes,
    started,
)
from games.holdem import round as holdem_round
from games.holdem.odds import ANTE_CENTS, _seven_card_strengths
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, qualifier_strength, settle_holdem
from games.odds_common import distinct_draws
from rules.profile import Profile
from rules.rankings import HOLDEM
from rules.rankings.tables import CARD_BITS, CARD_KEYS
from rules.settlement import RoundError

Ints = npt.NDArray[np.int64]
DECK = 52
# `expected`: 4-card sets (the dealer's 2 and the turn and river) drawn per round with calls;
# each valued exactly over its 6 splits into board pair and dealer pair (24,576 completions).
SAMPLES = 4_096
_SPLITS = tuple(itertools.combinations(range(4), 2))  # board pair; the other two: the dealer's
_SUIT_PERMUTATIONS = tuple(itertools.permutations(range(4)))


@dataclass(frozen=True, slots=True)
class _Terms:
    """The profile's numbers that settle a call (hashable: a cache key)."""

    pays: tuple[int, ...]  # ante pays, odds to 1, by category value (0: not paid)
    qualifier: int  # the dealer's lowest qualifying strength
    multiple: int  # call = multiple × ante
    cap: int  # the seat's ante + call winnings are capped at this (THP-A2c)


def _terms(profile: HoldemProfile) -> _Terms:
    return _Terms(
        pays=tuple(v or 0 for v in profile.ante_pays.values),
        qualifier=qualifier_strength(profile.dealer_qualifier),
        multiple=profile.call_multiple,
        cap=profile.payout_cap_cents,
    )


def _holdem(profile: Profile) -> HoldemProfile:
    if not isinstance(profile, HoldemProfile):
        raise ValueError(f"{profile.name} is not a Hold'em profile")
    return profile


# --- settling a call, vectorized --------------------------------------------------------------


def _wins(terms: _Terms, ante: int, player: Ints) -> tuple[Ints, Ints]:
    """A called seat's winnings (céntimos) by its 7-card strengths: the dealer not qualifying
    (the ante by the paytable, the call pushed) and qualifying and beaten (the call 1:1 too),
    each capped as `settle_holdem` caps the seat's ante and call winnings together."""
    categories = HOLDEM.categories_batch(player).astype(np.int64)
    ante_win = ante * np.asarray(terms.pays, dtype=np.int64).take(categories)
    unqualified: Ints = np.minimum(ante_win, terms.cap)
    beaten: Ints = np.minimum(ante_win + ante * terms.multiple, terms.cap)
    return unqualified, beaten


def _call_nets(terms: _Terms, ante: int, player: Ints, dealer: Ints) -> Ints:
    """The called seat's net (céntimos) for 7-card strengths `player` and `dealer` (same
    shape), as `settle_holdem` settles it."""
    unqualified, beaten = _wins(terms, ante, player)
    lost = -ante * (1 + terms.multiple)
    result: Ints = np.where(
        dealer >= terms.qualifier,
        np.where(player > dealer, beaten, np.where(player == dealer, 0, lost)),
        unqualified,
    )
    return result


def _sums(hand: Sequence[int]) -> tuple[Ints, Ints]:
    """`_seven_card_strengths`' shared part of one hand: its rank-key and card-bit sums."""
    c = np.asarray(hand, dtype=np.int64)
    return (
        np.array([CARD_KEYS.take(c).sum()], dtype=np.int64),
        np.array([CARD_BITS.take(c).sum()], dtype=np.int64),
    )


def _strengths(shared: Sequence[int], *pairs: Ints) -> Ints:
    """HOLDEM strengths of `shared` (3 or 5 cards) plus each card pair (`a * 53 + b`, 1-D)."""
    strengths: Ints = _seven_card_strengths(_sums(shared), tuple(p[None, :] for p in pairs))[0]
    return strengths


def _unseen(seen: Sequence[int]) -> Ints:
    mask = np.ones(DECK, dtype=bool)
    mask[list(seen)] = False
    return np.flatnonzero(mask).astype(np.int64)


# --- the legitimate decision: exact over 1,070,190 completions --------------------------------


@cache
def _pairs(n: int) -> Ints:
    """Every pair of n positions (C(n, 2), 2)."""
    return np.array(list(itertools.combinations(range(n), 2)), dtype=np.int64)


@cache
def _layout(n: int) -> tuple[Ints, npt.NDArray[np.int32]]:
    """For n unseen cards (by position): every pair (C(n, 2), 2), and for every 4-card set the
    index in the pairs of its 6 board pairs (C(n, 4), 6), in `_SPLITS` order: its first column
    is the set's first two cards, its last the other two."""
    pairs = _pairs(n)
    index = np.zeros((n, n), dtype=np.int32)
    index[pairs[:, 0], pairs[:, 1]] = np.arange(len(pairs))
    quads = np.array(list(itertools.combinations(range(n), 4)), dtype=np.int64)
    splits = np.stack([index[quads[:, a], quads[:, b]] for a, b in _SPLITS], axis=1)
    return pairs, splits


def _suit_canonical(
    hole: Sequence[int], flop: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The least (hole, flop), each sorted, over the 24 suit permutations: hands with the same
    form have the same strengths in every completion, so the same call value."""
    return min(
        (
            tuple(sorted((c & ~3) | perm[c & 3] for c in hole)),
            tuple(sorted((c & ~3) | perm[c & 3] for c in flop)),
        )
        for perm in _SUIT_PERMUTATIONS
    )


def call_value(
    profile: HoldemProfile, hole: Sequence[int], flop: Sequence[int], ante_cents: int = ANTE_CENTS
) -> float:
    """The call's expected net (céntimos, ante and call) for a player who sees only `hole` and
    `flop`: exact over every turn, river and dealer hand of the 47 unseen cards (see the module
    docstring); folding's is `-ante_cents`. The ante matters only through the cap (THP-A2c)."""
    hole_c, flop_c = _suit_canonical(hole, flop)
    return _call_value(_terms(profile), ante_cents, hole_c, flop_c)[0]


def call_share(
    profile: HoldemProfile, hole: Sequence[int], flop: Sequence[int], ante_cents: int = ANTE_CENTS
) -> float:
    """The share of the dealer's possible hole cards (every pair of the 47 cards this player
    did not see, equally likely) for which calling is the full-information choice: exact, from
    the same enumeration as `call_value`. A player who cannot see the dealer's cards calls
    into a full-information call with this probability, whatever their strategy (the
    hole-carding test's null, `Informed.match_probability`)."""
    hole_c, flop_c = _suit_canonical(hole, flop)
    return _call_value(_terms(profile), ante_cents, hole_c, flop_c)[1]


@lru_cache(maxsize=65_536)
def _call_value(
    terms: _Terms, ante: int, hole: tuple[int, ...], flop: tuple[int, ...]
) -> tuple[float, float]:
    """(the call's expected net, the share of dealer hole pairs it is the full-information
    choice against), over every 4-card set of the unseen cards and its 6 splits into the
    board's turn and river and the dealer's hole cards."""
    unseen = _unseen((*hole, *flop))
    pairs, splits = _layout(len(unseen))
    p = unseen.take(pairs)
    codes = p[:, 0] * 53 + p[:, 1]  # each pair of unseen cards, as `_seven_card_strengths` reads
    # The dealer: the flop and each 4-card set (its first pair and its last), whatever the split.
    dealer = _strengths(flop, codes.take(splits[:, 0]), codes.take(splits[:, -1]))
    player = _strengths((*hole, *flop), codes)  # per turn/river pair
    unqualified, beaten = _wins(terms, ante, player)
    theirs = dealer[:, None]
    mine = player.take(splits)  # the player's strength for each split's board pair
    nets = np.where(
        theirs >= terms.qualifier,
        np.where(
            mine > theirs,
            beaten.take(splits),
            np.where(mine == theirs, 0, -ante * (1 + terms.multiple)),
        ),
        unqualified.take(splits),
    )
    # each split's dealer hole cards are the set's other pair (`_SPLITS`: column 5 - j)
    holes = splits[:, ::-1].ravel()
    by_hole = np.bincount(holes, weights=nets.ravel(), minlength=len(pairs))
    boards = np.bincount(holes, minlength=len(pairs))
    share = float(np.mean(by_hole / boards > -ante))
    return float(nets.sum()) / nets.size, share


def legitimate_calls(
    profile: HoldemProfile, hole: Sequence[int], flop: Sequence[int], ante_cents: int = ANTE_CENTS
) -> bool:
    """Call iff the call's exact expected net (`call_value`) beats folding's loss of the ante."""
    return call_value(profile, hole, flop, ante_cents) > -ante_cents


# --- the full-information decision: exact over the 990 turns and rivers -----------------------


def full_information_value(
    profile: HoldemProfile,
    hole: Sequence[int],
    flop: Sequence[int],
    dealer_hole: Sequence[int],
    ante_cents: int = ANTE_CENTS,
) -> float:
    """The call's expected net (céntimos) knowing the dealer's 2 hole cards too: exact over the
    990 turn/river pairs of the 45 cards left (folding's is `-ante_cents`)."""
    unseen = _unseen((*hole, *flop, *dealer_hole))
    p = unseen.take(_pairs(len(unseen)))
    board = p[:, 0] * 53 + p[:, 1]
    player = _strengths((*hole, *flop), board)
    dealer = _strengths((*flop, *dealer_hole), board)
    return float(_call_nets(_terms(profile), ante_cents, player, dealer).mean())


def full_information_calls(
    profile: HoldemProfile,
    hole: Sequence[int],
    flop: Sequence[int],
    dealer_hole: Sequence[int],
    ante_cents: int = ANTE_CENTS,
) -> bool:
    """Call iff, knowing the dealer's hole cards, the call's exact expected net beats folding."""
    return full_information_value(profile, hole, flop, dealer_hole, ante_cents) > -ante_cents


# --- a round's events -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Hand:
    """What a round's players saw: every seat (ante, progressive, hole cards, decision), the
    flop, and the dealer's hole cards as dealt (empty if not in the events); the meter before
    the round."""

    round_id: str
    seats: tuple[HoldemSeat, ...]
    flop: tuple[int, ...]
    dealer_hole: tuple[int, ...]
    meter_cents: int


def hand_of(kinds: RoundEvents, meter_cents: int | None) -> Hand:
    """The round's seats, flop and dealer cards from its events, as `round.settle` reads them."""
    start = started(kinds)
    holes, dealer = dealt(kinds)
    flop = tuple(c for e in kinds.of(CommunityDealt) if e.street == "flop" for c in cards(e.cards))
    if meter_cents is None:
        raise RoundError("the progressive meter was never set (progressive_meter_reset)")
    if len(flop) != 3:
        raise RoundError(f"round {start.round_id}: no flop of 3 cards")
    if any(c >= DECK for hole in holes.values() for c in hole) or any(c >= DECK for c in flop):
        raise RoundError(f"round {start.round_id}: a joker in a Hold'em hand")
    antes = stakes(kinds, (Spot.ANTE, Spot.PROGRESSIVE))[Spot.ANTE]
    decided = {e.seat for e in kinds.of(PlayerDecided)}
    missing = [seat for seat in antes if seat not in holes or seat not in decided]
    if missing:
        raise RoundError(f"round {start.round_id}: seats {missing} have no cards or decision")
    return Hand(
        round_id=start.round_id,
        seats=holdem_round.seats(kinds, holes),
        flop=flop,
        dealer_hole=dealer[:2] if len(dealer) >= 2 else (),
        meter_cents=meter_cents,
    )


def _fixed_results(hand: Hand, profile: HoldemProfile) -> dict[int, int]:
    """The house's result per seat from what the cards already decide: a folded seat's ante and
    every progressive (hole + flop), by the engine itself on the round with every seat folded
    (the progressive's meter shares in seat order as settled); a called seat's ante excluded."""
    folded = HoldemRound(
        round_id=hand.round_id,
        dealer_hole=(),
        board=hand.flop,
        seats=tuple(_folded(seat) for seat in hand.seats),
        meter_cents=hand.meter_cents,
    )
    called = {seat.seat for seat in hand.seats if seat.decision is Decision.CALL}
    result = {seat.seat: 0 for seat in hand.seats}
    for line in settle_holdem(folded, profile).settlements:
        if not (line.spot is Spot.ANTE and line.seat in called):
            result[line.seat] += line.house_result_cents
    return result


def _folded(seat: HoldemSeat) -> HoldemSeat:
    return HoldemSeat(
        seat=seat.seat,
        ante_cents=seat.ante_cents,
        progressive_cents=seat.progressive_cents,
        hole=seat.hole,
        decision=Decision.FOLD,
    )


def house_results(hand: Hand, profile: HoldemProfile, completions: Ints) -> dict[int, Ints]:
    """The house's result (céntimos) per seat for each completion of the round: `completions`
    (N, 4) are the turn, the river and the dealer's 2 hole cards. Settled as `settle_holdem`
    settles the round with those cards (the tests compare them)."""
    fixed = _fixed_results(hand, profile)
    terms = _terms(profile)
    board = completions[:, 0] * 53 + completions[:, 1]
    dealer = _strengths(hand.flop, board, completions[:, 2] * 53 + completions[:, 3])
    # Many completions: each caller's strength once per turn/river pair of the unseen cards.
    unseen = _unseen([*hand.flop, *(c for seat in hand.seats for c in seat.hole)])
    pairs = unseen.take(_pairs(len(unseen)))
    by_pair = len(completions) > len(pairs)
    codes = pairs[:, 0] * 53 + pairs[:, 1]
    results: dict[int, Ints] = {}
    for seat in hand.seats:
        result = np.full(len(completions), fixed[seat.seat], dtype=np.int64)
        if seat.decision is Decision.CALL:
            mine = (*seat.hole, *hand.flop)
            if by_pair:
                table = np.zeros(53 * 53, dtype=np.int64)
                table[codes] = _strengths(mine, codes)
                table[pairs[:, 1] * 53 + pairs[:, 0]] = table[codes]
                player = table.take(board)
            else:
                player = _strengths(mine, board)
            result -= _call_nets(terms, seat.ante_cents, player, dealer)
        results[seat.seat] = result
    return results


def _seed(round_id: str) -> int:
    return int.from_bytes(hashlib.sha256(round_id.encode()).digest()[:8], "big")


def _estimate(values: npt.NDArray[np.float64]) -> tuple[float, float]:
    """Mean and variance of one completion's result from (S, 6) values: S independent 4-card
    sets, each with its 6 splits. The variance is unbiased for the completion's variance plus
    the mean's squared standard error (var(set means) / S)."""
    s = len(values)
    mean = float(values.mean())
    set_means = values.mean(axis=1)
    error = float(set_means.var(ddof=1)) / s
    # E[mean of squares] - E[mean]^2 + var(mean) is the variance; + var(mean) once more.
    return mean, float((values * values).mean()) - mean * mean + 2 * error


def expected(kinds: RoundEvents, profile: Profile, meter_cents: int | None) -> RoundExpectation:
    """`GameSpec.expected`: the house's result per seat over the dealer's hole cards, the turn
    and the river, drawn from the cards no player holds (every seat's hole cards and the flop
    are given), with the decisions as played. A round with no call is exact (a fold loses the
    ante; the progressive is judged on the hole cards and the flop): variance 0. Otherwise
    `SAMPLES` 4-card sets are drawn, by a generator seeded from the round id (SHA-256), each
    valued over its 6 splits into turn/river and dealer hand; every seat is settled on the same
    completions, so the total's variance includes their correlation; the variances include
    the means' squared standard errors (`_estimate`)."""
    holdem = _holdem(profile)
    hand = hand_of(kinds, meter_cents)
    callers = [seat for seat in hand.seats if seat.decision is Decision.CALL]
    if not callers:
        fixed = _fixed_results(hand, holdem)
        return RoundExpectation(
            seats={s: Expectation(mean_cents=float(v), variance=0.0) for s, v in fixed.items()},
            total_variance=0.0,
        )
    unseen = _unseen([*hand.flop, *(c for seat in hand.seats for c in seat.hole)])
    rng = np.random.default_rng(_seed(hand.round_id))
    quads = distinct_draws(rng, unseen[None, :], (SAMPLES, 4))[0].astype(np.int64)
    rest = [tuple(i for i in range(4) if i not in split) for split in _SPLITS]
    completions = np.concatenate(
        [quads[:, [a, b, c, d]] for (a, b), (c, d) in zip(_SPLITS, rest, strict=True)]
    )  # split-major: row k * SAMPLES + i is set i's split k
    results = house_results(hand, holdem, completions)
    seats: dict[int, Expectation] = {}
    total = np.zeros(len(completions))
    for seat in hand.seats:
        values = results[seat.seat]
        total += values
        if seat.decision is Decision.CALL:
            mean, variance = _estimate(values.reshape(6, SAMPLES).T.astype(np.float64))
            seats[seat.seat] = Expectation(mean_cents=mean, variance=variance, samples=SAMPLES)
        else:
            seats[seat.seat] = Expectation(mean_cents=float(values[0]), variance=0.0)
    _, total_variance = _estimate(total.reshape(6, SAMPLES).T)
    return RoundExpectation(seats=seats, total_variance=total_variance)


def informed(kinds: RoundEvents, profile: Profile, meter_cents: int | None) -> dict[int, Informed]:
    """`GameSpec.informed`: each call/fold decision beside the legitimate choice
    (`legitimate_calls`, own cards and flop) and the full-information choice
    (`full_information_calls`, the dealer's hole cards known). Values (the player's expected
    net of ante and call, céntimos) know the dealer's hole cards: a call's is exact over the
    990 turns and rivers, a fold's is -ante; the progressive is the same either way, so left
    out. A round whose events do not give the dealer's 2 hole cards (every seat folded, so it
    still settles) cannot be judged: RoundError, which the evaluation keeps as the round's note,
    so the decisions' coverage test knows why they have no evidence."""
    holdem = _holdem(profile)
    hand = hand_of(kinds, meter_cents)
    if len(hand.dealer_hole) != 2:
        raise RoundError(
            f"round {hand.round_id}: the dealer's 2 hole cards are not in its events, so its "
            "decisions cannot be judged"
        )
    found: dict[int, Informed] = {}
    for seat in hand.seats:
        if seat.decision not in (Decision.CALL, Decision.FOLD):
            continue
        ante = seat.ante_cents
        legitimate = legitimate_calls(holdem, seat.hole, hand.flop, ante)
        called = full_information_value(holdem, seat.hole, hand.flop, hand.dealer_hole, ante)
        value = {Decision.CALL: called, Decision.FOLD: float(-ante)}
        chosen = Decision.CALL if legitimate else Decision.FOLD
        calls = call_share(holdem, seat.hole, hand.flop, ante)
        found[seat.seat] = Informed(
            played=seat.decision,
            legitimate=chosen,
            full_information=Decision.CALL if called > -ante else Decision.FOLD,
            gain_cents=value[seat.decision] - value[chosen],
            match_probability=calls if seat.decision is Decision.CALL else 1 - calls,
        )
    return found
