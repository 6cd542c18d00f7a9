"""Pai Gow's hold-test expectation (`games.pai_gow.expectation`, issue 18): every sampled dealer
hand settles each position exactly as the engine (`round.settle`) does, the figures are
calibrated against honestly dealt rounds, and the same round always gets the same numbers."""

from __future__ import annotations

import math
import random
from itertools import combinations
from typing import Any

import numpy as np
import pytest

from events import Event
from games.base import RoundEvents
from games.pai_gow import SPEC
from games.pai_gow import round as pai_gow_round
from games.pai_gow.expectation import SAMPLES, expected, round_seed, sample_round
from games.pai_gow.profile import PaiGowProfile
from games.pai_gow.rules import DEALER, POSITIONS, HandSet, foul_rules, house_way
from games.profiles import load_profile
from games.simulation.table import CARD_TEXT
from tests.builders import hand_made

_LOADED = load_profile("pai-gow/pe-1999")
assert isinstance(_LOADED, PaiGowProfile)
PROFILE: PaiGowProfile = _LOADED
TABLE = "PG-9"
WAGERS = (2_000, 2_550, 5_000, 10_000, 33_300)  # odd amounts exercise the commission's unit


def _event(event_type: str, round_id: str, **fields: Any) -> Event:
    return hand_made(event_type, game="pai_gow", table_id=TABLE, round_id=round_id, **fields)


def _text(cards: tuple[int, ...] | list[int]) -> list[str]:
    return [CARD_TEXT[c] for c in cards]


def _setting(rng: random.Random, cards: tuple[int, ...]) -> tuple[HandSet | None, str]:
    """How a player sets: mostly the house way, sometimes another legal split, a few fouls,
    surrenders and hands never set."""
    draw = rng.random()
    if draw < 0.02:
        return None, "surrender"
    if draw < 0.03:
        return None, "not set"
    if draw < 0.06:
        return _foul(rng, cards), "foul"
    way = house_way(cards, PROFILE.house_way)
    if draw < 0.15:
        splits = list(combinations(range(7), 2))
        rng.shuffle(splits)
        for i, j in splits:
            hand = HandSet(
                high=tuple(c for k, c in enumerate(cards) if k not in (i, j)),
                low=(cards[i], cards[j]),
            )
            if not foul_rules(hand):
                return hand, "other"
    return way, "house way"


def _foul(rng: random.Random, cards: tuple[int, ...]) -> HandSet:
    """A split whose low hand outranks its high (PGP-A15a), or else 4 high and 3 low (A15b,
    A15c)."""
    splits = list(combinations(range(7), 2))
    rng.shuffle(splits)
    for i, j in splits:
        hand = HandSet(
            high=tuple(c for k, c in enumerate(cards) if k not in (i, j)),
            low=(cards[i], cards[j]),
        )
        if foul_rules(hand):
            return hand
    return HandSet(high=cards[:4], low=cards[4:])


def honest_round(
    seed: int, *, seats: tuple[int, ...] | None = None, forced: dict[int, str] | None = None
) -> list[Event]:
    """A round dealt from a shuffled 53-card deck: 1..6 betting seats, settings as
    `_setting` chooses (or `forced`: seat -> "surrender", "not set", "foul" (PGP-A15a where the
    cards allow one) or "short" (a foul by card count))."""
    rng = random.Random(seed)
    round_id = f"PG-{seed:06d}"
    if seats is None:
        seats = tuple(sorted(rng.sample(range(1, POSITIONS), rng.randint(1, 6))))
    pack = list(range(53))
    rng.shuffle(pack)
    groups = {g: tuple(pack[7 * (g - 1) : 7 * g]) for g in range(1, POSITIONS + 1)}
    dice = [rng.randint(1, 6) for _ in range(3)]
    events = [_event("round_started", round_id, deck_id="D1", dealer_id="E1", banker_position=0)]
    for seat in seats:
        events.append(
            _event("bet_placed", round_id, seat=seat, spot="main", amount_cents=rng.choice(WAGERS))
        )
    for g, cards in groups.items():
        events.append(
            _event(
                "cards_dealt",
                round_id,
                recipient="group",
                group=g,
                cards=_text(cards),
                face_up=False,
                deal_order=list(range(7 * (g - 1) + 1, 7 * g + 1)),
            )
        )
    leftover = pack[49:]
    events.append(
        _event(
            "cards_dealt",
            round_id,
            recipient="discard",
            cards=_text(leftover),
            face_up=False,
            deal_order=[50, 51, 52, 53],
        )
    )
    events.append(_event("dice_rolled", round_id, dice=dice, valid=True))
    _, group_of = pai_gow_round.deal(RoundEvents(events))
    for seat in seats:
        cards = groups[group_of[seat]]
        hand, kind = _setting(rng, cards)
        if forced and seat in forced:
            kind = forced[seat]
            if kind == "foul":
                hand = _foul(rng, cards)
            elif kind == "short":
                hand = HandSet(high=cards[:4], low=cards[4:])
        if kind == "surrender":
            events.append(
                _event("player_decided", round_id, seat=seat, decision="surrender", amount_cents=0)
            )
        elif kind != "not set" and hand is not None:
            setting = {"high": _text(hand.high), "low": _text(hand.low)}
            events.append(_event("hand_set", round_id, seat=seat, **setting))
    dealer = house_way(groups[group_of[DEALER]], PROFILE.house_way)
    setting = {"high": _text(dealer.high), "low": _text(dealer.low)}
    events.append(_event("hand_set", round_id, seat=DEALER, **setting))
    return events


def _with_dealer(events: list[Event], dealer: tuple[int, ...]) -> list[Event]:
    """The round's events with the dealer's group holding `dealer` instead."""
    _, group_of = pai_gow_round.deal(RoundEvents(events))
    group = group_of[DEALER]
    out = []
    for e in events:
        if e.event_type == "cards_dealt" and getattr(e, "group", None) == group:
            e = e.model_copy(update={"cards": _text(dealer)})
        out.append(e)
    return out


def _house(events: list[Event]) -> dict[int, int]:
    settled = pai_gow_round.settle(RoundEvents(events), PROFILE, None)
    return {line.seat: line.house_result_cents for line in settled.settlements}


# ---------------------------------------------------------------------------------------------
# (a) every draw settles as the engine settles it


@pytest.mark.parametrize(
    ("seed", "seats", "forced"),
    [
        (11, (1, 2, 3, 4, 5, 6), {2: "foul", 4: "short", 5: "surrender"}),
        (12, (3,), None),
        (13, (1, 4, 6), {6: "not set"}),
    ],
)
def test_each_draw_settles_as_the_engine_with_the_dealer_cards_replaced(
    seed: int, seats: tuple[int, ...], forced: dict[int, str] | None
) -> None:
    events = honest_round(seed, seats=seats, forced=forced)
    kinds = RoundEvents(events)
    draws = sample_round(kinds, PROFILE)
    assert draws.seats == seats
    assert draws.house.shape == (SAMPLES, len(seats))
    # the draws avoid every betting position's cards, and are 7 distinct cards each
    groups, group_of = pai_gow_round.deal(kinds)
    held = {c for seat in seats for c in groups[group_of[seat]]}
    assert not held & set(draws.dealer.ravel().tolist())
    assert all(len(set(row)) == 7 for row in draws.dealer.tolist())
    engine = np.array(
        [
            [_house(_with_dealer(events, tuple(row)))[seat] for seat in seats]
            for row in draws.dealer.tolist()
        ]
    )
    np.testing.assert_array_equal(draws.house, engine)  # exactly, draw by draw
    result = expected(kinds, PROFILE, None)
    for s, seat in enumerate(seats):
        assert result.seats[seat].mean_cents == pytest.approx(engine[:, s].mean(), abs=1e-9)
    # the round's variance: the total's over the same draws, plus what the positions' floors
    # added to their sample variances
    total = engine.sum(axis=1)
    floors = sum(
        result.seats[seat].variance / (1 + 1 / SAMPLES) - engine[:, s].var(ddof=1)
        for s, seat in enumerate(seats)
        if result.seats[seat].samples
    )
    assert floors >= -1e-6
    assert result.total_variance == pytest.approx((total.var(ddof=1) + floors) * (1 + 1 / SAMPLES))
    for seat, kind in (forced or {}).items():  # lost whatever the dealer holds: exact
        position = result.seats[seat]
        assert kind in ("foul", "short", "surrender", "not set")
        assert position.samples is None and position.variance == 0.0
        assert position.mean_cents == engine[0, seats.index(seat)] > 0


def test_sampled_positions_report_their_samples_and_the_standard_error() -> None:
    events = honest_round(21, seats=(1, 2), forced={})
    kinds = RoundEvents(events)
    draws = sample_round(kinds, PROFILE)
    assert SPEC.expected is expected
    result = SPEC.expected(kinds, PROFILE, None)
    for s, seat in enumerate(draws.seats):
        position = result.seats[seat]
        assert not draws.exact[s]
        assert position.samples == SAMPLES
        sample_variance = draws.house[:, s].var(ddof=1)
        assert position.variance >= sample_variance * (1 + 1 / SAMPLES) - 1e-6
        assert position.variance == pytest.approx(sample_variance * (1 + 1 / SAMPLES), rel=0.05)


def test_a_position_whose_draws_all_agree_keeps_a_variance() -> None:
    """Round 1002's seat 3 loses to all 500 draws: the floor (half a count on each possible
    result) keeps its variance above 0, small beside a usual position's."""
    events = honest_round(1002)
    kinds = RoundEvents(events)
    draws = sample_round(kinds, PROFILE)
    s = draws.seats.index(3)
    assert not draws.exact[s] and len(set(draws.house[:, s].tolist())) == 1
    position = expected(kinds, PROFILE, None).seats[3]
    assert position.samples == SAMPLES
    wager = int(draws.house[0, s])
    assert 0 < position.variance < (0.1 * wager) ** 2


def test_a_profile_of_another_game_is_refused() -> None:
    with pytest.raises(ValueError, match="not a Pai Gow profile"):
        expected(RoundEvents(honest_round(3)), _NotPaiGow(), None)  # type: ignore[arg-type]


class _NotPaiGow:
    name = "tripoker/pe-1999"


# ---------------------------------------------------------------------------------------------
# (b) calibration against honestly dealt rounds

ROUNDS = 400


def test_calibrated_against_honest_rounds() -> None:
    """The house's actual result of honest rounds against the expectation. Round totals: the
    sum of residuals over sqrt(the sum of variances) stays within 4; the standardized
    residuals' variance is within 4 standard errors of 1, the standard error of a sample
    variance of N standardized values being sqrt((E z^4 - 1) / N), estimated from the sample
    (the results are discrete and heavy-tailed: pushes are common, so z^4 averages well above
    3). The same for the positions one by one (sampled positions only: exact ones have no
    residual)."""
    totals: list[tuple[float, float]] = []  # (residual, variance) per round
    positions: list[tuple[float, float]] = []
    for seed in range(1000, 1000 + ROUNDS):
        events = honest_round(seed)
        kinds = RoundEvents(events)
        actual = _house(events)
        result = expected(kinds, PROFILE, None)
        mean_total = sum(p.mean_cents for p in result.seats.values())
        totals.append((sum(actual.values()) - mean_total, result.total_variance))
        for seat, position in result.seats.items():
            if position.samples is None:
                assert actual[seat] == position.mean_cents
            else:
                positions.append((actual[seat] - position.mean_cents, position.variance))
    for residuals in (totals, positions):
        r = np.array([x for x, _ in residuals])
        v = np.array([y for _, y in residuals])
        assert (r[v == 0] == 0).all()  # rounds whose every position was exact
        r, v = r[v > 0], v[v > 0]
        assert abs(r.sum()) / math.sqrt(v.sum()) < 4
        z = r / np.sqrt(v)
        n = len(z)
        error = math.sqrt(((z**4).mean() - 1) / n)
        assert abs((z**2).mean() - 1) < 4 * error, ((z**2).mean(), error, n)


# ---------------------------------------------------------------------------------------------
# (c) determinism


def test_the_same_round_gets_the_same_numbers() -> None:
    events = honest_round(31, seats=(1, 3, 5))
    first = expected(RoundEvents(events), PROFILE, None)
    again = expected(RoundEvents(list(events)), PROFILE, 123)
    assert first == again
    assert round_seed("PG-000031") == round_seed("PG-000031")
    assert round_seed("PG-000031") != round_seed("PG-000032")
    # another round id draws other dealer hands
    renamed = [e.model_copy(update={"round_id": "PG-other"}) for e in events]
    assert not np.array_equal(
        sample_round(RoundEvents(events), PROFILE).dealer,
        sample_round(RoundEvents(renamed), PROFILE).dealer,
    )
