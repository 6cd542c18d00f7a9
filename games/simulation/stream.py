"""One table's device output: numbered, timestamped JSON messages, with the stream faults injected.

Encodes straight to the contract's canonical bytes (the same bytes `events.dump_event` gives).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import accumulate
from typing import Any, NamedTuple

from pydantic_core import to_json

from events import CURRENT_VERSIONS, Game
from games.simulation.faults import FAULTS, Fault, FaultRecord


class Message(NamedTuple):
    """One Kafka message: key = table_id (per-table order on one partition), value = JSON."""

    key: str
    value: bytes


# tuple.__new__ skips NamedTuple's Python-level constructor (three times faster) where a
# message or a pending event is made once per event: `new_message(Message, (key, value))`.
new_message = new_pending = tuple.__new__


class Pending(NamedTuple):
    """An event before it is numbered: its type, payload fields in model order, and the device.

    `faults` are procedure faults this event carries, logged to the truth once it has a seq:
    a `Fault` (its rule for the game) or `(Fault, rule_id)` for a companion rule.
    """

    event_type: str
    device: str
    payload: dict[str, Any]
    faults: tuple[Fault | tuple[Fault, str], ...] = ()
    seat: int | None = None


_STREAM_FAULTS = (Fault.SEQ_GAP, Fault.DUPLICATE_EVENT, Fault.OUT_OF_ORDER, Fault.MALFORMED)
_UUID_MASK = ~((0xF << 76) | (0x3 << 62)) & ((1 << 128) - 1)
_UUID_BITS = (0x4 << 76) | (0x2 << 62)  # version 4, RFC 4122 variant
_CARD = re.compile(rb'"(?:[2-9TJQKA][cdhs]|Jk)"')
_DAY_PREFIX: dict[int, str] = {}
_CLOCK = [f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(86_400)]
_MILLIS = ["Z", *(f".{m:03d}000Z" for m in range(1, 1000))]


def format_ms(ms: int) -> str:
    """UTC time of `ms` since the epoch, as pydantic serialises it (`...SS.mmm000Z` or `...SSZ`)."""
    day, in_day = divmod(ms, 86_400_000)
    prefix = _DAY_PREFIX.get(day)
    if prefix is None:
        prefix = datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m-%dT")
        _DAY_PREFIX[day] = prefix
    seconds, milli = divmod(in_day, 1000)
    return prefix + _CLOCK[seconds] + _MILLIS[milli]


_TYPE_PART = {t: f'"event_type":"{t}","schema_version":{v},' for t, v in CURRENT_VERSIONS.items()}


class TableStream:
    """Numbers one table's events (seq from 1), gives them ids and times, and writes the bytes."""

    def __init__(
        self,
        *,
        casino_id: str,
        table_id: str,
        game: Game,
        rng: random.Random,
        rates: Mapping[Fault, float],
        on_fault: Callable[[FaultRecord], None] | None,
    ) -> None:
        self.table_id = table_id
        self.game = game
        self.seq = 0
        self._rng = rng
        self._on_fault = on_fault
        self._table_part = f'"casino_id":"{casino_id}","table_id":"{table_id}","game":"{game}",'
        self._stream_rates = [(f, rates.get(f, 0.0)) for f in _STREAM_FAULTS]
        self._stream_total = sum(rate for _, rate in self._stream_rates)
        h = "%032x" % ((rng.getrandbits(128) & _UUID_MASK) | _UUID_BITS)
        self._id_prefix = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-"
        self._ids = 0  # event ids: a random version-4 prefix per table and a counter

    def record(
        self,
        fault: Fault,
        *,
        rule_id: str | None = None,
        round_id: str | None,
        seat: int | None = None,
        seq: int | None = None,
        event_id: str | None = None,
    ) -> None:
        if self._on_fault is None:
            return
        spec = FAULTS[fault]
        self._on_fault(
            FaultRecord(
                fault=fault,
                rule_id=rule_id or spec.rule_ids[self.game],
                check=spec.check,
                game=self.game,
                table_id=self.table_id,
                round_id=round_id,
                seat=seat,
                seq=seq,
                event_id=event_id,
            )
        )

    def _stream_fault(self) -> Fault | None:
        draw = self._rng.random()
        if draw >= self._stream_total:
            return None
        for fault, rate in self._stream_rates:
            if draw < rate:
                return fault
            draw -= rate
        return None

    def emit(
        self, batch: Sequence[Pending], *, round_id: str | None, start_ms: int, step_ms: int
    ) -> list[Message]:
        """The messages for `batch`, in delivery order (which differs from seq order only where
        an out-of-order fault swapped two neighbours).

        In three steps, so that the bytes are written for the whole batch at once (a third
        faster than event by event): the stream faults are drawn event by event, in the order
        the random stream has always given them; every event is written; the faults are applied
        and logged, in event order, after the event's own procedure faults.
        """
        count = len(batch)
        seq, ids = self.seq, self._ids
        faults = self._draw_stream_faults(count, round_id) if self._stream_total > 0.0 else {}
        seqs: Sequence[int] = range(seq + 1, seq + count + 1)
        gaps = {index for index, (fault, _) in faults.items() if fault is Fault.SEQ_GAP}
        if gaps:  # a gap skips one seq
            seqs = list(accumulate((2 if i in gaps else 1 for i in range(count)), initial=seq))[1:]
        self.seq, self._ids = seqs[-1] if count else seq, ids + count
        rid = "null" if round_id is None else f'"{round_id}"'
        envelope = f'{self._table_part}"round_id":{rid},"seq":'
        id_prefix = self._id_prefix
        # Fields by index: a NamedTuple's attributes are slower properties.
        bodies = list(map(to_json, [pending[2] for pending in batch]))
        heads = [
            f'{{"event_id":"{id_prefix}{event_id:012x}",{_TYPE_PART[pending[0]]}{envelope}{number},'
            f'"occurred_at":"{at}","source_device":"{pending[1]}",'.encode()
            for pending, event_id, number, at in zip(
                batch, range(ids + 1, ids + count + 1), seqs, _times(start_ms, step_ms, count),
                strict=True,
            )
        ]  # fmt: skip
        key = self.table_id
        messages = [
            new_message(Message, (key, head + body[1:] if len(body) > 2 else head[:-1] + b"}"))
            for head, body in zip(heads, bodies, strict=True)
        ]
        logged = [i for i, pending in enumerate(batch) if pending[3]]
        if not faults and not logged:
            return messages
        out: list[Message] = []
        done = 0  # messages[:done] are in `out`
        for index in sorted({*faults, *logged}):
            if index < done:  # the successor of an out-of-order message, already placed
                continue
            out += messages[done:index]
            done = index + 1
            message, seq = messages[index], seqs[index]
            event_id = f"{id_prefix}{ids + index + 1:012x}"
            self._record_own(batch[index], round_id, seq, event_id)
            stream_fault, kind = faults.get(index, (None, 0))
            if stream_fault is Fault.MALFORMED:
                out.append(Message(key, _malformed(message.value, seq, kind)))
                self.record(stream_fault, round_id=round_id)
            out.append(message)
            if stream_fault in (Fault.SEQ_GAP, Fault.DUPLICATE_EVENT, Fault.OUT_OF_ORDER):
                self.record(stream_fault, round_id=round_id, seq=seq, event_id=event_id)
            if stream_fault is Fault.DUPLICATE_EVENT:
                out.append(message)
            elif stream_fault is Fault.OUT_OF_ORDER:  # delivered after its successor
                out.insert(-1, messages[index + 1])
                done = index + 2
                successor_id = f"{id_prefix}{ids + index + 2:012x}"
                self._record_own(batch[index + 1], round_id, seqs[index + 1], successor_id)
        out += messages[done:]
        return out

    def _record_own(self, pending: Pending, round_id: str | None, seq: int, event_id: str) -> None:
        """Log the procedure faults an event carries, with the seq and id it got."""
        for item in pending.faults:
            fault, rule_id = item if isinstance(item, tuple) else (item, None)
            self.record(
                fault,
                rule_id=rule_id,
                round_id=round_id,
                seat=pending.seat,
                seq=seq,
                event_id=event_id,
            )

    def _draw_stream_faults(self, count: int, round_id: str | None) -> dict[int, tuple[Fault, int]]:
        """Event index -> (stream fault, malformation kind), drawn as the events come: none for
        the event after an out-of-order one, which it swaps with. An out-of-order fault never
        moves a round's first or last event (the round's boundaries stay where they are), nor
        a table-level event: such a draw is no fault."""
        faults: dict[int, tuple[Fault, int]] = {}
        index = 0
        while index < count:
            fault = self._stream_fault()
            if fault is Fault.MALFORMED:
                faults[index] = (fault, self._rng.randrange(4))
            elif fault is Fault.OUT_OF_ORDER:
                if round_id is not None and 0 < index < count - 2:
                    faults[index] = (fault, 0)
                    index += 1  # the successor draws nothing
            elif fault is not None:
                faults[index] = (fault, 0)
            index += 1
        return faults


def _times(start_ms: int, step_ms: int, count: int) -> list[str]:
    """The UTC times of `count` events from `start_ms`, `step_ms` apart, as `format_ms` writes
    them (the day's part once, unless the batch runs past midnight)."""
    day_start = start_ms - start_ms % 86_400_000
    stamps = range(start_ms - day_start, start_ms - day_start + count * step_ms, step_ms)
    if count and stamps[-1] >= 86_400_000:
        return [format_ms(day_start + ms) for ms in stamps]
    day = format_ms(day_start)[:11]
    return [f"{day}{_CLOCK[ms // 1000]}{_MILLIS[ms % 1000]}" for ms in stamps]


def _malformed(raw: bytes, seq: int, kind: int) -> bytes:
    """A message spoilt one of four ways (`kind` 0..3), its table_id still readable."""
    if kind == 0:  # truncated JSON
        keep = raw.index(b',"round_id"')
        return raw[: keep + (len(raw) - keep) // 2]
    if kind == 1:  # a wrong type where an integer belongs
        return raw.replace(b'"seq":%d,' % seq, b'"seq":"%d",' % seq, 1)
    if kind == 2:  # an event type the contract does not know
        start = raw.index(b'"event_type":"') + 14
        return raw[:start] + b"table_exploded" + raw[raw.index(b'"', start) :]
    match = _CARD.search(raw)
    if match is None:  # no card to spoil: a naive timestamp instead
        return raw.replace(b'Z","source_device"', b'","source_device"', 1)
    return raw[: match.start()] + b'"1x"' + raw[match.end() :]
