"""Progressive Texas Hold'em settlement: THP-A2b qualifier, DEF-THP1..5 ante/call, the ante
table, the payout cap (THP-A2c) and the progressive meter (DEF-THP4)."""

from __future__ import annotations

import dataclasses

import pytest

from events.models import Decision, Spot
from games.holdem.profile import HoldemProfile
from games.holdem.rules import HoldemRound, HoldemSeat, calls_simple_strategy, settle_holdem
from games.profiles import load_profile
from rules.cards import parse_cards
from rules.settlement import (
    LedgerKind,
    Outcome,
    RoundError,
    RoundSettlement,
    Settlement,
)

PROFILE = load_profile("holdem/pe-2007")
assert isinstance(PROFILE, HoldemProfile)
SEED = 2_000_000


def player(
    seat: int, hole: str, decision: Decision = Decision.CALL, ante: int = 1_000, prog: int = 0
) -> HoldemSeat:
    return HoldemSeat(
        seat=seat,
        ante_cents=ante,
        progressive_cents=prog,
        hole=parse_cards(hole),
        decision=decision,
    )


def play(
    *seats: HoldemSeat,
    dealer: str,
    board: str,
    meter: int = SEED,
    profile: HoldemProfile = PROFILE,
) -> RoundSettlement:
    game = HoldemRound(
        round_id="h1",
        dealer_hole=parse_cards(dealer),
        board=parse_cards(board),
        seats=seats,
        meter_cents=meter,
    )
    return settle_holdem(game, profile)


def lines_of(result: RoundSettlement, seat: int = 1) -> dict[Spot, Settlement]:
    return {line.spot: line for line in result.settlements if line.seat == seat}


def test_thp_a2b_a_pair_of_fours_qualifies_the_dealer() -> None:
    result = play(player(1, "Ac Jd"), dealer="4c 4d", board="Kh 9c 7d 5s 2h")
    ante, call = (result.settlements[0], result.settlements[1])
    assert (ante.spot, call.spot) == (Spot.ANTE, Spot.CALL)
    assert ante.outcome is Outcome.LOSE and call.outcome is Outcome.LOSE
    assert call.wager_cents == 2_000  # DEF-THP1: call = 2 x ante
    assert ante.net_cents + call.net_cents == -3_000


def test_thp_a2b_a_pair_of_threes_does_not_and_the_ante_pays_the_call_pushes() -> None:
    result = play(player(1, "Ac Jd"), dealer="3c 3d", board="Kh 9c 7d 5s 2h")
    ante, call = result.settlements
    assert ante.outcome is Outcome.WIN and ante.payout_cents == 1_000
    assert call.outcome is Outcome.PUSH and call.net_cents == 0
    assert "THP-A2b" in ante.rule_ids


def test_def_thp2_equal_hands_push_both() -> None:
    result = play(player(1, "2c 3d"), dealer="2h 4c", board="8s 8d Kc Qh 5s")
    assert [line.outcome for line in result.settlements] == [Outcome.PUSH, Outcome.PUSH]


def test_def_thp2_player_higher_than_a_qualified_dealer_ante_by_the_table_call_even() -> None:
    result = play(player(1, "Jh 3h"), dealer="Kd 7s", board="Ah 9h 5h Kc 2d")  # flush v kings
    ante, call = result.settlements
    assert ante.outcome is Outcome.WIN and ante.payout_cents == 2 * 1_000  # flush pays 2
    assert call.outcome is Outcome.WIN and call.payout_cents == 2_000


@pytest.mark.parametrize(
    ("hole", "dealer", "board", "pays"),
    [
        ("Ah Kh", "7s 6d", "Qh Jh Th 4c 2d", 100),  # royal flush
        ("9s 8s", "Jc 3h", "7s 6s 5s Kd 2c", 20),  # straight flush
        ("3c 3d", "Jc 5d", "3h 3s 9c Kd 7h", 10),  # four of a kind (the dealer: 3-3, no)
        ("2c 2d", "Jc 7s", "2h 3s 3c 9d Kh", 3),  # full house
        ("Jh 3h", "Qs 7c", "Ah 9h 5h Kc 2d", 2),  # flush
        ("9c 8d", "Jc 3h", "7s 6h 5c Kd 2s", 1),  # straight
        ("Kc 9d", "Jc 3h", "Kh 9c 5s 2d 7h", 1),  # two pair
        ("Ac Jd", "3c 2s", "Kh 9c 7d 5s 4h", 1),  # high card (the dealer's 5-high... no pair)
    ],
)
def test_def_thp3_ante_table_when_the_dealer_does_not_qualify(
    hole: str, dealer: str, board: str, pays: int
) -> None:
    ante, call = play(player(1, hole), dealer=dealer, board=board).settlements
    assert ante.outcome is Outcome.WIN and ante.payout_cents == pays * 1_000
    assert call.outcome is Outcome.PUSH


def test_def_thp1_a_fold_loses_the_ante_and_has_no_call() -> None:
    result = play(player(1, "7c 2d", Decision.FOLD), dealer="4c 4d", board="Kh 9c 7d 5s 2h")
    (ante,) = result.settlements
    assert ante.outcome is Outcome.FOLD and ante.net_cents == -1_000


def test_def_thp4_progressive_royal_and_straight_flush_in_one_round_in_seat_order() -> None:
    # Flop Q-J-10 of hearts: seat 2 holds 9-8 of hearts (straight flush), seat 5 A-K of hearts
    # (royal); seat 3 a pair of 2s (not paid). Seat 2 folds: the progressive is paid anyway.
    result = play(
        player(5, "Ah Kh", prog=500),
        player(2, "9h 8h", Decision.FOLD, prog=500),
        player(3, "2c 2d", prog=500),
        dealer="5d 6d",
        board="Qh Jh Th 4c 3s",
    )
    # 3 x 20 % of S/ 5 go in first: 2,000,300. Seat 2: 10 % of it; seat 5: what is left.
    sf, royal = 200_030, 1_800_270
    assert lines_of(result, 2)[Spot.PROGRESSIVE].payout_cents == sf
    assert lines_of(result, 5)[Spot.PROGRESSIVE].payout_cents == royal
    assert lines_of(result, 3)[Spot.PROGRESSIVE].net_cents == -500
    ledger = [(e.kind, e.seat, e.amount_cents, e.meter_after_cents) for e in result.jackpot]
    assert ledger == [
        (LedgerKind.CONTRIBUTION, None, 300, 2_000_300),
        (LedgerKind.HIT, 2, sf, 2_000_300 - sf),
        (LedgerKind.HIT, 5, royal, 0),
        (LedgerKind.RESET, None, SEED, SEED),  # the meter resets to the seed after a royal
    ]
    assert result.meter_after_cents == SEED
    assert [line.seat for line in result.settlements] == [2, 2, 3, 3, 3, 5, 5, 5]
    assert lines_of(result, 5)[Spot.ANTE].payout_cents == 100 * 1_000  # royal on the ante too


def test_def_thp4_royal_before_straight_flush_pays_the_straight_flush_from_the_seed() -> None:
    result = play(
        player(1, "Ah Kh", prog=500),
        player(4, "9h 8h", prog=500),
        dealer="5d 6d",
        board="Qh Jh Th 4c 3s",
    )
    assert lines_of(result, 1)[Spot.PROGRESSIVE].payout_cents == 2_000_200
    assert lines_of(result, 4)[Spot.PROGRESSIVE].payout_cents == 200_000
    assert result.meter_after_cents == 1_800_000


@pytest.mark.parametrize(
    ("hole", "board", "paid"),
    [
        ("Qc Qd", "Qh Qs 7c 2d 3h", 50_000),  # four of a kind
        ("Qc Qd", "Qh 7s 7c 2d 3h", 37_500),  # full house
        ("Ac 9c", "Kc 7c 2c 2d 3h", 25_000),  # flush
    ],
)
def test_def_thp4_fixed_progressive_pays_leave_the_meter_alone(
    hole: str, board: str, paid: int
) -> None:
    result = play(player(1, hole, prog=500), dealer="5d 6d", board=board, meter=3_000_000)
    assert lines_of(result)[Spot.PROGRESSIVE].payout_cents == paid
    hit = result.jackpot[-1]
    assert (hit.kind, hit.amount_cents, hit.meter_before_cents, hit.meter_after_cents) == (
        LedgerKind.HIT, paid, 3_000_100, 3_000_100,
    )  # fmt: skip
    assert result.meter_after_cents == 3_000_100


def test_def_thp4_the_progressive_is_judged_on_the_flop_not_the_river() -> None:
    # A flush made only on the turn and river is not a progressive hit.
    result = play(player(1, "Ac 9c", prog=500), dealer="5d 6d", board="Kc 7h 2s 3c 4c")
    assert lines_of(result)[Spot.PROGRESSIVE].outcome is Outcome.LOSE


def test_thp_a2c_def_thp5_a_capped_payout_keeps_the_uncapped_amount() -> None:
    # A royal on an S/ 1,000 ante: 100 x 100,000 = S/ 100,000, capped at S/ 50,000.
    result = play(player(1, "Ah Kh", ante=100_000), dealer="7s 6d", board="Qh Jh Th 4c 2d")
    ante = result.settlements[0]
    assert ante.payout_cents == 5_000_000 and ante.capped_cents == 5_000_000
    assert ante.uncapped_payout_cents == 10_000_000
    assert ante.net_cents == 5_000_000 and ante.house_result_cents == -5_000_000
    assert {"THP-A2c", "DEF-THP5"} <= set(ante.rule_ids)


def test_def_thp5_the_cap_counts_ante_and_call_together_ante_first() -> None:
    low_cap = dataclasses.replace(PROFILE, payout_cap_cents=3_000)
    result = play(
        player(1, "Jh 3h"), dealer="Kd 7s", board="Ah 9h 5h Kc 2d", profile=low_cap
    )  # flush beats kings: ante 2,000 + call 2,000 = 4,000 > 3,000
    ante, call = result.settlements
    assert (ante.payout_cents, ante.capped_cents) == (1_000, 1_000)
    assert (call.payout_cents, call.capped_cents) == (2_000, 0)


def test_def_thp5_progressive_hits_are_not_capped() -> None:
    low_cap = dataclasses.replace(PROFILE, payout_cap_cents=1_000)
    result = play(
        player(1, "Ah Kh", prog=500), dealer="7s 6d", board="Qh Jh Th 4c 2d", profile=low_cap
    )
    progressive = lines_of(result)[Spot.PROGRESSIVE]
    assert progressive.payout_cents == SEED + 100 and progressive.capped_cents == 0


@pytest.mark.parametrize(
    ("seat", "dealer", "board", "message"),
    [
        (player(1, "Ac Jd", prog=100), "3c 3d", "Kh 9c 7d 5s 2h", "500"),
        (player(1, "Ac Jd"), "3c 3d", "Kh 9c 7d", "5 board cards"),
        (player(1, "Ac Kh"), "3c 3d", "Kh 9c 7d 5s 2h", "repeated"),
        (player(8, "Ac Jd"), "3c 3d", "Kh 9c 7d 5s 2h", "1..7"),
    ],
)
def test_def_thp_impossible_records_are_refused(
    seat: HoldemSeat, dealer: str, board: str, message: str
) -> None:
    with pytest.raises(RoundError, match=message):
        play(seat, dealer=dealer, board=board)


def test_def_thp1_when_everyone_folds_the_flop_is_enough() -> None:
    game = HoldemRound(
        round_id="h2",
        dealer_hole=(),
        board=parse_cards("Qh Jh Th"),
        seats=(player(1, "9h 8h", Decision.FOLD, prog=500),),
        meter_cents=SEED,
    )
    result = settle_holdem(game, PROFILE)
    assert [line.outcome for line in result.settlements] == [Outcome.FOLD, Outcome.WIN]


@pytest.mark.parametrize(
    ("hole", "flop", "calls"),
    [
        ("7c 2d", "9s Th Jh", False),  # nothing
        ("7c 2d", "7s Th Jh", True),  # a pair with a hole card
        ("Ac 2d", "9s Th 5h", True),  # an ace in the hole
        ("9h 2h", "5h Kh 3c", True),  # four to a flush
        ("8c 7d", "6s 5h Kd", True),  # open-ended straight draw
        ("Qc Jd", "9s 7h 2d", True),  # two cards above the flop
        ("4c 3d", "Ks Kh 9d", False),  # the board's pair is not the player's
    ],
)
def test_simple_call_strategy(hole: str, flop: str, calls: bool) -> None:
    assert calls_simple_strategy(parse_cards(hole), parse_cards(flop)) is calls
