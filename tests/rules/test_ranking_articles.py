"""The ranking articles no other test names, each as the regulation states it, on the ranking
systems and (where a settlement shows it) on the settlement: PGP-A3a, PGP-A4l, TCP-A4d, TCP-A4e,
ALL-6."""

from __future__ import annotations

import random

from events.models import Decision, Spot
from games.pai_gow.rules import HandSet, foul_rules, house_way
from games.profiles import load_profile
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, settle_tripoker
from rules.cards import deck, parse_cards
from rules.profile import BUILTIN_HOUSE_WAYS, load_house_way
from rules.rankings import HOLDEM, PAI_GOW_HIGH, PAI_GOW_LOW, TRIPOKER, pai_gow_low_outranks_high
from rules.rankings.hand import Category
from rules.rankings.systems import RankingSystem
from rules.settlement import Outcome

RANKS_HIGH_TO_LOW = ("A", "K", "Q", "J", "T", "9", "8", "7", "6", "5", "4", "3", "2")


def _strength(system: RankingSystem, text: str) -> int:
    return system.strength(parse_cards(text, allow_joker=True))


def test_pgp_a3a_card_values_run_ace_king_queen_down_to_two() -> None:
    """PGP-A3a: ranks high to low A K Q J 10 9 8 7 6 5 4 3 2, in the high and the low hand."""
    # High hands that differ only in their top card (no straight, no flush): 7-5-4-3 + X.
    high = [_strength(PAI_GOW_HIGH, f"{r}s 8d 5c 4h 3d") for r in RANKS_HIGH_TO_LOW[:5]]
    assert high == sorted(high, reverse=True) and len(set(high)) == len(high)
    # Low hands of two singles, the top card deciding: A-2 > K-2 > ... > 3-2.
    low = [_strength(PAI_GOW_LOW, f"{r}s 2d") for r in RANKS_HIGH_TO_LOW[:-1]]
    assert low == sorted(low, reverse=True) and len(set(low)) == len(low)
    # Pairs follow the same order: aces highest, deuces lowest.
    pairs = [_strength(PAI_GOW_LOW, f"{r}s {r}d") for r in RANKS_HIGH_TO_LOW]
    assert pairs == sorted(pairs, reverse=True) and len(set(pairs)) == len(pairs)


def _pe_2005() -> TripokerProfile:
    profile = load_profile("tripoker/pe-2005")
    assert isinstance(profile, TripokerProfile)
    return profile


def _showdown(player: str, dealer: str) -> Outcome:
    seat = TripokerSeat(
        seat=1,
        ante_cents=1_000,
        pair_plus_cents=0,
        cards=parse_cards(player),
        decision=Decision.PLAY,
    )
    game = TripokerRound(round_id="t", dealer_cards=parse_cards(dealer), seats=(seat,))
    lines = {line.spot: line for line in settle_tripoker(game, _pe_2005()).settlements}
    assert lines[Spot.ANTE].outcome is lines[Spot.PLAY].outcome
    return lines[Spot.ANTE].outcome


def test_tcp_a4d_flushes_compare_card_by_card_highest_first() -> None:
    """TCP-A4d: two flushes compare their highest cards, then the next, then the last."""
    assert TRIPOKER.rank(parse_cards("Kh 9h 2h")).category is Category.FLUSH
    assert _strength(TRIPOKER, "Kh 9h 2h") > _strength(TRIPOKER, "Qs Js 9s")  # first card
    assert _strength(TRIPOKER, "Kh Th 2h") > _strength(TRIPOKER, "Ks 9s 8s")  # second card
    assert _strength(TRIPOKER, "Kh 9h 3h") > _strength(TRIPOKER, "Ks 9s 2s")  # third card
    assert _strength(TRIPOKER, "Kh 9h 3h") == _strength(TRIPOKER, "Kc 9c 3c")  # suits never count
    # The settlement follows it: the player's K-10-2 flush beats the dealer's K-9-8 flush.
    assert _showdown("Kh Th 2h", "Ks 9s 8s") is Outcome.WIN
    assert _showdown("Kh 9h 3h", "Kc 9c 3c") is Outcome.PUSH


def test_tcp_a4e_pairs_run_from_aces_down_to_deuces() -> None:
    """TCP-A4e: a pair, AA highest and 22 lowest; every pair above every high card."""
    pairs = [
        _strength(TRIPOKER, f"{r}s {r}d {'3' if r != '3' else '4'}c") for r in RANKS_HIGH_TO_LOW
    ]
    assert pairs == sorted(pairs, reverse=True) and len(set(pairs)) == len(pairs)
    assert TRIPOKER.rank(parse_cards("2s 2d 3c")).category is Category.PAIR
    assert _strength(TRIPOKER, "2s 2d 3c") > _strength(TRIPOKER, "As Kd Jc")  # lowest pair > A-K-J
    # Between equal pairs, the third card decides.
    assert _strength(TRIPOKER, "8s 8d Kc") > _strength(TRIPOKER, "8h 8c Qd")
    assert _showdown("2s 2d 3c", "As Kd Jc") is Outcome.WIN
    assert _showdown("8h 8c Qd", "8s 8d Kc") is Outcome.LOSE


def test_all6_the_ranking_differences_between_the_three_games() -> None:
    """ALL-6: the wheel is Pai Gow's 2nd-highest straight and highest non-royal straight flush,
    Hold'em's lowest straight and A-2-3 Tripóker's lowest; five aces and the joker only in Pai
    Gow; in three cards a straight beats a flush."""
    wheel, broadway, six_high = "Ad 2c 3h 4s 5d", "Ac Kd Qh Js Tc", "6c 5d 4h 3s 2c"
    king_high = "Kc Qd Jh Ts 9c"
    # Pai Gow: A-K-Q-J-10 > A-2-3-4-5 > K-Q-J-10-9 > ... > 6-5-4-3-2.
    assert (
        _strength(PAI_GOW_HIGH, broadway)
        > _strength(PAI_GOW_HIGH, wheel)
        > _strength(PAI_GOW_HIGH, king_high)
        > _strength(PAI_GOW_HIGH, six_high)
    )
    # Pai Gow straight flushes: the wheel above K-high, below only the royal.
    assert _strength(PAI_GOW_HIGH, "Ah 2h 3h 4h 5h") > _strength(PAI_GOW_HIGH, "Kh Qh Jh Th 9h")
    assert PAI_GOW_HIGH.rank(parse_cards("Ah Kh Qh Jh Th")).category is Category.ROYAL_FLUSH
    # Hold'em: the wheel is the lowest straight, below 6-high.
    assert _strength(HOLDEM, wheel) < _strength(HOLDEM, six_high) < _strength(HOLDEM, broadway)
    assert _strength(HOLDEM, "Ah 2h 3h 4h 5h") < _strength(HOLDEM, "6h 5h 4h 3h 2h")
    # Tripóker: A-2-3 the lowest straight, A-K-Q the highest; no K-A-2.
    assert _strength(TRIPOKER, "Ad 2c 3h") < _strength(TRIPOKER, "2d 3c 4h")
    assert _strength(TRIPOKER, "Ad Kc Qh") > _strength(TRIPOKER, "Kd Qc Jh")
    assert TRIPOKER.rank(parse_cards("Kd Ac 2h")).category is Category.HIGH_CARD
    # Five aces and the joker exist only in Pai Gow.
    five_aces = PAI_GOW_HIGH.rank(parse_cards("As Ad Ah Ac Jk", allow_joker=True))
    assert five_aces.category is Category.FIVE_ACES
    assert _strength(PAI_GOW_HIGH, "As Ad Ah Ac Jk") > _strength(PAI_GOW_HIGH, "Ah Kh Qh Jh Th")
    for system, text in ((HOLDEM, "As Ad Ah Ac Jk"), (TRIPOKER, "As Ad Jk")):
        try:
            system.strength(parse_cards(text, allow_joker=True))
        except ValueError:
            pass
        else:
            raise AssertionError(f"{system.name} ranked a joker")
    # Three cards: a straight beats a flush; five cards: a flush beats a straight.
    assert _strength(TRIPOKER, "4d 5c 6h") > _strength(TRIPOKER, "Ah Kh 9h")
    assert _strength(HOLDEM, "4d 5c 6h 7s 8c") < _strength(HOLDEM, "Ah Kh 9h 5h 2h")
    assert _strength(PAI_GOW_HIGH, "4d 5c 6h 7s 8c") < _strength(PAI_GOW_HIGH, "Ah Kh 9h 5h 2h")


def test_pgp_a4l_the_higher_combination_goes_in_the_high_hand() -> None:
    """PGP-A4l (with A15a): the high hand holds the higher combination. The house way never
    sets it otherwise, on 2,000 random hands under both built-in ways; a player who does fouls."""
    rng = random.Random(17)
    full = deck(jokers=1)
    for name in BUILTIN_HOUSE_WAYS:
        way = load_house_way(name)
        for _ in range(1_000):
            seven = tuple(rng.sample(full, 7))
            setting = house_way(seven, way)
            assert not pai_gow_low_outranks_high(setting.low, setting.high), (name, seven)
            assert foul_rules(setting) == ()
    # A pair of queens low under an ace-king high: the higher combination is low, a foul.
    wrong = HandSet(high=parse_cards("As Kd 8c 7d 6s"), low=parse_cards("Qs Qh"))
    assert foul_rules(wrong) == ("PGP-A15a",)
