"""Closing a round: rebuild it from its events, check its procedures, settle it with the rules.

Each game's own checks and settlement come from its folder through `games.registry`; the rest
(voids, bad data, recorded-vs-computed payouts, the rows) is the same for every game.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from events.models import (
    BetPlaced,
    CardsDealt,
    Game,
    PayoutRecorded,
    PlayerDecided,
    RoundStarted,
    RoundVoided,
    Spot,
)
from games.base import RoundEvents
from games.profiles import load_profile
from games.registry import GAMES
from rules import procedure
from rules.cards import CardError
from rules.procedure import Finding, Severity, finding_at
from rules.profile import ProfileError
from rules.settlement import Outcome, RoundError, RoundSettlement, Settlement

if TYPE_CHECKING:
    from consumers.state import TableState
    from games.base import GameSpec


@dataclass
class RoundResult:
    round_row: dict[str, Any]
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    findings: list[Finding] = field(default_factory=list)
    meter_after_cents: int | None = None


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
        "profile_hash": None,
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
    spec = GAMES[game]
    # Each check skips events of other types: it is given only those it reads.
    result.findings += procedure.duplicate_cards(spec.table_rules, kinds.of(CardsDealt))
    result.findings += procedure.one_player_per_zone(spec.table_rules, bets)
    result.findings += procedure.bets_within_limits(bets, state.limits)
    result.findings += procedure.bets_after_close(spec.table_rules, events)
    if abandoned:
        row["status"], row["status_reason"] = "unsettled", "the round never ended"
        return result
    if voided is not None:
        row["status"], row["status_reason"] = "voided", voided.reason
        # A voided round returns every wager on the table (the game's void articles): each is
        # held to the dealer's record like a settled line (a payment on it is an overpayment).
        returned = [
            _returned(state, seat, spot, amount, spec.void_rules)
            for seat, spot, _, amount in _wagers(kinds, spec)
        ]
        _held_to_records(result, state, spec, kinds, returned, lost=_lost(state))
        return result
    try:
        # the released version the table opened with: every round settles under its own
        profile = load_profile(state.profile or "", state.profile_version or 0)
    except ProfileError as exc:
        row["status"], row["status_reason"] = "unsettled", f"no rule profile: {exc}"
        return result
    row["profile_hash"] = profile.content_hash
    result.findings += spec.checks(kinds, profile)
    try:
        settled = spec.settle(kinds, profile, state.meter_cents)
    except (RoundError, CardError, ValueError, KeyError) as exc:
        # Impossible hands (a card twice in play, a hand of the wrong size) are reported by the
        # checks above and never settled on.
        row["status"], row["status_reason"] = "unsettled", f"cannot settle: {exc}"
        return result
    result.meter_after_cents = settled.meter_after_cents
    stream = sorted({f.rule_id for f in state.round_findings if f.rule_id.startswith("EVT-")})
    if stream:
        row["status_reason"] = "settled on a stream with " + ", ".join(stream)
    _settlement_rows(result, state, spec, kinds, settled, lost=_lost(state))
    return result


def _lost(state: TableState) -> bool:
    """Whether the round's stream lost events (EVT-GAP, reported on the round)."""
    return any(f.rule_id == "EVT-GAP" for f in state.round_findings)


def _wagers(kinds: RoundEvents, spec: GameSpec) -> list[tuple[int, str, str | None, int]]:
    """Every wager the round took, as (seat, spot, player_ref, céntimos), one per seat and spot
    (a settlement line's key): the bets placed, and the play or call a player's decision put
    beside the ante (its player the ante's)."""
    bets = kinds.of(BetPlaced)
    refs: dict[tuple[int, str] | int, str | None] = {}
    staked: dict[tuple[int, str], int] = defaultdict(int)
    for b in bets:
        staked[(b.seat, b.spot)] += b.amount_cents
        refs[(b.seat, b.spot)] = refs[b.seat] = b.player_ref
    if spec.decision_spot is not None:
        for d in kinds.of(PlayerDecided):
            if d.amount_cents > 0:
                staked[(d.seat, spec.decision_spot)] += d.amount_cents
    return [
        (seat, spot, refs.get((seat, spot), refs.get(seat)), amount)
        for (seat, spot), amount in staked.items()
    ]


def _returned(
    state: TableState, seat: int, spot: str, amount: int, rule_ids: Sequence[str]
) -> Settlement:
    """A wager handed back as it was, under `rule_ids`."""
    return Settlement(
        round_id=state.round_id or "", seat=seat, spot=Spot(spot), wager_cents=amount,
        outcome=Outcome.RETURNED, payout_cents=0, commission_cents=0, net_cents=0,
        house_result_cents=0, profile=state.profile or "",
        profile_version=state.profile_version or 0, rule_ids=tuple(rule_ids),
    )  # fmt: skip


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
    spec: GameSpec,
    kinds: RoundEvents,
    settled: RoundSettlement,
    *,
    lost: bool,
) -> None:
    """The round's settlement lines, each held to the dealer's record; `lost`: the round's
    stream lost events (EVT-GAP, reported on the round)."""
    # A wager the rules engine settled on no line is not in action (a play, call or progressive
    # of a seat without an ante): returned, by the article its check reports it under, and
    # held to the dealer's record like any line (a payment on it is an overpayment).
    lines = list(settled.settlements)
    keys = {(line.seat, line.spot) for line in lines}
    lines += [
        _returned(state, seat, spot, amount, spec.unplayed_rules)
        for seat, spot, _, amount in _wagers(kinds, spec)
        if (seat, spot) not in keys
    ]
    _held_to_records(result, state, spec, kinds, lines, lost=lost)
    _jackpot_rows(result, state, settled)


def _held_to_records(
    result: RoundResult,
    state: TableState,
    spec: GameSpec,
    kinds: RoundEvents,
    lines: Sequence[Settlement],
    *,
    lost: bool,
) -> None:
    """The round's rows of `lines`, each spot's held to the dealer's record of it, and a
    payment recorded for a spot no line holds held to nothing; `lost`: the round's stream lost
    events (EVT-GAP), so a record without a line may be of a wager among them."""
    # Spots, bettors and outcomes are StrEnums: the members themselves are the strings the rows
    # and keys need, without the enum's `.value` lookup, a Python call per use.
    refs: dict[tuple[int, str], str | None] = {}
    refs_by_seat: dict[int, str | None] = {}
    for b in kinds.of(BetPlaced):
        refs[(b.seat, b.spot)] = refs_by_seat[b.seat] = b.player_ref
    recorded, records = _records(kinds)
    # The dealer's record per (seat, spot) is compared with the lines the rules computed for
    # that spot (one line per spot today; a list keeps a future split spot honest).
    computed: dict[tuple[int, str], list[Settlement]] = defaultdict(list)
    for line in lines:
        computed[(line.seat, line.spot)].append(line)
    rows = result.rows["settlements"]
    for line in lines:
        key = (line.seat, line.spot)
        spot_lines = computed[key]
        rec = recorded.get(key) if spot_lines[0] is line else None
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
            profile=line.profile or None,
            profile_version=line.profile_version or None,
        )
        rows.append(row)
        if rec is not None and len(spot_lines) > 1:
            # The row's difference compares the record with this line only; fix it for spots
            # that group several lines.
            row["payout_difference_cents"] = _recorded_net(rec) - sum(
                ln.net_cents for ln in spot_lines
            )
        if rec is not None and row["payout_difference_cents"]:
            result.findings += _payment_findings(spec, rec, spot_lines, records[key])
    # A payment the dealer recorded for a spot the round holds no line for (no wager there, an
    # ante bonus not earned) is held to nothing: money paid is an overpayment. Not when the
    # stream lost events: the wager may be among them, and the dealer right.
    if not lost:
        for where, record in recorded.items():
            if where not in computed:
                result.findings += _payment_findings(spec, record, (), records[where])


def _records(
    kinds: RoundEvents,
) -> tuple[dict[tuple[int, str], PayoutRecorded], Counter[tuple[int, str]]]:
    """The dealer's record per (seat, spot), and how many records each adds up. Several records
    of one spot add up, the last one standing for them (where a finding points): a bet paid
    twice is money paid twice."""
    recorded: dict[tuple[int, str], PayoutRecorded] = {}
    counts: Counter[tuple[int, str]] = Counter()
    for e in kinds.of(PayoutRecorded):
        counts[(e.seat, e.spot)] += 1
        before = recorded.get((e.seat, e.spot))
        if before is not None:
            e = e.model_copy(
                update={
                    "collected_cents": before.collected_cents + e.collected_cents,
                    "paid_cents": before.paid_cents + e.paid_cents,
                    "commission_cents": before.commission_cents + e.commission_cents,
                }
            )
        recorded[(e.seat, e.spot)] = e
    return recorded, counts


def _jackpot_rows(result: RoundResult, state: TableState, settled: RoundSettlement) -> None:
    """The round's house result and its entries in the jackpot's ledger."""
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
    spec: GameSpec, rec: PayoutRecorded, lines: Sequence[Settlement], records: int = 1
) -> list[Finding]:
    """The dealer's recorded payout against the rules' (platform: 'payout recorded ≠ payout
    computed; commission not collected'); `records`: how many records `rec` adds up."""
    paid = sum(ln.payout_cents for ln in lines)
    commission = sum(ln.commission_cents for ln in lines)
    net = sum(ln.net_cents for ln in lines)
    recorded_net = _recorded_net(rec)
    if recorded_net == net:
        return []
    evidence: dict[str, Any] = {
        "seat": rec.seat,
        "spot": rec.spot.value,
        "computed": {"paid_cents": paid, "commission_cents": commission, "net_cents": net},
        "recorded": {
            "paid_cents": rec.paid_cents,
            "commission_cents": rec.commission_cents,
            "collected_cents": rec.collected_cents,
        },
    }
    if records > 1:
        evidence["records"] = records
    if commission > 0 and rec.commission_cents == 0 and rec.paid_cents == paid:
        return [
            finding_at(rec, "PGP-A17c", "commission_not_collected", Severity.CRITICAL, **evidence)
        ]
    if commission == 0 and rec.commission_cents > 0 and recorded_net + rec.commission_cents == net:
        # The money paid and taken is right, a commission taken beside it is not due (a loss, a
        # push, a game without commission, the house's own position): not an underpayment of
        # a bet, which a record for seat 0 with no line would otherwise read as.
        check = "commission_not_due"
    else:
        check = "overpayment" if recorded_net > net else "underpayment"
    return [finding_at(rec, spec.table_rules.payment, check, Severity.CRITICAL, **evidence)]


# ---------------------------------------------------------------------------------------------
# One builder per game: events -> the rules' round record, plus the game's procedure checks.
