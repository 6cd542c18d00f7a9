"""Casino Hold'em's game math: the ante and call simulated with the randomness passed in by the
caller, each sample settled as `settle_holdem` settles a seat (`call_results`; tests check the two
agree); the progressive exactly by enumeration."""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import numpy.typing as npt

from games.holdem.profile import HoldemProfile
from games.holdem.rules import qualifier_strength
from games.odds_common import (
    Report,
    Simulation,
    compare_simulated,
    distinct_draws,
    hand_key,
    needs_simulation,
    paytable_key,
    published_figure,
    simulate,
    simulated_wager,
)
from rules.profile import Profile
from rules.rankings import HOLDEM, Category
from rules.rankings.tables import (
    CARD_BITS,
    CARD_KEYS,
    PAIR_BITS,
    PAIR_KEYS,
    SUIT_BITS,
    SUIT_MASK,
    size_tables,
)


def game_math(profile: Profile, simulation: Simulation | None) -> Report:
    """The game's `GameSpec.odds`: the ante and call simulated as `simulation` says, the
    progressive exact."""
    if not isinstance(profile, HoldemProfile):
        raise ValueError(f"{profile.name} is not a Hold'em profile")
    return holdem_math(profile, needs_simulation(profile, simulation))


# The game's `GameSpec.spot_wagers`: the ante its edge per ante, the call inside it (decided with
# the ante, None: it carries 0); the progressive its edge at the seed meter.
SPOT_WAGERS: dict[str, str | None] = {
    "ante": "ante_call",
    "call": None,
    "progressive": "progressive",
}


def progressive_exact(profile: HoldemProfile, meter_cents: int | None = None) -> Report:
    """The progressive wager, exactly: it is judged on a uniformly dealt 5-card hand (hole +
    flop). The edge depends on the meter; given at the seed unless `meter_cents` is given."""
    table = profile.progressive
    meter = table.seed_cents if meter_cents is None else meter_cents
    counts = _five_card_counts()
    total = math.comb(52, 5)
    wager = table.wager_cents
    ev = 0.0
    frequencies = {}
    hit = 0
    for category in Category:
        share = table.meter_pays_bp.get(category)
        fixed = table.fixed_pays_cents.get(category)
        if share is None and fixed is None:
            continue
        paid = meter * share // 10_000 if share is not None else fixed or 0
        frequencies[category.label] = counts[category] / total
        ev += counts[category] * paid
        hit += counts[category]
    ev = (ev - (total - hit) * wager) / total
    return {
        "house_edge": -ev / wager,
        "meter_cents": meter,
        "strategy": "none (judged on the hole cards and the flop, paid after a fold too)",
        "hit_frequencies": frequencies,
        "note": "contributions to the meter are not deducted here; the edge falls as the "
        "meter grows",
    }


@cache
def _five_card_counts() -> tuple[int, ...]:
    """Exact count of each Hold'em category over all C(52, 5) five-card hands."""
    categories = HOLDEM.categories_batch(_five_card_strengths()).astype(np.int64)
    return tuple(int(n) for n in np.bincount(categories, minlength=len(Category)))


@cache
def _five_card_strengths() -> npt.NDArray[np.int64]:
    """The strength of each of the C(52, 5) five-card hands, sorted."""
    hands = np.array(list(itertools.combinations(range(52), 5)), dtype=np.uint8)
    return np.sort(HOLDEM.rank_batch(hands).astype(np.int64))


# The call decision: the call's mean return over random completions of the unseen cards (turn,
# river, the dealer's two), against folding's -1; a second stage when the first is within three
# standard errors of folding.
STAGES = (48, 200, 800, 3_200)
# After each stage, a hand whose mean is within this many standard errors of folding's -1 goes
# on to the next stage (the last band is narrower: measured against 12,800 more completions,
# these decisions cost the player about 0.02 point, the same as a band of 3 at twice the time).
BANDS = (3.0, 3.0, 1.5, 0.0)
EVALUATION = 64  # fresh completions that value a called hand
ANTE_CENTS = 1_000
CHUNK = 2_000  # hands simulated at once: the arrays of their completions stay small
# Strata: the player's five cards after the flop (hole + flop, a uniform five-card hand), by
# their strength, in bins of about equal probability; each bin's probability is exact.
STRATA = 64


def published_rules(profile: HoldemProfile) -> dict[str, object]:
    """The rule fields that change the ante and call's edge, as the key of published figures."""
    return {
        "ante_pays": paytable_key(profile.ante_pays),
        "dealer_qualifies_with": hand_key(profile.dealer_qualifier),
        "call_multiple": profile.call_multiple,
        # the published figures are for uncapped play: a cap that cuts the simulated ante's best
        # win (THP-A2c) changes the edge
        "payout_cap_binds": profile.payout_cap_cents
        < (max(v for _, v in profile.ante_pays.lines()) + profile.call_multiple) * ANTE_CENTS,
    }


def call_results(
    profile: HoldemProfile,
    player: npt.NDArray[np.int64],
    dealer: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """A calling player's net per ante from 7-card strengths, as `settle_holdem` settles a
    called seat with an ante of `ANTE_CENTS`: the dealer not qualifying pays the ante by the
    paytable and pushes the call; qualifying, the better hand wins both (the ante by the
    paytable, the call 1:1), equal hands push both; winnings capped (THP-A2c)."""
    pays = _ante_pays(profile)[HOLDEM.categories_batch(player).astype(np.int64)]
    call = profile.call_multiple
    qualifies = dealer >= qualifier_strength(profile.dealer_qualifier)
    wins = np.where(qualifies, pays + call, pays) * ANTE_CENTS
    wins = np.minimum(wins, profile.payout_cap_cents)
    cents = np.where(
        qualifies & (player <= dealer),
        np.where(player == dealer, 0, -(1 + call) * ANTE_CENTS),
        wins,
    )
    result: npt.NDArray[np.float64] = cents / ANTE_CENTS
    return result


def _completions(
    profile: HoldemProfile,
    rng: np.random.Generator,
    seen: npt.NDArray[np.int64],
    unseen: npt.NDArray[np.uint8],
    samples: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """For each hand (hole + flop in `seen`), `samples` random turns, rivers and dealer hands
    from its unseen cards: the call's results (N, samples) and the player's 7-card strengths.

    Strengths come from the rankings' own tables (`rules.rankings.tables`, as `rank_batch`
    reads them), the cards every sample of a hand shares summed once: the player's hole and
    flop, the dealer's flop, the turn and river once for both."""
    draws = distinct_draws(rng, unseen, (samples, 4)).astype(np.int64)
    board = draws[..., 0] * 53 + draws[..., 1]  # turn, river, as an index of PAIR_KEYS
    hole = draws[..., 2] * 53 + draws[..., 3]  # the dealer's two
    mine = CARD_KEYS.take(seen).sum(axis=1), CARD_BITS.take(seen).sum(axis=1)
    flop = CARD_KEYS.take(seen[:, 2:]).sum(axis=1), CARD_BITS.take(seen[:, 2:]).sum(axis=1)
    p = _seven_card_strengths(mine, (board,))
    d = _seven_card_strengths(flop, (board, hole))
    return call_results(profile, p, d), p


def _seven_card_strengths(
    shared: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    pairs: tuple[npt.NDArray[np.int64], ...],
) -> npt.NDArray[np.int64]:
    """HOLDEM strengths (N, S) of 7-card hands: each hand's `shared` rank-key and card-bit sums
    (N,) of 3 or 5 cards, plus card pairs (N, S) given as `a * 53 + b`; `rank_batch`'s lookup."""
    tables = size_tables(HOLDEM.family, 7)
    keys, bits = shared
    totals = keys[:, None] + PAIR_KEYS.take(pairs[0])
    for pair in pairs[1:]:
        totals += PAIR_KEYS.take(pair)
    flat = totals.ravel()
    strengths = tables.rank.take(flat >> SUIT_BITS).astype(np.int64)
    suits = tables.flush_suit.take(flat & SUIT_MASK)
    rows = np.flatnonzero(suits >= 0)
    if rows.size:
        per_hand = totals.shape[1]
        suited_bits = bits.take(rows // per_hand)
        for pair in pairs:
            suited_bits = suited_bits + PAIR_BITS.take(pair.ravel().take(rows))
        shift = 13 * suits.take(rows).astype(np.int64)
        suited = ((suited_bits >> shift) & 0x1FFF) | ((suited_bits >> 52) << 13)
        strengths[rows] = np.maximum(strengths[rows], tables.flush.take(suited))
    result: npt.NDArray[np.int64] = strengths.reshape(totals.shape)
    return result


def decide_calls(
    profile: HoldemProfile,
    rng: np.random.Generator,
    seen: npt.NDArray[np.int64],
    unseen: npt.NDArray[np.uint8],
) -> npt.NDArray[np.bool_]:
    """Near-optimal decisions for hands (hole + flop): call when the call's mean return over
    random completions beats folding (-1 ante). `STAGES[0]` completions first; a hand whose
    mean is within `BANDS[i]` standard errors of -1 after stage i gets the next stage's
    completions as well; after the last stage, the mean decides."""
    rows = np.arange(len(seen))
    total = np.zeros(len(seen))
    squares = np.zeros(len(seen))
    drawn = 0
    rows_done: list[int] = []
    calls: npt.NDArray[np.bool_] = np.zeros(len(seen), dtype=bool)
    for stage in STAGES:
        results, _ = _completions(profile, rng, seen[rows], unseen[rows], stage)
        total[rows] += results.sum(axis=1)
        squares[rows] += (results * results).sum(axis=1)
        drawn += stage
        mean = total[rows] / drawn
        calls[rows] = mean > -1
        variance = np.maximum(squares[rows] / drawn - mean * mean, 0.0) * drawn / (drawn - 1)
        rows = rows[np.abs(mean + 1) <= BANDS[len(rows_done)] * np.sqrt(variance / drawn)]
        rows_done.append(stage)
        if not rows.size:
            break
    return calls


def _ante_pays(profile: HoldemProfile) -> npt.NDArray[np.int64]:
    return np.array([profile.ante_pays.get(Category(c)) or 0 for c in range(len(Category))])


@cache
def _strata() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The strata's lower strength bounds (after the first) and exact probabilities: the
    five-card strengths cut at `STRATA` quantiles of their exact distribution."""
    strengths = _five_card_strengths()
    cuts = np.unique(strengths[np.linspace(0, len(strengths), STRATA + 1)[1:-1].astype(np.int64)])
    counts = np.diff(np.searchsorted(strengths, cuts), prepend=0, append=len(strengths))
    weights: npt.NDArray[np.float64] = counts / len(strengths)
    return cuts, weights


def holdem_math(profile: HoldemProfile, simulation: Simulation) -> Report:
    """Ante + call by simulation: one sample per player hand (two hole cards and the flop from a
    shuffled deck), decided near-optimally, a call valued by its mean over `EVALUATION` fresh
    completions (a fold is exactly -1); strata by the strength of the player's five cards after
    the flop. The progressive
    exactly."""
    calls_total = 0
    paid = np.zeros(len(Category))  # expected count of ante wins by paying category
    deck = np.arange(52, dtype=np.int64)

    def draw(
        rng: np.random.Generator, n: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        parts = [draw_chunk(rng, min(CHUNK, n - start)) for start in range(0, n, CHUNK)]
        return np.concatenate([v for v, _ in parts]), np.concatenate([s for _, s in parts])

    def draw_chunk(
        rng: np.random.Generator, n: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        nonlocal calls_total
        seen = distinct_draws(rng, np.broadcast_to(deck, (n, 52)), (5,)).astype(np.int64)
        mask = np.ones((n, 52), dtype=bool)
        mask[np.arange(n)[:, None], seen] = False
        unseen = np.nonzero(mask)[1].astype(np.uint8).reshape(n, 47)
        calls = decide_calls(profile, rng, seen, unseen)
        values = np.full(n, -1.0)
        called = np.flatnonzero(calls)
        if called.size:
            results, p = _completions(profile, rng, seen[called], unseen[called], EVALUATION)
            values[called] = results.mean(axis=1)
            won = results > 0
            paid[:] += (
                np.bincount(
                    HOLDEM.categories_batch(p[won]).astype(np.int64), minlength=len(Category)
                )
                / EVALUATION
            )
        calls_total += int(calls.sum())
        strata = np.searchsorted(cuts, HOLDEM.rank_batch(seen).astype(np.int64), side="right")
        return values, strata

    cuts, weights = _strata()
    estimate = simulate(simulation, weights, draw)
    hands = estimate.count
    wager = simulated_wager(
        estimate,
        simulation,
        "one player hand (hole cards and flop dealt from a shuffled deck; "
        f"a call valued over {EVALUATION} fresh completions, a fold exactly -1), strata by the "
        f"strength of the player's five cards after the flop ({STRATA} bins), each weighted by "
        "its exact probability",
    )
    edge = wager["house_edge"]
    wager |= {
        "unit": "per ante (the call's money included in the result, not in the unit)",
        "element_of_risk": edge / (1 + profile.call_multiple * calls_total / hands),
        "call_rate": calls_total / hands,
        "strategy": "near-optimal: call when the call's mean return over random turn, river "
        f"and dealer-hand completions of the unseen cards beats folding: {STAGES[0]} "
        "completions, then "
        + ", ".join(
            f"{more} more while within {band:g} standard errors of folding"
            for more, band in zip(STAGES[1:], BANDS, strict=False)
        ),
        "ante_paid_frequencies": {
            category.label: float(paid[category]) / hands
            for category, _ in profile.ante_pays.lines()
        },
    }
    compare_simulated(wager, published_figure("holdem", "ante_call", published_rules(profile)))
    return {
        "game": "holdem",
        "profile": profile.name,
        "profile_version": profile.version,
        "method": f"simulation of {hands} player hands, settled as settle_holdem settles a seat, "
        "95 % interval; progressive by exact enumeration of the 2,598,960 five-card hands",
        "wagers": {
            "ante_call": wager,
            "progressive": progressive_exact(profile),
        },
    }
