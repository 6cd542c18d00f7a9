"""Tripóker (Three Card Poker): Peru's TCP articles.

rules.py: hands, qualifier, settlement; checks.py: procedure checks on a round's events;
round.py: a round's events to the rules engine; record.py: a round record as JSON (`croupier
settle`) to it; simulator.py: a simulated table; odds.py: the game math; profile.py: its rule
profile."""

from events.models import Game, Spot
from games.base import GameSpec
from games.tripoker import checks, odds, record, round, strategy
from games.tripoker.profile import TripokerProfile
from games.tripoker.simulator import TripokerTable
from rules.procedure import TableRules

SPEC = GameSpec(
    game=Game.TRIPOKER,
    default_profile="tripoker/pe-2005",
    profile_type=TripokerProfile,
    void_rules=("ALL-5",),
    decision_spot=Spot.PLAY,
    decision_rule="TCP-A11a",
    unplayed_rules=("DEF-TCP2",),
    table_rules=TableRules(
        deck_size=52,
        jokers_in_play=0,
        deck_count="ALL-3",
        shuffle="TCP-A7",
        cut="TCP-A7",
        joker="TCP-A5b",
        one_zone="TCP-A9a",
        payment="DEF-TCP3",
        new_deck_order="TCP-A6",
    ),
    checks=checks.round_checks,
    settle=round.settle,
    simulator=TripokerTable,
    odds=odds.game_math,
    spot_wagers=odds.SPOT_WAGERS,
    settle_record=record.settle_record,
    redecide=strategy.redecide,
    expected=strategy.expected,
    informed=strategy.informed,
)
