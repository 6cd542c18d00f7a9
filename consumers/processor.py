"""The pure processor: raw messages in, derived rows out; no I/O, deterministic, batch-agnostic.

Per table it keeps a small state (last seq, deck and dealer status, the open round's events),
checks the stream and the procedures, and settles each round with the rules engine when it ends.
The same messages give the same rows however they are cut into batches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from consumers.games import finish_round
from consumers.sink import RowBatch
from events import MAX_EVENT_BYTES, Event, InvalidEvent, dump_event, parse_event
from events.models import (
    CutCompleted,
    DealerChanged,
    DeckCounted,
    DeckOpened,
    DeckRetired,
    DeckWashed,
    Game,
    JokerDestroyed,
    ProgressiveMeterReset,
    RoundEnded,
    RoundStarted,
    RoundVoided,
    ShuffleCompleted,
    TableClosed,
    TableOpened,
)
from rules.procedure import (
    CUT_RULE,
    DECK_COUNT_RULE,
    DECK_SIZE,
    JOKER_RULE,
    SHUFFLE_RULE,
    Finding,
    Severity,
    finding_at,
    jokers_left_in_play,
)

# A missing seq is called a gap (EVT-GAP) once an event this far past it has arrived; before
# that it may still come late (EVT-ORDER). Driven by seq alone, so batching cannot change it.
GAP_WINDOW = 8
MAX_PENDING_GAP = 1_000
RECENT_IDS = 256
DEAD_LETTER_RAW_LIMIT = 1 << 20
_ROUND_CLOSERS = (RoundEnded, RoundVoided)
_ROUND_BOUNDS = frozenset({RoundStarted, *_ROUND_CLOSERS})


class RawMessage(NamedTuple):
    """One message as read: value and key bytes, and where it came from (None in-process).

    A named tuple: built once per message on the hot path, where a frozen dataclass's
    `__init__` cost as much as a fifth of the validation."""

    value: bytes | None
    key: bytes | None = None
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    timestamp_ms: int | None = None  # the broker's timestamp (create or log-append time)


@dataclass
class TableState:
    """Everything the processor must remember about one table between events."""

    table_id: str
    casino_id: str = ""
    game: str = ""
    last_seq: int | None = None
    recent_ids: list[int] = field(default_factory=list)  # event_ids as 128-bit integers
    # [missing seq, round_id, event_id, seq, occurred_at] of the event that revealed it
    pending_missing: list[list[Any]] = field(default_factory=list)
    profile: str | None = None
    profile_version: int | None = None
    payout_cap_cents: int | None = None
    commission_unit_cents: int | None = None
    limits: dict[str, list[int]] = field(default_factory=dict)  # spot -> [min, max]
    dealer_id: str | None = None
    # deck_id -> [jokers in the box, jokers destroyed, counted]
    decks: dict[str, list[int]] = field(default_factory=dict)
    needs_count: bool = True
    needs_wash: bool = True
    shuffled: bool = False
    cut: bool = False
    last_round_deck: str | None = None
    meter_cents: int | None = None
    round_id: str | None = None
    round_events: list[Event] = field(default_factory=list)
    round_findings: list[Finding] = field(default_factory=list)
    round_end_pending: bool = False

    _recent: set[int] | None = field(default=None, repr=False, compare=False)

    def seen(self, event_id: int) -> bool:
        """True for a repeated event_id; else remembers it among the last RECENT_IDS."""
        if self._recent is None:
            self._recent = set(self.recent_ids)
        if event_id in self._recent:
            return True
        self.recent_ids.append(event_id)
        self._recent.add(event_id)
        if len(self.recent_ids) > RECENT_IDS:
            self._recent.discard(self.recent_ids.pop(0))
        return False

    def to_json(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in _PLAIN_FIELDS}
        data["round_events"] = [dump_event(e).decode() for e in self.round_events]
        data["round_findings"] = [_finding_json(f) for f in self.round_findings]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableState:
        state = cls(**{k: data[k] for k in _PLAIN_FIELDS if k in data})
        state.round_events = [parse_event(e) for e in data.get("round_events", [])]
        state.round_findings = [
            Finding(
                rule_id=f["rule_id"],
                check=f["check"],
                severity=Severity(f["severity"]),
                evidence=f["evidence"],
                seq=f["seq"],
                event_id=f["event_id"],
                occurred_at=datetime.fromisoformat(f["occurred_at"]) if f["occurred_at"] else None,
            )
            for f in data.get("round_findings", [])
        ]
        return state


_PLAIN_FIELDS = tuple(
    name
    for name in TableState.__dataclass_fields__
    if name not in ("round_events", "round_findings", "_recent")
)


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "rule_id": f.rule_id,
        "check": f.check,
        "severity": f.severity.value,
        "evidence": dict(f.evidence),
        "seq": f.seq,
        "event_id": f.event_id,
        "occurred_at": f.occurred_at.isoformat() if f.occurred_at else None,
    }


class Processor:
    """Turns messages into rows. `load_state` fetches a table's last committed state."""

    def __init__(self, load_state: Callable[[str], dict[str, Any] | None] | None = None) -> None:
        self._load_state = load_state
        self.tables: dict[str, TableState] = {}
        self._dirty: dict[str, int] = {}
        self._position = 0

    # -- state ---------------------------------------------------------------------------------
    def _table(self, table_id: str) -> TableState:
        state = self.tables.get(table_id)
        if state is None:
            stored = self._load_state(table_id) if self._load_state else None
            state = TableState.from_json(stored) if stored else TableState(table_id=table_id)
            self.tables[table_id] = state
        return state

    def take_dirty_states(self) -> dict[str, tuple[int, str]]:
        """States changed since the last call, as JSON text, with a version that orders them.

        Serialised here and now: the lake commit runs on another thread while the next batch
        mutates these very objects, and must persist the state as of this batch's end."""
        dirty = {
            t: (v, json.dumps(self.tables[t].to_json(), sort_keys=True, separators=(",", ":")))
            for t, v in self._dirty.items()
        }
        self._dirty.clear()
        return dirty

    def forget(self, table_ids: Sequence[str]) -> None:
        for table_id in table_ids:
            self.tables.pop(table_id, None)
            self._dirty.pop(table_id, None)

    # -- messages ------------------------------------------------------------------------------
    def process(self, messages: Sequence[RawMessage]) -> RowBatch:
        out = RowBatch()
        tables, dirty = self.tables, self._dirty
        # (payload bytes, partition, offset): the sink reads the envelope out of the payload.
        events = out.rows.setdefault("events", [])
        for msg in messages:
            self._position += 1
            event = self._decode(msg, out)
            if event is None:
                continue
            table_id = event.table_id
            state = tables.get(table_id) or self._table(table_id)
            dirty[table_id] = msg.offset if msg.offset is not None else self._position
            if state.seen(event.event_id.int):
                self._violation(
                    state,
                    out,
                    finding_at(event, "EVT-DUP", "duplicate_event", Severity.MINOR),
                    event.round_id,
                )
                continue  # a repeated event is dropped (and reported)
            events.append((msg.value, msg.partition, msg.offset))
            seq = event.seq
            if (
                # Most events: the next seq, nothing outstanding, inside the open round, and
                # neither starting nor closing it. Such an event only joins its round.
                seq == (state.last_seq or 0) + 1
                and state.round_id is not None
                and event.round_id == state.round_id
                and not state.pending_missing
                and not state.round_end_pending
                and type(event) not in _ROUND_BOUNDS
            ):
                state.last_seq = seq
                state.round_events.append(event)
            else:
                if not state.game:
                    state.game, state.casino_id = event.game.value, event.casino_id
                self._after(state, event, out)
        return out

    def _decode(self, msg: RawMessage, out: RowBatch) -> Event | None:
        """The event, or None after writing the message's dead letter."""
        raw = msg.value
        reason: str | None = None
        detail = ""
        event: Event | None = None
        if raw is None:
            reason, detail = "empty", "message has no value"
        elif len(raw) > MAX_EVENT_BYTES:
            reason, detail = "oversized", f"{len(raw)} bytes > {MAX_EVENT_BYTES}"
        else:
            try:
                # The JSON parser refuses bytes that are not UTF-8, so an accepted payload is
                # valid text; a refused one is told apart below.
                event = parse_event(raw)
            except InvalidEvent as exc:
                reason, detail = _classify(exc), str(exc)
            except Exception as exc:
                reason, detail = "unparseable", f"{type(exc).__name__}: {exc}"
            if reason is not None:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    reason, detail = "undecodable", f"not UTF-8: {exc}"
        if event is not None and msg.key is not None and msg.key != event.table_id.encode():
            reason = "key_mismatch"
            detail = f"message key {msg.key!r} is not the event's table_id {event.table_id!r}"
            event = None
        if reason is not None:
            value = raw or b""
            out.add(
                "dead_letters",
                {
                    "source_topic": msg.topic,
                    "source_partition": msg.partition,
                    "source_offset": msg.offset if msg.offset is not None else self._position,
                    "message_key": msg.key,
                    "raw": value[:DEAD_LETTER_RAW_LIMIT],
                    "raw_size": len(value),
                    "reason": reason,
                    "detail": detail[:2000],
                },
            )
        return event

    # -- one event -----------------------------------------------------------------------------
    def _after(self, state: TableState, event: Event, out: RowBatch) -> None:
        """Everything after the event's row: rounds, table state, procedure checks."""
        late = self._sequence(state, event, out)
        # A round whose end waited on a missing seq may be finished now that it is resolved.
        if state.round_end_pending:
            self._maybe_finish(state, out)
        if late:
            # A late event joins its round if that round is still open; otherwise it is only
            # recorded (the violation already says it came out of order).
            if event.round_id is not None and event.round_id == state.round_id:
                state.round_events.append(event)
                state.round_events.sort(key=lambda e: e.seq)
                _count_again_if_void(state, event)
                self._maybe_finish(state, out)
            return
        if event.round_id is None:
            self._table_event(state, event, out)
        else:
            self._round_event(state, event, out)

    def _sequence(self, state: TableState, event: Event, out: RowBatch) -> bool:
        """Stream checks on seq; returns True when the event is late (out of order)."""
        seq = event.seq
        last = state.last_seq
        if not state.pending_missing and (last is None or seq == last + 1):
            state.last_seq = seq  # the usual case: the next number, nothing outstanding
            return False
        pending = next((p for p in state.pending_missing if p[0] == seq), None)
        if pending is not None:
            state.pending_missing.remove(pending)
            self._violation(
                state,
                out,
                finding_at(
                    event, "EVT-ORDER", "out_of_order", Severity.MINOR, last_seq=state.last_seq
                ),
                event.round_id,
            )
            return True
        if last is not None and seq <= last:
            self._violation(
                state,
                out,
                finding_at(event, "EVT-ORDER", "stale_seq", Severity.MINOR, last_seq=last),
                event.round_id,
            )
            return True
        if last is not None and seq > last + 1:
            # Each missing number remembers the event that revealed it (the one after the gap):
            # a gap is reported there, on that event's round, if the number never comes.
            revealer = [event.round_id, str(event.event_id), seq, event.occurred_at.isoformat()]
            missing = range(last + 1, seq)
            if len(missing) > MAX_PENDING_GAP:
                self._gap(state, out, [missing[0], *revealer], size=len(missing))
            else:
                state.pending_missing.extend([m, *revealer] for m in missing)
        state.last_seq = seq
        closing = isinstance(event, TableClosed)
        for p in [p for p in state.pending_missing if closing or seq >= p[0] + GAP_WINDOW]:
            self._gap(state, out, p, size=1)
            state.pending_missing.remove(p)
        return False

    def _gap(self, state: TableState, out: RowBatch, pending: list[Any], size: int) -> None:
        missing_seq, round_id, event_id, seq, occurred_at = pending
        finding = Finding(
            rule_id="EVT-GAP",
            check="sequence_gap",
            severity=Severity.MAJOR,
            evidence={"missing_seq": missing_seq, "missing": size},
            seq=seq,
            event_id=event_id,
            occurred_at=datetime.fromisoformat(occurred_at),
        )
        # A gap inside an open round taints that round: it is marked, not silently settled.
        self._violation(state, out, finding, round_id)

    def _violation(
        self, state: TableState, out: RowBatch, finding: Finding, round_id: str | None
    ) -> None:
        if round_id is not None and round_id == state.round_id:
            state.round_findings.append(finding)
        out.add("violations", _violation_row(state, finding, round_id))

    # -- table-level events --------------------------------------------------------------------
    def _table_event(self, state: TableState, event: Event, out: RowBatch) -> None:
        game = event.game
        if isinstance(event, TableOpened):
            state.profile, state.profile_version = event.profile, event.profile_version
            state.payout_cap_cents = event.payout_cap_cents
            state.commission_unit_cents = event.commission_unit_cents
            state.limits = {lim.spot.value: [lim.min_cents, lim.max_cents] for lim in event.limits}
            state.needs_count = state.needs_wash = True
        elif isinstance(event, DealerChanged):
            state.dealer_id = event.dealer_id
            state.needs_count = state.needs_wash = True  # PGP-A7c
        elif isinstance(event, DeckOpened):
            state.decks[event.deck_id] = [event.jokers_in_box, 0, 0]
            state.needs_count = state.needs_wash = True
        elif isinstance(event, JokerDestroyed):
            state.decks.setdefault(event.deck_id, [0, 0, 0])[1] += event.count
        elif isinstance(event, DeckRetired):
            state.decks.pop(event.deck_id, None)
        elif isinstance(event, DeckCounted):
            deck = state.decks.setdefault(event.deck_id, [0, 0, 0])
            in_box, destroyed, counted = deck
            if not counted and in_box - destroyed != jokers_left_in_play(game, in_box):
                # Checked once per deck, at its first count: the box's jokers are dealt with.
                self._violation(
                    state,
                    out,
                    finding_at(
                        event,
                        JOKER_RULE[game],
                        "jokers_removed",
                        Severity.CRITICAL,
                        jokers_in_box=in_box,
                        destroyed=destroyed,
                        deck_id=event.deck_id,
                    ),
                    None,
                )
            deck[2] = 1
            expected = DECK_SIZE[game]
            if event.count != expected:
                self._violation(
                    state,
                    out,
                    finding_at(
                        event,
                        DECK_COUNT_RULE[game],
                        "deck_count",
                        Severity.CRITICAL,
                        expected=expected,
                        counted=event.count,
                        deck_id=event.deck_id,
                    ),
                    None,
                )
            state.needs_count = False
        elif isinstance(event, DeckWashed):
            state.needs_wash = False
        elif isinstance(event, ShuffleCompleted):
            state.shuffled = True
            state.cut = False
        elif isinstance(event, CutCompleted):
            state.cut = True
        elif isinstance(event, ProgressiveMeterReset):
            state.meter_cents = event.meter_cents

    # -- round-level events --------------------------------------------------------------------
    def _round_event(self, state: TableState, event: Event, out: RowBatch) -> None:
        if isinstance(event, RoundStarted):
            if state.round_id is not None and state.round_end_pending:
                # The next round has begun: numbers still missing from the last one are gaps.
                for p in [p for p in state.pending_missing if p[0] < event.seq]:
                    self._gap(state, out, p, size=1)
                    state.pending_missing.remove(p)
                self._maybe_finish(state, out)
            if state.round_id is not None:
                # The previous round never ended: close it as unsettled, never settle it.
                self._finish(state, out, abandoned=True)
            state.round_id = event.round_id
            state.round_events = [event]
            state.round_findings = []
            state.round_end_pending = False
            self._pre_round_checks(state, event, out)
            state.dealer_id = event.dealer_id
            return
        if event.round_id != state.round_id:
            self._violation(
                state,
                out,
                finding_at(
                    event,
                    "EVT-ORDER",
                    "event_outside_round",
                    Severity.MINOR,
                    open_round=state.round_id,
                ),
                event.round_id,
            )
            return
        state.round_events.append(event)
        _count_again_if_void(state, event)
        if isinstance(event, _ROUND_CLOSERS):
            state.round_end_pending = True
            self._maybe_finish(state, out)

    def _pre_round_checks(self, state: TableState, event: RoundStarted, out: RowBatch) -> None:
        game = event.game
        checks: list[Finding] = []
        if not state.shuffled:
            checks.append(
                finding_at(event, SHUFFLE_RULE[game], "shuffle_before_round", Severity.MAJOR)
            )
        elif not state.cut:
            checks.append(finding_at(event, CUT_RULE[game], "cut_before_round", Severity.MAJOR))
        if game is Game.PAI_GOW and (state.needs_count or state.needs_wash):
            checks.append(
                finding_at(
                    event,
                    "PGP-A7c",
                    "count_and_wash",
                    Severity.MAJOR,
                    counted=not state.needs_count,
                    washed=not state.needs_wash,
                )
            )
        elif game is not Game.PAI_GOW and not state.decks.get(event.deck_id, [0, 0, 0])[2]:
            checks.append(
                finding_at(event, "ALL-3", "deck_verified", Severity.MAJOR, deck_id=event.deck_id)
            )
        if game is Game.HOLDEM and state.last_round_deck == event.deck_id:
            checks.append(
                finding_at(
                    event, "THP-A2d", "alternating_decks", Severity.MAJOR, deck_id=event.deck_id
                )
            )
        for finding in checks:
            self._violation(state, out, finding, event.round_id)
        state.shuffled = state.cut = False
        state.last_round_deck = event.deck_id

    def _maybe_finish(self, state: TableState, out: RowBatch) -> None:
        if not state.round_end_pending or not state.round_events:
            return
        last_seq = state.round_events[-1].seq
        if any(p[0] < last_seq for p in state.pending_missing):
            return  # wait: the missing event may still arrive
        self._finish(state, out, abandoned=False)

    def _finish(self, state: TableState, out: RowBatch, *, abandoned: bool) -> None:
        result = finish_round(state, abandoned=abandoned)
        for finding in result.findings:
            self._violation(state, out, finding, state.round_id)
        for table, rows in result.rows.items():
            for row in rows:
                out.add(table, row)
        round_row = result.round_row
        round_row["violations"] = len(state.round_findings)
        out.add("rounds", round_row)
        if result.meter_after_cents is not None:
            state.meter_cents = result.meter_after_cents
        state.round_id = None
        state.round_events = []
        state.round_findings = []
        state.round_end_pending = False


def _count_again_if_void(state: TableState, event: Event) -> None:
    """PGP-A7c: the deck is counted and washed again after a voided round. Noted when the void
    is applied, not when its round finishes: a finish can wait on a missing seq while the count
    that follows the void arrives."""
    if isinstance(event, RoundVoided):
        state.needs_count = state.needs_wash = True


def _classify(exc: InvalidEvent) -> str:
    text = str(exc)
    if "invalid JSON" in text:
        return "invalid_json"
    if exc.fields == ("event_type",) or "does not match any of the expected tags" in text:
        return "unknown_event_type"
    return "schema"


def _violation_row(state: TableState, finding: Finding, round_id: str | None) -> dict[str, Any]:
    evidence = json.dumps(dict(finding.evidence), sort_keys=True, default=str)
    key = "|".join(
        map(str, (finding.rule_id, finding.check, state.table_id, finding.seq, finding.event_id))
    )
    return {
        "violation_id": hashlib.sha1(f"{key}|{evidence}".encode()).hexdigest()[:20],
        "rule_id": finding.rule_id,
        "check_name": finding.check,
        "severity": finding.severity.value,
        "casino_id": state.casino_id,
        "table_id": state.table_id,
        "game": state.game,
        "round_id": round_id,
        "dealer_id": state.dealer_id,
        "seq": finding.seq,
        "event_id": finding.event_id,
        "occurred_at": finding.occurred_at,
        "evidence": evidence,
    }
