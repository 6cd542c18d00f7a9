"""Progressive Texas Hold'em against the house (Casino Hold'em with a jackpot): THP articles.

rules.py: hands, qualifier, progressive, settlement; round.py: a round's events to the rules
engine (its procedure checks are table-level: consumers/table_checks.py); record.py: a round
record as JSON (`croupier settle`) to it; simulator.py: a simulated table; odds.py: the game
math; profile.py: its rule profile."""

from events.models import Game, Spot
from games.base import GameSpec
from games.holdem import odds, record, round, strategy
from games.holdem.profile import HoldemProfile
from games.holdem.simulator import HoldemTable
from rules.procedure import TableRules

SPEC = GameSpec(
    game=Game.HOLDEM,
    default_profile="holdem/pe-2007",
    profile_type=HoldemProfile,
    void_rules=("ALL-5",),
    decision_spot=Spot.CALL,
    decision_rule="DEF-THP1",
    unplayed_rules=("DEF-THP1",),
    table_rules=TableRules(
        deck_size=52,
        jokers_in_play=0,
        deck_count="ALL-3",
        shuffle="ALL-4",
        cut="ALL-4",
        joker="THP-A5",
        one_zone="ALL-2",
        payment="DEF-THP2",
        new_deck_order="THP-A6",
        alternate_decks="THP-A2d",  # DEF-THP6: the two decks alternate every round
    ),
    checks=round.round_checks,
    settle=round.settle,
    simulator=HoldemTable,
    odds=odds.game_math,
    spot_wagers=odds.SPOT_WAGERS,
    settle_record=record.settle_record,
    expected=strategy.expected,
    informed=strategy.informed,
)
