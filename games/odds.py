"""Game math of a rule profile: house edge of every wager and hit frequency of each paytable line.

Tripóker and the Hold'em progressive exactly by enumeration; Pai Gow and the Hold'em base game by
simulation through the settlement engine itself, with the randomness passed in by the caller.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from events.models import Decision, Spot
from games.holdem.rules import HoldemRound, HoldemSeat, settle_holdem
from games.holdem.rules import qualifier_strength as holdem_qualifier_strength
from games.pai_gow.rules import (
    DEALER,
    SEATS,
    HandSet,
    PaiGowRound,
    PaiGowSeat,
    house_way_batch,
    settle_pai_gow,
)
from games.tripoker.rules import plays_queen_six_four, qualifier_strength
from rules.profile import HoldemProfile, PaiGowProfile, Profile, TripokerProfile
from rules.rankings import HOLDEM, TRIPOKER, Category
from rules.rankings.tables import family_tables
from rules.settlement import Outcome, category_table

Report = dict[str, Any]

# Published figures quoted beside ours (Wizard of Odds' pages on each game, as cited in issue 4).
PUBLISHED = {
    "tripoker_ante_play_queen_six_four": 0.033730,
    "tripoker_ante_play_element_of_risk": 0.020147,
    "tripoker_pair_plus_40_30_6_4_1": 0.023167,
    "tripoker_exposed_card_optimal": -0.0348,
    "pai_gow_house_way_vs_house_way": 0.027,
    "casino_holdem_optimal": 0.0216,
}
Z_95 = 1.959964
_HOLDEM_CATEGORY = category_table(HOLDEM)


def game_math(profile: Profile, *, rng: np.random.Generator | None, rounds: int) -> Report:
    """The report `croupier odds` prints. `rng` and `rounds` drive the simulated parts (Pai Gow,
    the Hold'em base game); Tripóker needs neither."""
    if isinstance(profile, TripokerProfile):
        report = tripoker_exact(profile)
    else:
        if rng is None:
            raise ValueError(f"{profile.name}: simulation needs a random generator")
        if isinstance(profile, PaiGowProfile):
            report = pai_gow_simulation(profile, rng=rng, rounds=rounds)
        else:
            report = holdem_math(profile, rng=rng, rounds=rounds)
    report["house_edge_by_spot"] = house_edge_by_spot(report)
    negative = sorted(k for k, w in report["wagers"].items() if w["house_edge"] < 0)
    report["negative_house_edge"] = negative
    report["flags"] = [
        f"{name}: negative house edge ({report['wagers'][name]['house_edge']:.4%}) for a "
        f"player who follows this strategy: {report['wagers'][name]['strategy']}"
        for name in negative
    ]
    return report


def house_edge_by_spot(report: Report) -> dict[str, float]:
    """Edges per unit wagered on each bet spot, for theoretical win (DEF-ACC2: Σ wager × edge).

    The play and call bets and the ante bonus are decided with the ante and are already in the
    ante's edge (which is per ante), so they carry 0. Tripóker uses the queen-6-4 player; the
    progressive its edge at the seed meter."""
    wagers = report["wagers"]
    if report["game"] == "tripoker":
        return {
            "ante": wagers["ante_play"]["house_edge"],
            "play": 0.0,
            "ante_bonus": 0.0,
            "pair_plus": wagers["pair_plus"]["house_edge"],
        }
    if report["game"] == "holdem":
        return {
            "ante": wagers["ante_call"]["house_edge"],
            "call": 0.0,
            "progressive": wagers["progressive"]["house_edge"],
        }
    return {"main": wagers["main"]["house_edge"]}


# ---------------------------------------------------------------------------------------------
# Tripóker: exact


@dataclass(frozen=True, kw_only=True, slots=True)
class _Groups:
    """Sorted strengths of every 3-card hand, of those holding a card, and of those holding two
    given cards, laid out so one `searchsorted` counts hands below a threshold in any group."""

    hands: npt.NDArray[np.int64]  # (22100, 3) cards, ascending
    strength: npt.NDArray[np.int64]  # (22100,)
    all_sorted: npt.NDArray[np.int64]
    by_card: npt.NDArray[np.int64]  # flattened rows card*OFFSET + strength, sorted
    by_pair: npt.NDArray[np.int64]  # flattened rows (a*52+b)*OFFSET + strength, sorted
    triple: npt.NDArray[np.int64]  # (52, 52, 52) strength of the hand {a, b, c}

    OFFSET = 1 << 16
    PER_CARD = 1275  # C(51, 2) hands hold a given card
    PER_PAIR = 50  # hands that hold two given cards

    def below_all(self, t: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return np.searchsorted(self.all_sorted, t).astype(np.int64)

    def below_card(
        self, card: npt.NDArray[np.int64], t: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        return np.searchsorted(self.by_card, card * self.OFFSET + t) - card * self.PER_CARD

    def below_pair(
        self, a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], t: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        low, high = np.minimum(a, b), np.maximum(a, b)
        row = low * 52 + high
        start = np.searchsorted(self.by_pair, row * self.OFFSET)
        return np.searchsorted(self.by_pair, row * self.OFFSET + t) - start


@cache
def _tripoker_groups() -> _Groups:
    hands = np.array(list(itertools.combinations(range(52), 3)), dtype=np.int64)
    strength = TRIPOKER.rank_batch(hands).astype(np.int64)
    off = _Groups.OFFSET
    card_keys = np.concatenate([hands[:, k] * off + strength for k in range(3)])
    pair_keys = np.concatenate(
        [(hands[:, i] * 52 + hands[:, j]) * off + strength for i, j in ((0, 1), (0, 2), (1, 2))]
    )
    triple = np.full((52, 52, 52), -1, dtype=np.int64)
    for a, b, c in itertools.permutations(range(3)):
        triple[hands[:, a], hands[:, b], hands[:, c]] = strength
    return _Groups(
        hands=hands,
        strength=strength,
        all_sorted=np.sort(strength),
        by_card=np.sort(card_keys),
        by_pair=np.sort(pair_keys),
        triple=triple,
    )


def _dealer_counts(
    below: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.int64]],
    total: int,
    player: npt.NDArray[np.int64],
    qualifier: int,
) -> tuple[npt.NDArray[np.int64], ...]:
    """(dealer does not qualify, player wins, player loses) counted over the dealer hands that
    `below(t)` (those with strength < t) ranges over; the rest are ties."""
    q = np.full_like(player, qualifier)
    not_qualified = below(q)
    wins = below(np.maximum(player, q)) - not_qualified
    losses = total - below(np.maximum(player + 1, q))
    return not_qualified, wins, losses


def tripoker_exact(profile: TripokerProfile) -> Report:
    """Exact house edges: every player hand against every dealer hand from the other 49 cards
    and, when the profile exposes a dealer card (TCP-A10b), against every exposed card."""
    g = _tripoker_groups()
    n_hands = len(g.hands)
    categories = family_tables(TRIPOKER.family).categories[g.strength]
    bonus = np.array([profile.ante_bonus.get(Category(int(c))) or 0 for c in range(len(Category))])[
        categories
    ]
    m = profile.play_multiple
    qualifier = qualifier_strength(profile.dealer_qualifier)
    a, b, c = g.hands[:, 0], g.hands[:, 1], g.hands[:, 2]
    s = g.strength

    # Dealer hands disjoint from the player's, by inclusion-exclusion over the shared cards.
    def below(t: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return (
            g.below_all(t)
            - g.below_card(a, t)
            - g.below_card(b, t)
            - g.below_card(c, t)
            + g.below_pair(a, b, t)
            + g.below_pair(a, c, t)
            + g.below_pair(b, c, t)
            - (s < t)
        )

    total = math.comb(49, 3)
    nq, wins, losses = _dealer_counts(below, total, s, qualifier)
    # Per ante unit: not qualified -> ante 1:1, play pushes; else both 1:1, or both lost.
    play_ev = bonus + (nq + (1 + m) * wins - (1 + m) * losses) / total
    q64 = np.array([plays_queen_six_four(tuple(h)) for h in g.hands[:, ::-1]])
    wagers: Report = {}
    wagers["ante_play"] = _ante_play(
        "play queen-6-4 or better, else fold",
        np.where(q64, play_ev, -1.0),
        q64,
        m,
        PUBLISHED["tripoker_ante_play_queen_six_four"],
    )
    optimal = play_ev > -1
    wagers["ante_play_optimal"] = _ante_play(
        "play when the expected return of playing beats folding (all dealer cards unseen)",
        np.maximum(play_ev, -1.0),
        optimal,
        m,
        None,
    )
    if profile.exposed_dealer_cards:
        if len(profile.exposed_dealer_cards) != 1:
            raise ValueError(f"{profile.name}: game math handles one exposed dealer card")
        wagers["ante_play_exposed_card_optimal"] = _exposed_card(g, bonus, m, qualifier)
    pays = np.array(
        [
            -1 if (v := profile.pair_plus.get(Category(int(c)))) is None else v
            for c in range(len(Category))
        ]
    )[categories]
    wagers["pair_plus"] = {
        "house_edge": float(-pays.mean()),
        "strategy": "none: a pair-plus-only player stays in, settled on the player's hand",
        "hit_frequencies": _frequencies(categories, profile.pair_plus.lines(), n_hands),
        "published_house_edge": PUBLISHED["tripoker_pair_plus_40_30_6_4_1"],
    }
    if profile.fold_forfeits_pair_plus:  # TCP-A11b: beside an ante, a fold loses it too
        forfeit_edge = float(-np.where(q64, pays, -1).mean())
        wagers["pair_plus"]["with_ante_note"] = (
            f"with an ante, folding below queen-6-4 forfeits it: house edge {forfeit_edge:.4%} "
            "(a queen-6-4 player never folds a paying hand)"
        )
    wagers["ante_play"]["ante_bonus_frequencies"] = _frequencies(
        categories, profile.ante_bonus.lines(), n_hands
    )
    return {
        "game": "tripoker",
        "profile": profile.name,
        "profile_version": profile.version,
        "method": "exact enumeration: 22,100 player hands x 18,424 dealer hands"
        + (" x 49 exposed cards" if profile.exposed_dealer_cards else ""),
        "wagers": wagers,
    }


def _ante_play(
    strategy: str,
    returns: npt.NDArray[np.float64],
    plays: npt.NDArray[np.bool_],
    multiple: int,
    published: float | None,
) -> Report:
    ev = float(returns.mean())
    play_rate = float(plays.mean())
    report: Report = {
        "house_edge": -ev,
        "element_of_risk": -ev / (1 + multiple * play_rate),
        "play_rate": play_rate,
        "strategy": strategy,
        "unit": "the ante",
    }
    if published is not None:
        report["published_house_edge"] = published
        report["published_element_of_risk"] = PUBLISHED["tripoker_ante_play_element_of_risk"]
    return report


def _exposed_card(
    g: _Groups, bonus: npt.NDArray[np.int64], multiple: int, qualifier: int
) -> Report:
    """The player sees one dealer card (TCP-A10b) and plays when that pays better than folding."""
    n = len(g.hands)
    held = np.zeros((n, 52), dtype=bool)
    held[np.arange(n)[:, None], g.hands] = True
    exposed = np.nonzero(~held)[1].reshape(n, 49)
    rows = np.repeat(np.arange(n), 49)
    e = exposed.ravel()
    a, b, c = (np.repeat(g.hands[:, k], 49) for k in range(3))
    s = g.strength[rows]

    # Dealer hands holding the exposed card and none of the player's: 1,128 = C(48, 2).
    def below(t: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return (
            g.below_card(e, t)
            - g.below_pair(e, a, t)
            - g.below_pair(e, b, t)
            - g.below_pair(e, c, t)
            + (g.triple[e, a, b] < t)
            + (g.triple[e, a, c] < t)
            + (g.triple[e, b, c] < t)
        )

    total = math.comb(48, 2)
    nq, wins, losses = _dealer_counts(below, total, s, qualifier)
    play_ev = bonus[rows] + (nq + (1 + multiple) * wins - (1 + multiple) * losses) / total
    plays = play_ev > -1
    report = _ante_play(
        "play when, given the dealer's exposed card, playing returns more than folding",
        np.maximum(play_ev, -1.0),
        plays,
        multiple,
        None,
    )
    report["published_house_edge"] = PUBLISHED["tripoker_exposed_card_optimal"]
    return report


def _frequencies(
    categories: npt.NDArray[np.int8], lines: tuple[tuple[Category, int], ...], total: int
) -> dict[str, float]:
    counts = np.bincount(categories.astype(np.int64), minlength=len(Category))
    return {category.label: float(counts[category]) / total for category, _ in lines}


# ---------------------------------------------------------------------------------------------
# Simulations through the engine


def _summary(per_round: npt.NDArray[np.float64]) -> tuple[float, float, float]:
    """House edge (minus the mean player return) and its 95 % interval over rounds."""
    mean = float(per_round.mean())
    half = Z_95 * float(per_round.std(ddof=1)) / math.sqrt(len(per_round))
    return -mean, -mean - half, -mean + half


def _decks(rng: np.random.Generator, rounds: int, size: int) -> npt.NDArray[np.int64]:
    """`rounds` independently shuffled decks, one per row (the randomness is the caller's)."""
    return rng.permuted(np.tile(np.arange(size, dtype=np.int64), (rounds, 1)), axis=1)


def pai_gow_simulation(profile: PaiGowProfile, *, rng: np.random.Generator, rounds: int) -> Report:
    """Six players set their hands by the house way against the dealer's house way; each round
    is settled by `settle_pai_gow` (commission included)."""
    wager = 10_000  # S/ 100: the 5 % commission is exact in céntimos
    decks = _decks(rng, rounds, 53)
    groups = decks[:, :49].reshape(rounds * 7, 7)
    set_hands = house_way_batch(groups, profile.house_way).reshape(rounds, 7, 7)
    per_round = np.empty(rounds)
    outcomes: dict[str, int] = {}
    for r in range(rounds):
        seats = tuple(
            PaiGowSeat(
                seat=seat,
                wager_cents=wager,
                cards=tuple(int(x) for x in decks[r, seat * 7 : seat * 7 + 7]),
                hand=HandSet(
                    high=tuple(int(x) for x in set_hands[r, seat, :5]),
                    low=tuple(int(x) for x in set_hands[r, seat, 5:]),
                ),
            )
            for seat in SEATS
        )
        dealer = tuple(int(x) for x in decks[r, DEALER * 7 : DEALER * 7 + 7])
        result = settle_pai_gow(
            PaiGowRound(round_id=str(r), dealer_cards=dealer, seats=seats), profile
        )
        per_round[r] = sum(s.net_cents for s in result.settlements) / (wager * len(SEATS))
        for s in result.settlements:
            outcomes[s.outcome.value] = outcomes.get(s.outcome.value, 0) + 1
    edge, low, high = _summary(per_round)
    hands = rounds * len(SEATS)
    return {
        "game": "pai-gow",
        "profile": profile.name,
        "profile_version": profile.version,
        "method": f"simulation through settle_pai_gow: {rounds} rounds x 6 seats, 95 % interval",
        "wagers": {
            "main": {
                "house_edge": edge,
                "ci95": [low, high],
                "strategy": f"player sets by the house way ({profile.house_way.name}) against "
                "the dealer banking with the house way",
                "outcome_frequencies": {k: v / hands for k, v in sorted(outcomes.items())},
                "published_house_edge": PUBLISHED["pai_gow_house_way_vs_house_way"],
            }
        },
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
    qualifies = d >= holdem_qualifier_strength(profile.dealer_qualifier)
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
    decks = _decks(rng, rounds, 52)
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
    edge, low, high = _summary(per_round)
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
