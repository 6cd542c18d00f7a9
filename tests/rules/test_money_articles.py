"""DEF-M1: money is integer céntimos, never a float, wherever it is added, compared or stored;
here on the arithmetic every settlement uses and on the lines a settlement writes."""

from __future__ import annotations

import dataclasses

from events.models import Decision
from games.profiles import load_profile
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import TripokerRound, TripokerSeat, settle_tripoker
from rules.cards import parse_cards
from rules.money import commission_cents, share_cents

MONEY_FIELDS = (
    "wager_cents",
    "payout_cents",
    "commission_cents",
    "net_cents",
    "house_result_cents",
    "capped_cents",
)


def test_def_m1_money_arithmetic_is_exact_on_amounts_a_float_cannot_hold() -> None:
    # 2**53 + 1 céntimos: a float rounds it to 2**53; integer arithmetic keeps the last céntimo.
    huge = 2**53 + 1
    assert float(huge) == float(huge - 1)
    assert share_cents(huge * 10, 1_000) == huge  # 10 % of ten times it, exact
    assert commission_cents(huge * 20, 500, 1) == huge  # 5 % of twenty times it, exact
    for value in (share_cents(1_999, 333), commission_cents(1_999, 500, 1)):
        assert type(value) is int
    assert commission_cents(1_999, 500, 1) == 99  # 99.95 céntimos: floored, never rounded up


def test_def_m1_every_settlement_line_is_integer_cents() -> None:
    profile = load_profile("tripoker/pe-2005")
    assert isinstance(profile, TripokerProfile)
    seats = (
        TripokerSeat(
            seat=1, ante_cents=1_001, pair_plus_cents=333, cards=parse_cards("Ah Kh Qh"),
            decision=Decision.PLAY,
        ),
        TripokerSeat(
            seat=2, ante_cents=777, pair_plus_cents=0, cards=parse_cards("2c 7d 9s"),
            decision=Decision.FOLD,
        ),
    )  # fmt: skip
    game = TripokerRound(round_id="m1", dealer_cards=parse_cards("Qs 5d 3c"), seats=seats)
    lines = settle_tripoker(game, profile).settlements
    assert lines
    for line in lines:
        record = dataclasses.asdict(line)
        assert all(type(record[name]) is int for name in MONEY_FIELDS), record
        # What `croupier settle` prints and the lake stores: every *_cents an int too.
        printed = line.to_record()
        assert all(type(v) is int for k, v in printed.items() if k.endswith("_cents")), printed
