"""Tripóker's strategy tables and the hold test's exact expectations (games/tripoker/strategy.py).

The figures are checked against computations that share nothing with the module's: a brute force
over every player hand (by suit class: 1,755 classes of the 22,100 hands) against every dealer
hand, strengths from the ranking engine's `rank_batch`; the inclusion-exclusion counts of
`games.tripoker.odds`; the engine's own `settle_tripoker` over whole enumerations; and the
published figures: queen-6-4 and 3.3730 % per ante with every dealer card unseen (Wizard of Odds,
Three Card Poker; Eliot Jacobson, "Three Card Poker Hole-Card Play: Update #1", apheat.net,
2015), and with one dealer card seen the player's 3.4829 % and the strategy "jack or lower:
always play; queen, king, ace: play Q-9-2, K-9-2, A-9-2 or better" (Jacobson, ibid. and
"Three Card Poker Hole-Card Play", 888casino.com; Wizard of Odds newsletter, 6 Sep 2003)."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from events import Event
from events.models import Decision
from games.base import RoundEvents
from games.profiles import load_profile
from games.registry import GAMES
from games.tripoker.odds import _tripoker_groups, tripoker_exact
from games.tripoker.profile import TripokerProfile
from games.tripoker.rules import (
    TripokerRound,
    TripokerSeat,
    plays_queen_six_four,
    qualifier_strength,
    settle_tripoker,
)
from games.tripoker.strategy import expected, full_information_plays, informed, strategy
from rules.cards import card_str, parse_cards
from rules.rankings import TRIPOKER
from rules.settlement import category_table
from tests.builders import hand_made

Ints = npt.NDArray[np.int64]
CATEGORY = category_table(TRIPOKER)


def _profile(name: str) -> TripokerProfile:
    profile = load_profile(name)
    assert isinstance(profile, TripokerProfile)
    return profile


STANDARD = _profile("tripoker/standard")
PE_2005 = _profile("tripoker/pe-2005")


# --- brute force over every player hand (by suit class) against every dealer hand ------------


@cache
def _all_hands() -> tuple[Ints, Ints, npt.NDArray[np.bool_]]:
    """Every 3-card hand, its strength by the ranking engine, and which cards it holds."""
    hands = np.array(list(itertools.combinations(range(52), 3)), dtype=np.int64)
    strength = TRIPOKER.rank_batch(hands).astype(np.int64)
    holds = np.zeros((len(hands), 52), dtype=bool)
    holds[np.arange(len(hands))[:, None], hands] = True
    return hands, strength, holds


@cache
def _suit_classes() -> list[tuple[int, int]]:
    """(index of a representative hand, number of hands) for each class of hands equal up to a
    renaming of the suits: the same game math, so one brute force per class."""
    hands, _, _ = _all_hands()
    perms = list(itertools.permutations(range(4)))
    classes: dict[tuple[int, ...], list[int]] = {}
    for i, hand in enumerate(hands.tolist()):
        key = min(tuple(sorted(c // 4 * 4 + p[c % 4] for c in hand)) for p in perms)
        classes.setdefault(key, []).append(i)
    found = [(members[0], len(members)) for members in classes.values()]
    assert sum(n for _, n in found) == 22_100
    return found


@dataclass(frozen=True)
class Brute:
    """Per suit class: its hand, weight, and the ante+play figures by brute force."""

    hand: tuple[int, ...]
    weight: int
    strength: int
    unseen_units: int  # showdown result in antes summed over the 18,424 dealer hands
    exposed_units: dict[int, int]  # per exposed card: summed over the 1,128 dealer hands with it
    full_information: float  # mean over the 18,424 of max(play, fold), in antes


@dataclass(frozen=True)
class AntePlay:
    """The rules that settle ante and play: the qualifier's strength, the play multiple, the
    ante bonus by category value (0: none)."""

    qualifier: int
    multiple: int
    bonus: tuple[int, ...]

    @classmethod
    def of(cls, profile: TripokerProfile) -> AntePlay:
        bonus = tuple(v or 0 for v in profile.ante_bonus.values)
        return cls(qualifier_strength(profile.dealer_qualifier), profile.play_multiple, bonus)


def _units(rules: AntePlay, mine: int, dealer: Ints) -> Ints:
    """The player's ante+play result in antes against each dealer strength (no bonus)."""
    win = 1 + rules.multiple
    out = np.where(mine > dealer, win, np.where(mine < dealer, -win, 0))
    return np.where(dealer < rules.qualifier, 1, out).astype(np.int64)


def _bonus(profile: TripokerProfile, strength: int) -> int:
    return profile.ante_bonus.get(CATEGORY[strength]) or 0


def _brute(profile: TripokerProfile) -> list[Brute]:
    return _brute_table(AntePlay.of(profile))


@cache
def _brute_table(rules: AntePlay) -> list[Brute]:
    """Every suit class against every dealer hand (shared by profiles with the same ante and
    play rules, which differ only in the exposed card or pair plus)."""
    hands, strength, holds = _all_hands()
    found = []
    for index, weight in _suit_classes():
        hand = hands[index]
        mine = int(strength[index])
        dealer = ~holds[:, hand].any(axis=1)
        assert dealer.sum() == math.comb(49, 3)
        units = _units(rules, mine, strength[dealer])
        per_card = np.zeros(52, dtype=np.int64)
        for k in range(3):
            per_card += np.bincount(hands[dealer, k], weights=units, minlength=52).astype(np.int64)
        bonus = rules.bonus[CATEGORY[mine]]
        found.append(
            Brute(
                hand=tuple(int(c) for c in hand),
                weight=weight,
                strength=mine,
                unseen_units=int(units.sum()),
                exposed_units={c: int(per_card[c]) for c in range(52) if c not in hand},
                full_information=float(np.maximum(units + bonus, -1).mean()),
            )
        )
    return found


def _plays(profile: TripokerProfile, b: Brute, units: int, hands: int, pair_plus: int = 0) -> bool:
    """Play's return minus fold's over `hands` dealer hands, exact, in antes; > 0 plays."""
    margin = units + (_bonus(profile, b.strength) + 1) * hands
    pays = profile.pair_plus.get(CATEGORY[b.strength])
    if pair_plus and profile.fold_forfeits_pair_plus and pays is not None:
        margin += pair_plus * (pays + 1) * hands
    return margin > 0


def _unseen_edge(profile: TripokerProfile) -> tuple[float, float, dict[int, bool]]:
    """House edge per ante and play rate of the best strategy with every dealer card unseen."""
    total = math.comb(49, 3)
    value = rate = 0.0
    plays = {}
    for b in _brute(profile):
        play = _plays(profile, b, b.unseen_units, total)
        ev = _bonus(profile, b.strength) + b.unseen_units / total if play else -1.0
        value += b.weight * ev
        rate += b.weight * play
        plays[b.strength] = play
    return -value / 22_100, rate / 22_100, plays


def _exposed_edge(profile: TripokerProfile, pair_plus: int = 0) -> tuple[float, float, float]:
    """One exposed dealer card: (house edge per ante on ante+play, play rate, house edge per
    ante of the whole position with `pair_plus` antes on pair plus) of the best play."""
    total = math.comb(48, 2)
    value = whole = rate = 0.0
    for b in _brute(profile):
        bonus = _bonus(profile, b.strength)
        pays = profile.pair_plus.get(CATEGORY[b.strength])
        for units in b.exposed_units.values():
            play = _plays(profile, b, units, total, pair_plus)
            ev = bonus + units / total if play else -1.0
            kept = pays is not None and (play or not profile.fold_forfeits_pair_plus)
            side = pair_plus * (pays if kept and pays is not None else -1)
            value += b.weight * ev
            whole += b.weight * (ev + side)
            rate += b.weight * play
    n = 22_100 * 49
    return -value / n, rate / n, -whole / n


# --- strategy tables --------------------------------------------------------------------------


def test_standard_strategy_is_queen_six_four_by_brute_force_over_every_hand() -> None:
    """Every dealer card unseen: the EV-optimal play (exact, every hand against every dealer
    hand) is queen-6-4 or better: queen-6-3 folds, queen-6-4 plays (Wizard of Odds, Three Card
    Poker); the house edge is the published 3.37 % per ante; `strategy` decides as the brute
    force on every class, and `odds` (inclusion-exclusion counts) gives the same edge."""
    edge, rate, plays = _unseen_edge(STANDARD)
    q64, q63 = (
        TRIPOKER.strength(parse_cards("Qc 6d 4h")),
        TRIPOKER.strength(parse_cards("Qc 6d 3h")),
    )
    assert plays[q64] and not plays[q63]
    assert all(play is (s >= q64) for s, play in plays.items())
    assert round(edge * 100, 2) == 3.37
    report = tripoker_exact(STANDARD)["wagers"]["ante_play_optimal"]
    assert report["house_edge"] == pytest.approx(edge, abs=1e-12)
    assert report["play_rate"] == pytest.approx(rate, abs=1e-12)
    decide = strategy(STANDARD)
    dealer = parse_cards("2c 7d Ks")
    for b in _brute(STANDARD):
        if set(b.hand) & set(dealer):
            continue
        assert decide(b.hand, dealer, 100, 0) is plays[b.strength] is plays_queen_six_four(b.hand)
        assert decide(b.hand, dealer, 100, 100) is plays[b.strength]  # pair plus stands
    print(f"\nstandard, Q-6-4: house edge {edge:.4%} per ante, play rate {rate:.4%}")


def test_pe_2005_exposed_card_play_rate_and_edge() -> None:
    """pe-2005 exposes the dealer's third card (TCP-A10b). Ante and play alone, the best play
    given that card: play rate 88.38 %, house edge -3.4829 % per ante (the player's edge
    3.48 %), by brute force, and the same by `odds`' inclusion-exclusion counts."""
    edge, rate, _ = _exposed_edge(PE_2005)
    assert round(rate * 100, 2) == 88.38
    assert round(edge * 100, 4) == -3.4829
    report = tripoker_exact(PE_2005)["wagers"]["ante_play_exposed_card_optimal"]
    assert report["house_edge"] == pytest.approx(edge, abs=1e-12)
    assert report["play_rate"] == pytest.approx(rate, abs=1e-12)
    # With pair plus beside the ante a fold forfeits it too (TCP-A11b); but every hand pair
    # plus pays (a pair or better, a flush, a straight) plays anyway: no decision changes.
    pp_edge, pp_rate, whole = _exposed_edge(PE_2005, pair_plus=1)
    assert pp_rate == rate and pp_edge == pytest.approx(edge, abs=1e-15)
    print(
        f"\npe-2005, exposed card, ante+play: house edge {edge:.4%} per ante, play rate "
        f"{rate:.4%}; with pair plus = ante (forfeited on a fold): play rate {pp_rate:.4%}, "
        f"ante+play {pp_edge:.4%} per ante, whole position {whole:.4%} per ante "
        f"({whole / 2:.4%} per unit of ante and pair plus)"
    )


def test_pe_2005_exposed_card_strategy_is_the_published_hole_card_table() -> None:
    """Every hand against every exposed card, by brute force: an exposed 2 to jack always
    plays; a queen, king or ace plays exactly from Q-9-2, K-9-2, A-9-2 up (by strength: every
    hand at least that strong plays, every weaker one folds)."""
    total = math.comb(48, 2)
    low = {10: "Qc 9d 2h", 11: "Kc 9d 2h", 12: "Ac 9d 2h"}
    threshold = {rank: TRIPOKER.strength(parse_cards(hand)) for rank, hand in low.items()}
    for b in _brute(PE_2005):
        for exposed, units in b.exposed_units.items():
            rank = exposed // 4
            want = b.strength >= threshold[rank] if rank in threshold else True
            assert _plays(PE_2005, b, units, total) is want, (b.hand, exposed)


def test_pe_2005_strategy_decides_as_the_brute_force_on_sampled_hands() -> None:
    """`strategy(pe-2005)` against the brute-force table, with and without pair plus."""
    decide = strategy(PE_2005)
    rng = random.Random(2005)
    table = _brute(PE_2005)
    total = math.comb(48, 2)
    turned = 0
    for b in rng.sample(table, 150):
        exposed = rng.choice(sorted(b.exposed_units))
        rest = [c for c in range(52) if c not in (*b.hand, exposed)]
        dealer = (rest[0], rest[1], exposed)
        for pair_plus in (0, 100):
            want = _plays(PE_2005, b, b.exposed_units[exposed], total, pair_plus // 100)
            assert decide(b.hand, dealer, 100, pair_plus) is want
            turned += want is not plays_queen_six_four(b.hand)
    assert turned


def test_full_information_edge_two_ways() -> None:
    """Knowing all 3 dealer cards, the player plays when that returns more than folding. Its
    edge per ante (ante and play alone) by brute force (max of play and fold per dealer hand)
    and by `odds`' inclusion-exclusion counts of dealer hands (not qualifying, below, equal,
    above the player's) agree; printed as the documented figure. `full_information_plays`
    decides as the engine on sampled hands."""
    brute = -sum(b.weight * b.full_information for b in _brute(STANDARD)) / 22_100

    g = _tripoker_groups()
    a, b, c, s = g.hands[:, 0], g.hands[:, 1], g.hands[:, 2], g.strength

    def below(t: Ints) -> Ints:
        return (
            g.below_all(t)
            - g.below_card(a, t) - g.below_card(b, t) - g.below_card(c, t)
            + g.below_pair(a, b, t) + g.below_pair(a, c, t) + g.below_pair(b, c, t)
            - (s < t)
        )  # fmt: skip

    q = np.full_like(s, qualifier_strength(STANDARD.dealer_qualifier))
    total = math.comb(49, 3)
    not_qualified = below(q)
    wins = below(np.maximum(s, q)) - not_qualified
    losses = total - below(np.maximum(s + 1, q))
    ties = total - not_qualified - wins - losses
    bonus = np.array([_bonus(STANDARD, int(x)) for x in s])
    m = STANDARD.play_multiple
    value = (
        not_qualified * (1 + bonus)
        + wins * (1 + m + bonus)
        + ties * np.maximum(bonus, -1)
        + losses * np.maximum(bonus - 1 - m, -1)
    ) / total
    counted = -float(value.mean())
    assert counted == pytest.approx(brute, abs=1e-12)
    assert counted < -0.2  # far beyond the exposed card's 3.48 %
    rng = random.Random(3)
    for _ in range(300):
        cards = rng.sample(range(52), 6)
        hand, dealer = tuple(cards[:3]), tuple(cards[3:])
        pair_plus = rng.choice((0, 100))
        result = {}
        for decision in (Decision.PLAY, Decision.FOLD):
            seat = TripokerSeat(
                seat=1, ante_cents=100, pair_plus_cents=pair_plus, cards=hand, decision=decision
            )
            game = TripokerRound(round_id="r", dealer_cards=dealer, seats=(seat,))
            result[decision] = -settle_tripoker(game, PE_2005).house_result_cents
        want = result[Decision.PLAY] > result[Decision.FOLD]
        assert full_information_plays(PE_2005, hand, dealer, 100, pair_plus) is want
    print(f"\nfull information (all 3 dealer cards known): house edge {counted:.4%} per ante")


# --- rounds as events -------------------------------------------------------------------------


def ev(event_type: str, **fields: Any) -> Event:
    return hand_made(event_type, game="tripoker", table_id="TP-1", round_id="R-1", **fields)


@dataclass(frozen=True)
class Spec:
    """A round: per seat (ante, pair plus, cards, decision), and the dealer's cards."""

    seats: dict[int, tuple[int, int, tuple[int, ...], Decision | None]]
    dealer: tuple[int, ...]

    def events(self) -> RoundEvents:
        n = len(self.seats)
        events = [ev("round_started", deck_id="D1", dealer_id="DLR-1")]
        for seat, (ante, pair_plus, _, _) in sorted(self.seats.items()):
            for spot, amount in (("ante", ante), ("pair_plus", pair_plus)):
                if amount:
                    events.append(
                        ev("bet_placed", seat=seat, spot=spot, amount_cents=amount, player_ref=None)
                    )
        for i, (seat, (_, _, cards, _)) in enumerate(sorted(self.seats.items()), start=1):
            events.append(
                ev(
                    "cards_dealt", recipient="seat", seat=seat, group=None,
                    cards=[card_str(c) for c in cards], face_up=False,
                    deal_order=[i, n + 1 + i, 2 * n + 2 + i],
                )
            )  # fmt: skip
        names = [card_str(c) for c in self.dealer]
        for shown, order, up in (
            (names[:2], [n + 1, 2 * n + 2], False),
            (names[2:], [3 * n + 3], True),
        ):
            events.append(
                ev(
                    "cards_dealt", recipient="dealer", seat=None, group=None, cards=shown,
                    face_up=up, deal_order=order,
                )
            )  # fmt: skip
        for seat, (ante, _, _, decision) in sorted(self.seats.items()):
            if decision is not None:
                amount = ante if decision is Decision.PLAY else 0
                events.append(
                    ev("player_decided", seat=seat, decision=decision, amount_cents=amount)
                )
        events += [ev("dealer_revealed", cards=names), ev("round_ended")]
        return RoundEvents(events)

    def record(
        self, dealer: tuple[int, ...] | None = None, decisions: dict[int, Decision] | None = None
    ) -> TripokerRound:
        """The round for the engine; other dealer cards or decisions (by seat) if given."""
        decisions = decisions or {}
        seats = tuple(
            TripokerSeat(
                seat=seat,
                ante_cents=ante,
                pair_plus_cents=pair_plus,
                cards=cards,
                decision=decisions.get(seat, decision),
            )
            for seat, (ante, pair_plus, cards, decision) in sorted(self.seats.items())
        )
        return TripokerRound(round_id="R-1", dealer_cards=dealer or self.dealer, seats=seats)


def random_round(rng: random.Random, n_seats: int) -> Spec:
    deck = rng.sample(range(52), 3 * n_seats + 3)
    seats = {}
    for i, seat in enumerate(sorted(rng.sample(range(1, 8), n_seats))):
        kind = rng.choice(("ante", "pair_plus", "both", "both"))
        ante = rng.choice((500, 1_000, 2_500)) if kind != "pair_plus" else 0
        pair_plus = rng.choice((500, 1_000)) if kind != "ante" else 0
        decision = rng.choice((Decision.PLAY, Decision.FOLD)) if ante else None
        seats[seat] = (ante, pair_plus, tuple(deck[3 * i : 3 * i + 3]), decision)
    return Spec(seats=seats, dealer=tuple(deck[-3:]))


def _engine_enumeration(
    spec: Spec, profile: TripokerProfile
) -> tuple[dict[int, list[int]], list[int]]:
    """Every seat's house result, and the round's, settled by the engine for every completion
    of the dealer's hidden cards (itertools, the cards nobody at the table saw)."""
    exposed = [spec.dealer[p - 1] for p in profile.exposed_dealer_cards]
    seen = {*exposed, *(c for _, _, cards, _ in spec.seats.values() for c in cards)}
    rest = [c for c in range(52) if c not in seen]
    per_seat: dict[int, list[int]] = {seat: [] for seat in spec.seats}
    totals = []
    for hidden in itertools.combinations(rest, 3 - len(exposed)):
        it = iter(hidden)
        dealer = tuple(
            spec.dealer[i] if i + 1 in profile.exposed_dealer_cards else next(it) for i in range(3)
        )
        lines = settle_tripoker(spec.record(dealer), profile).settlements
        for seat in spec.seats:
            per_seat[seat].append(sum(x.house_result_cents for x in lines if x.seat == seat))
        totals.append(sum(x.house_result_cents for x in lines))
    return per_seat, totals


@pytest.mark.parametrize(
    ("name", "seed", "n_seats"),
    [("tripoker/pe-2005", 1, 3), ("tripoker/pe-2005", 2, 4), ("tripoker/standard", 3, 3)],
)
def test_expected_is_the_engine_averaged_over_every_completion(
    name: str, seed: int, n_seats: int
) -> None:
    """`expected` (vectorized) equals the engine's `settle_tripoker` over the same whole
    enumeration of the dealer's hidden cards: every seat's mean and variance, and the variance
    of the round's sum, to float precision. Also through the registry's `GameSpec`."""
    profile = _profile(name)
    rng = random.Random(seed)
    spec = random_round(rng, n_seats)
    while not any(d is Decision.PLAY for *_, d in spec.seats.values()):
        spec = random_round(rng, n_seats)
    got = GAMES[profile.game].expected
    assert got is expected
    found = expected(spec.events(), profile, None)
    per_seat, totals = _engine_enumeration(spec, profile)
    assert set(found.seats) == set(spec.seats)
    for seat, results in per_seat.items():
        e = found.seats[seat]
        assert e.samples is None
        assert e.mean_cents == pytest.approx(statistics.fmean(results), rel=1e-12, abs=1e-9)
        assert e.variance == pytest.approx(statistics.pvariance(results), rel=1e-9, abs=1e-6)
    assert found.total_variance == pytest.approx(statistics.pvariance(totals), rel=1e-9)
    assert found.total_variance > 0


def test_a_fold_without_pair_plus_is_the_ante_for_sure_and_pair_plus_only_stays_in() -> None:
    hands = parse_cards("2c 5d 9h"), parse_cards("Ks Kd 4c"), parse_cards("3s 4s 5s")
    spec = Spec(
        seats={
            1: (1_000, 0, hands[0], Decision.FOLD),
            2: (0, 500, hands[1], None),  # pair-plus only: a pair pays 1:1
            3: (1_000, 500, hands[2], Decision.FOLD),  # a straight flush folded
        },
        dealer=parse_cards("Ah Qd 7c"),
    )
    for profile in (PE_2005, STANDARD):
        found = expected(spec.events(), profile, None).seats
        assert found[1].mean_cents == 1_000 and found[1].variance == 0
        assert found[2].mean_cents == -500 and found[2].variance == 0
        # pe-2005 forfeits the pair plus with the fold (TCP-A11b); standard pays it 40:1.
        side = 500 if profile.fold_forfeits_pair_plus else -40 * 500
        assert found[3].mean_cents == 1_000 + side and found[3].variance == 0
    assert expected(spec.events(), PE_2005, None).total_variance == 0


def test_informed_against_the_engine() -> None:
    """Every ante seat's decision: `legitimate` is the choice the engine's own settlement of
    every completion from the exposed card favours (the player's hand and that card seen),
    `full_information` the one its settlement of the actual dealer hand favours, `gain_cents`
    the engine's result of the choice played minus that of the legitimate one."""
    rng = random.Random(18)
    checked = informative = 0
    while checked < 12:
        spec = random_round(rng, 2)
        found = informed(spec.events(), PE_2005, None)
        assert set(found) == {s for s, (ante, *_) in spec.seats.items() if ante}
        for seat, info in found.items():
            ante, pair_plus, hand, decision = spec.seats[seat]
            assert info.played is decision
            exposed = spec.dealer[2]
            rest = [c for c in range(52) if c not in (*hand, exposed)]
            sums = {}
            for choice in (Decision.PLAY, Decision.FOLD):
                alone = TripokerSeat(
                    seat=seat, ante_cents=ante, pair_plus_cents=pair_plus, cards=hand,
                    decision=choice,
                )  # fmt: skip
                sums[choice] = -sum(
                    settle_tripoker(
                        TripokerRound(round_id="r", dealer_cards=(x, y, exposed), seats=(alone,)),
                        PE_2005,
                    ).house_result_cents
                    for x, y in itertools.combinations(rest, 2)
                )
            legitimate = (
                Decision.PLAY if sums[Decision.PLAY] > sums[Decision.FOLD] else Decision.FOLD
            )
            assert info.legitimate is legitimate

            def result(choice: Decision, seat: int = seat, spec: Spec = spec) -> int:
                lines = settle_tripoker(spec.record(decisions={seat: choice}), PE_2005).settlements
                return -sum(x.house_result_cents for x in lines if x.seat == seat)

            best = Decision.PLAY if result(Decision.PLAY) > result(Decision.FOLD) else Decision.FOLD
            assert info.full_information is best
            assert info.gain_cents == result(decision) - result(legitimate)
            assert info.informative is (legitimate is not best)
            informative += info.informative
            checked += 1
    assert informative


def test_match_probability_is_the_share_of_hidden_hands_where_full_information_agrees() -> (
    None
):
    """Brute force with `full_information_plays` over every dealer hand the players could not
    tell apart (the deck less every seat's cards and the exposed card)."""
    rng = random.Random(18)
    for _ in range(6):
        spec = random_round(rng, rng.randint(1, 4))
        found = informed(spec.events(), PE_2005, None)
        seen = {c for _, _, cards, _ in spec.seats.values() for c in cards} | {spec.dealer[2]}
        rest = [c for c in range(52) if c not in seen]
        for seat, one in found.items():
            ante, pair_plus, cards, decision = spec.seats[seat]
            agree = [
                full_information_plays(PE_2005, cards, (a, b, spec.dealer[2]), ante, pair_plus)
                == (decision is Decision.PLAY)
                for a, b in itertools.combinations(rest, 2)
            ]
            assert one.match_probability == pytest.approx(sum(agree) / len(agree), abs=1e-12)


@pytest.mark.parametrize("profile", [STANDARD, PE_2005], ids=lambda p: p.name)
def test_a_player_who_cannot_see_the_hidden_cards_matches_as_often_as_the_null_says(
    profile: TripokerProfile,
) -> None:
    """The hole-carding test's null: players who decide from their own cards (queen-6-4 with a
    fifth of their decisions flipped at random) against honestly dealt hands; the matches with
    the full-information choice must sum to Σ match_probability within 4 standard deviations,
    and a player who sees the dealer's cards must match every time."""
    rng = random.Random(77)
    matches = expected_matches = variance = 0.0
    seeing = 0
    for _ in range(400):
        spec = random_round(rng, 3)
        seats = {}
        for seat, (ante, pair_plus, cards, _) in spec.seats.items():
            decision = None
            if ante:
                plays = plays_queen_six_four(cards) != (rng.random() < 0.2)
                decision = Decision.PLAY if plays else Decision.FOLD
            seats[seat] = (ante, pair_plus, cards, decision)
        honest = Spec(seats=seats, dealer=spec.dealer)
        for one in informed(honest.events(), profile, None).values():
            q = one.match_probability
            assert q is not None
            matches += one.played is one.full_information
            expected_matches += q
            variance += q * (1 - q)
        cheat = {
            seat: (a, p, c, None if not a else Decision.PLAY
                   if full_information_plays(profile, c, spec.dealer, a, p) else Decision.FOLD)
            for seat, (a, p, c, _) in spec.seats.items()
        }  # fmt: skip
        for one in informed(Spec(seats=cheat, dealer=spec.dealer).events(), profile, None).values():
            seeing += one.played is not one.full_information
    assert abs(matches - expected_matches) < 4 * math.sqrt(variance)
    assert seeing == 0
