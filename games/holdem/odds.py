"""Casino Hold'em's game math: the ante and call simulated through the settlement engine itself,
with the randomness passed in by the caller; the progressive exactly by enumeration."""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import numpy.typing as npt

from events.models import Decision, Spot
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, qualifier_strength, settle_holdem
from games.odds_common import Report, needs_rng, shuffled_decks, summary
from rules.profile import Profile
from rules.rankings import HOLDEM, Category
from rules.settlement import Outcome, category_table

# Published figure quoted beside ours (Wizard of Odds' page on the game, as cited in issue 4).
PUBLISHED = {"casino_holdem_optimal": 0.0216}
_HOLDEM_CATEGORY = category_table(HOLDEM)


def game_math(profile: Profile, rng: np.random.Generator | None, rounds: int) -> Report:
    """The game's `GameSpec.odds`: `rounds` simulated rounds drawn from `rng`, the progressive
    exact."""
    if not isinstance(profile, HoldemProfile):
        raise ValueError(f"{profile.name} is not a Hold'em profile")
    return holdem_math(profile, rng=needs_rng(profile, rng), rounds=rounds)


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
    hands = np.array(list(itertools.combinations(range(52), 5)), dtype=np.uint8)
    categories = HOLDEM.categories_batch(HOLDEM.rank_batch(hands)).astype(np.int64)
    return tuple(int(n) for n in np.bincount(categories, minlength=len(Category)))


_SAMPLES_PER_DECISION = 11 * 18  # 18 shuffles of the 47 unseen cards, 11 completions each


def _monte_carlo_calls(
    profile: HoldemProfile,
    rng: np.random.Generator,
    holes: npt.NDArray[np.int64],
    flop: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """Near-optimal decisions for the seats of one round: call when the call's return, estimated
    over random turns, rivers and dealer hands drawn from the cards the player cannot see,
    beats folding (losing the ante). Returns per ante unit; ties push."""
    seats = len(holes)
    seen = np.zeros((seats, 52), dtype=bool)
    rows = np.arange(seats)[:, None]
    seen[rows, holes] = True
    seen[:, flop] = True
    unseen = np.nonzero(~seen)[1].reshape(seats, 47)
    shuffles = _SAMPLES_PER_DECISION // 11
    draws = rng.permuted(np.repeat(unseen[:, None, :], shuffles, axis=1), axis=2)[:, :, :44]
    draws = draws.reshape(seats, _SAMPLES_PER_DECISION, 4)  # turn, river, dealer's two cards
    k = _SAMPLES_PER_DECISION
    board = np.concatenate([np.broadcast_to(flop, (seats, k, 3)), draws[:, :, :2]], axis=2)
    player = np.concatenate([np.broadcast_to(holes[:, None, :], (seats, k, 2)), board], axis=2)
    dealer = np.concatenate([draws[:, :, 2:], board], axis=2)
    p = HOLDEM.rank_batch(player.reshape(-1, 7)).reshape(seats, k).astype(np.int64)
    d = HOLDEM.rank_batch(dealer.reshape(-1, 7)).reshape(seats, k).astype(np.int64)
    pays = _ante_pays(profile)[HOLDEM.categories_batch(p).astype(np.int64)]
    call = profile.call_multiple
    qualifies = d >= qualifier_strength(profile.dealer_qualifier)
    result = np.where(
        ~qualifies, pays, np.where(p > d, pays + call, np.where(p == d, 0, -1 - call))
    )
    calls: npt.NDArray[np.bool_] = result.mean(axis=1) > -1
    return calls


def _ante_pays(profile: HoldemProfile) -> npt.NDArray[np.int64]:
    return np.array([profile.ante_pays.get(Category(c)) or 0 for c in range(len(Category))])


def holdem_math(profile: HoldemProfile, *, rng: np.random.Generator, rounds: int) -> Report:
    """Ante + call by simulation (seven seats, near-optimal play) through `settle_holdem`; the
    progressive exactly."""
    ante = 1_000
    decks = shuffled_decks(rng, rounds, 52)
    per_round = np.empty(rounds)
    staked = 0
    calls = 0
    paid_lines = np.zeros(len(Category), dtype=np.int64)
    for r in range(rounds):
        deck = decks[r]
        flop = deck[16:19]
        holes = deck[2:16].reshape(7, 2)
        decisions = _monte_carlo_calls(profile, rng, holes, flop)
        calls += int(decisions.sum())
        cards = [int(x) for x in deck]
        seats = tuple(
            HoldemSeat(
                seat=seat,
                ante_cents=ante,
                progressive_cents=0,
                hole=(cards[2 * seat], cards[2 * seat + 1]),
                decision=Decision.CALL if decisions[seat - 1] else Decision.FOLD,
            )
            for seat in range(1, 8)
        )
        result = settle_holdem(
            HoldemRound(
                round_id=str(r),
                dealer_hole=(cards[0], cards[1]),
                board=tuple(cards[16:21]),
                seats=seats,
                meter_cents=profile.progressive.seed_cents,
            ),
            profile,
        )
        per_round[r] = sum(s.net_cents for s in result.settlements) / (ante * 7)
        staked += sum(s.wager_cents for s in result.settlements)
        for line in result.settlements:
            if line.spot is Spot.ANTE and line.outcome is Outcome.WIN:
                hand = seats[line.seat - 1].hole + tuple(cards[16:21])
                paid_lines[_HOLDEM_CATEGORY[HOLDEM.strength(hand)]] += 1
    edge, low, high = summary(per_round)
    hands = rounds * 7
    return {
        "game": "holdem",
        "profile": profile.name,
        "profile_version": profile.version,
        "method": f"simulation through settle_holdem: {rounds} rounds x 7 seats, 95 % interval; "
        "progressive by exact enumeration of the 2,598,960 five-card hands",
        "wagers": {
            "ante_call": {
                "house_edge": edge,
                "ci95": [low, high],
                "element_of_risk": edge * hands * ante / staked,
                "call_rate": calls / hands,
                "unit": "the ante",
                "strategy": "near-optimal: call when the call's return, estimated over "
                f"{_SAMPLES_PER_DECISION} random turn, river and dealer-hand completions of the "
                "unseen cards, beats folding",
                "ante_paid_frequencies": {
                    category.label: int(paid_lines[category]) / hands
                    for category, _ in profile.ante_pays.lines()
                },
                "published_house_edge": PUBLISHED["casino_holdem_optimal"],
                "published_strategy": "optimal (calls about 82 % of hands)",
            },
            "progressive": progressive_exact(profile),
        },
    }
