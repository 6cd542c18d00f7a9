"""Properties of every settlement, on rounds Hypothesis deals from shuffled decks: money is
conserved, no wager is negative, each line's money matches its outcome, settling is deterministic.

House result (platform.md) = wagers lost by players - winnings paid to players + commission
taken = - sum of the players' net. A player-banker is a player; the house's own bet at the
dealer's position (DEF-PGP2) is the house's money.
"""

from __future__ import annotations

import dataclasses
import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games.holdem.rules
import games.pai_gow.rules
import games.tripoker.rules
import rules.money
from events.models import Decision, Spot
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, settle_holdem
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import SEATS, HandSet, PaiGowRound, PaiGowSeat, house_way, settle_pai_gow
from games.profiles import load_profile
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, settle_tripoker
from rules.rankings import HOLDEM as HOLDEM_SYSTEM
from rules.rankings import PAI_GOW_HIGH, PAI_GOW_LOW
from rules.rankings import TRIPOKER as TRIPOKER_SYSTEM
from rules.settlement import (
    Bettor,
    LedgerKind,
    Outcome,
    RoundSettlement,
    Settlement,
    line_builder,
    strengths_with,
)

PAI_GOW = load_profile("pai-gow/pe-1999")
TRIPOKER = [load_profile("tripoker/pe-2005"), load_profile("tripoker/standard")]
HOLDEM = load_profile("holdem/pe-2007")
assert isinstance(PAI_GOW, PaiGowProfile) and isinstance(HOLDEM, HoldemProfile)

LOST = {Outcome.LOSE, Outcome.FOLD, Outcome.SURRENDER, Outcome.FOUL}
wagers = st.integers(min_value=1, max_value=10_000_000)


def check_money(result: RoundSettlement) -> None:
    lines = result.settlements
    for line in lines:
        assert line.wager_cents >= 0 and line.payout_cents >= 0
        assert line.commission_cents >= 0 and line.capped_cents >= 0
        if line.outcome is Outcome.WIN:
            assert line.net_cents == line.payout_cents - line.commission_cents
        else:
            assert line.payout_cents == line.commission_cents == 0
        if line.outcome in (Outcome.PUSH, Outcome.RETURNED):
            assert line.net_cents == 0
        elif line.outcome in LOST:
            if line.bettor is Bettor.BANKER:  # the bank loses what it pays out, at most all
                assert -line.wager_cents <= line.net_cents < 0
            else:
                assert line.net_cents == -line.wager_cents
    players = [line for line in lines if line.bettor is not Bettor.HOUSE]
    house = sum(line.house_result_cents for line in lines)
    assert house == -sum(line.net_cents for line in players)
    if all(line.bettor is Bettor.PLAYER for line in lines):  # the house banks every bet
        lost = sum(line.wager_cents for line in lines if line.outcome in LOST)
        paid = sum(line.payout_cents for line in lines)
        commission = sum(line.commission_cents for line in lines)
        assert house == lost - paid + commission


def split(cards: tuple[int, ...], how: int) -> HandSet | None:
    """A setting of seven cards: the house way, an arbitrary split (may foul), a swap of the
    house way's hands (a foul), a foul by card count, or no hands set at all."""
    if how == 0:
        return house_way(cards)
    if how == 1:
        return HandSet(high=cards[:5], low=cards[5:])
    if how == 2:
        way = house_way(cards)
        return HandSet(high=way.low + way.high[:3], low=way.high[3:])
    if how == 3:
        return HandSet(high=cards[:4], low=cards[4:])
    return None


@st.composite
def pai_gow_rounds(draw: st.DrawFn) -> PaiGowRound:
    deck = draw(st.permutations(range(53)))
    seats_in = sorted(draw(st.sets(st.sampled_from(SEATS), min_size=1, max_size=6)))
    seats = []
    for number in seats_in:
        cards = tuple(deck[number * 7 : number * 7 + 7])
        seats.append(
            PaiGowSeat(
                seat=number,
                wager_cents=draw(wagers),
                cards=cards,
                hand=split(cards, draw(st.integers(0, 4))),
                surrendered=draw(st.booleans()) and draw(st.booleans()),
            )
        )
    banker = draw(st.none() | st.sampled_from(seats_in))
    if banker is not None:
        seats = [
            dataclasses.replace(s, surrendered=False) if s.seat == banker else s for s in seats
        ]
    return PaiGowRound(
        round_id="p",
        dealer_cards=tuple(deck[:7]),
        seats=tuple(seats),
        banker_seat=banker,
        house_wager_cents=draw(wagers) if banker is not None and draw(st.booleans()) else 0,
    )


@st.composite
def tripoker_rounds(draw: st.DrawFn) -> TripokerRound:
    deck = draw(st.permutations(range(52)))
    seats = []
    for number in sorted(draw(st.sets(st.integers(1, 7), min_size=1))):
        ante = draw(st.just(0) | wagers)
        pair_plus = draw(wagers) if not ante or draw(st.booleans()) else 0
        choices = [Decision.PLAY, Decision.FOLD] if ante else [None, Decision.FOLD]
        decision = draw(st.sampled_from(choices))
        seats.append(
            TripokerSeat(
                seat=number,
                ante_cents=ante,
                pair_plus_cents=pair_plus,
                cards=tuple(deck[number * 3 : number * 3 + 3]),
                decision=decision,
                # the play bet as recorded: DEF-TCP2's (None) or any other amount
                play_cents=draw(st.none() | wagers) if decision is Decision.PLAY else None,
            )
        )
    return TripokerRound(round_id="t", dealer_cards=tuple(deck[:3]), seats=tuple(seats))


@st.composite
def holdem_rounds(draw: st.DrawFn) -> HoldemRound:
    deck = draw(st.permutations(range(52)))
    seats = []
    for number in sorted(draw(st.sets(st.integers(1, 7), min_size=1))):
        decision = draw(st.sampled_from([Decision.CALL, Decision.FOLD]))
        seats.append(
            HoldemSeat(
                seat=number,
                ante_cents=draw(wagers),
                progressive_cents=draw(st.sampled_from([0, 500])),
                hole=tuple(deck[number * 2 : number * 2 + 2]),
                decision=decision,
                # the call as recorded: DEF-THP1's (None) or any other amount
                call_cents=draw(st.none() | wagers) if decision is Decision.CALL else None,
            )
        )
    return HoldemRound(
        round_id="h",
        dealer_hole=tuple(deck[:2]),
        board=tuple(deck[16:21]),
        seats=tuple(seats),
        meter_cents=draw(st.integers(0, 10**9)),
    )


@settings(max_examples=300, deadline=None)
@given(pai_gow_rounds())
def test_pai_gow_money_is_conserved_and_settling_is_deterministic(game: PaiGowRound) -> None:
    result = settle_pai_gow(game, PAI_GOW)
    check_money(result)
    assert len(result.settlements) == len(game.seats) + (game.house_wager_cents > 0)
    assert settle_pai_gow(game, PAI_GOW) == result


@settings(max_examples=300, deadline=None)
@given(tripoker_rounds(), st.sampled_from(TRIPOKER))
def test_tripoker_money_is_conserved_and_settling_is_deterministic(
    game: TripokerRound, profile: TripokerProfile
) -> None:
    result = settle_tripoker(game, profile)
    check_money(result)
    assert settle_tripoker(game, profile) == result
    assert_decision_wagers(result, {s.seat: s.play_cents for s in game.seats if s.play_cents})


def assert_decision_wagers(result: RoundSettlement, recorded: dict[int, int]) -> None:
    """A play or call recorded at another amount than the article's is settled on that amount:
    its line's wager is the money in the box."""
    decided = {
        line.seat: line.wager_cents
        for line in result.settlements
        if line.spot in (Spot.PLAY, Spot.CALL) and line.seat in recorded
    }
    assert decided == recorded


@settings(max_examples=300, deadline=None)
@given(holdem_rounds(), st.integers(1, 20_000_000))
def test_holdem_money_and_meter_are_conserved_and_settling_is_deterministic(
    game: HoldemRound, cap: int
) -> None:
    profile = dataclasses.replace(HOLDEM, payout_cap_cents=cap)
    result = settle_holdem(game, profile)
    check_money(result)
    for seat in game.seats:  # THP-A2c: a seat's ante and call winnings never exceed the cap
        base = [line for line in result.settlements if line.seat == seat.seat]
        base = [line for line in base if line.spot in (Spot.ANTE, Spot.CALL)]
        assert sum(line.payout_cents for line in base) <= cap
    meter = game.meter_cents
    for entry in result.jackpot:  # the meter moves only by recorded entries, never below 0
        assert entry.meter_before_cents == meter and entry.meter_after_cents >= 0
        if entry.kind is LedgerKind.CONTRIBUTION:
            assert entry.meter_after_cents == meter + entry.amount_cents
        elif entry.meter_after_cents < meter:
            assert entry.kind is LedgerKind.HIT
            assert meter - entry.meter_after_cents == entry.amount_cents
        meter = entry.meter_after_cents
    assert result.meter_after_cents == meter
    assert settle_holdem(game, profile) == result
    assert_decision_wagers(result, {s.seat: s.call_cents for s in game.seats if s.call_cents})


def test_the_fast_settlement_builder_makes_the_same_frozen_object() -> None:
    fields = dict(
        round_id="r", seat=1, spot=Spot.ANTE, wager_cents=100, outcome=Outcome.WIN,
        payout_cents=100, commission_cents=0, net_cents=100, house_result_cents=-100,
        profile="p", profile_version=1, rule_ids=("DEF-TCP3",), capped_cents=0,
        bettor=Bettor.PLAYER,
    )  # fmt: skip
    line = line_builder("r", "p", 1)
    built = line(1, Spot.ANTE, 100, Outcome.WIN, 100, 0, 100, -100, ("DEF-TCP3",), 0, Bettor.PLAYER)
    assert type(built) is Settlement
    assert built == Settlement(**fields)  # type: ignore[arg-type]
    assert hash(built) == hash(Settlement(**fields))  # type: ignore[arg-type]
    assert line(1, Spot.ANTE, 100, Outcome.WIN, 100, 0, 100, -100, ("DEF-TCP3",)) == built
    try:
        built.net_cents = 0  # type: ignore[misc]
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("a settlement must be frozen")


# (system, shared cards, cards per hand, whether the joker is a card of the deck)
SHARED_SHAPES = [
    (HOLDEM_SYSTEM, 5, 2, False),  # hole cards and the board
    (HOLDEM_SYSTEM, 3, 2, False),  # hole cards and the flop (the progressive)
    (TRIPOKER_SYSTEM, 0, 3, False),
    (PAI_GOW_HIGH, 0, 5, True),
    (PAI_GOW_LOW, 0, 2, True),
]


@given(st.data())
@settings(max_examples=300)
def test_the_fast_shared_strengths_equal_each_hand_ranked_alone(data: st.DataObject) -> None:
    system, shared_size, size, joker = data.draw(st.sampled_from(SHARED_SHAPES))
    # Half the time, one suit (and the joker) only, so that flushes come up often.
    suit = data.draw(st.none() | st.integers(0, 3))
    pool = [c for c in range(52) if suit is None or c & 3 == suit] + ([52] if joker else [])
    cards = data.draw(st.permutations(pool))
    count = data.draw(st.integers(1, (len(pool) - shared_size) // size))
    shared = cards[:shared_size]
    hands = [cards[shared_size + size * i : shared_size + size * (i + 1)] for i in range(count)]
    expected = [system.strength((*hand, *shared)) for hand in hands]
    assert strengths_with(system, shared, hands) == expected


@pytest.mark.parametrize(
    "module", [rules.money, games.pai_gow.rules, games.tripoker.rules, games.holdem.rules]
)
def test_docstring_examples(module: object) -> None:
    failed, attempted = doctest.testmod(module)  # type: ignore[arg-type]
    assert attempted > 0
    assert failed == 0
