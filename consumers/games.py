"""Closing a round: rebuild it from its events, check its procedures, settle it with the rules.

One function per game turns the round's events into the rules engine's round record; the rest
(voids, bad data, recorded-vs-computed payouts, the rows) is the same for every game.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar, cast

from events.models import (
    BetPlaced,
    CardsDealt,
    CommunityDealt,
    DealerRevealed,
    Decision,
    DiceRolled,
    Event,
    Game,
    HandSet,
    PayoutRecorded,
    PlayerDecided,
    Recipient,
    RoundStarted,
    RoundVoided,
    Spot,
)
from rules import procedure
from rules.cards import CANONICAL, CardError, cards_str
from rules.holdem import HoldemRound, HoldemSeat, settle_holdem
from rules.pai_gow import (
    DEALER,
    POSITIONS,
    PaiGowRound,
    PaiGowSeat,
    group_one_position,
    house_way,
    settle_pai_gow,
)
from rules.pai_gow import HandSet as PaiGowHand
from rules.procedure import PAYMENT_RULE, Finding, Severity, finding_at
from rules.profile import HoldemProfile, PaiGowProfile, Profile, ProfileError, TripokerProfile
from rules.profile import load_profile as _load_profile
from rules.rankings import PAI_GOW_HIGH, PAI_GOW_LOW
from rules.settlement import RoundError, RoundSettlement, Settlement
from rules.tripoker import TripokerRound, TripokerSeat, settle_tripoker

if TYPE_CHECKING:
    from consumers.state import TableState

VOID_RULES: dict[Game, tuple[str, ...]] = {
    Game.PAI_GOW: ("PGP-A10e", "ALL-5"),
    Game.TRIPOKER: ("ALL-5",),
    Game.HOLDEM: ("ALL-5",),
}


E = TypeVar("E", bound=Event)


class RoundEvents:
    """A round's events in stream order, and grouped by type: one pass over them instead of one
    `isinstance` scan per question (closing a round asked about a dozen)."""

    __slots__ = ("_by_type", "all")

    def __init__(self, events: Sequence[Event]) -> None:
        self.all = events
        by_type: dict[type[Any], list[Event]] = {}
        for event in events:
            group = by_type.get(type(event))
            if group is None:
                by_type[type(event)] = [event]
            else:
                group.append(event)
        self._by_type = by_type

    def of(self, kind: type[E]) -> list[E]:
        """The events of type `kind` (event models are never subclassed), in stream order."""
        return cast("list[E]", self._by_type.get(kind, []))

    def first(self, kind: type[E]) -> E | None:
        found = self._by_type.get(kind)
        return cast("E", found[0]) if found else None


@dataclass
class RoundResult:
    round_row: dict[str, Any]
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    findings: list[Finding] = field(default_factory=list)
    meter_after_cents: int | None = None


@lru_cache(maxsize=32)
def load_profile(name: str) -> Profile:
    return _load_profile(name)


def _cards(texts: Sequence[str]) -> tuple[int, ...]:
    return tuple(map(_CARD_OF, texts))  # the contract admits only canonical spellings


_CARD_OF = CANONICAL.__getitem__


def round_row(state: TableState, kinds: RoundEvents, status: str = "settled") -> dict[str, Any]:
    """The round's row before settlement: who, where, when, what was wagered."""
    events = kinds.all
    started = kinds.first(RoundStarted)
    bets = kinds.of(BetPlaced)
    return {
        "round_id": state.round_id,
        "casino_id": state.casino_id,
        "table_id": state.table_id,
        "game": state.game,
        "dealer_id": started.dealer_id if started else state.dealer_id,
        "deck_id": started.deck_id if started else None,
        "banker_position": started.banker_position if started else None,
        "profile": state.profile,
        "profile_version": state.profile_version,
        "started_at": events[0].occurred_at if events else None,
        "ended_at": events[-1].occurred_at if events else None,
        "status": status,
        "status_reason": None,
        "bets": len(bets),
        "wager_cents": sum(b.amount_cents for b in bets),
        "house_result_cents": 0,
    }


def finish_round(state: TableState, *, abandoned: bool) -> RoundResult:
    """Everything a round settles to, from the events the processor collected for it."""
    events = state.round_events
    kinds = RoundEvents(events)
    game = Game(state.game)
    bets = kinds.of(BetPlaced)
    voided = kinds.first(RoundVoided)
    result = RoundResult(round_row=round_row(state, kinds))
    row = result.round_row
    # Each check skips events of other types: it is given only those it reads.
    result.findings += procedure.duplicate_cards(game, kinds.of(CardsDealt))
    result.findings += procedure.one_player_per_zone(game, bets)
    result.findings += procedure.bets_within_limits(bets, state.limits)
    if game is Game.PAI_GOW:
        result.findings += procedure.bets_after_close(events)
    if abandoned:
        row["status"], row["status_reason"] = "unsettled", "the round never ended"
        return result
    if voided is not None:
        row["status"], row["status_reason"] = "voided", voided.reason
        _return_bets(result, state, bets, VOID_RULES[game])
        return result
    try:
        profile = load_profile(state.profile or "")
        if profile.version != state.profile_version:
            raise ValueError(
                f"{profile.name} v{state.profile_version} is not installed (v{profile.version} is)"
            )
    except (ProfileError, ValueError) as exc:
        row["status"], row["status_reason"] = "unsettled", f"no rule profile: {exc}"
        return result
    game_rules = GAMES[game]
    result.findings += game_rules.checks(kinds, profile)
    try:
        settled = game_rules.settle(state, kinds, profile)
    except (RoundError, CardError, ValueError, KeyError) as exc:
        # Impossible hands (a card twice in play, a hand of the wrong size) are reported by the
        # checks above and never settled on.
        row["status"], row["status_reason"] = "unsettled", f"cannot settle: {exc}"
        return result
    result.meter_after_cents = settled.meter_after_cents
    stream = sorted({f.rule_id for f in state.round_findings if f.rule_id.startswith("EVT-")})
    if stream:
        row["status_reason"] = "settled on a stream with " + ", ".join(stream)
    _settlement_rows(result, state, game, kinds, settled, bets)
    return result


def _return_bets(
    result: RoundResult, state: TableState, bets: Sequence[BetPlaced], rules: tuple[str, ...]
) -> None:
    for bet in bets:
        result.rows["settlements"].append(
            _row(
                state,
                bet.seat,
                bet.spot,
                "player",
                bet.player_ref,
                bet.amount_cents,
                "returned",
                0,
                0,
                0,
                0,
                0,
                list(rules),
                None,
            )
        )


def _row(
    state: TableState,
    seat: int,
    spot: str,
    bettor: str,
    player_ref: str | None,
    wager: int,
    outcome: str,
    payout: int,
    capped: int,
    commission: int,
    net: int,
    house: int,
    rule_ids: list[str],
    recorded: PayoutRecorded | None,
    *,
    profile: str | None = None,
    profile_version: int | None = None,
) -> dict[str, Any]:
    recorded_net = (
        recorded.paid_cents - recorded.commission_cents - recorded.collected_cents
        if recorded is not None
        else None
    )
    return {
        "round_id": state.round_id,
        "casino_id": state.casino_id,
        "table_id": state.table_id,
        "game": state.game,
        "dealer_id": state.dealer_id,
        "seat": seat,
        "spot": spot,
        "bettor": bettor,
        "player_ref": player_ref,
        "wager_cents": wager,
        "outcome": outcome,
        "payout_cents": payout,
        "capped_cents": capped,
        "uncapped_payout_cents": payout + capped,
        "commission_cents": commission,
        "net_cents": net,
        "house_result_cents": house,
        "recorded_paid_cents": recorded.paid_cents if recorded is not None else None,
        "recorded_commission_cents": recorded.commission_cents if recorded is not None else None,
        "payout_difference_cents": None if recorded_net is None else recorded_net - net,
        "profile": profile if profile is not None else state.profile,
        "profile_version": profile_version
        if profile_version is not None
        else state.profile_version,
        "rule_ids": rule_ids,
        "settled_at": state.round_events[-1].occurred_at if state.round_events else None,
    }


def _settlement_rows(
    result: RoundResult,
    state: TableState,
    game: Game,
    kinds: RoundEvents,
    settled: RoundSettlement,
    bets: Sequence[BetPlaced],
) -> None:
    # Spots, bettors and outcomes are StrEnums: the members themselves are the strings the rows
    # and keys need, without the enum's `.value` lookup, a Python call per use.
    refs: dict[tuple[int, str], str | None] = {(b.seat, b.spot): b.player_ref for b in bets}
    refs_by_seat = {b.seat: b.player_ref for b in bets}
    recorded: dict[tuple[int, str], PayoutRecorded] = {
        (e.seat, e.spot): e for e in kinds.of(PayoutRecorded)
    }
    # The dealer's record per (seat, spot) is compared with the lines the rules computed for
    # that spot (one line per spot today; a list keeps a future split spot honest).
    computed: dict[tuple[int, str], list[Settlement]] = defaultdict(list)
    for line in settled.settlements:
        computed[(line.seat, line.spot)].append(line)
    rows = result.rows["settlements"]
    for line in settled.settlements:
        key = (line.seat, line.spot)
        lines = computed[key]
        rec = recorded.get(key) if lines[0] is line else None
        row = _row(
            state,
            line.seat,
            line.spot,
            line.bettor,
            refs.get(key, refs_by_seat.get(line.seat)),
            line.wager_cents,
            line.outcome,
            line.payout_cents,
            line.capped_cents,
            line.commission_cents,
            line.net_cents,
            line.house_result_cents,
            list(line.rule_ids),
            rec,
            profile=line.profile,
            profile_version=line.profile_version,
        )
        rows.append(row)
        if rec is not None and len(lines) > 1:
            # The row's difference compares the record with this line only; fix it for spots
            # that group several lines.
            row["payout_difference_cents"] = _recorded_net(rec) - sum(ln.net_cents for ln in lines)
        if rec is not None and row["payout_difference_cents"]:
            result.findings += _payment_findings(game, rec, lines)
    result.round_row["house_result_cents"] = settled.house_result_cents
    for entry_no, entry in enumerate(settled.jackpot, start=1):
        result.rows["jackpot_ledger"].append(
            {
                "round_id": state.round_id,
                "casino_id": state.casino_id,
                "table_id": state.table_id,
                "game": state.game,
                "entry_no": entry_no,
                "seat": entry.seat,
                "kind": entry.kind.value,
                "amount_cents": entry.amount_cents,
                "meter_before_cents": entry.meter_before_cents,
                "meter_after_cents": entry.meter_after_cents,
                "rule_ids": list(entry.rule_ids),
                "occurred_at": state.round_events[-1].occurred_at,
            }
        )


def _recorded_net(rec: PayoutRecorded) -> int:
    return rec.paid_cents - rec.commission_cents - rec.collected_cents


def _payment_findings(
    game: Game, rec: PayoutRecorded, lines: Sequence[Settlement]
) -> list[Finding]:
    """The dealer's recorded payout against the rules' (platform: 'payout recorded ≠ payout
    computed; commission not collected')."""
    paid = sum(ln.payout_cents for ln in lines)
    commission = sum(ln.commission_cents for ln in lines)
    net = sum(ln.net_cents for ln in lines)
    recorded_net = _recorded_net(rec)
    if recorded_net == net:
        return []
    evidence = {
        "seat": rec.seat,
        "spot": rec.spot.value,
        "computed": {"paid_cents": paid, "commission_cents": commission, "net_cents": net},
        "recorded": {
            "paid_cents": rec.paid_cents,
            "commission_cents": rec.commission_cents,
            "collected_cents": rec.collected_cents,
        },
    }
    if commission > 0 and rec.commission_cents == 0 and rec.paid_cents == paid:
        return [
            finding_at(rec, "PGP-A17c", "commission_not_collected", Severity.CRITICAL, **evidence)
        ]
    check = "overpayment" if recorded_net > net else "underpayment"
    return [finding_at(rec, PAYMENT_RULE[game], check, Severity.CRITICAL, **evidence)]


# ---------------------------------------------------------------------------------------------
# One builder per game: events -> the rules' round record, plus the game's procedure checks.


@dataclass(frozen=True)
class GameRules:
    """A game's procedure checks on a round's events, and its settlement from them."""

    checks: Callable[[RoundEvents, Profile], list[Finding]]
    settle: Callable[[TableState, RoundEvents, Profile], RoundSettlement]


def _started(kinds: RoundEvents) -> RoundStarted:
    started = kinds.first(RoundStarted)
    if started is None:  # the processor opens a round only on its round_started
        raise RoundError("the round has no round_started")
    return started


def _pai_gow_deal(kinds: RoundEvents) -> tuple[dict[int, tuple[int, ...]], dict[int, int]]:
    """(group number -> cards, position -> group number) from the deal and the dice."""
    started = _started(kinds)
    banker = started.banker_position if started.banker_position is not None else DEALER
    groups = {
        e.group: _cards(e.cards)
        for e in kinds.of(CardsDealt)
        if e.recipient is Recipient.GROUP and e.group is not None
    }
    rolls = [e for e in kinds.of(DiceRolled) if e.valid]
    if not rolls:
        raise RoundError("no valid dice roll: nobody knows who holds which group")
    if not 0 <= banker < POSITIONS:
        raise RoundError(f"banker position {banker} is not one of the table's {POSITIONS}")
    first = group_one_position(sum(rolls[-1].dice), POSITIONS, banker)
    # PGP-A12a: group 1 to the position the dice chose, then clockwise.
    return groups, {(first + g - 1) % POSITIONS: g for g in range(1, POSITIONS + 1)}


def _pai_gow_checks(kinds: RoundEvents, profile: Profile) -> list[Finding]:
    findings = [
        *procedure.pai_gow_deal(kinds.all),
        *procedure.pai_gow_dice(kinds.all),
        *procedure.pai_gow_unbet_groups(kinds.all),
    ]
    started = kinds.first(RoundStarted)
    if started is not None and started.banker_position not in (None, *range(POSITIONS)):
        # PGP-A11b counts from the banker: from a position the table lacks, nobody can.
        findings.append(
            finding_at(
                started,
                "PGP-A11b",
                "banker_position",
                Severity.MAJOR,
                banker_position=started.banker_position,
                positions=POSITIONS,
            )
        )
    if not isinstance(profile, PaiGowProfile):
        return findings
    try:
        groups, group_of = _pai_gow_deal(kinds)
    except RoundError:
        return findings
    hands = {e.seat: e for e in kinds.of(HandSet)}
    for position, hand in sorted(hands.items()):
        # A position the table does not have was dealt no group (expected_group None).
        expected = group_of.get(position)
        if sorted(_cards([*hand.high, *hand.low])) != sorted(groups.get(expected or 0, ())):
            findings.append(
                finding_at(
                    hand,
                    "PGP-A12a",
                    "hand_from_wrong_group",
                    Severity.CRITICAL,
                    position=position,
                    expected_group=expected,
                )
            )
    dealer_set = hands.get(DEALER)
    dealer_cards = groups.get(group_of[DEALER], ())
    # The house way is judged only on a well-formed setting of seven distinct dealt cards: a
    # repeated card is reported by the duplicate-card check, a setting of other cards above.
    if (
        dealer_set is not None
        and len(set(dealer_cards)) == 7
        and sorted(_cards([*dealer_set.high, *dealer_set.low])) == sorted(dealer_cards)
    ):
        way = house_way(dealer_cards, profile.house_way)
        low, high = _cards(dealer_set.low), _cards(dealer_set.high)
        # Equal strengths are the same setting (suits never matter, PGP-A5).
        if (
            len(low) != 2
            or len(high) != 5
            or (PAI_GOW_LOW.strength(low), PAI_GOW_HIGH.strength(high))
            != (PAI_GOW_LOW.strength(way.low), PAI_GOW_HIGH.strength(way.high))
        ):
            findings.append(
                finding_at(
                    dealer_set,
                    "PGP-A13c",
                    "house_way",
                    Severity.MAJOR,
                    house_way={"high": cards_str(way.high), "low": cards_str(way.low)},
                    set={"high": list(dealer_set.high), "low": list(dealer_set.low)},
                )
            )
    return findings


def _pai_gow(state: TableState, kinds: RoundEvents, profile: Profile) -> RoundSettlement:
    if not isinstance(profile, PaiGowProfile):
        raise ValueError(f"{profile.name} is not a Pai Gow profile")
    groups, group_of = _pai_gow_deal(kinds)
    hands = {e.seat: e for e in kinds.of(HandSet)}
    surrendered = {e.seat for e in kinds.of(PlayerDecided) if e.decision.value == "surrender"}
    seats: list[PaiGowSeat] = []
    for bet in sorted(kinds.of(BetPlaced), key=lambda b: b.seat):
        hand = hands.get(bet.seat)
        seats.append(
            PaiGowSeat(
                seat=bet.seat,
                wager_cents=bet.amount_cents,
                cards=groups[group_of[bet.seat]],
                hand=None
                if hand is None
                else PaiGowHand(high=_cards(hand.high), low=_cards(hand.low)),
                surrendered=bet.seat in surrendered,
            )
        )
    record = PaiGowRound(
        round_id=state.round_id or "",
        dealer_cards=groups[group_of[DEALER]],
        seats=tuple(seats),
    )
    return settle_pai_gow(record, profile)


def _dealt(kinds: RoundEvents) -> tuple[dict[int, tuple[int, ...]], tuple[int, ...]]:
    """Cards per seat, and the dealer's cards, each in deal order."""
    seats: dict[int, list[tuple[int, int]]] = defaultdict(list)
    dealer: list[tuple[int, int]] = []
    for e in kinds.of(CardsDealt):
        if e.recipient is Recipient.SEAT and e.seat is not None:
            to = seats[e.seat]
        elif e.recipient is Recipient.DEALER and e.seat is None:
            to = dealer
        else:
            continue
        for card, order in zip(e.cards, e.deal_order, strict=True):
            to.append((order, CANONICAL[card]))
    return (
        {seat: tuple(c for _, c in sorted(pairs)) for seat, pairs in seats.items()},
        tuple(c for _, c in sorted(dealer)),
    )


def _tripoker_checks(kinds: RoundEvents, profile: Profile) -> list[Finding]:
    findings = procedure.three_card_hands(kinds.all)
    if isinstance(profile, TripokerProfile):
        findings += procedure.tripoker_exposed_card(kinds.all, set(profile.exposed_dealer_cards))
    return findings


def _tripoker(state: TableState, kinds: RoundEvents, profile: Profile) -> RoundSettlement:
    if not isinstance(profile, TripokerProfile):
        raise ValueError(f"{profile.name} is not a Tripóker profile")
    started = _started(kinds)
    hands, dealer = _dealt(kinds)
    revealed = kinds.first(DealerRevealed)
    if revealed is not None and sorted(_cards(revealed.cards)) != sorted(dealer):
        raise RoundError("the dealer revealed cards other than those dealt")
    antes: dict[int, int] = defaultdict(int)
    pair_plus: dict[int, int] = defaultdict(int)
    for bet in kinds.of(BetPlaced):
        (antes if bet.spot is Spot.ANTE else pair_plus)[bet.seat] += bet.amount_cents
    decisions = {e.seat: e.decision for e in kinds.of(PlayerDecided)}
    seats = tuple(
        TripokerSeat(
            seat=seat,
            ante_cents=antes.get(seat, 0),
            pair_plus_cents=pair_plus.get(seat, 0),
            cards=hands[seat],
            decision=decisions.get(seat),
        )
        for seat in sorted(set(antes) | set(pair_plus))
    )
    record = TripokerRound(round_id=started.round_id, dealer_cards=dealer, seats=seats)
    return settle_tripoker(record, profile)


def _no_checks(kinds: RoundEvents, profile: Profile) -> list[Finding]:
    return []  # Hold'em's procedures (decks alternating, THP-A2d) are checked at round start


def _holdem(state: TableState, kinds: RoundEvents, profile: Profile) -> RoundSettlement:
    if not isinstance(profile, HoldemProfile):
        raise ValueError(f"{profile.name} is not a Hold'em profile")
    started = _started(kinds)
    holes, dealer = _dealt(kinds)
    board: list[int] = []
    community = kinds.of(CommunityDealt)
    for street in ("flop", "turn", "river"):
        for e in community:
            if e.street == street:
                board.extend(_cards(e.cards))
    antes: dict[int, int] = defaultdict(int)
    progressive: dict[int, int] = defaultdict(int)
    for bet in kinds.of(BetPlaced):
        if bet.spot is Spot.PROGRESSIVE:
            progressive[bet.seat] += bet.amount_cents
        else:
            antes[bet.seat] += bet.amount_cents
    decisions = {e.seat: e.decision for e in kinds.of(PlayerDecided)}
    called = any(d is Decision.CALL for d in decisions.values())
    if state.meter_cents is None:
        raise RoundError("the progressive meter was never set (progressive_meter_reset)")
    seats = tuple(
        HoldemSeat(
            seat=seat,
            ante_cents=antes[seat],
            progressive_cents=progressive.get(seat, 0),
            hole=holes[seat],
            decision=decisions[seat],
        )
        for seat in sorted(antes)
    )
    record = HoldemRound(
        round_id=started.round_id,
        dealer_hole=dealer if called else (),
        board=tuple(board),
        seats=seats,
        meter_cents=state.meter_cents,
    )
    return settle_holdem(record, profile)


GAMES: dict[Game, GameRules] = {
    Game.PAI_GOW: GameRules(checks=_pai_gow_checks, settle=_pai_gow),
    Game.TRIPOKER: GameRules(checks=_tripoker_checks, settle=_tripoker),
    Game.HOLDEM: GameRules(checks=_no_checks, settle=_holdem),
}
