"""Tripóker's game math, exactly: every player hand against every dealer hand from the other 49
cards and, where the profile exposes a dealer card (TCP-A10b), against every exposed card."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from games.odds_common import (
    Report,
    Simulation,
    compare_exact,
    hand_key,
    paytable_key,
    published_figure,
)
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import plays_queen_six_four, qualifier_strength
from rules.profile import Profile
from rules.rankings import TRIPOKER, Category
from rules.rankings.tables import family_tables


def game_math(profile: Profile, simulation: Simulation | None) -> Report:
    """The game's `GameSpec.odds`: exact, so it needs no simulation."""
    if not isinstance(profile, TripokerProfile):
        raise ValueError(f"{profile.name} is not a Tripóker profile")
    return tripoker_exact(profile)


def published_rules(profile: TripokerProfile, wager: str) -> dict[str, object]:
    """The rule fields that change a wager's edge, as the key of the published figures: pair
    plus its paytable alone (settled on the player's hand; the fold forfeit is a note); the ante
    and play the ante bonus, the dealer's qualifier, the play bet and, for the player who uses
    it, the number of dealer cards exposed."""
    if wager == "pair_plus":
        return {"pair_plus": paytable_key(profile.pair_plus)}
    rules: dict[str, object] = {
        "ante_bonus": paytable_key(profile.ante_bonus),
        "dealer_qualifies_with": hand_key(profile.dealer_qualifier),
        "play_multiple": profile.play_multiple,
    }
    if wager == "ante_play_exposed_card_optimal":
        rules["exposed_dealer_cards"] = len(profile.exposed_dealer_cards)
    return rules


# The game's `GameSpec.spot_wagers`: the report's wager whose edge each bet spot carries: the
# ante its edge per ante by the queen-6-4 player; the play and ante bonus, decided with the ante,
# are inside it (None: they carry 0).
SPOT_WAGERS: dict[str, str | None] = {
    "ante": "ante_play",
    "play": None,
    "ante_bonus": None,
    "pair_plus": "pair_plus",
}


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
    )
    optimal = play_ev > -1
    wagers["ante_play_optimal"] = _ante_play(
        "play when the expected return of playing beats folding (all dealer cards unseen)",
        np.maximum(play_ev, -1.0),
        optimal,
        m,
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
        "unit": "per unit wagered on pair plus",
        "hit_frequencies": _frequencies(categories, profile.pair_plus.lines(), n_hands),
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
    for name, wager in wagers.items():
        compare_exact(wager, published_figure("tripoker", name, published_rules(profile, name)))
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
    )
    return report


def _frequencies(
    categories: npt.NDArray[np.int8], lines: tuple[tuple[Category, int], ...], total: int
) -> dict[str, float]:
    counts = np.bincount(categories.astype(np.int64), minlength=len(Category))
    return {category.label: float(counts[category]) / total for category, _ in lines}
