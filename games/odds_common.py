"""What the games' math shares (`games/<game>/odds.py`): the report's type and the statistics of
the simulated games. `games.odds.game_math` adds the parts every report carries."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from rules.profile import Profile

Report = dict[str, Any]

Z_95 = 1.959964


def needs_rng(profile: Profile, rng: np.random.Generator | None) -> np.random.Generator:
    """The caller's randomness, which a simulated game cannot do without."""
    if rng is None:
        raise ValueError(f"{profile.name}: simulation needs a random generator")
    return rng


def summary(per_round: npt.NDArray[np.float64]) -> tuple[float, float, float]:
    """House edge (minus the mean player return) and its 95 % interval over rounds."""
    mean = float(per_round.mean())
    half = Z_95 * float(per_round.std(ddof=1)) / math.sqrt(len(per_round))
    return -mean, -mean - half, -mean + half


def shuffled_decks(rng: np.random.Generator, rounds: int, size: int) -> npt.NDArray[np.int64]:
    """`rounds` independently shuffled decks, one per row (the randomness is the caller's)."""
    return rng.permuted(np.tile(np.arange(size, dtype=np.int64), (rounds, 1)), axis=1)
