"""Pai Gow Poker (53 cards, joker, 7x7 deal with dice): Peru's PGP articles.

rules.py: hands, house way, settlement; checks.py: procedure checks on a round's events;
round.py: a round's events to the rules engine; record.py: a round record as JSON (`croupier
settle`) to it; simulator.py: a simulated table; odds.py: the game math; profile.py: its rule
profile."""

from events.models import Game
from games.base import GameSpec
from games.pai_gow import checks, expectation, odds, record, round
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.simulator import PaiGowTable
from rules.procedure import TableRules

SPEC = GameSpec(
    game=Game.PAI_GOW,
    default_profile="pai-gow/pe-1999",
    profile_type=PaiGowProfile,
    void_rules=("PGP-A10e", "ALL-5"),
    decision_spot=None,
    decision_rule="PGP-A16a",
    unplayed_rules=(),  # every bet placed is a position the engine settles, or no line at all
    table_rules=TableRules(
        deck_size=53,
        jokers_in_play=1,
        deck_count="PGP-A7a",
        shuffle="PGP-A8a",
        cut="PGP-A8b",
        joker="PGP-A6d",
        one_zone="PGP-A9a",
        payment="PGP-A17c",
        bets_close="PGP-A9c",
        count_and_wash="PGP-A7c",
        deck_inspected="PGP-A6a",
        deck_change_inspected="PGP-A6b",
    ),
    checks=checks.round_checks,
    settle=round.settle,
    simulator=PaiGowTable,
    odds=odds.game_math,
    spot_wagers=odds.SPOT_WAGERS,
    settle_record=record.settle_record,
    expected=expectation.expected,
)
