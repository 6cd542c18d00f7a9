"""The pure processor: raw messages in, derived rows out; no I/O, deterministic, batch-agnostic.

Per table it keeps a small state (last seq, deck and dealer status, the open round's events),
checks the stream and the procedures, and settles each round with the rules engine when it ends.
The same messages give the same rows however they are cut into batches.

No input stops it: a message the contract refuses is a dead letter, a stream fault is a
violation, and an error while applying or settling a round is contained to that round (marked
`unprocessable`, with an `EVT-ENGINE` violation); every other round and table goes on.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel

from consumers import table_checks
from consumers.rounds import finish_round, round_row
from consumers.rows import RowBatch
from consumers.state import TableState, apply_table_event
from events import EVENT_MODELS, MAX_EVENT_BYTES, Event, InvalidEvent, dump_event, parse_event
from events.models import (
    Game,
    PlayerDecided,
    RoundEnded,
    RoundStarted,
    RoundVoided,
    TableClosed,
    TableOpened,
)
from games.base import RoundEvents
from games.registry import GAMES
from rules.procedure import (
    Finding,
    Severity,
    finding_at,
)

log = logging.getLogger("croupier.processor")
T = TypeVar("T")

# A missing seq is called a gap (EVT-GAP) once an event this far past it has arrived; before
# that it may still come late (EVT-ORDER). Driven by seq alone, so batching cannot change it.
# A seq further than this from the last one (forward or back) is a discontinuity (EVT-SEQ).
GAP_WINDOW = 8
# Consecutive numbers of a new numbering that resynchronise a table to it (a device reboot).
RESYNC_AFTER = 3
# Event ids remembered (between this many and twice as many) with where they were read and
# what was stored, across tables: a repeat among them is told apart (same or different
# content) without asking the lake.
RECENT_IDS = 100_000
DEAD_LETTER_RAW_LIMIT = 1 << 20
# Without a broker timestamp, a table's events may go back in time at most this much.
DEFAULT_MAX_SKEW_S = 300.0
# ... and forward at most this much from one event to the next of an open table.
MAX_SESSION_STEP = timedelta(hours=24)
_CLOCK_STEP = timedelta(minutes=1)
_CLOCK_STEP_MS = 60_000
_ROUND_CLOSERS = (RoundEnded, RoundVoided)
# what never takes the fast path: a round's bounds, and a decision (a seat decides once)
_JUDGED_ON_ARRIVAL = frozenset({RoundStarted, *_ROUND_CLOSERS, PlayerDecided})


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


class IdIndex(Protocol):
    """Every event_id stored so far (the whole history): `seen` answers for a batch of ids as
    128-bit integers (True may be a false positive, never the reverse), `add` records ids."""

    def seen(self, ids: Sequence[int]) -> Sequence[bool]: ...

    def add(self, ids: Sequence[int]) -> None: ...


class MemoryIdIndex:
    """An exact in-memory index, for the in-process paths and tests (memory grows with ids)."""

    def __init__(self) -> None:
        self._ids: set[int] = set()

    def seen(self, ids: Sequence[int]) -> Sequence[bool]:
        known = self._ids
        return [i in known for i in ids]

    def add(self, ids: Sequence[int]) -> None:
        self._ids.update(ids)


# An original found in the lake: (source partition, source offset, payload as stored).
Original = tuple[int | None, int | None, bytes]


class Processor:
    """Turns messages into rows.

    `load_state` fetches a table's last committed state; `index` knows every event_id stored
    so far and `lookup` fetches the stored originals of ids it may have seen; `round_index`
    and `lookup_rounds` do the same for the rounds started (all from the lake in the consumer;
    in memory by default). `casino_id`, when given, is the only casino
    whose events are accepted; `max_skew_s` bounds how far `occurred_at` may be from the
    broker's timestamp (or, without one, go back in time on a table).
    """

    def __init__(
        self,
        load_state: Callable[[str], dict[str, Any] | None] | None = None,
        *,
        index: IdIndex | None = None,
        round_index: IdIndex | None = None,
        lookup: Callable[[Sequence[int]], dict[int, Original]] | None = None,
        lookup_rounds: Callable[[Sequence[str]], set[str]] | None = None,
        casino_id: str | None = None,
        max_skew_s: float = DEFAULT_MAX_SKEW_S,
    ) -> None:
        self._load_state = load_state
        self.index: IdIndex = index if index is not None else MemoryIdIndex()
        self.round_index: IdIndex = round_index if round_index is not None else MemoryIdIndex()
        self._lookup = lookup
        self._lookup_rounds = lookup_rounds
        self.casino_id = casino_id
        self.max_skew_ms = int(max_skew_s * 1000)
        self.max_skew = timedelta(seconds=max_skew_s)
        self.tables: dict[str, TableState] = {}
        self._dirty: dict[str, int] = {}
        # Added to a message's offset to version its table's state (the latest version wins
        # on load). A Kafka partition's offsets only grow, and a table stays on its partition:
        # 0. Each recording numbers its lines from 0, so a file run starts above every version
        # stored (FileSource): else the state a shorter recording left lost to an older one.
        self.version_base = 0
        self._position = 0
        # event_id -> (partition, offset, payload as stored), oldest first
        self._recent: dict[int, Original] = {}
        self._keys: dict[str, bytes] = {}  # table_id -> its Kafka key
        # Round ids started (as `round_key`s): recent ones, and this batch's index answers.
        self._recent_rounds: dict[int, None] = {}
        self._maybe_rounds: set[int] = set()
        self._stored_rounds: set[int] = set()  # of the batch's maybe-rounds, those the lake has
        self._new_rounds: list[int] = []

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
        tables, dirty, recent = self.tables, self._dirty, self._recent
        # (payload bytes, partition, offset): the sink reads the envelope out of the payload.
        events = out.rows.setdefault("events", [])
        decoded: list[tuple[RawMessage, Event, bytes]] = []
        casino, flat_keys, keys = self.casino_id, _FLAT_KEYS, self._keys
        for msg in messages:
            self._position += 1
            if msg.offset is None:  # in-process: the position in the stream stands for it
                msg = msg._replace(offset=self._position)
            value = msg.value
            try:
                event: Event | None = parse_event(value)  # type: ignore[arg-type]
            except Exception:
                event = None
            if (
                # Most messages: valid, addressed right, and in the contract's own spelling
                # (see `_decode`, which judges every other message and says why).
                event is not None
                and msg.key == (keys.get(event.table_id) or self._key(event.table_id))
                and (casino is None or event.casino_id == casino)
                and event.occurred_at.year not in (1, 9999)
                and _contract_spelling(value, flat_keys.get(type(event)))  # type: ignore[arg-type]
            ):
                decoded.append((msg, event, value))  # type: ignore[arg-type]
                continue
            found = self._decode(msg, out)
            if found is not None:
                decoded.append((msg, *found))
        ids = [event.event_id.int for _, event, _ in decoded]
        started = [e.round_id for _, e, _ in decoded if type(e) is RoundStarted]
        rounds = [round_key(r) for r in started]
        maybe = self.index.seen(ids) if ids else []
        answers = self.round_index.seen(rounds) if rounds else []
        self._maybe_rounds = {k for k, m in zip(rounds, answers, strict=True) if m}
        # Rounds the index may have seen but that are not among the recent ones: whether the
        # lake stored their start, in one lookup for the batch (a device replaying a thousand
        # old rounds costs one scan of the lake, not a thousand).
        ask_rounds = {
            r for r, k in zip(started, rounds, strict=True)
            if k in self._maybe_rounds and k not in self._recent_rounds
        }  # fmt: skip
        self._stored_rounds = (
            {round_key(r) for r in self._lookup_rounds(sorted(ask_rounds))}
            if ask_rounds and self._lookup_rounds is not None
            else set()
        )
        # Ids the index may have seen but that are not among the recent ones: their stored
        # originals come from the lake, in one lookup for the batch.
        ask = [i for i, m in zip(ids, maybe, strict=True) if m and i not in recent]
        originals = self._lookup(ask) if ask and self._lookup is not None else {}
        stored: list[int] = []
        for (msg, event, value), uid, seen in zip(decoded, ids, maybe, strict=True):
            table_id = event.table_id
            state = tables.get(table_id) or self._table(table_id)
            if state.game and event.game != state.game:
                if not (state.closed and type(event) is TableOpened):
                    self._dead_letter(
                        msg,
                        out,
                        "game_mismatch",
                        f"table {table_id!r} plays {state.game}; this event says {event.game}",
                    )
                    continue
                state.game = event.game.value  # a closed table reopened for another game
            dirty[table_id] = self.version_base + (msg.offset or 0)
            prior = recent.get(uid)
            if prior is None and seen:
                prior = originals.get(uid)
            if prior is not None:
                self._duplicate(state, event, msg, value, prior, out)
                continue
            recent[uid] = (msg.partition, msg.offset, value)
            stored.append(uid)
            events.append((value, msg.partition, msg.offset))
            if state.reported:  # a run of repeats ends with the first new event
                state.reported.pop(_DUP_EPISODE, None)
            # The event's time against the message's clock (or, without one, its table's): two
            # comparisons with a window that the slow check moves on at most once a minute.
            ts = msg.timestamp_ms
            if not (
                state.time_lo <= event.occurred_at <= state.time_hi
                and (ts is None or ts <= state.clock_until_ms)
            ):
                if ts is None:
                    self._session_time(state, event, out)
                else:
                    self._message_time(state, event, out, ts)
            seq = event.seq
            if (
                # Most events: the next seq, nothing outstanding, inside the open round, and
                # neither starting nor closing it. Such an event only joins its round.
                seq == (state.last_seq or 0) + 1
                and state.round_id is not None
                and event.round_id == state.round_id
                and not state.pending_missing
                and not state.round_end_pending
                and not state.held
                and type(event) not in _JUDGED_ON_ARRIVAL
            ):
                state.last_seq = seq
                state.round_events.append(event)
                continue
            if not state.game:
                state.game, state.casino_id = event.game.value, event.casino_id
            marks = {table: len(rows) for table, rows in out.rows.items()}
            try:
                self._after(state, event, out)
            except Exception as exc:  # contained: this round only; see `_contain`
                self._contain(state, event, out, exc, marks)
        self._recent = _newest(recent)
        self._recent_rounds = _newest(self._recent_rounds)
        if stored:
            self.index.add(stored)
        if self._new_rounds:
            self.round_index.add(self._new_rounds)
            self._new_rounds = []
        return out

    def _decode(self, msg: RawMessage, out: RowBatch) -> tuple[Event, bytes] | None:
        """The event and the payload to store, or None after writing the message's dead letter."""
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
        value = raw or b""
        if event is not None:
            if msg.key is None or msg.key != event.table_id.encode():
                reason = "key_mismatch"
                detail = f"message key {msg.key!r} is not the event's table_id {event.table_id!r}"
            elif self.casino_id is not None and event.casino_id != self.casino_id:
                reason = "foreign_casino"
                detail = f"casino_id {event.casino_id!r}; this lake is {self.casino_id!r}'s"
            elif event.occurred_at.year in (1, 9999) and not _in_utc_range(event.occurred_at):
                reason = "time_out_of_range"
                detail = f"occurred_at {event.occurred_at.isoformat()} is not a time in UTC"
            elif not _contract_spelling(value, _key_count(event)):
                # Not in the contract's own spelling: escapes, a key repeated, a field left to
                # its default. One meaning only: a repeated key is refused (parsers differ on
                # which copy wins); anything else is stored as the contract writes it.
                repeated = _repeated_key(value)
                if repeated is not None:
                    reason, detail = "duplicate_key", f"the key {repeated!r} appears twice"
                else:
                    value = dump_event(event)
        if reason is None and event is not None:
            return event, value
        self._dead_letter(msg, out, reason or "unparseable", detail)
        return None

    def _dead_letter(self, msg: RawMessage, out: RowBatch, reason: str, detail: str) -> None:
        value = msg.value or b""
        out.add(
            "dead_letters",
            {
                "source_topic": msg.topic,
                "source_partition": msg.partition,
                "source_offset": msg.offset,
                "message_key": msg.key,
                "raw": value[:DEAD_LETTER_RAW_LIMIT],
                "raw_size": len(value),
                "reason": reason,
                "detail": detail[:2000],
            },
        )

    # -- duplicates, time ----------------------------------------------------------------------
    def _key(self, table_id: str) -> bytes:
        key = self._keys[table_id] = table_id.encode()
        return key

    def _duplicate(
        self,
        state: TableState,
        event: Event,
        msg: RawMessage,
        value: bytes,
        prior: Original,
        out: RowBatch,
    ) -> None:
        """A repeated event_id: never stored or applied again. The same content is a minor
        fault (reported once per episode); other content under a used id is critical, and the
        message is kept in dead_letters as evidence."""
        partition, offset, original = prior
        evidence = {
            "original": {"partition": partition, "offset": offset},
            "repeat": {"partition": msg.partition, "offset": msg.offset},
        }
        if value == original or dump_event(event) == original:
            self._stream_fault(
                state,
                out,
                finding_at(event, "EVT-DUP", "duplicate_event", Severity.MINOR, **evidence),
                event.round_id,
            )
            return
        self._violation(
            state,
            out,
            finding_at(event, "EVT-DUP", "conflicting_duplicate", Severity.CRITICAL, **evidence),
            event.round_id,
        )
        self._dead_letter(
            msg,
            out,
            "conflicting_duplicate",
            f"event_id {event.event_id} was stored with other content",
        )

    def _clock(self, state: TableState, event: Event, out: RowBatch, **evidence: Any) -> None:
        self._stream_fault(
            state,
            out,
            finding_at(
                event,
                "EVT-TIME",
                "implausible_time",
                Severity.MAJOR,
                max_skew_s=self.max_skew_ms / 1000,
                **evidence,
            ),
            event.round_id,
        )

    def _message_time(self, state: TableState, event: Event, out: RowBatch, ts: int) -> None:
        """`occurred_at` at most the skew from the message's timestamp (ms); the window then
        admits the next minute of messages, so it may be up to a minute more lenient."""
        at_ms = int(event.occurred_at.timestamp() * 1000)
        if abs(at_ms - ts) > self.max_skew_ms:
            self._clock(state, event, out, message_ms=ts)
        clock = datetime.fromtimestamp(ts / 1000, UTC)
        state.time_lo = clock - self.max_skew
        state.time_hi = clock + self.max_skew + _CLOCK_STEP
        state.clock_until_ms = ts + _CLOCK_STEP_MS

    def _session_time(self, state: TableState, event: Event, out: RowBatch) -> None:
        """Without a broker's clock: a table's events may not go back in time by more than the
        skew, nor jump forward a day, inside one session (table_opened starts a new one).

        The clock moves on in steps of at most a minute: an event inside [clock - skew,
        clock + 1 min] only needs two comparisons (`time_lo`, `time_hi`)."""
        at = event.occurred_at
        last = state.last_at
        if last is None or type(event) is TableOpened:
            pass
        elif not (last - self.max_skew <= at <= last + MAX_SESSION_STEP):
            self._clock(state, event, out, previous_at=last.isoformat())
            return  # the table's clock stays at its last plausible time
        elif at <= last:
            return
        state.last_at = at
        state.time_lo, state.time_hi = at - self.max_skew, at + _CLOCK_STEP

    def _stream_fault(
        self, state: TableState, out: RowBatch, finding: Finding, round_id: str | None
    ) -> None:
        """A delivery fault reported once per episode: a replayed recording or a stuck clock is
        one violation, not one per message. An episode of repeats ends with the table's next
        new event; the others when the table's next round starts. Repeats are counted in the table's
        state for that episode."""
        key = f"{finding.rule_id}/{finding.check}"
        count = state.reported.get(key)
        if count is not None:
            state.reported[key] = count + 1
            return
        state.reported[key] = 0
        self._violation(state, out, finding, round_id)

    def _boundary(self, state: TableState) -> None:
        state.reported = {}

    # -- containment ---------------------------------------------------------------------------
    def _contain(
        self,
        state: TableState,
        event: Event,
        out: RowBatch,
        exc: Exception,
        marks: dict[str, int],
    ) -> None:
        """An error while applying `event`: undo the rows it had produced, mark its round
        `unprocessable` with a critical EVT-ENGINE violation, and let the table go on at its
        next round. Never raises."""
        for table, rows in out.rows.items():
            del rows[marks.get(table, 0) :]
        error = f"{type(exc).__name__}: {exc}"[:1000]
        log.error(
            "round %s of table %s is unprocessable: %s",
            state.round_id or event.round_id,
            state.table_id,
            error,
            exc_info=exc,
        )
        round_id = state.round_id if state.round_id is not None else event.round_id
        finding = Finding(
            rule_id="EVT-ENGINE",
            check="unprocessable",
            severity=Severity.CRITICAL,
            evidence={
                "error": error,
                "event": {"seq": event.seq, "event_type": event.event_type},
                "round_events": [
                    [e.seq, e.event_type, str(e.event_id)] for e in state.round_events[:200]
                ],
            },
            seq=event.seq,
            event_id=str(event.event_id),
            occurred_at=event.occurred_at,
        )
        try:
            if state.round_id is not None:
                row = round_row(state, RoundEvents(state.round_events), "unprocessable")
                row["status_reason"] = error
                row["violations"] = len(state.round_findings) + 1
                out.add("rounds", row)
            out.add("violations", _violation_row(state, finding, round_id))
        except Exception:  # the state itself is beyond use: report on the event alone
            log.exception("could not describe the unprocessable round")
            out.add("violations", _violation_row(state, finding, event.round_id))
        state.skip_round = round_id
        state.round_id = None
        state.round_events = []
        state.round_findings = []
        state.round_end_pending = False
        state.held = []
        state.pending_missing = []
        state.last_seq = max(state.last_seq or 0, event.seq)

    # -- one event -----------------------------------------------------------------------------
    def _after(self, state: TableState, event: Event, out: RowBatch) -> None:
        """Everything after the event's row: rounds, table state, procedure checks."""
        verdict = self._sequence(state, event, out)
        if verdict == _HELD:
            return
        # A round whose end waited on a missing seq may be finished now that it is resolved.
        if state.round_end_pending:
            self._maybe_finish(state, out)
        if verdict == _LATE:
            self._late(state, event, out)
            return
        self._apply(state, event, out)

    def _apply(self, state: TableState, event: Event, out: RowBatch) -> None:
        if event.round_id is None:
            self._table_event(state, event, out)
        else:
            self._round_event(state, event, out)

    def _late(self, state: TableState, event: Event, out: RowBatch) -> None:
        # A late event joins its round if that round is still open; otherwise it is only
        # recorded (the violation already says it came out of order).
        if event.round_id is not None and event.round_id == state.round_id:
            if self._decided_before(state, event, out):
                return
            state.round_events.append(event)
            state.round_events.sort(key=lambda e: e.seq)
            _count_again_if_void(state, event)
            self._maybe_finish(state, out)
        elif event.round_id is not None:
            _skipped(out, event, "late")

    def _sequence(self, state: TableState, event: Event, out: RowBatch) -> str:
        """Stream checks on seq: _NEXT (apply in order), _LATE (out of order) or _HELD (a
        possible new numbering, kept until confirmed or refuted)."""
        seq = event.seq
        last = state.last_seq
        if state.held:
            if seq == state.held[-1].seq + 1:
                state.held.append(event)
                if len(state.held) >= RESYNC_AFTER:
                    self._resync(state, out)
                return _HELD
            if last is not None and seq == last + 1 + len(state.held):
                # The old numbering goes on past exactly as many numbers as were held: the held
                # events are strays with a corrupt seq, applied in the places they left empty.
                held, state.held = state.held, []
                for number, stray in enumerate(held, start=last + 1):
                    state.last_seq = number
                    if state.round_end_pending:
                        self._maybe_finish(state, out)
                    self._apply(state, stray.model_copy(update={"seq": number}), out)
                state.last_seq = seq
                return _NEXT
            if (
                last is not None
                and not (last < seq <= last + GAP_WINDOW)
                and not any(p[0] == seq for p in state.pending_missing)
            ):
                # Yet another numbering: the one held was not it.
                self._release(state, out)
                state.held = [event]
                return _HELD
            self._release(state, out)  # the old numbering goes on: the held events were strays
        if not state.pending_missing and (last is None or seq == last + 1):
            state.last_seq = seq  # the usual case: the next number, nothing outstanding
            return _NEXT
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
            return _LATE
        assert last is not None
        if not (last < seq <= last + GAP_WINDOW):
            # A jump, a step back or a restart of the numbering: reported once, and the event
            # held until the numbering it starts is confirmed (a device reboot) or not (a stray).
            self._stream_fault(
                state,
                out,
                finding_at(
                    event,
                    "EVT-SEQ",
                    "seq_jump" if seq > last else "seq_back",
                    Severity.MAJOR,
                    last_seq=last,
                ),
                event.round_id,
            )
            state.held = [event]
            return _HELD
        # Each missing number remembers the event that revealed it (the one after the gap):
        # a gap is reported there, on that event's round, if the number never comes.
        revealer = [event.round_id, str(event.event_id), seq, event.occurred_at.isoformat()]
        state.pending_missing.extend([m, *revealer] for m in range(last + 1, seq))
        state.last_seq = seq
        closing = isinstance(event, TableClosed)
        for p in [p for p in state.pending_missing if closing or seq >= p[0] + GAP_WINDOW]:
            self._gap(state, out, p, size=1)
            state.pending_missing.remove(p)
        return _NEXT

    def _release(self, state: TableState, out: RowBatch) -> None:
        """Held events whose numbering was not confirmed: each joins its round if that round
        is open (like a late event) or, at table level, is applied; otherwise only stored."""
        held, state.held = state.held, []
        for event in held:
            if event.round_id is None:
                self._table_event(state, event, out)
            else:
                self._late(state, event, out)

    def _resync(self, state: TableState, out: RowBatch) -> None:
        """A new numbering confirmed: the old one's missing numbers are forgotten, its open
        round is closed (settled if it had ended, else unsettled) unless the new numbering
        goes on with it, and the held events are applied in order."""
        held, state.held = state.held, []
        state.pending_missing = []
        if state.round_id is not None and not any(e.round_id == state.round_id for e in held):
            if state.round_end_pending:
                self._finish(state, out, abandoned=False)
            else:
                self._finish(state, out, abandoned=True)
        state.last_seq = held[0].seq - 1
        for event in held:
            self._after(state, event, out)

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
        row = _violation_row(state, finding, round_id)
        copies = 1
        while row["violation_id"] in out.violation_ids:
            # The same breach found again in the same event (the ids are the finding's hash):
            # each its own row, numbered, so the ids stay unique and the same on a rerun.
            copies += 1
            again = replace(finding, evidence={**finding.evidence, "occurrence": copies})
            row = _violation_row(state, again, round_id)
        out.violation_ids.add(row["violation_id"])
        out.add("violations", row)

    # -- table-level events --------------------------------------------------------------------
    def _table_event(self, state: TableState, event: Event, out: RowBatch) -> None:
        for finding in table_checks.run(state, event):
            self._violation(state, out, finding, None)
        apply_table_event(state, event)

    # -- round-level events --------------------------------------------------------------------
    def _replayed(self, state: TableState, round_id: str) -> bool:
        """True if `round_id` was started before (on any table): its round is never played
        twice. Remembers it otherwise."""
        if round_id == state.round_id:
            return True  # the open round's start, sent again with another event_id
        key = round_key(round_id)
        if key in self._recent_rounds:
            return True
        if key in self._maybe_rounds and (
            self._lookup_rounds is None or key in self._stored_rounds
        ):
            return True
        self._recent_rounds[key] = None
        self._new_rounds.append(key)
        return False

    def _round_event(self, state: TableState, event: Event, out: RowBatch) -> None:
        if isinstance(event, RoundStarted):
            if self._replayed(state, event.round_id):
                # A round already played (a replayed recording, a device that reuses its round
                # numbers): its events are stored, never applied again.
                self._stream_fault(
                    state,
                    out,
                    finding_at(event, "EVT-DUP", "round_replayed", Severity.MAJOR),
                    event.round_id,
                )
                if event.round_id != state.round_id:
                    state.skip_round = event.round_id
                _skipped(out, event, "round_replayed")
                return
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
            state.skip_round = None
            self._boundary(state)
            for finding in table_checks.run(state, event):
                self._violation(state, out, finding, event.round_id)
            apply_table_event(state, event)
            return
        if event.round_id != state.round_id:
            if event.round_id == state.skip_round:  # a replayed or unprocessable round's rest
                _skipped(out, event, "round_skipped")
            else:
                _skipped(out, event, "outside_round")
                self._stream_fault(
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
        if self._decided_before(state, event, out):
            return
        state.round_events.append(event)
        _count_again_if_void(state, event)
        if isinstance(event, _ROUND_CLOSERS):
            state.round_end_pending = True
            self._maybe_finish(state, out)

    def _decided_before(self, state: TableState, event: Event, out: RowBatch) -> bool:
        """A player decides once (the game's decision article): a second decision for a seat
        of the open round, a resend under a new id or a change of mind, is reported, stored,
        and never applied; the first one stands, so the round settles, and the marts count
        its wager, as the table first recorded it."""
        if not isinstance(event, PlayerDecided):
            return False
        first = next(
            (
                e
                for e in state.round_events
                if isinstance(e, PlayerDecided) and e.seat == event.seat
            ),
            None,
        )
        if first is None:
            return False
        finding = finding_at(
            event, GAMES[Game(state.game)].decision_rule, "decision_repeated", Severity.MAJOR,
            seat=event.seat,
            decision=event.decision.value,
            amount_cents=event.amount_cents,
            first_decision=first.decision.value,
            first_amount_cents=first.amount_cents,
        )  # fmt: skip
        self._violation(state, out, finding, event.round_id)
        _skipped(out, event, "decision_repeated")
        return True

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


_NEXT, _LATE, _HELD = "next", "late", "held"
# The contract's spelling starts with the event_id, 36 characters (the sink lowers their case).
_ID_FIRST = b'{"event_id":"'
_DUP_EPISODE = "EVT-DUP/duplicate_event"


def _skipped(out: RowBatch, event: Event, reason: str) -> None:
    """A round's event stored and never applied to it: the marts leave it out of the round."""
    out.add(
        "skipped_events",
        {
            "event_id": str(event.event_id),
            "table_id": event.table_id,
            "round_id": event.round_id,
            "reason": reason,
        },
    )


def _nested(annotation: Any) -> bool:
    """True if a field's type holds models (their keys count too)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_nested(arg) for arg in getattr(annotation, "__args__", ()))


def _keys_in(value: Any) -> int:
    if isinstance(value, BaseModel):
        return sum(1 + _keys_in(getattr(value, name)) for name in type(value).model_fields)
    if isinstance(value, list | tuple):
        return sum(_keys_in(v) for v in value)
    if isinstance(value, dict):
        return sum(1 + _keys_in(v) for v in value.values())
    return 0


# Keys in the contract's own JSON of an event type whose fields hold no models.
_FLAT_KEYS: dict[type[Any], int] = {
    model: len(model.model_fields)
    for model in EVENT_MODELS.values()
    if not any(_nested(f.annotation) for f in model.model_fields.values())
}


def _key_count(event: Event) -> int:
    """How many keys the contract's JSON of this event has."""
    count = _FLAT_KEYS.get(type(event))
    return count if count is not None else _keys_in(event)


def _newest(recent: dict[int, T]) -> dict[int, T]:
    """`recent` itself, or its newest RECENT_IDS entries once it holds twice as many (trimmed
    in bulk: cheaper per entry than evicting one at a time)."""
    return recent if len(recent) <= 2 * RECENT_IDS else dict(list(recent.items())[-RECENT_IDS:])


def round_key(round_id: str) -> int:
    """A round id as a 128-bit integer for the id index (the lake computes the same value as
    CAST(md5('round:' || round_id) AS UUID))."""
    return int.from_bytes(hashlib.md5(b"round:" + round_id.encode()).digest(), "big")


_TIME_FIELD = b'"occurred_at":"'
_TIME_SEPARATORS = frozenset(b"Tt ")
_AFTER_SECONDS = frozenset(b"Zz.+-")


def _contract_spelling(raw: bytes, keys: int | None) -> bool:
    """True if `raw` is spelt as the contract writes it, as far as any reader could tell apart:
    the event_id first (36 characters), no escapes, `keys` keys (`":` occurs once per key in
    JSON without escapes, so a repeated key or one left to its default changes the count), and
    a plain `occurred_at`."""
    return (
        raw.startswith(_ID_FIRST)
        and raw[49:51] == b'",'
        and b"\\" not in raw
        and raw.count(b'":') == keys
        and _plain_time(raw)
    )


def _plain_time(raw: bytes) -> bool:
    """True if `occurred_at` is spelt `YYYY-MM-DD?HH:MM:SS` then a fraction, `Z` or an offset:
    the spellings the sink's SQL reads as the contract does. The contract's parser also takes
    others (`"1736550000"`, no seconds, a comma fraction): those are stored re-spelt."""
    at = raw.find(_TIME_FIELD) + len(_TIME_FIELD)
    return (
        at >= len(_TIME_FIELD)
        and len(raw) > at + 20
        and raw[at + 4] == raw[at + 7] == 45  # -
        and raw[at + 10] in _TIME_SEPARATORS
        and raw[at + 13] == raw[at + 16] == 58  # :
        and raw[at + 19] in _AFTER_SECONDS
    )


def _in_utc_range(at: datetime) -> bool:
    try:
        at.astimezone(UTC)
    except OverflowError:
        return False
    return True


def _repeated_key(raw: bytes) -> str | None:
    """The first key that an object of `raw` repeats, if any."""
    found: list[str] = []

    def pairs(items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in items:
            if key in obj and not found:
                found.append(key)
            obj[key] = value
        return obj

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None


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
