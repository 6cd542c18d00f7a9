"""The hold test's expectation for Pai Gow (`GameSpec.expected`, issue 18): the house's expected
result of every player position, and its variance, over the dealer's seven cards, given every
player's seven cards and settings as played.

The method. Under honest dealing the dealer's seven cards are uniform over the 7-card subsets of
the cards no betting position holds (53 - 7 x positions: the other groups and the four leftover
cards are as unseen as the dealer's). Enumerating them is out of reach (C(46, 7) = 53.5 million
for one player), so `SAMPLES` dealer hands are drawn without replacement from those cards by a
numpy generator seeded with the SHA-256 of the round id (the same round always gets the same
draws). Each draw is set ONCE by the profile's house way (`house_way_batch`, PGP-A13c) and
settled against every position, so the positions of a round are evaluated on the same joint
draws and the round's total carries their correlation. A position's outcome depends on the
dealer only through the strengths of the dealer's two hands, so each draw is settled by
comparing strengths (the engine's own verdict table, `rules._VERDICTS`: copies to the banker,
PGP-A14b) and paying as `settle_pai_gow` pays (even money less the commission, PGP-A17c,
DEF-M2). A foul, a surrender or no hands set loses whatever the dealer holds (PGP-A15, A16a,
DEF-PGP4): such a position is exact (`samples=None`, variance 0). Tests check every draw against
`round.settle` with the dealer's group replaced by the draw.

Why `SAMPLES` = 500: setting a hand by the house way costs about 20 µs the first time a hand's
shape is met (shapes are remembered), so a round takes about 4 ms once the shapes are warm (5 to
10 ms before; measured on six-seat rounds); the mean's standard error is 1/sqrt(500) = 4.5 % of
a position's standard deviation, and adding its square to the variance (as `Expectation` asks)
inflates it by only 0.2 %. A position whose 500 draws all agree (about 1 % of sampled ones: a
hand that loses to, or pushes, nearly every dealer hand) would get a sample variance of 0, so
the variance is floored at that of the results' frequencies smoothed by half a count on each
possible result (`_smoothed_variance`); the round's variance adds the same floors.

Bettors: from events a round is always settled with the dealer banking (`round.settle` builds no
player-banker), so every position is a seat's player bet (`fct_positions`' grouping by seat and
bettor gives one player position per seat); there is no house or banker position to report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from games.base import Expectation, RoundEvents, RoundExpectation, started
from games.pai_gow import round as pai_gow_round
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import (
    _VERDICTS,
    GROUP_SIZE,
    PaiGowSeat,
    _verdicts,
    house_way_batch,
)
from rules.cards import JOKER
from rules.money import commission_cents
from rules.profile import Profile
from rules.rankings import PAI_GOW_HIGH, PAI_GOW_LOW
from rules.settlement import Outcome, strengths_with

SAMPLES = 500  # dealer hands drawn per round (see the module's docstring)
_DECK = np.arange(JOKER + 1, dtype=np.int64)
# Below every hand's strength: against it a compared hand wins both hands, so a seat whose
# verdict is not a win has lost before any comparison (a foul, a surrender, no hands set).
_BELOW_ANY = -1


@dataclass(frozen=True, slots=True)
class Draws:
    """A round's sampled dealer hands and what each would have made of every position.

    `dealer`: (K, 7) the dealer's cards of each draw; `house`: (K, S) the house's result in
    céntimos of each position (`seats`, in seat order) against each draw; `exact`: the
    positions whose result does not depend on the dealer's cards; `possible`: the results each
    position can have."""

    seats: tuple[int, ...]
    dealer: npt.NDArray[np.int64]
    house: npt.NDArray[np.int64]
    exact: tuple[bool, ...]
    possible: tuple[tuple[int, ...], ...]


def round_seed(round_id: str) -> int:
    """The generator's seed: the first 8 bytes of the round id's SHA-256 (stable across runs
    and machines, unlike `hash`)."""
    return int.from_bytes(hashlib.sha256(round_id.encode()).digest()[:8], "big")


def positions(kinds: RoundEvents) -> list[PaiGowSeat]:
    """The round's betting positions as `round.settle` builds them, in seat order."""
    return pai_gow_round.seats(kinds, *pai_gow_round.deal(kinds))


def draw_dealer_hands(
    seats: Sequence[PaiGowSeat], round_id: str, samples: int = SAMPLES
) -> npt.NDArray[np.int64]:
    """(samples, 7): dealer hands drawn uniformly, without replacement within a hand, from the
    cards no position holds; the generator is seeded by `round_seed(round_id)`."""
    held = np.array([c for seat in seats for c in seat.cards], dtype=np.int64)
    unseen = np.setdiff1d(_DECK, held)  # sorted: the draws depend only on the set
    rng = np.random.default_rng(round_seed(round_id))
    picks = np.argsort(rng.random((samples, len(unseen))), axis=1)[:, :GROUP_SIZE]
    dealt: npt.NDArray[np.int64] = unseen[picks]
    return dealt


def settle_draws(
    seats: Sequence[PaiGowSeat], dealer: npt.NDArray[np.int64], profile: PaiGowProfile
) -> tuple[npt.NDArray[np.int64], tuple[bool, ...], tuple[tuple[int, ...], ...]]:
    """(K, S): the house's result of each position against each dealer hand of `dealer`
    (K, 7), set by the house way, settled as `settle_pai_gow` settles a dealer-banked round;
    which positions are decided without the dealer's cards; and the results each position can
    have (win, push, loss; one for an exact position)."""
    set_cards = house_way_batch(dealer, profile.house_way)
    banker_high = PAI_GOW_HIGH.rank_batch(set_cards[:, :5]).astype(np.int64)
    banker_low = PAI_GOW_LOW.rank_batch(set_cards[:, 5:]).astype(np.int64)
    rate, unit = profile.commission_rate_bp, profile.commission_unit_cents
    house = np.zeros((len(dealer), len(seats)), dtype=np.int64)
    exact: list[bool] = []
    possible: list[tuple[int, ...]] = []
    verdicts = _verdicts(seats, _BELOW_ANY, _BELOW_ANY)
    for s, (seat, (outcome, _)) in enumerate(zip(seats, verdicts, strict=True)):
        wager = seat.wager_cents
        if outcome is not Outcome.WIN or seat.hand is None:  # lost whatever the dealer holds
            house[:, s] = wager
            exact.append(True)
            possible.append((wager,))
            continue
        (high,) = strengths_with(PAI_GOW_HIGH, (), [seat.hand.high])
        (low,) = strengths_with(PAI_GOW_LOW, (), [seat.hand.low])
        # The engine's verdict index: 2 x hands won + a copy in either hand (PGP-A14b).
        won = (high > banker_high).astype(np.int64) + (low > banker_low)
        verdict = 2 * won + ((high == banker_high) | (low == banker_low))
        by_verdict = [_house_result(outcome, wager, rate, unit) for outcome, _ in _VERDICTS]
        house[:, s] = np.array(by_verdict, dtype=np.int64)[verdict]
        exact.append(False)
        possible.append(tuple(sorted(set(by_verdict))))
    return house, tuple(exact), tuple(possible)


def _house_result(outcome: Outcome, wager: int, rate_bp: int, unit_cents: int) -> int:
    """The house's result of a dealer-banked bet (`_settle_against_dealer`: minus the net)."""
    if outcome is Outcome.WIN:
        return -(wager - commission_cents(wager, rate_bp, unit_cents))
    return 0 if outcome is Outcome.PUSH else wager


def sample_round(kinds: RoundEvents, profile: PaiGowProfile, samples: int = SAMPLES) -> Draws:
    """The round's dealer hands drawn and settled against every position."""
    seats = positions(kinds)
    dealer = draw_dealer_hands(seats, started(kinds).round_id, samples)
    house, exact, possible = settle_draws(seats, dealer, profile)
    return Draws(tuple(seat.seat for seat in seats), dealer, house, exact, possible)


def expected(kinds: RoundEvents, profile: Profile, meter_cents: int | None) -> RoundExpectation:
    """The game's `GameSpec.expected`: each position's house result, mean and variance over
    `SAMPLES` dealer hands (the variance holds the mean's squared standard error too), and the
    variance of the round's total over the same draws. `meter_cents` is unused (no
    progressive). A round `round.settle` refuses is refused the same way (`RoundError`)."""
    if not isinstance(profile, PaiGowProfile):
        raise ValueError(f"{profile.name} is not a Pai Gow profile")
    pai_gow_round.settle(kinds, profile, meter_cents)  # validates the round as settled
    draws = sample_round(kinds, profile)
    k = len(draws.dealer)
    out: dict[int, Expectation] = {}
    floors = 0.0  # what the floors add to the positions' sample variances
    for s, (seat, exact) in enumerate(zip(draws.seats, draws.exact, strict=True)):
        column = draws.house[:, s].astype(np.float64)
        if exact:
            out[seat] = Expectation(mean_cents=float(column[0]), variance=0.0)
            continue
        sample = _variance(column)
        floored = max(sample, _smoothed_variance(column, draws.possible[s]))
        floors += floored - sample
        out[seat] = Expectation(
            mean_cents=float(column.mean()), variance=floored * (1 + 1 / k), samples=k
        )
    total = _variance(draws.house.sum(axis=1).astype(np.float64)) + floors
    return RoundExpectation(seats=out, total_variance=total * (1 + 1 / k) if out else 0.0)


def _variance(values: npt.NDArray[np.float64]) -> float:
    """The sample variance (K - 1 in the denominator)."""
    return float(values.var(ddof=1)) if len(values) > 1 else 0.0


def _smoothed_variance(values: npt.NDArray[np.float64], possible: Sequence[int]) -> float:
    """The variance of the results' frequencies smoothed by half a count on each possible
    result (Jeffreys' prior): a floor, so a position whose draws all agree (about 1 % of them
    at K = 500) still admits the results the draws happened to miss, instead of a variance of
    0 that a rare actual result would turn into an infinite standardized residual."""
    points = np.array(possible, dtype=np.float64)
    counts = (values[:, None] == points[None, :]).sum(axis=0) + 0.5
    weights = counts / counts.sum()
    mean = float(weights @ points)
    return float(weights @ (points - mean) ** 2)
