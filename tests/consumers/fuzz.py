"""A mutation fuzzer for the consumer: one change to a clean simulated night, fed through the
processor as Kafka would deliver it, and judged against the clean night.

A *night* is a seeded simulation with every fault off (its rows are the truth). A *mutation*
changes one message of it (or inserts or drops one, or swaps two neighbours) and records every
(table_id, round_id) it may legitimately change: the round the event belongs to (a table-level
event belongs to the round it precedes, whose pre-round checks read it), the rounds around an
inserted message, the rounds of any other table or round it names, the whole table for
`table_opened` and `progressive_meter_reset` (the profile and the meter every later round
settles with), and, on a Hold'em table, the later rounds whose progressive hit pays a share of
the meter (a changed round moves the meter). A seq mutation touches only the round in which it
occurs (docs/events.md: "a discontinuity costs at most the round in which it occurs").

`run_stream` feeds a stream through a `Processor` built as the pipeline builds it, in batches
of random sizes (tiny ones around the mutation), serialising the table states after each batch
and converting each batch's rows to Arrow as the sink does; optionally it restarts the
processor from what was committed (states, event ids, stored payloads), and it reads some
streams as a recording (no broker timestamps). Most streams carry only the tables the mutation
involves (tables are processed apart), some the whole night. `judge` then checks:

- no uncaught exception (processor, state serialisation, state reload, Arrow conversion), and
  no exception the processor had to contain (EVT-ENGINE: impossible input must be a violation);
- every round the mutation does not touch settles exactly as in the clean night (its `rounds`
  row's status, wager, bets and house result, and its `settlements` rows), once;
- the lake's uniqueness keys (dbt's tests: event_id, round_id, violation_id, settlement and
  jackpot lines) hold, and no stored payload has a key twice or reads differently in the
  sink's SQL than in the contract's parser.

`sweep` is the deterministic companion: every payload field of one round at each edge value.
Run one stream again, with its reproducer, with
`uv run python -m tests.consumers.fuzz --seed S --stream I` (the failure message prints it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import random
import re
import sys
import traceback
import uuid
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from consumers.processor import Processor, RawMessage
from events import EVENT_MODELS, parse_event
from games.pai_gow.rules import DEALER, POSITIONS, group_one_position
from rules.cards import CANONICAL

PARTITIONS = 6
TOPIC = "table-events"
# A seq mutation taints the round in which it occurs (docs/events.md, "Delivery faults": a gap is
# reported on the round that was open). Set to True only if the docs come to say that a seq jump
# or restart may also cost the round after the next boundary.
SEQ_TAINTS_NEXT_ROUND = False
WHOLE_TABLE = "*"  # a touched (table_id, WHOLE_TABLE): every round of that table
_SETTLEMENT_STATE = ("table_opened", "progressive_meter_reset")
CARDS = sorted(CANONICAL, key=CANONICAL.__getitem__)  # 52 cards and "Jk", canonical spellings
CARD_FIELDS = {
    "cards_dealt": ("cards",),
    "community_dealt": ("cards",),
    "dealer_revealed": ("cards",),
    "hand_set": ("high", "low"),
}
# The parts of a `rounds` row compared with the clean night (the brief: status, money, wager).
ROUND_COLUMNS = ("status", "wager_cents", "bets", "house_result_cents")


# ---------------------------------------------------------------------------------------------
# Messages and nights


@dataclass(frozen=True, slots=True)
class Message:
    """One message as a device sends it; `ts_ms` is the broker's timestamp it gets."""

    key: bytes | None
    value: bytes | None
    ts_ms: int


def dumps(obj: Any) -> bytes:
    """The simulator's JSON form (compact, keys in order, UTF-8): a no-op round trip is exact."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass
class Night:
    """A clean night: its messages, their parsed JSON, and where each belongs."""

    seed: int
    tables: int
    hours: float
    messages: list[Message]
    objs: list[dict[str, Any]]
    table_of: list[str]
    home: list[str | None]  # the round each message counts against (table events: the next one)
    by_table: dict[str, list[int]]  # message indices per table, in order
    by_type: dict[str, list[int]]
    rounds: dict[tuple[str, str], list[int]]  # (table, round) -> message indices
    round_order: dict[str, list[str]]  # table -> its round ids in order

    @cached_property
    def position_in_table(self) -> list[int]:
        pos = [0] * len(self.messages)
        for indices in self.by_table.values():
            for n, i in enumerate(indices):
                pos[i] = n
        return pos

    def touch(self, i: int) -> set[tuple[str, str]]:
        """What changing message i may change: its home round, or all of a table whose
        settlement state it carries."""
        table = self.table_of[i]
        if self.objs[i].get("event_type") in _SETTLEMENT_STATE:
            return {(table, WHOLE_TABLE)}
        home = self.home[i]
        return {(table, home)} if home is not None else set()

    def touch_around(self, table: str, i: int) -> set[tuple[str, str]]:
        """The rounds a message inserted for `table` before clean index i may land in: the home
        rounds of that table's messages on either side."""
        indices = self.by_table.get(table, [])
        out: set[tuple[str, str]] = set()
        # binary search for the first of the table's indices >= i
        lo, hi = 0, len(indices)
        while lo < hi:
            mid = (lo + hi) // 2
            if indices[mid] < i:
                lo = mid + 1
            else:
                hi = mid
        for j in (lo - 1, lo):
            if 0 <= j < len(indices):
                home = self.home[indices[j]]
                if home is not None:
                    out.add((table, home))
        return out

    def neighbour(self, i: int, step: int) -> int | None:
        """The index of the same table's message `step` places after (or before) message i."""
        indices = self.by_table[self.table_of[i]]
        n = self.position_in_table[i] + step
        return indices[n] if 0 <= n < len(indices) else None


_NIGHTS: dict[tuple[int, int, float], Night] = {}


def load_night(seed: int, tables: int = 1, hours: float = 1.0) -> Night:
    """A clean night (every fault off), parsed and indexed; cached per process."""
    key = (seed, tables, hours)
    if key in _NIGHTS:
        return _NIGHTS[key]
    from producers.simulator import parse_faults, simulate

    sim = list(simulate(tables=tables, hours=hours, seed=seed, faults=parse_faults("none")))
    objs = [json.loads(m.value) for m in sim]
    # The broker's timestamp is the message's CreateTime, which publishers stamp with the
    # event's occurred_at; a mutated message keeps its original's, an inserted one gets the
    # time of the message before it (when it was sent).
    messages = [
        Message(
            m.key.encode(),
            m.value,
            int(datetime.fromisoformat(o["occurred_at"]).timestamp() * 1000),
        )
        for m, o in zip(sim, objs, strict=True)
    ]
    table_of = [o["table_id"] for o in objs]
    by_table: dict[str, list[int]] = defaultdict(list)
    by_type: dict[str, list[int]] = defaultdict(list)
    rounds: dict[tuple[str, str], list[int]] = defaultdict(list)
    round_order: dict[str, list[str]] = defaultdict(list)
    for i, o in enumerate(objs):
        by_table[o["table_id"]].append(i)
        by_type[o["event_type"]].append(i)
        if o["round_id"] is not None:
            rounds[(o["table_id"], o["round_id"])].append(i)
            if o["event_type"] == "round_started":
                round_order[o["table_id"]].append(o["round_id"])
    home: list[str | None] = [None] * len(objs)
    for indices in by_table.values():
        upcoming: str | None = None
        for i in reversed(indices):
            rid = objs[i]["round_id"]
            if rid is not None:
                upcoming = rid
                home[i] = rid
            else:
                home[i] = upcoming
    night = Night(
        seed=seed,
        tables=tables,
        hours=hours,
        messages=messages,
        objs=objs,
        table_of=table_of,
        home=home,
        by_table=dict(by_table),
        by_type=dict(by_type),
        rounds=dict(rounds),
        round_order=dict(round_order),
    )
    _NIGHTS[key] = night
    return night


# ---------------------------------------------------------------------------------------------
# Mutations


@dataclass(frozen=True)
class Edit:
    """`replace` message `index`, `insert` before it, or `delete` it (clean-stream indices)."""

    op: str
    index: int
    message: Message | None = None
    table: str = ""  # the table the edited message belongs to (for scoped streams)


@dataclass(frozen=True)
class Mutation:
    kind: str
    detail: str
    edits: tuple[Edit, ...]
    touched: frozenset[tuple[str, str]]

    def tables(self) -> set[str]:
        """Every table the mutation involves: those of the edited messages and of the rounds it
        touches."""
        return {e.table for e in self.edits} | {t for t, _ in self.touched}

    def apply(
        self,
        messages: Sequence[Message],
        table_of: Sequence[str] | None = None,
        tables: set[str] | None = None,
    ) -> list[Message]:
        """The mutated stream; with `tables` (and the clean messages' `table_of`), only the
        messages of those tables (a scoped stream: tables are processed independently)."""
        by_index: dict[int, list[Edit]] = defaultdict(list)
        for e in self.edits:
            by_index[e.index].append(e)
        out: list[Message] = []
        for i, msg in enumerate(messages):
            edits = by_index.get(i)
            if not edits:
                if tables is None or table_of is None or table_of[i] in tables:
                    out.append(msg)
                continue
            keep: Message | None = msg
            for e in edits:
                if e.op == "insert":
                    assert e.message is not None
                    out.append(e.message)
                elif e.op == "replace":
                    keep = e.message
                elif e.op == "delete":
                    keep = None
            if keep is not None:
                out.append(keep)
        for e in by_index.get(len(messages), []):  # inserted at the very end
            if e.op == "insert" and e.message is not None:
                out.append(e.message)
        return out

    def describe(self, night: Night) -> str:
        lines = [f"{self.kind}: {self.detail}"]
        for e in self.edits:
            original = night.messages[e.index] if e.index < len(night.messages) else None
            if e.op in ("replace", "delete") and original is not None:
                lines.append(f"  {e.op} #{e.index} (was key={original.key!r})")
                lines.append(f"    was: {_show(original.value)}")
            else:
                lines.append(f"  {e.op} before #{e.index}")
            if e.message is not None:
                lines.append(f"    now: key={e.message.key!r} value={_show(e.message.value)}")
        lines.append(f"  touched: {sorted(self.touched)}")
        return "\n".join(lines)


def _show(value: bytes | None, limit: int = 700) -> str:
    if value is None:
        return "None"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(value)} bytes)"


Mutator = Callable[[random.Random, Night], "Mutation | None"]
MUTATORS: dict[str, Mutator] = {}


def mutator(name: str) -> Callable[[Mutator], Mutator]:
    def register(fn: Mutator) -> Mutator:
        MUTATORS[name] = fn
        return fn

    return register


def _pick(rng: random.Random, night: Night, *types: str) -> int | None:
    pools = [night.by_type[t] for t in types if t in night.by_type]
    total = sum(len(p) for p in pools)
    if not total:
        return None
    n = rng.randrange(total)
    for p in pools:
        if n < len(p):
            return p[n]
        n -= len(p)
    return None


def _any(rng: random.Random, night: Night) -> int:
    return rng.randrange(len(night.messages))


def _obj(night: Night, i: int) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(night.messages[i].value or b"{}")
    return obj  # a fresh copy to mutate


def _replace(
    night: Night,
    i: int,
    value: bytes | None,
    kind: str,
    detail: str,
    *,
    key: bytes | str | None = "same",
    extra: Iterable[tuple[str, str]] = (),
) -> Mutation:
    old = night.messages[i]
    new_key = old.key if key == "same" else key
    assert not isinstance(new_key, str)
    touched = night.touch(i) | set(extra)
    return Mutation(
        kind,
        f"#{i} {night.objs[i]['event_type']} seq {night.objs[i]['seq']}: {detail}",
        (Edit("replace", i, Message(new_key, value, old.ts_ms), night.table_of[i]),),
        frozenset(touched),
    )


def _insert(
    night: Night,
    at: int,
    msg_value: bytes,
    key: bytes | None,
    kind: str,
    detail: str,
    *,
    claims: Iterable[tuple[str, str]] = (),
) -> Mutation:
    """Insert a message before clean index `at`; it touches the rounds it lands between on its
    table and whatever it claims to belong to."""
    table = json.loads(msg_value).get("table_id", "") if msg_value[:1] == b"{" else ""
    ts = night.messages[at - 1].ts_ms if at > 0 else night.messages[0].ts_ms
    touched = set(claims) | night.touch_around(table, at)
    return Mutation(kind, detail, (Edit("insert", at, Message(key, msg_value, ts), table),),
                    frozenset(touched))  # fmt: skip


# -- cards -------------------------------------------------------------------------------------


def _card_event(rng: random.Random, night: Night) -> tuple[int, str] | None:
    i = _pick(rng, night, *CARD_FIELDS)
    if i is None:
        return None
    fields = [f for f in CARD_FIELDS[night.objs[i]["event_type"]] if night.objs[i][f]]
    return (i, rng.choice(fields)) if fields else None


@mutator("card_swap")
def _card_swap(rng: random.Random, night: Night) -> Mutation | None:
    """One card replaced by any other valid card (a misread)."""
    got = _card_event(rng, night)
    if got is None:
        return None
    i, f = got
    obj = _obj(night, i)
    n = rng.randrange(len(obj[f]))
    old, obj[f][n] = obj[f][n], rng.choice([c for c in CARDS if c != obj[f][n]])
    return _replace(night, i, dumps(obj), "card_swap", f"{f}[{n}] {old} -> {obj[f][n]}")


@mutator("card_repeat_in_event")
def _card_repeat_in_event(rng: random.Random, night: Night) -> Mutation | None:
    """One card replaced by another card of the same list: a hand with a card twice."""
    got = _card_event(rng, night)
    if got is None or len(night.objs[got[0]][got[1]]) < 2:
        return None
    i, f = got
    obj = _obj(night, i)
    a, b = rng.sample(range(len(obj[f])), 2)
    old, obj[f][a] = obj[f][a], obj[f][b]
    return _replace(night, i, dumps(obj), "card_repeat_in_event", f"{f}[{a}] {old} -> {f}[{b}]")


@mutator("card_repeat_in_round")
def _card_repeat_in_round(rng: random.Random, night: Night) -> Mutation | None:
    """One card replaced by a card another event of the same round carries."""
    got = _card_event(rng, night)
    if got is None:
        return None
    i, f = got
    key = (night.table_of[i], night.objs[i]["round_id"])
    others = [
        c
        for j in night.rounds[key]
        if j != i
        for g in CARD_FIELDS.get(night.objs[j]["event_type"], ())
        for c in night.objs[j][g]
    ]
    if not others:
        return None
    obj = _obj(night, i)
    n = rng.randrange(len(obj[f]))
    old, obj[f][n] = obj[f][n], rng.choice(others)
    return _replace(
        night, i, dumps(obj), "card_repeat_in_round", f"{f}[{n}] {old} -> {obj[f][n]} (dealt)"
    )


def _dealer_group(night: Night, key: tuple[str, str]) -> int | None:
    """The index of the Pai Gow dealer's 7-card group event of a round, from dice and banker."""
    indices = night.rounds[key]
    started = next(night.objs[j] for j in indices if night.objs[j]["event_type"] == "round_started")
    rolls = [
        night.objs[j]
        for j in indices
        if night.objs[j]["event_type"] == "dice_rolled" and night.objs[j]["valid"]
    ]
    if not rolls:
        return None
    banker = started.get("banker_position")
    first = group_one_position(
        sum(rolls[-1]["dice"]), POSITIONS, DEALER if banker is None else banker
    )
    for g in range(1, POSITIONS + 1):
        if (first + g - 1) % POSITIONS == DEALER:
            return next(
                (
                    j
                    for j in indices
                    if night.objs[j]["event_type"] == "cards_dealt" and night.objs[j]["group"] == g
                ),
                None,
            )
    return None


@mutator("card_repeat_dealer")
def _card_repeat_dealer(rng: random.Random, night: Night) -> Mutation | None:
    """A card repeated in the Pai Gow dealer's group, or in the dealer's hand_set (seat 0), or in
    a Tripóker/Hold'em dealer's hand or reveal: the cases the house way and the dealer's
    qualification read."""
    i = _pick(rng, night, "round_started")
    if i is None:
        return None
    key = (night.table_of[i], night.objs[i]["round_id"])
    indices = night.rounds[key]
    choices: list[tuple[int, str]] = []
    if night.objs[i]["game"] == "pai_gow":
        g = _dealer_group(night, key)
        if g is not None:
            choices.append((g, "cards"))
        choices += [
            (j, f)
            for j in indices
            if night.objs[j]["event_type"] == "hand_set" and night.objs[j]["seat"] == 0
            for f in ("high", "low")
        ]
    else:
        choices += [
            (j, "cards")
            for j in indices
            if (night.objs[j]["event_type"] == "cards_dealt"
                and night.objs[j]["recipient"] == "dealer")
            or night.objs[j]["event_type"] == "dealer_revealed"
        ]  # fmt: skip
    choices = [(j, f) for j, f in choices if len(night.objs[j][f]) >= 2]
    if not choices:
        return None
    j, f = rng.choice(choices)
    obj = _obj(night, j)
    a, b = rng.sample(range(len(obj[f])), 2)
    old, obj[f][a] = obj[f][a], obj[f][b]
    return _replace(night, j, dumps(obj), "card_repeat_dealer", f"{f}[{a}] {old} -> {obj[f][b]}")


@mutator("card_add")
def _card_add(rng: random.Random, night: Night) -> Mutation | None:
    """A card repeated: one more copy of a card in the list (deal_order grows with it)."""
    got = _card_event(rng, night)
    if got is None:
        return None
    i, f = got
    obj = _obj(night, i)
    n = rng.randrange(len(obj[f]))
    obj[f].insert(rng.randrange(len(obj[f]) + 1), obj[f][n])
    if "deal_order" in obj:
        obj["deal_order"].append(min(64, max(obj["deal_order"]) + 1))
    return _replace(night, i, dumps(obj), "card_add", f"{f} + another {obj[f][n]}")


@mutator("card_drop")
def _card_drop(rng: random.Random, night: Night) -> Mutation | None:
    got = _card_event(rng, night)
    if got is None:
        return None
    i, f = got
    obj = _obj(night, i)
    n = rng.randrange(len(obj[f]))
    gone = obj[f].pop(n)
    if "deal_order" in obj:
        obj["deal_order"].pop(n)
    return _replace(night, i, dumps(obj), "card_drop", f"{f} - {gone}")


@mutator("card_invalid")
def _card_invalid(rng: random.Random, night: Night) -> Mutation | None:
    got = _card_event(rng, night)
    if got is None:
        return None
    i, f = got
    obj = _obj(night, i)
    n = rng.randrange(len(obj[f]))
    obj[f][n] = rng.choice(["10h", "as", "AS", "Xx", "", "Jk ", "JK", 7, None, ["As"]])
    return _replace(night, i, dumps(obj), "card_invalid", f"{f}[{n}] = {obj[f][n]!r}")


# -- seq ---------------------------------------------------------------------------------------


def _with(night: Night, i: int, **changes: Any) -> bytes:
    obj = _obj(night, i)
    obj.update(changes)
    return dumps(obj)


def _seq_touch(night: Night, *indices: int) -> set[tuple[str, str]]:
    touched: set[tuple[str, str]] = set()
    for i in indices:
        touched |= night.touch(i)
        if SEQ_TAINTS_NEXT_ROUND:
            table, home = night.table_of[i], night.home[i]
            order = night.round_order.get(table, [])
            if home in order and order.index(home) + 1 < len(order):
                touched.add((table, order[order.index(home) + 1]))
    return touched


def _seq_mutator(name: str, new_seq: Callable[[random.Random, Night, int], Any]) -> None:
    def mutate(rng: random.Random, night: Night) -> Mutation | None:
        i = _any(rng, night)
        seq = new_seq(rng, night, i)
        if seq is None or seq == night.objs[i]["seq"]:
            return None
        m = _replace(night, i, _with(night, i, seq=seq), name, f"seq -> {seq!r}")
        return Mutation(m.kind, m.detail, m.edits, frozenset(_seq_touch(night, i)))

    MUTATORS[name] = mutate


def _previous_seq(rng: random.Random, night: Night, i: int) -> int | None:
    j = night.neighbour(i, -1)
    return None if j is None else night.objs[j]["seq"]


_seq_mutator("seq_plus_1", lambda rng, night, i: night.objs[i]["seq"] + 1)
_seq_mutator("seq_plus_1000", lambda rng, night, i: night.objs[i]["seq"] + 1000)
_seq_mutator("seq_minus_5", lambda rng, night, i: max(0, night.objs[i]["seq"] - 5))
_seq_mutator("seq_reset_1", lambda rng, night, i: 1)
_seq_mutator("seq_repeat_previous", _previous_seq)
_seq_mutator("seq_max", lambda rng, night, i: rng.choice([2**62, 2**62 - 1, 2**31, 0]))
_seq_mutator(
    "seq_invalid",
    lambda rng, night, i: rng.choice([-1, 2**62 + 1, 2**63, 2**64, 1e3, "7", None, True, 1.5]),
)


@mutator("seq_swap_neighbours")
def _seq_swap(rng: random.Random, night: Night) -> Mutation | None:
    """Two neighbouring events of a table exchange their seq (one arrives 'late')."""
    i = _any(rng, night)
    j = night.neighbour(i, 1)
    if j is None:
        return None
    a, b = night.objs[i]["seq"], night.objs[j]["seq"]
    edits = (
        Edit("replace", i, Message(night.messages[i].key, _with(night, i, seq=b),
                                   night.messages[i].ts_ms), night.table_of[i]),
        Edit("replace", j, Message(night.messages[j].key, _with(night, j, seq=a),
                                   night.messages[j].ts_ms), night.table_of[j]),
    )  # fmt: skip
    detail = (
        f"#{i} {night.objs[i]['event_type']} and #{j} {night.objs[j]['event_type']}: "
        f"seq {a} <-> {b}"
    )
    return Mutation("seq_swap_neighbours", detail, edits, frozenset(_seq_touch(night, i, j)))


@mutator("deliver_swapped")
def _deliver_swapped(rng: random.Random, night: Night) -> Mutation | None:
    """Two neighbouring events of a table delivered in the other order (seqs kept)."""
    i = _any(rng, night)
    j = night.neighbour(i, 1)
    if j is None:
        return None
    mi, mj = night.messages[i], night.messages[j]
    edits = (
        Edit("replace", i, Message(mj.key, mj.value, mi.ts_ms), night.table_of[i]),
        Edit("replace", j, Message(mi.key, mi.value, mj.ts_ms), night.table_of[j]),
    )
    detail = (
        f"#{i} {night.objs[i]['event_type']} delivered after #{j} {night.objs[j]['event_type']}"
    )
    return Mutation("deliver_swapped", detail, edits, frozenset(_seq_touch(night, i, j)))


# -- whole events ------------------------------------------------------------------------------


@mutator("drop_event")
def _drop(rng: random.Random, night: Night) -> Mutation | None:
    i = _any(rng, night)
    return Mutation(
        "drop_event",
        f"#{i} {night.objs[i]['event_type']} seq {night.objs[i]['seq']} dropped",
        (Edit("delete", i, table=night.table_of[i]),),
        frozenset(night.touch(i)),
    )


def _later(rng: random.Random, night: Night, i: int, far: bool) -> int:
    """A clean index after i: right after it, or far later (beyond a 256-event memory)."""
    if not far:
        return i + 1
    pos = night.position_in_table[i]
    indices = night.by_table[night.table_of[i]]
    if pos + 300 < len(indices):
        return indices[rng.randrange(pos + 300, len(indices))] + 1
    return rng.randrange(i + 1, len(night.messages) + 1)


@mutator("duplicate_event")
def _duplicate(rng: random.Random, night: Night) -> Mutation | None:
    """The same bytes again, right after or replayed much later."""
    i = _any(rng, night)
    far = rng.random() < 0.5
    at = _later(rng, night, i, far)
    m = night.messages[i]
    return _insert(
        night, at, m.value or b"", m.key, "duplicate_event",
        f"#{i} {night.objs[i]['event_type']} seq {night.objs[i]['seq']} sent again before "
        f"#{at}" + (" (replayed late)" if far else ""),
        claims=night.touch(i),
    )  # fmt: skip


@mutator("reid_copy")
def _reid_copy(rng: random.Random, night: Night) -> Mutation | None:
    """The same event sent again under a new event_id (a device re-sending with a new id)."""
    i = _any(rng, night)
    far = rng.random() < 0.3
    at = _later(rng, night, i, far)
    new_id = str(uuid.UUID(int=rng.getrandbits(128)))
    return _insert(
        night, at, _with(night, i, event_id=new_id), night.messages[i].key, "reid_copy",
        f"#{i} {night.objs[i]['event_type']} copied as {new_id} before #{at}",
        claims=night.touch(i),
    )  # fmt: skip


@mutator("new_event_id")
def _new_event_id(rng: random.Random, night: Night) -> Mutation | None:
    """An event's id replaced in place (nothing else changes: nothing should)."""
    i = _any(rng, night)
    new_id = str(uuid.UUID(int=rng.getrandbits(128)))
    return _replace(night, i, _with(night, i, event_id=new_id), "new_event_id", f"id {new_id}")


def _alter_content(rng: random.Random, obj: dict[str, Any]) -> str:
    """Change one payload value of an event, keeping it valid where possible."""
    money = [k for k, v in obj.items() if k.endswith("_cents") and isinstance(v, int)]
    if money:
        k = rng.choice(money)
        obj[k] = obj[k] + rng.choice([1, 100, 2900])
        return f"{k} -> {obj[k]}"
    if obj.get("seat") is not None:
        obj["seat"] = obj["seat"] % 6 + 1
        return f"seat -> {obj['seat']}"
    obj["occurred_at"] = obj["occurred_at"].replace("Z", ".5Z") if "." not in obj[
        "occurred_at"] else obj["occurred_at"][:-2] + "9Z"  # fmt: skip
    return f"occurred_at -> {obj['occurred_at']}"


@mutator("reuse_id_changed")
def _reuse_id_changed(rng: random.Random, night: Night) -> Mutation | None:
    """An event_id sent again with different content (e.g. another amount)."""
    i = _pick(rng, night, "bet_placed", "payout_recorded", "player_decided", "fill_recorded",
              "credit_recorded")  # fmt: skip
    if i is None:
        return None
    at = _later(rng, night, i, rng.random() < 0.5)
    obj = _obj(night, i)
    change = _alter_content(rng, obj)
    return _insert(
        night, at, dumps(obj), night.messages[i].key, "reuse_id_changed",
        f"#{i} {night.objs[i]['event_type']}'s id again before #{at} with {change}",
        claims=night.touch(i),
    )  # fmt: skip


@mutator("reuse_id_in_place")
def _reuse_id_in_place(rng: random.Random, night: Night) -> Mutation | None:
    """An event takes the id of an earlier event of the same table (a different event)."""
    i = _any(rng, night)
    j = night.neighbour(i, -rng.randint(1, 400))
    if j is None:
        j = night.neighbour(i, -1)
    if j is None:
        return None
    return _replace(
        night, i, _with(night, i, event_id=night.objs[j]["event_id"]), "reuse_id_in_place",
        f"takes the id of #{j} {night.objs[j]['event_type']}", extra=night.touch(j),
    )  # fmt: skip


@mutator("id_from_other_table")
def _id_from_other_table(rng: random.Random, night: Night) -> Mutation | None:
    """An event takes the event_id of another table's event (either may be first)."""
    i = _any(rng, night)
    others = [t for t in night.by_table if t != night.table_of[i]]
    if not others:
        return None
    j = rng.choice(night.by_table[rng.choice(others)])
    return _replace(
        night, i, _with(night, i, event_id=night.objs[j]["event_id"]), "id_from_other_table",
        f"takes the id of #{j} {night.objs[j]['event_type']} of {night.table_of[j]}",
        extra=night.touch(j),
    )  # fmt: skip


# -- fields ------------------------------------------------------------------------------------

AMOUNTS: list[Any] = [0, -1, -(10**13), 1, 10**13, 10**13 + 1, 2**62, 2**63, 2**64, 10**30,
                      1.5, 1e3, "100", True, None]  # fmt: skip


@mutator("amount")
def _amount(rng: random.Random, night: Night) -> Mutation | None:
    """A money field set to 0, negative, 1, the maximum, beyond it, or another type."""
    i = _pick(rng, night, "bet_placed", "player_decided", "payout_recorded", "fill_recorded",
              "credit_recorded", "drop_recorded", "progressive_meter_reset",
              "progressive_meter_recorded", "table_opened")  # fmt: skip
    if i is None:
        return None
    obj = _obj(night, i)
    value = rng.choice(AMOUNTS)
    if obj["event_type"] == "table_opened":
        limit = rng.choice(obj["limits"])
        k = rng.choice(["min_cents", "max_cents"])
        limit[k] = value
        what = f"limits[{limit['spot']}].{k}"
    else:
        k = rng.choice([k for k in obj if k.endswith("_cents")])
        obj[k] = value
        what = k
    return _replace(night, i, dumps(obj), "amount", f"{what} -> {value!r}")


SEATS: list[Any] = [0, 1, 2, 3, 4, 5, 6, 7, 8, -1, None, "3", 2.0]


@mutator("seat")
def _seat(rng: random.Random, night: Night) -> Mutation | None:
    i = _pick(rng, night, "bet_placed", "player_decided", "hand_set", "payout_recorded",
              "cards_dealt", "cut_completed")  # fmt: skip
    if i is None:
        return None
    obj = _obj(night, i)
    if obj.get("seat") is None and obj["event_type"] in ("cards_dealt", "cut_completed"):
        return None
    value = rng.choice(SEATS)
    if value == obj["seat"] and type(value) is type(obj["seat"]):
        return None
    obj["seat"] = value
    return _replace(night, i, dumps(obj), "seat", f"seat -> {value!r}")


def _same_payload_types() -> dict[str, list[str]]:
    """event_type -> the other types with exactly the same payload fields (a swap stays valid
    as far as fields go)."""
    fields = {
        name: tuple(sorted(set(model.model_fields) - {"event_type", "schema_version"}))
        for name, model in EVENT_MODELS.items()
    }
    return {
        name: [o for o, f in fields.items() if f == fields[name] and o != name] for name in fields
    }


_SAME_FIELDS = _same_payload_types()


@mutator("event_type")
def _event_type(rng: random.Random, night: Night) -> Mutation | None:
    """The type changed to another valid type: one with the same fields when there is one (the
    event stays valid: bets_closed <-> round_ended, deck_inspected <-> deck_washed ...),
    else any other (usually a dead letter)."""
    i = _any(rng, night)
    name = night.objs[i]["event_type"]
    same = _SAME_FIELDS.get(name, [])
    new = rng.choice(same) if same and rng.random() < 0.7 else rng.choice(
        [t for t in EVENT_MODELS if t != name])  # fmt: skip
    obj = _obj(night, i)
    obj["event_type"] = new
    from events.codec import CURRENT_VERSIONS

    obj["schema_version"] = CURRENT_VERSIONS[new]
    return _replace(night, i, dumps(obj), "event_type", f"{name} -> {new}")


TIMES = [
    "2099-01-10T23:00:00Z", "1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z",
    "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59Z", "9999-12-31T23:59:59-14:00",
    "2025-01-10t23:00:00z", "2025-01-10 23:00:00Z", "2025-01-10T23:00:00.123456789Z",
    "2025-01-11T04:30:00+05:30", "2025-01-10T23:59:60Z", "2025-02-30T00:00:00Z",
    "2025-01-10T23:00:00", "1736550000", "", "2025-01-10T23:00:00+24:00",
    # spellings the contract's parser may accept that other readers (DuckDB) may not
    "1736550000000", "1736550000.5", "0", "-1", "2025-01-10T23:00Z", "2025-01-10T23:00:00,5Z",
    "2025-01-10T23:00:00+0530", "2025-01-10T23:00:00-00:00", "2025-01-10T23:00:00.000000001+14:00",
]  # fmt: skip


@mutator("occurred_at")
def _occurred_at(rng: random.Random, night: Night) -> Mutation | None:
    """A far future or past (year 1, 9999), an odd but valid spelling, or an invalid time."""
    i = _any(rng, night)
    value: Any = rng.choice([*TIMES, 1736550000])
    return _replace(night, i, _with(night, i, occurred_at=value), "occurred_at", f"-> {value!r}")


UUID_SPELLINGS: tuple[Callable[[str], str], ...] = (
    str.upper,
    lambda u: u.replace("-", ""),
    lambda u: "{" + u + "}",
    lambda u: "urn:uuid:" + u,
    lambda u: u[:8] + u[9:13] + "-" + u[14:],  # dashes elsewhere
    lambda u: u.upper().replace("-", ""),
)


@mutator("event_id_spelling")
def _event_id_spelling(rng: random.Random, night: Night) -> Mutation | None:
    """The same event_id spelled otherwise (upper case, no dashes, braces, urn:uuid:): one id,
    whatever the spelling, for dedupe and for every reader."""
    i = _any(rng, night)
    n = rng.randrange(len(UUID_SPELLINGS))
    value = UUID_SPELLINGS[n](night.objs[i]["event_id"])
    return _replace(night, i, _with(night, i, event_id=value), "event_id_spelling", f"-> {value}")


@mutator("occurred_at_shift")
def _occurred_at_shift(rng: random.Random, night: Night) -> Mutation | None:
    """The same instant written with another offset, or moved by minutes to days."""
    i = _any(rng, night)
    from datetime import timedelta, timezone

    at = datetime.fromisoformat(night.objs[i]["occurred_at"])
    if rng.random() < 0.4:
        tz = timezone(timedelta(minutes=rng.choice([-14 * 60, -5 * 60, 330, 14 * 60])))
        value = at.astimezone(tz).isoformat()
    else:
        value = (at + timedelta(seconds=rng.choice([-86400 * 400, -3600, -300, 300, 7200,
                                                    86400 * 3]))).isoformat()  # fmt: skip
    return _replace(
        night, i, _with(night, i, occurred_at=value), "occurred_at_shift", f"-> {value!r}"
    )


@mutator("game")
def _game(rng: random.Random, night: Night) -> Mutation | None:
    """The event claims another game than its table's (the table's first event included)."""
    i = rng.choice([_any(rng, night), _pick(rng, night, "table_opened") or 0])
    game = rng.choice([g for g in ("pai_gow", "tripoker", "holdem") if g != night.objs[i]["game"]])
    return _replace(night, i, _with(night, i, game=game), "game", f"-> {game}")


@mutator("casino_id")
def _casino(rng: random.Random, night: Night) -> Mutation | None:
    i = rng.choice([_any(rng, night), _pick(rng, night, "table_opened") or 0])
    return _replace(night, i, _with(night, i, casino_id="casino-other-99"), "casino_id",
                    "-> casino-other-99")  # fmt: skip


@mutator("round_id")
def _round_id(rng: random.Random, night: Night) -> Mutation | None:
    """A round event names the table's previous or next round, a new one, or none; a table
    event names a round."""
    i = _any(rng, night)
    table, rid = night.table_of[i], night.objs[i]["round_id"]
    order = night.round_order.get(table, [])
    extra: set[tuple[str, str]] = set()
    others = [t for t in night.round_order if t != table and night.round_order[t]]
    if rid is None:
        value: Any = rng.choice(order) if order else "R-NEW"
    elif others and rng.random() < 0.25:
        # Another table's round id (round ids are keys across the casino): both tables' rounds
        # of that id are touched, whichever is first keeps it.
        other = rng.choice(others)
        value = rng.choice(night.round_order[other])
        extra.add((other, value))
    else:
        n = order.index(rid) if rid in order else 0
        near = [order[k] for k in (n - 1, n + 1) if 0 <= k < len(order)]
        value = rng.choice([*near, f"{table}-R99999", None, ""])
    if isinstance(value, str) and value:
        extra.add((table, value))
    return _replace(night, i, _with(night, i, round_id=value), "round_id", f"-> {value!r}",
                    extra=extra)  # fmt: skip


@mutator("table_id")
def _table_id(rng: random.Random, night: Night) -> Mutation | None:
    """The event claims another table (existing or new), with the key kept or made to match."""
    i = _any(rng, night)
    others = [t for t in night.by_table if t != night.table_of[i]]
    new = rng.choice([*others, "XX-99"])
    follow_key = rng.random() < 0.5
    key: bytes | str | None = new.encode() if follow_key else "same"
    return _replace(
        night, i, _with(night, i, table_id=new), "table_id",
        f"-> {new} (key {'follows' if follow_key else 'kept'})", key=key,
        extra=night.touch_around(new, i) if new in night.by_table else (),
    )  # fmt: skip


@mutator("wrong_key")
def _wrong_key(rng: random.Random, night: Night) -> Mutation | None:
    i = _any(rng, night)
    others = [t for t in night.by_table if t != night.table_of[i]]
    key = rng.choice([*(t.encode() for t in others), b"", b"\xff\xfe", b"PG-01 "])
    return _replace(night, i, night.messages[i].value, "wrong_key", f"key {key!r}", key=key)


@mutator("null_key")
def _null_key(rng: random.Random, night: Night) -> Mutation | None:
    i = _any(rng, night)
    return _replace(night, i, night.messages[i].value, "null_key", "key None", key=None)


@mutator("field_extra_missing_null")
def _field_shape(rng: random.Random, night: Night) -> Mutation | None:
    """An unknown field added, a field removed, or a field set to null / to the wrong type."""
    i = _any(rng, night)
    obj = _obj(night, i)
    k = rng.choice(list(obj))
    how = rng.choice(["extra", "missing", "null", "list", "object", "string"])
    if how == "extra":
        obj["x_extra"] = 1
    elif how == "missing":
        del obj[k]
    else:
        obj[k] = {"null": None, "list": [obj[k]], "object": {"v": obj[k]}, "string": str(obj[k])}[
            how
        ]
    return _replace(night, i, dumps(obj), "field_extra_missing_null", f"{how} {k}")


@mutator("unicode")
def _unicode(rng: random.Random, night: Night) -> Mutation | None:
    """Text fields with odd Unicode: a lone surrogate escape, emoji, NUL, or ids spelled with
    escapes (same text, other bytes)."""
    i = _any(rng, night)
    obj = _obj(night, i)
    texts = [k for k in ("reason", "back_colour") if isinstance(obj.get(k), str)]
    how = rng.choice(["surrogate", "emoji", "nul", "escaped_id", "long"])
    raw: bytes
    if how == "escaped_id":
        raw = dumps(obj).replace(
            b'"table_id":"' + obj["table_id"][0].encode(),
            b'"table_id":"\\u00' + f"{ord(obj['table_id'][0]):02x}".encode(),
        )
        return _replace(night, i, raw, "unicode", "table_id spelled with a \\u escape")
    if not texts:
        i = _pick(rng, night, "round_voided", "deck_retired", "deck_opened",
                  "progressive_meter_reset") or i  # fmt: skip
        obj = _obj(night, i)
        texts = [k for k in ("reason", "back_colour") if isinstance(obj.get(k), str)]
        if not texts:
            return None
    k = rng.choice(texts)
    if how == "surrogate":
        raw = dumps(obj).replace(f'"{k}":"'.encode(), f'"{k}":"\\ud800'.encode(), 1)
    else:
        obj[k] = {"emoji": "🂡 misdeal", "nul": "mis\x00deal", "long": "x" * 200}[how]
        raw = dumps(obj)
    return _replace(night, i, raw, "unicode", f"{how} in {k}")


PAYLOAD_VALUES: dict[str, list[Any]] = {
    "valid": [True, False],
    "face_up": [True, False],
    "banker_position": [0, 1, 3, 6, 7, None],
    "recipient": ["seat", "dealer", "group", "burn", "discard"],
    "spot": ["main", "ante", "ante_bonus", "pair_plus", "play", "call", "progressive"],
    "decision": ["play", "fold", "call", "surrender"],
    "street": ["flop", "turn", "river"],
    "group": [1, 2, 4, 7, None],
    "method": ["manual", "machine"],
    "by": ["player", "dealer"],
    "kind": ["opening", "closing"],
    "count": [0, 1, 2, 51, 52, 53, 64],
    "depth": [0, 1, 64],
    "jokers_in_box": [0, 1, 2],
    "seats": [1, 6, 7],
    "profile_version": [1, 2, 99],
    "profile": ["pai-gow/pe-1999", "tripoker/pe-2005", "holdem/pe-2011", "no/such-profile"],
    "deck_id": ["PG-01-D1", "TP-01-D1", "TH-01-D1", "TH-01-D2", "D-NEW"],
    "dealer_id": ["dealer-x", "PG-01-dealer-1"],
    "player_ref": ["P0000000000", None],
    "limits": [[], [{"spot": "main", "min_cents": 1, "max_cents": 1}]],
    "chips": [[], [{"denomination_cents": 1, "count": 0}]],
    "high": [[], ["As"], ["As", "Kd", "Qc", "Jh", "Ts", "9d", "8c"]],
    "low": [[], ["As"], ["2c", "3d", "4h"]],
}


@mutator("payload_value")
def _payload_value(rng: random.Random, night: Night) -> Mutation | None:
    """One payload field set to another value of its type (mostly still valid): dice, validity,
    banker, recipient, spot, decision, street, group, deal order, profile, deck, dealer ..."""
    i = _any(rng, night)
    obj = _obj(night, i)
    fields = [k for k in obj if k in PAYLOAD_VALUES or k in ("dice", "deal_order")]
    if not fields:
        return None
    k = rng.choice(fields)
    if k == "dice":
        value: Any = [rng.randint(1, 6) for _ in range(3)]
    elif k == "deal_order":
        value = rng.choice([sorted(obj[k], reverse=True), [1] * len(obj[k]),
                            [rng.randint(1, 64) for _ in obj[k]]])  # fmt: skip
    else:
        value = rng.choice([v for v in PAYLOAD_VALUES[k] if v != obj[k]])
    if value == obj[k]:
        return None
    obj[k] = value
    return _replace(night, i, dumps(obj), "payload_value", f"{k} -> {value!r}")


@mutator("table_closed_midnight")
def _table_closed_midnight(rng: random.Random, night: Night) -> Mutation | None:
    """A table-level event between rounds replaced by a `table_closed` (same envelope): the
    table closes in the middle of the night and its events go on."""
    i = _pick(rng, night, "shuffle_completed", "cut_completed", "fill_recorded", "credit_recorded",
              "dealer_changed", "deck_counted", "deck_washed")  # fmt: skip
    if i is None:
        return None
    obj = _obj(night, i)
    envelope = ("event_id", "event_type", "schema_version", "casino_id", "table_id", "game",
                "round_id", "seq", "occurred_at", "source_device")  # fmt: skip
    closed = {k: obj[k] for k in envelope}
    closed.update(event_type="table_closed", schema_version=1)
    return _replace(night, i, dumps(closed), "table_closed_midnight", "-> table_closed")


# -- bytes -------------------------------------------------------------------------------------


@mutator("truncate")
def _truncate(rng: random.Random, night: Night) -> Mutation | None:
    i = _any(rng, night)
    value = night.messages[i].value or b""
    n = rng.randrange(len(value))
    return _replace(night, i, value[:n], "truncate", f"to {n} of {len(value)} bytes")


@mutator("flip_byte")
def _flip(rng: random.Random, night: Night) -> Mutation | None:
    i = _any(rng, night)
    value = bytearray(night.messages[i].value or b"")
    n = rng.randrange(len(value))
    bit = 1 << rng.randrange(8)
    value[n] ^= bit
    return _replace(night, i, bytes(value), "flip_byte", f"byte {n} ^ {bit:#x}")


@mutator("bytes_odd")
def _bytes_odd(rng: random.Random, night: Night) -> Mutation | None:
    """Empty, null, whitespace, BOM, invalid UTF-8, oversized, deep nesting, NaN, not an object."""
    i = _any(rng, night)
    value = night.messages[i].value or b""
    how = rng.choice(["none", "empty", "null", "array", "object", "bom", "spaces", "not_utf8",
                      "oversized", "oversized_spaces", "deep", "nan", "two_objects",
                      "huge_number", "latin1"])  # fmt: skip
    new: bytes | None = {
        "none": None,
        "empty": b"",
        "null": b"null",
        "array": b"[" + value + b"]",
        "object": b"{}",
        "bom": b"\xef\xbb\xbf" + value,
        "spaces": b" \n\t" + value + b"\r\n ",
        "not_utf8": value.replace(b'"source_device":"', b'"source_device":"\xff', 1),
        "oversized": value[:-1] + b',"x":"' + b"a" * 70_000 + b'"}',
        "oversized_spaces": value + b" " * (65_536 - len(value) + 1),
        "deep": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        "nan": value.replace(b'"seq":', b'"seq":NaN,"y":', 1),
        "two_objects": value + value,
        "huge_number": value.replace(b'"seq":', b'"seq":1' + b"0" * 5000 + b',"z":', 1),
        "latin1": value.replace(b'"reason":"', b'"reason":"\xe9', 1)
        if b'"reason":"' in value
        else value.replace(b'"source_device":"', b'"source_device":"\xe9', 1),
    }[how]
    return _replace(night, i, new, "bytes_odd", how)


@mutator("duplicate_key")
def _duplicate_key(rng: random.Random, night: Night) -> Mutation | None:
    """A JSON key twice with different values: two parsers may read different things."""
    i = _any(rng, night)
    obj = night.objs[i]
    names = ("amount_cents", "seq", "event_id", "table_id", "event_type", "round_id",
             "paid_cents", "occurred_at", "seat")  # fmt: skip
    choices = [k for k in names if k in obj]
    k = rng.choice(choices)
    decoy: Any = {
        "amount_cents": 7, "seq": obj["seq"] + 1000, "event_id": str(uuid.UUID(int=i + 1)),
        "table_id": "XX-99", "event_type": "round_ended", "round_id": "XX-R1", "paid_cents": 7,
        "occurred_at": "2099-01-01T00:00:00Z", "seat": 7,
    }[k]  # fmt: skip
    value = night.messages[i].value or b""
    pair = f'"{k}":{json.dumps(decoy)},'.encode()
    first = rng.random() < 0.5  # the decoy before the real key, or after it
    if first:
        new = value.replace(f'"{k}":'.encode(), pair + f'"{k}":'.encode(), 1)
    else:
        new = value[:-1] + b"," + pair[:-1] + b"}"
    return _replace(
        night,
        i,
        new,
        "duplicate_key",
        f"{k} also {decoy!r} ({'before' if first else 'after'} the real one)",
    )


KINDS: tuple[str, ...] = tuple(MUTATORS)


def combine(mutations: Sequence[Mutation]) -> Mutation:
    """Several mutations as one (their edits together; what any of them touches is touched)."""
    if len(mutations) == 1:
        return mutations[0]
    return Mutation(
        "+".join(m.kind for m in mutations),
        " | ".join(f"{m.kind}: {m.detail}" for m in mutations),
        tuple(e for m in mutations for e in m.edits),
        frozenset(t for m in mutations for t in m.touched),
    )


ENVELOPE = frozenset(
    ("event_id", "event_type", "schema_version", "casino_id", "table_id", "game", "round_id",
     "seq", "occurred_at", "source_device")
)  # fmt: skip


def field_values(obj: dict[str, Any], key: str) -> list[Any]:
    """Edge values for one payload field (valid and not): for the deterministic sweep."""
    value = obj[key]
    if key == "seat":
        return SEATS
    if key.endswith("_cents"):
        return AMOUNTS
    if key == "dice":
        return [[6, 6, 6], [1, 1, 1], [0, 3, 3], [7, 1, 1], [1, 2], [1, 2, 3, 4]]
    if key in ("cards", "high", "low") and isinstance(value, list):
        first = value[:1] or ["As"]
        return [[], first * 2, [*value, *first], value[1:], ["Jk", *value[1:]], CARDS[:7],
                CARDS[:16], [*value[:-1], "Jk"] if value else ["Jk"]]  # fmt: skip
    if key == "deal_order" and isinstance(value, list):
        return [[1] * len(value), list(reversed(value)), [64] * len(value), [*value, 9], []]
    return [v for v in PAYLOAD_VALUES.get(key, []) if v != value]


def sweep(night: Night, table: str, round_no: int = 2) -> Iterable[tuple[str, Mutation, int]]:
    """Every payload field of every event of one round of `table` set to each of its edge
    values, one at a time: (what, mutation, end) with `end` the clean index of the message
    that ends the next round (the stream up to it shows that round settled as before)."""
    order = night.round_order[table]
    rid, following = order[round_no], order[round_no + 1]
    end = night.rounds[(table, following)][-1]
    for i in night.rounds[(table, rid)]:
        obj = night.objs[i]
        for key in obj:
            if key in ENVELOPE:
                continue
            for value in field_values(obj, key):
                changed = dict(obj, **{key: value})
                m = _replace(night, i, dumps(changed), "sweep",
                             f"{obj['event_type']}.{key} -> {value!r}")  # fmt: skip
                yield f"{table} {obj['event_type']}.{key} = {value!r}", m, end


def mutate(rng: random.Random, night: Night, kind: str) -> Mutation:
    for _ in range(200):
        m = MUTATORS[kind](rng, night)
        if m is not None:
            return m
    raise RuntimeError(f"mutator {kind} found nothing to mutate in night {night.seed}")


# ---------------------------------------------------------------------------------------------
# Running a stream


def to_raw(messages: Sequence[Message], *, recording: bool = False) -> list[RawMessage]:
    """Messages as the Kafka source hands them over: partition by key, offsets per partition,
    the broker's timestamp. A `recording` (`croupier consume --file`): one partition, offsets
    the line numbers, no broker timestamp (the processor judges times by the session)."""
    if recording:
        return [RawMessage(m.value, m.key, "file:fuzz", 0, n, None) for n, m in enumerate(messages)]
    next_offset = [0] * PARTITIONS
    raw = []
    for m in messages:
        p = zlib.crc32(m.key) % PARTITIONS if m.key is not None else 0
        raw.append(RawMessage(m.value, m.key, TOPIC, p, next_offset[p], m.ts_ms))
        next_offset[p] += 1
    return raw


def batch_cuts(rng: random.Random, n: int, around: int) -> list[int]:
    """Batch boundaries: random sizes, tiny ones near the mutation at `around`."""
    cuts = [0]
    mode = rng.choice(["small", "medium", "large", "one"])
    while cuts[-1] < n:
        at = cuts[-1]
        if abs(at - around) < 40:
            size = rng.randint(1, 6)
        elif mode == "one":
            size = n
        elif mode == "small":
            size = rng.randint(1, 200)
        elif mode == "medium":
            size = rng.randint(100, 1500)
        else:
            size = rng.randint(1000, 6000)
        cuts.append(min(n, at + size))
    return cuts


@dataclass
class Crash:
    where: str  # "process", "take_dirty_states", "reload_state", "to_arrow"
    exc_type: str
    message: str
    frame: str  # the innermost project frame: file:line in function
    traceback: str
    batch: tuple[int, int]  # message index range [start, end) of the batch

    @property
    def signature(self) -> str:
        text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f-]{27}\b", "<id>", self.message)
        text = re.sub(r"'(?:[2-9TJQKA][cdhs]|Jk)'", "<card>", text)
        text = re.sub(r"\d+", "N", text)[:160]
        return f"{self.exc_type}: {text} @ {self.frame} [{self.where}]"


@dataclass
class StreamResult:
    rows: dict[str, list[Any]]
    crash: Crash | None
    restarted_at: int | None
    cuts: list[int]
    # Errors the processor contained (logged by it, marked EVT-ENGINE): each an exception the
    # engine raised where the issue wants impossible input reported as a violation.
    contained: list[Crash] = field(default_factory=list)
    recording: bool = False  # read as a recording: no broker timestamps


class _Contained(logging.Handler):
    """Collects the exceptions the processor logs as it contains them (EVT-ENGINE)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.errors: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.errors.append(record.exc_info[1])


def _crash(where: str, exc: BaseException, batch: tuple[int, int]) -> Crash:
    tb = traceback.extract_tb(exc.__traceback__)
    project = [f for f in tb if "/site-packages/" not in f.filename and "fuzz.py" not in f.filename]
    f = (project or tb)[-1] if (project or tb) else None
    frame = f"{_relative(f.filename)}:{f.lineno} in {f.name}" if f else "?"
    return Crash(
        where=where,
        exc_type=type(exc).__name__,
        message=str(exc)[:500],
        frame=frame,
        traceback="".join(traceback.format_exception(exc))[-4000:],
        batch=batch,
    )


def _relative(filename: str) -> str:
    """A path relative to the code under test (the checkout `consumers` is imported from)."""
    import consumers

    root = Path(consumers.__file__).resolve().parents[1]
    path = Path(filename).resolve()
    return str(path.relative_to(root)) if path.is_relative_to(root) else filename


CASINO = "casino-lima-01"  # the simulator's, configured as the consumer's casino


def new_processor(
    load_state: Callable[[str], dict[str, Any] | None] | None = None,
    stored_events: dict[int, tuple[int | None, int | None, bytes]] | None = None,
) -> Processor:
    """A processor as the pipeline builds one (the casino configured; after a restart, the
    table states, the event-id index and the stored originals recovered from what was
    committed), with whatever of that the processor under test supports."""
    import inspect

    params = inspect.signature(Processor).parameters
    kwargs: dict[str, Any] = {}
    if "casino_id" in params:
        kwargs["casino_id"] = CASINO
    if stored_events is not None and "index" in params:
        from consumers.processor import MemoryIdIndex

        index = MemoryIdIndex()
        index.add(list(stored_events))
        kwargs["index"] = index
        kwargs["lookup"] = lambda ids: {i: stored_events[i] for i in ids if i in stored_events}
        if "round_index" in params:  # the rounds started, recovered the same way
            from consumers.processor import round_key

            started = {
                json.loads(payload)["round_id"]
                for _, _, payload in stored_events.values()
                if b'"event_type":"round_started"' in payload
            }
            rounds = MemoryIdIndex()
            rounds.add([round_key(r) for r in started])
            kwargs["round_index"] = rounds
            kwargs["lookup_rounds"] = lambda ids: {r for r in ids if r in started}
    return Processor(load_state, **kwargs)


def _stored_id(payload: bytes) -> int:
    """The event_id of a stored payload, as an integer (the contract's spelling puts it first)."""
    try:
        if payload.startswith(b'{"event_id":"'):
            return uuid.UUID(payload[13:49].decode()).int
        return uuid.UUID(json.loads(payload)["event_id"]).int
    except (ValueError, KeyError, TypeError):
        return -1


def run_stream(
    messages: Sequence[Message],
    rng: random.Random,
    *,
    around: int = 0,
    restart: bool = False,
    arrow: bool = True,
    cuts: list[int] | None = None,
    recording: bool = False,
) -> StreamResult:
    """Feed the messages through a fresh processor as the pipeline does; never raises.

    After each batch the dirty table states are serialised (the pipeline's `take_dirty_states`)
    and the rows converted to Arrow (the sink's `to_arrow`). With `restart`, the processor is
    replaced at a batch boundary near the mutation by one recovered from what was committed:
    the serialised states, every stored event_id and the stored payloads (as a consumer
    restarted after a kill recovers them from the lake)."""
    raw = to_raw(messages, recording=recording)
    cuts = cuts if cuts is not None else batch_cuts(rng, len(raw), around)
    restart_cut: int | None = None
    if restart and len(cuts) > 2:
        near = [c for c in cuts[1:-1] if abs(c - around) <= 60] or cuts[1:-1]
        restart_cut = rng.choice(near)
    processor = new_processor()
    to_arrow = _to_arrow() if arrow else None
    logger = logging.getLogger("croupier.processor")
    contained, propagate = _Contained(), logger.propagate
    logger.addHandler(contained)
    logger.propagate = False  # counted here, not printed
    try:
        result = _feed(processor, raw, cuts, restart_cut, to_arrow, contained)
        result.recording = recording
        return result
    finally:
        logger.removeHandler(contained)
        logger.propagate = propagate


def _feed(
    processor: Processor,
    raw: list[RawMessage],
    cuts: list[int],
    restart_cut: int | None,
    to_arrow: Callable[[str, list[Any]], Any] | None,
    contained: _Contained,
) -> StreamResult:
    rows: dict[str, list[Any]] = defaultdict(list)
    stored: dict[str, dict[str, Any]] = {}
    for start, end in itertools.pairwise(cuts):
        where = "process"
        try:
            out = processor.process(raw[start:end])
            where = "take_dirty_states"
            states = processor.take_dirty_states()
            if restart_cut is not None:
                stored.update({t: json.loads(s) for t, (_, s) in states.items()})
            where = "to_arrow"
            for table, table_rows in out.rows.items():
                if table_rows:
                    if to_arrow is not None:
                        to_arrow(table, table_rows)
                    rows[table].extend(table_rows)
            if end == restart_cut:
                where = "reload_state"
                committed = {
                    _stored_id(p): (part, off, p) for p, part, off in rows.get("events", [])
                }
                processor = new_processor(stored.get, committed)
                for table_id in list(stored):
                    processor._table(table_id)  # reload now, as a restarted consumer would
        except Exception as exc:
            return StreamResult(
                dict(rows), _crash(where, exc, (start, end)), restart_cut, cuts,
                [_crash("contained", e, (0, 0)) for e in contained.errors],
            )  # fmt: skip
    return StreamResult(
        dict(rows), None, restart_cut, cuts,
        [_crash("contained", e, (0, 0)) for e in contained.errors],
    )  # fmt: skip


def _to_arrow() -> Callable[[str, list[Any]], Any] | None:
    try:
        from consumers.sink import to_arrow
    except ImportError:  # pragma: no cover - the sink moved: skip that step
        return None
    return to_arrow


# ---------------------------------------------------------------------------------------------
# Judging a stream


@dataclass
class Truth:
    """The clean night's rows, indexed by round."""

    rounds: dict[tuple[str, str], tuple[Any, ...]]
    settlements: dict[tuple[str, str], list[tuple[Any, ...]]]
    payloads: set[bytes]
    event_ids: dict[bytes, str]
    meter_sensitive: dict[str, list[str]]  # Hold'em table -> rounds whose hit is a meter share


_TRUTHS: dict[tuple[int, int, float], Truth] = {}


def _settlement_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(map(str, row.values()))  # every column, in the processor's order


def truth_of(night: Night) -> Truth:
    key = (night.seed, night.tables, night.hours)
    if key in _TRUTHS:
        return _TRUTHS[key]
    result = run_stream(night.messages, random.Random(0), cuts=[0, len(night.messages)])
    if result.crash is not None:
        raise AssertionError(f"the clean night crashed: {result.crash.traceback}")
    rows = result.rows
    for table in ("violations", "dead_letters"):
        assert not rows.get(table), f"the clean night has {table}: {rows[table][:3]}"
    rounds = {(r["table_id"], r["round_id"]): _round_key(r) for r in rows["rounds"]}
    assert len(rounds) == len(rows["rounds"]), "the clean night repeats a round"
    settlements: dict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)
    for s in rows.get("settlements", []):
        settlements[(s["table_id"], s["round_id"])].append(_settlement_key(s))
    sensitive: dict[str, list[str]] = defaultdict(list)
    for j in rows.get("jackpot_ledger", []):
        if j["kind"] == "hit" and j["meter_before_cents"] != j["meter_after_cents"]:
            sensitive[j["table_id"]].append(j["round_id"])
    payloads = {m.value for m in night.messages if m.value is not None}
    truth = Truth(
        rounds=rounds,
        settlements={k: sorted(v) for k, v in settlements.items()},
        payloads=payloads,
        event_ids={
            m.value: o["event_id"]
            for m, o in zip(night.messages, night.objs, strict=True)
            if m.value
        },
        meter_sensitive=dict(sensitive),
    )
    _TRUTHS[key] = truth
    return truth


def _round_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row[c] for c in ROUND_COLUMNS)


def expand_touched(
    night: Night, truth: Truth, touched: Iterable[tuple[str, str]]
) -> set[tuple[str, str]]:
    """The touched rounds, plus every round of a wholly touched table, plus the later Hold'em
    rounds whose progressive hit pays a share of the meter that a touched round moves."""
    out: set[tuple[str, str]] = set()
    for table, rid in touched:
        order = night.round_order.get(table, [])
        if rid == WHOLE_TABLE:
            out |= {(table, r) for r in order}
            continue
        out.add((table, rid))
        if table in truth.meter_sensitive and rid in order:
            n = order.index(rid)
            out |= {(table, r) for r in truth.meter_sensitive[table] if order.index(r) > n}
    return out


def judge(
    night: Night,
    mutation: Mutation | None,
    result: StreamResult,
    scope: set[str] | None = None,
) -> list[str]:
    """Everything wrong with a stream's result; empty when it passes. `scope`: the tables the
    stream carried (None: all)."""
    truth = truth_of(night)
    problems: list[str] = []
    if result.crash is not None:
        c = result.crash
        problems.append(f"CRASH {c.signature}\n{c.traceback}")
        return problems
    for c in result.contained:
        problems.append(
            f"CONTAINED {c.signature}: the engine raised and the round was marked unprocessable "
            f"(issue 13: impossible input is a violation, never an exception)\n{c.traceback}"
        )
    touched = expand_touched(night, truth, mutation.touched if mutation else ())
    rows = result.rows
    got_rounds: dict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)
    for r in rows.get("rounds", []):
        got_rounds[(r["table_id"], r["round_id"])].append(_round_key(r))
    got_settlements: dict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)
    for s in rows.get("settlements", []):
        got_settlements[(s["table_id"], s["round_id"])].append(_settlement_key(s))
    for key, expected in truth.rounds.items():
        if key in touched or (scope is not None and key[0] not in scope):
            continue
        got = got_rounds.get(key, [])
        if got != [expected]:
            problems.append(
                f"untouched round {key}: rounds row {got or 'missing'} != clean {expected} "
                f"({dict(zip(ROUND_COLUMNS, expected, strict=True))})"
            )
            continue
        if sorted(got_settlements.get(key, [])) != truth.settlements.get(key, []):
            problems.append(f"untouched round {key}: settlements differ from the clean night")
    for key in got_rounds:
        if key not in truth.rounds and key not in touched:
            problems.append(f"a round that is neither in the clean night nor touched: {key}")
    problems += lake_keys(rows, truth)
    return problems


def lake_keys(rows: dict[str, list[Any]], truth: Truth) -> list[str]:
    """The lake's uniqueness keys (dbt's tests on the staging models) and one reading per
    accepted payload."""
    problems: list[str] = []

    def unique(table: str, key: Callable[[Any], Any]) -> None:
        seen: dict[Any, int] = defaultdict(int)
        for r in rows.get(table, []):
            seen[key(r)] += 1
        twice = [k for k, n in seen.items() if n > 1]
        if twice:
            problems.append(f"{table}: {len(twice)} key(s) stored more than once, e.g. {twice[0]}")

    new_payloads = [r[0] for r in rows.get("events", []) if r[0] not in truth.payloads]
    ids = {p: _event_id(p) for p in new_payloads}
    unique("events", lambda r: truth.event_ids.get(r[0]) or ids.get(r[0]))
    unique("rounds", lambda r: r["round_id"])
    unique("violations", lambda r: r["violation_id"])
    unique("settlements", lambda r: (r["round_id"], r["seat"], r["spot"], r["bettor"]))
    unique("jackpot_ledger", lambda r: (r["table_id"], r["round_id"], r["entry_no"]))
    for p in new_payloads:
        problems += one_meaning(p)
    return problems


def _event_id(payload: bytes) -> str:
    """The event_id a stored payload carries, as one UUID however it is spelled."""
    try:
        text = json.loads(payload).get("event_id")
    except ValueError:
        return f"<unparseable {payload[:40]!r}>"
    try:
        return str(uuid.UUID(text))
    except (TypeError, ValueError, AttributeError):
        return str(text)


def _pairs_no_dups(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise KeyError(sorted({k for k in keys if keys.count(k) > 1}))
    return dict(pairs)


_SQL: Any = None


def one_meaning(payload: bytes) -> list[str]:
    """An accepted event's payload has no key twice, and the sink's SQL reads its envelope as
    the contract's parser does."""
    try:
        json.loads(payload, object_pairs_hook=_pairs_no_dups)
    except KeyError as exc:
        return [f"accepted an event with duplicate JSON keys {exc}: {payload[:300]!r}"]
    except ValueError as exc:
        return [f"accepted a payload Python's json refuses ({exc}): {payload[:200]!r}"]
    try:
        event = parse_event(payload)
    except Exception as exc:
        return [f"accepted a payload the contract's parser refuses ({exc}): {payload[:200]!r}"]
    global _SQL
    try:
        from consumers.sink import EVENTS_FROM_PAYLOAD, EVENTS_SOURCE
    except ImportError:  # pragma: no cover - the sink changed how it reads events
        return []
    import duckdb
    import pyarrow as pa

    if _SQL is None:
        _SQL = duckdb.connect()
    batch = pa.table({"payload": [payload.decode()], "source_partition": [0], "source_offset": [0]})
    _SQL.register("_batch", batch)
    try:
        (row,) = _SQL.execute(f"SELECT {EVENTS_FROM_PAYLOAD} FROM {EVENTS_SOURCE}").fetchall()
    except Exception as exc:
        return [f"the sink's SQL cannot read an accepted event ({type(exc).__name__}: {exc}): "
                f"{payload[:300]!r}"]  # fmt: skip
    finally:
        _SQL.unregister("_batch")
    mine: tuple[Any, ...] = (str(event.event_id), event.event_type, event.table_id,
                             event.round_id, event.seq, event.occurred_at)  # fmt: skip
    theirs: tuple[Any, ...] = (row[0], row[1], row[4], row[6], row[7], row[8])
    if not isinstance(row[8], datetime):
        # DuckDB hands back a year outside Python's range (1 BC ...) as text: not a disagreement
        # of the parsers (implausible times are the plausibility checks' business).
        mine, theirs = mine[:-1], theirs[:-1]
    if mine != theirs:
        return [f"the sink's SQL reads {theirs} where the contract reads {mine}: {payload[:300]!r}"]
    return []


# ---------------------------------------------------------------------------------------------
# One stream, end to end (test, bench and the command line share it)

# The clean nights streams are cut from: (simulation seed, tables of each game, hours). Two
# tables of a game let a message move between tables of the same game.
NightSpec = tuple[int, int, float]
RESTART_RATE = 0.2
NIGHTS: tuple[NightSpec, ...] = ((11, 1, 1.0), (12, 2, 0.5))
BENCH_NIGHTS: tuple[NightSpec, ...] = (
    *NIGHTS, (13, 1, 1.0), (14, 2, 0.5), (15, 1, 2.0), (16, 3, 0.5), (17, 1, 1.0), (18, 2, 1.0),
)  # fmt: skip
NIGHT_SETS = {"test": NIGHTS, "bench": BENCH_NIGHTS}


@dataclass
class Case:
    seed: int
    index: int
    night: Night
    mutation: Mutation
    restart: bool
    result: StreamResult
    problems: list[str]
    events: int
    scope: set[str] | None = None  # the tables streamed (None: the whole night)
    around: int = 0  # the mutation's position in the stream
    options: str = ""  # the run's non-default options, as command-line flags

    @property
    def command(self) -> str:
        """The command that runs this stream again."""
        return (
            f"uv run python -m tests.consumers.fuzz --seed {self.seed} --stream {self.index}"
            + self.options
        )


def case_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"croupier-fuzz:{seed}:{index}")


def run_case(
    seed: int,
    index: int,
    *,
    nights: Sequence[NightSpec] = NIGHTS,
    restart_rate: float = RESTART_RATE,
    whole_night_rate: float = 0.25,
    multi_rate: float = 0.0,
    recording_rate: float = 0.25,
    kinds: Sequence[str] = KINDS,
) -> Case:
    """Stream `index` of fuzz run `seed`: its night, mutation kind (round robin over `kinds`),
    target, scope, batch cuts and restart all follow from (seed, index).

    The processor keeps each table apart (only event ids are shared), so most streams carry
    only the tables the mutation involves (3x faster); `whole_night_rate` of them carry every
    table, whose untouched rounds are then checked too. `multi_rate` of the streams get 2 to 4
    mutations at once (the first of the stream's kind, the others of any kind);
    `recording_rate` of them are read as a recording (no broker timestamps)."""
    rng = case_rng(seed, index)
    night = load_night(*nights[index % len(nights)])
    kind = kinds[index % len(kinds)]
    mutation = mutate(rng, night, kind)
    if multi_rate and rng.random() < multi_rate:
        more = [mutate(rng, night, rng.choice(kinds)) for _ in range(rng.randint(1, 3))]
        mutation = combine([mutation, *more])
    scope = None if rng.random() < whole_night_rate else mutation.tables() & set(night.by_table)
    messages = mutation.apply(night.messages, night.table_of, scope)
    first = min(e.index for e in mutation.edits)
    around = first if scope is None else sum(1 for t in night.table_of[:first] if t in scope)
    restart = rng.random() < restart_rate
    recording = rng.random() < recording_rate
    result = run_stream(messages, rng, around=around, restart=restart, recording=recording)
    problems = judge(night, mutation, result, scope)
    options = "".join(
        f" --{flag} {value}"
        for flag, value, default in (
            ("nights", next((k for k, v in NIGHT_SETS.items() if tuple(v) == tuple(nights)),
                            "custom"), "test"),
            ("restart-rate", restart_rate, RESTART_RATE),
            ("multi-rate", multi_rate, 0.0),
        )
        if value != default
    )  # fmt: skip
    return Case(seed, index, night, mutation, restart, result, problems, len(messages), scope,
                around, options)  # fmt: skip


def report(case: Case, *, minimise: bool = True) -> str:
    """What failed, and how to see it again."""
    m = case.mutation
    lines = [
        f"fuzz seed {case.seed}, stream {case.index}: night seed {case.night.seed} "
        f"({case.night.tables} table(s) of each game, {case.night.hours} h), "
        f"{case.events} messages of {sorted(case.scope) if case.scope else 'every table'}, "
        f"mutation at #{case.around} of the stream, batch cuts near it "
        f"{[c for c in case.result.cuts if abs(c - case.around) < 50]}"
        + (f", restarted after message {case.result.restarted_at}" if case.restart else "")
        + (", read as a recording (no broker timestamps)" if case.result.recording else ""),
        m.describe(case.night),
        *case.problems[:5],
    ]
    if len(case.problems) > 5:
        lines.append(f"... and {len(case.problems) - 5} more")
    if minimise and case.result.crash is not None:
        lines.append(minimal_reproducer(case))
    lines.append(f"again: {case.command}")
    return "\n".join(lines)


def minimal_reproducer(case: Case) -> str:
    """The involved tables' messages up to the one that crashes, one message per batch, written
    to a JSONL file of {"key", "value"} (text with surrogateescape: bytes exact)."""
    night = case.night
    tables = case.mutation.tables() & set(night.by_table)
    keep = case.mutation.apply(night.messages, night.table_of, tables)
    processor = new_processor()
    crash_at = None
    for n, msg in enumerate(to_raw(keep)):
        try:
            processor.process([msg])
            processor.take_dirty_states()
        except Exception as error:
            crash_at = (n, error)
            break
    if crash_at is None:
        return "(no smaller reproducer: the crash needs the batching or the restart above)"
    n, exc = crash_at
    path = Path(f"/tmp/croupier-fuzz-{case.seed}-{case.index}.jsonl")

    def text(b: bytes | None) -> str | None:
        return None if b is None else b.decode("utf-8", "surrogateescape")

    with path.open("w") as fh:
        for m in keep[: n + 1]:
            fh.write(json.dumps({"key": text(m.key), "value": text(m.value)}) + "\n")
    return (
        f"minimal reproducer: {n + 1} messages of {sorted(tables)}, one per batch; message "
        f"#{n} raises {type(exc).__name__}: {str(exc)[:200]}\n"
        f"  written to {path}; replay:\n"
        f"    from consumers.processor import Processor, RawMessage; import json\n"
        f"    p = Processor(); enc = lambda t: None if t is None else "
        f"t.encode('utf-8', 'surrogateescape')\n"
        f"    for line in open({str(path)!r}): m = json.loads(line); "
        f"p.process([RawMessage(enc(m['value']), enc(m['key']))]); p.take_dirty_states()"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one fuzz stream again and explain it.")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--stream", type=int, required=True)
    parser.add_argument("--nights", choices=sorted(NIGHT_SETS), default="test")
    parser.add_argument("--restart-rate", type=float, default=RESTART_RATE)
    parser.add_argument("--multi-rate", type=float, default=0.0)
    args = parser.parse_args(argv)
    case = run_case(
        args.seed,
        args.stream,
        nights=NIGHT_SETS[args.nights],
        restart_rate=args.restart_rate,
        multi_rate=args.multi_rate,
    )
    if not case.problems:
        print(f"stream {args.stream} passes: {case.mutation.describe(case.night)}")
        return 0
    print(report(case))
    return 1


if __name__ == "__main__":
    sys.exit(main())
