"""Hand rankings for Pai Gow (high 5-card, low 2-card, with the joker), Tripóker and Hold'em.

One interface per system: `rank` (category, key, cards), `compare`, `strength`, `rank_batch`.
"""

from rules.rankings.hand import Category, HandRank
from rules.rankings.systems import (
    HOLDEM,
    PAI_GOW_7,
    PAI_GOW_HIGH,
    PAI_GOW_LOW,
    SYSTEMS,
    TRIPOKER,
    RankingSystem,
    get_system,
    pai_gow_low_outranks_high,
)

__all__ = [
    "HOLDEM",
    "PAI_GOW_7",
    "PAI_GOW_HIGH",
    "PAI_GOW_LOW",
    "SYSTEMS",
    "TRIPOKER",
    "Category",
    "HandRank",
    "RankingSystem",
    "get_system",
    "pai_gow_low_outranks_high",
]
