"""What the games' math shares (`games/<game>/odds.py`): the report's type, the published figures
a report is compared with, and the statistics of the simulated games. `games.odds.game_math` adds
the parts every report carries.

Published figures are data (`games/published_odds.toml`), each keyed by the rule fields that
change the wager's edge: a figure is quoted only beside a profile whose fields are exactly those.

A simulated game draws independent samples (what one sample is, each game says) until the 95 %
interval of the edge is at most `Simulation.precision` either side, or exactly
`Simulation.rounds` samples when that is given. Samples are grouped in strata whose exact
probabilities are known (e.g. the Hold'em player's five-card category after the flop); the edge
is the probability-weighted mean of the strata means (post-stratification, which only removes
the between-strata part of the variance) and its variance Σ p² s²/n over the strata.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rules.cards import RANKS

if TYPE_CHECKING:
    from rules.profile import Paytable, Profile

Report = dict[str, Any]

Z_95 = 1.959964
DEFAULT_PRECISION = 0.001  # ±0.1 percentage point of edge, the 95 % interval's half-width
PUBLISHED_FILE = Path(__file__).with_name("published_odds.toml")


# ---------------------------------------------------------------------------------------------
# published figures


@cache
def _published() -> tuple[dict[str, Any], ...]:
    with PUBLISHED_FILE.open("rb") as f:
        data = tomllib.load(f)
    return tuple(data.get("figure", ()))


def paytable_key(paytable: Paytable) -> dict[str, int]:
    """A paytable as a published-figure key: {category label: odds to 1}, paid lines only."""
    return {category.label: value for category, value in paytable.lines()}


def hand_key(cards: Sequence[int]) -> str:
    """A qualifying hand as a published-figure key: its ranks, highest first (`Q32`, `44532`)."""
    return "".join(RANKS[c >> 2] for c in sorted(cards, reverse=True))


def published_figure(game: str, wager: str, rules: Mapping[str, Any]) -> Report:
    """The published figure for this wager under exactly these rules, with its source; or a note
    that none is known for them (never a figure that belongs to other rules)."""
    for entry in _published():
        if entry["game"] == game and wager in entry["wagers"] and entry["rules"] == dict(rules):
            figure: Report = {
                "house_edge": entry["house_edge_percent"] / 100,
                "house_edge_percent": entry["house_edge_percent"],
            }
            if "element_of_risk_percent" in entry:
                figure["element_of_risk_percent"] = entry["element_of_risk_percent"]
            return figure | {
                "unit": entry["unit"],
                "strategy": entry["strategy"],
                "source": entry["source"],
                "rules": entry["rules"],
            }
    return {
        "house_edge": None,
        "note": "no published figure is known for these rules",
        "rules": dict(rules),
    }


def compare_exact(wager: Report, published: Report) -> Report:
    """Attach a published figure to an exact wager: it agrees when our edge, rounded as the
    source prints it (percent, two decimals), is the published one."""
    figure = published["house_edge_percent"] if published["house_edge"] is not None else None
    if figure is not None:
        published["agrees"] = round(wager["house_edge"] * 100, 2) == figure
    wager["published"] = published
    return wager


def compare_simulated(wager: Report, published: Report) -> Report:
    """Attach a published figure to a simulated wager: it agrees when it lies in our 95 %
    interval widened by the source's rounding (half a unit of its second decimal, in percent)."""
    if published["house_edge"] is not None:
        low, high = wager["ci95"]
        figure = published["house_edge"]
        published["agrees"] = low - 0.00005 <= figure <= high + 0.00005
    wager["published"] = published
    return wager


# ---------------------------------------------------------------------------------------------
# simulation


@dataclass(frozen=True, kw_only=True)
class Simulation:
    """How much to simulate: exactly `rounds` samples when given, else until the 95 % interval's
    half-width is at most `precision` (house edge per unit, 0.001 = 0.1 point). `progress` is
    told the fraction done after every batch."""

    rng: np.random.Generator
    rounds: int | None = None
    precision: float = DEFAULT_PRECISION
    progress: Callable[[float], None] | None = None
    batch: int = 20_000

    def __post_init__(self) -> None:
        if self.rounds is not None and self.rounds < 2:
            raise ValueError(f"a simulation needs at least 2 rounds, got {self.rounds}")
        if not self.precision > 0:
            raise ValueError(f"precision must be positive, got {self.precision}")


def needs_simulation(profile: Profile, simulation: Simulation | None) -> Simulation:
    """The caller's randomness and budget, which a simulated game cannot do without."""
    if simulation is None:
        raise ValueError(f"{profile.name}: simulation needs a random generator")
    return simulation


@dataclass
class Estimate:
    """Post-stratified mean of the samples' values, strata weighted by their exact probability."""

    weights: npt.NDArray[np.float64]  # exact probability of each stratum, summing to 1
    n: npt.NDArray[np.int64] = field(init=False)
    total: npt.NDArray[np.float64] = field(init=False)
    squares: npt.NDArray[np.float64] = field(init=False)

    def __post_init__(self) -> None:
        k = len(self.weights)
        self.n = np.zeros(k, dtype=np.int64)
        self.total = np.zeros(k)
        self.squares = np.zeros(k)

    def add(self, values: npt.NDArray[np.float64], strata: npt.NDArray[np.int64]) -> None:
        k = len(self.weights)
        self.n += np.bincount(strata, minlength=k)
        self.total += np.bincount(strata, weights=values, minlength=k)
        self.squares += np.bincount(strata, weights=values * values, minlength=k)

    @property
    def count(self) -> int:
        return int(self.n.sum())

    def _stratified(self) -> bool:
        """Whether every stratum with weight has two samples; until then the plain mean."""
        return bool((self.n[self.weights > 0] >= 2).all())

    def mean(self) -> float:
        """The estimate of the mean value (the player's return per unit)."""
        if not self._stratified():
            return float(self.total.sum() / max(self.count, 1))
        live = self.weights > 0
        return float((self.weights[live] * self.total[live] / self.n[live]).sum())

    def half_width(self) -> float:
        """Half-width of the 95 % interval of `mean`: Z · sqrt(Σ p² s²/n) over the strata, or
        Z · s/sqrt(n) over all samples until every stratum has two (infinite below two)."""
        if self.count < 2:
            return math.inf
        if not self._stratified():
            count, total = float(self.count), float(self.total.sum())
            variance = max(float(self.squares.sum()) - total * total / count, 0.0) / (count - 1)
            return Z_95 * math.sqrt(variance / count)
        live = self.weights > 0
        n = self.n[live].astype(np.float64)
        means = self.total[live] / n
        variances = np.maximum(self.squares[live] - n * means * means, 0.0) / (n - 1)
        return Z_95 * math.sqrt(float((self.weights[live] ** 2 * variances / n).sum()))


def simulate(
    simulation: Simulation,
    weights: npt.NDArray[np.float64],
    draw: Callable[[np.random.Generator, int], tuple[npt.NDArray[np.float64], npt.NDArray[Any]]],
) -> Estimate:
    """Draw batches of samples (`draw(rng, n)` -> each sample's value and stratum) until the
    budget of `simulation` is spent; the progress callback hears the fraction done."""
    estimate = Estimate(np.asarray(weights, dtype=np.float64))
    target = simulation.rounds
    while True:
        done = estimate.count
        if target is not None:
            if done >= target:
                break
            n = min(simulation.batch, target - done)
        else:
            half = estimate.half_width()
            if done >= 2 * simulation.batch and half <= simulation.precision:
                break
            n = simulation.batch
        values, strata = draw(simulation.rng, n)
        estimate.add(values, np.asarray(strata, dtype=np.int64))
        if simulation.progress is not None:
            simulation.progress(_fraction(estimate, simulation))
    if simulation.progress is not None:
        simulation.progress(1.0)
    return estimate


def _fraction(estimate: Estimate, simulation: Simulation) -> float:
    done = estimate.count
    if simulation.rounds is not None:
        return done / simulation.rounds
    half = estimate.half_width()
    if not math.isfinite(half):
        return 0.0
    needed = done * (half / simulation.precision) ** 2  # the interval shrinks as 1/sqrt(n)
    return min(1.0, done / max(needed, 2 * simulation.batch))


def simulated_wager(estimate: Estimate, simulation: Simulation, sample: str) -> Report:
    """The fields every simulated wager reports: the edge (minus the player's mean return),
    its 95 % interval and what it took."""
    edge, half = -estimate.mean(), estimate.half_width()
    return {
        "house_edge": edge,
        "ci95": [edge - half, edge + half],
        "ci95_half_width": half,
        "samples": estimate.count,
        "sample": sample,
        "stopping_rule": f"exactly {simulation.rounds} samples"
        if simulation.rounds is not None
        else f"until the 95 % half-width is at most {simulation.precision:.4%}",
    }


def distinct_draws(
    rng: np.random.Generator, pool: npt.NDArray[np.integer[Any]], shape: tuple[int, ...]
) -> npt.NDArray[np.uint8]:
    """Cards drawn without replacement from each row of `pool` (N, m): shape (N, *shape), the
    last axis distinct within each draw (a draw with a repeat is drawn again, so every set of
    distinct cards is equally likely)."""
    n, m = pool.shape
    k = shape[-1]
    flat = rng.integers(0, m, size=(n * math.prod(shape) // k, k), dtype=np.uint8)
    while True:
        repeats = np.zeros(len(flat), dtype=bool)
        for i in range(k):
            for j in range(i + 1, k):
                repeats |= flat[:, i] == flat[:, j]
        bad = np.flatnonzero(repeats)
        if not bad.size:
            break
        flat[bad] = rng.integers(0, m, size=(len(bad), k), dtype=np.uint8)
    drawn = np.take_along_axis(pool, flat.reshape(n, -1), axis=1)
    result: npt.NDArray[np.uint8] = drawn.astype(np.uint8, copy=False).reshape(n, *shape)
    return result


def shuffled_decks(rng: np.random.Generator, rounds: int, size: int) -> npt.NDArray[np.int64]:
    """`rounds` independently shuffled decks, one per row (the randomness is the caller's)."""
    return rng.permuted(np.tile(np.arange(size, dtype=np.int64), (rounds, 1)), axis=1)
