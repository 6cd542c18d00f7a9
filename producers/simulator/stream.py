"""One table's device output: numbered, timestamped JSON messages, with the stream faults injected.

Encodes straight to the contract's canonical bytes (the same bytes `events.dump_event` gives).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from pydantic_core import to_json

from events import CURRENT_VERSIONS, Game
from producers.simulator.faults import FAULTS, Fault, FaultRecord


class Message(NamedTuple):
    """One Kafka message: key = table_id (per-table order on one partition), value = JSON."""

    key: str
    value: bytes


# tuple.__new__ skips NamedTuple's Python-level constructor: this runs once per event.
new_message = tuple.__new__


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
        an out-of-order fault swapped two neighbours)."""
        rid = "null" if round_id is None else f'"{round_id}"'
        envelope = f'{self._table_part}"round_id":{rid},"seq":'
        id_prefix = self._id_prefix
        key = self.table_id
        out: list[Message] = []
        swap_at = -1  # index in `out` of a message to deliver after the next one
        last = len(batch) - 1
        faulty = self._stream_total > 0.0
        day_start = day_end = -1
        prefix = ""
        ms = start_ms
        for index, pending in enumerate(batch):
            fault = self._stream_fault() if faulty and swap_at < 0 else None
            seq = self.seq + (2 if fault is Fault.SEQ_GAP else 1)
            self.seq = seq
            self._ids += 1
            event_id = f"{id_prefix}{self._ids:012x}"
            if not day_start <= ms < day_end:
                day_start = ms - ms % 86_400_000
                day_end = day_start + 86_400_000
                prefix = format_ms(day_start)[:11]
            seconds, milli = divmod(ms - day_start, 1000)
            ms += step_ms
            # Payload fields are already in model order, so these are the canonical bytes.
            body = to_json(pending.payload)
            head = (
                f'{{"event_id":"{event_id}",{_TYPE_PART[pending.event_type]}{envelope}{seq},'
                f'"occurred_at":"{prefix}{_CLOCK[seconds]}{_MILLIS[milli]}",'
                f'"source_device":"{pending.device}"'
            ).encode()
            raw = head + b"," + body[1:] if len(body) > 2 else head + b"}"
            if pending.faults:
                for item in pending.faults:
                    procedure_fault, rule_id = item if isinstance(item, tuple) else (item, None)
                    self.record(
                        procedure_fault,
                        rule_id=rule_id,
                        round_id=round_id,
                        seat=pending.seat,
                        seq=seq,
                        event_id=event_id,
                    )
            if fault is None:
                out.append(new_message(Message, (key, raw)))
                if swap_at >= 0:
                    out[swap_at], out[-1] = out[-1], out[swap_at]
                    swap_at = -1
                continue
            if fault is Fault.MALFORMED:
                out.append(Message(key, self._malformed(raw, seq)))
                self.record(fault, round_id=round_id)
            out.append(new_message(Message, (key, raw)))
            if fault is Fault.SEQ_GAP:
                self.record(fault, round_id=round_id, seq=seq, event_id=event_id)
            elif fault is Fault.DUPLICATE_EVENT:
                out.append(new_message(Message, (key, raw)))
                self.record(fault, round_id=round_id, seq=seq, event_id=event_id)
            elif fault is Fault.OUT_OF_ORDER and round_id is not None and 0 < index < last - 1:
                # Delivered after its successor; never the round's first or last event, so the
                # round's boundaries stay where they are.
                swap_at = len(out) - 1
                self.record(fault, round_id=round_id, seq=seq, event_id=event_id)
        return out

    def _malformed(self, raw: bytes, seq: int) -> bytes:
        kind = self._rng.randrange(4)
        if kind == 0:  # truncated JSON, table_id still readable
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
