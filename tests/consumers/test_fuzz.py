"""The consumer under a mutation fuzzer (issue 13): one change to a clean simulated night, fed
through the processor as the pipeline does, never raises and leaves every other round as it was.

Each mutation kind of `tests/consumers/fuzz.py` runs on STREAMS_PER_KIND streams (a different
target, batching and restart each); the fuzz seed is fixed so CI is reproducible
(`CROUPIER_FUZZ_SEED` and `CROUPIER_FUZZ_STREAMS_PER_KIND` explore further). A failure names the
seed, the stream, the mutation and a command that runs that stream again; a crash also gets a
minimal reproducer (the touched tables' messages up to the one that raises). An exception the
processor contained (EVT-ENGINE, round `unprocessable`) fails too: the issue wants impossible
input reported as a violation, never an exception.

Beside the random streams, two deterministic sweeps try what chance may miss: every odd
`occurred_at` and `event_id` spelling, and every payload field of one round per game at each of
its edge values. Nothing here is skipped or expected to fail: a failure is a finding.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from tests.consumers import fuzz

SEED = int(os.environ.get("CROUPIER_FUZZ_SEED", "20250110"))
STREAMS_PER_KIND = int(os.environ.get("CROUPIER_FUZZ_STREAMS_PER_KIND", "10"))


def _signature(problem: str) -> str:
    first = problem.splitlines()[0]
    if first.startswith(("CRASH ", "CONTAINED ")):
        return first.split(": the engine raised")[0]
    first = re.sub(r"\([^()]*\)", "(...)", first)  # the rows and keys themselves
    first = re.sub(r"b'.*", "<payload>", first)
    return re.sub(r"\d+", "N", first)[:200]


def test_the_clean_nights_and_the_mutation_library_are_sound() -> None:
    """The truth is clean (no violation, no dead letter), a no-op JSON round trip gives the
    same bytes, and every kind mutates something and says what it touched."""
    for spec in fuzz.NIGHTS:
        night = fuzz.load_night(*spec)
        truth = fuzz.truth_of(night)  # asserts no violations or dead letters
        assert len(truth.rounds) > 100
        assert all(fuzz.dumps(json.loads(m.value or b"")) == m.value for m in night.messages)
    night = fuzz.load_night(*fuzz.NIGHTS[0])
    # Tables are processed apart: one table's messages alone settle as in the whole night (so a
    # stream may carry only the tables a mutation involves).
    for table, indices in night.by_table.items():
        alone = [night.messages[i] for i in indices]
        result = fuzz.run_stream(alone, random.Random(0), cuts=[0, len(alone)])
        assert fuzz.judge(night, None, result, {table}) == [], table
    for kind in fuzz.KINDS:
        m = fuzz.mutate(random.Random(kind), night, kind)
        assert m.apply(night.messages) != night.messages, kind
        assert m.edits and all(0 <= e.index <= len(night.messages) for e in m.edits), kind


def test_the_judge_sees_what_it_must() -> None:
    """Not vacuous: a lost round, a changed payout, a round stored twice, an event stored twice
    and an accepted payload with a repeated key are each a problem; a crash is reported."""
    night = fuzz.load_night(*fuzz.NIGHTS[0])
    table = next(iter(night.by_table))
    alone = [night.messages[i] for i in night.by_table[table]]
    clean = fuzz.run_stream(alone, random.Random(0), cuts=[0, len(alone)])
    assert fuzz.judge(night, None, clean, {table}) == []

    def tampered(change: Callable[[dict[str, list[Any]]], None]) -> list[str]:
        rows = {t: list(r) for t, r in clean.rows.items()}
        change(rows)
        return fuzz.judge(night, None, fuzz.StreamResult(rows, None, None, []), {table})

    assert tampered(lambda rows: rows["rounds"].pop(5))
    assert tampered(lambda rows: rows["settlements"].__setitem__(
        0, {**rows["settlements"][0], "net_cents": 1}))  # fmt: skip
    assert tampered(lambda rows: rows["rounds"].append(rows["rounds"][3]))
    assert tampered(lambda rows: rows["events"].append(rows["events"][7]))
    payload = clean.rows["events"][7][0]
    twice = payload.replace(b'"seq":', b'"seq":1,"seq":', 1)
    assert twice != payload
    assert tampered(lambda rows: rows["events"].append((twice, 0, 10**6)))
    crash = fuzz.run_stream([fuzz.Message(b"k", b"{}", 0)], random.Random(0))
    assert crash.crash is None  # a dead letter, not a crash
    assert fuzz.judge(
        night,
        None,
        fuzz.StreamResult({}, fuzz._crash("process", ValueError("x"), (0, 1)), None, []),
    )


def test_every_spelling_the_contract_accepts_is_stored_with_one_meaning() -> None:
    """Each odd `occurred_at` and `event_id` spelling of the fuzzer, on a bet of the first
    round, then (for ids) the same event in its usual spelling: no crash, nothing contained,
    the sink's SQL reads every stored payload as the contract does, and an id is stored once
    however it is spelled. (The fuzz streams draw these at random; here each one is tried.)"""
    night = fuzz.load_night(*fuzz.NIGHTS[0])
    table = night.table_of[0]
    bet = next(i for i in night.by_table[table] if night.objs[i]["event_type"] == "bet_placed")
    prefix = [night.messages[i] for i in night.by_table[table] if i < bet]
    original = night.messages[bet]
    truth = fuzz.truth_of(night)
    variants: list[tuple[str, list[fuzz.Message]]] = []
    for spelling in fuzz.TIMES:
        value = fuzz._with(night, bet, occurred_at=spelling)
        variants.append((f"occurred_at {spelling!r}", [fuzz.Message(original.key, value, 0)]))
    for spell in fuzz.UUID_SPELLINGS:
        event_id = spell(night.objs[bet]["event_id"])
        value = fuzz._with(night, bet, event_id=event_id)
        usual = f"event_id {event_id!r}, then as usual"
        variants.append((usual, [fuzz.Message(original.key, value, 0), original]))
    problems = []
    for name, messages in variants:
        stream = [*prefix, *(fuzz.Message(m.key, m.value, original.ts_ms) for m in messages)]
        result = fuzz.run_stream(stream, random.Random(0), cuts=[0, len(stream)])
        found = [c.signature for c in [result.crash] if c] + [
            f"CONTAINED {c.signature}" for c in result.contained
        ]
        if not result.crash:
            found += fuzz.lake_keys(result.rows, truth)
        problems += [f"{name}: {p}" for p in found]
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_every_payload_field_at_its_edge_values_is_judged_never_raised() -> None:
    """A deterministic sweep beside the random streams: every payload field of every event of
    one round of a table of each game, set to each of its edge values
    in turn (seats 0-8, amounts 0 to 2**64, dice, card lists empty, repeated, too long, deal
    orders, enums...). No crash, nothing contained, the lake's keys intact, and the next round
    settles as in the clean night."""
    night = fuzz.load_night(*fuzz.NIGHTS[1])
    truth = fuzz.truth_of(night)
    problems: list[str] = []
    for table in sorted(night.by_table)[::2]:
        for what, mutation, end in fuzz.sweep(night, table):
            messages = mutation.apply(night.messages[: end + 1], night.table_of, {table})
            result = fuzz.run_stream(messages, random.Random(0), cuts=[0, len(messages)])
            found = [f"CRASH {c.signature}" for c in [result.crash] if c] + [
                f"CONTAINED {c.signature}" for c in result.contained
            ]
            if result.crash is None:
                found += fuzz.lake_keys(result.rows, truth)
                order = night.round_order[table]
                key = (table, order[3])
                rows = [r for r in result.rows.get("rounds", []) if r["round_id"] == order[3]]
                if [fuzz._round_key(r) for r in rows] != [truth.rounds[key]]:
                    found.append(f"the next round {key} settled otherwise: {rows}")
            problems += [f"{what}: {p.splitlines()[0]}" for p in found]
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:40])


def _cases(kind: str) -> list[fuzz.Case]:
    k = fuzz.KINDS.index(kind)
    return [fuzz.run_case(SEED, k + n * len(fuzz.KINDS)) for n in range(STREAMS_PER_KIND)]


@pytest.mark.slow
@pytest.mark.parametrize("kind", fuzz.KINDS)
def test_one_mutation_never_crashes_the_consumer_nor_changes_another_round(kind: str) -> None:
    cases = _cases(kind)
    failed = [c for c in cases if c.problems]
    if not failed:
        return
    by_signature: dict[str, list[fuzz.Case]] = defaultdict(list)
    for c in failed:
        for sig in dict.fromkeys(_signature(p) for p in c.problems):
            by_signature[sig].append(c)
    lines = [
        f"{len(failed)} of {len(cases)} '{kind}' streams failed (fuzz seed {SEED}); "
        f"{len(by_signature)} distinct problem(s):"
    ]
    for sig, examples in sorted(by_signature.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {len(examples)}x {sig}  (streams {[c.index for c in examples[:6]]})")
    shown: set[int] = set()
    for examples in by_signature.values():
        first = examples[0]
        if first.index in shown or len(shown) >= 3:
            continue
        shown.add(first.index)
        lines += ["", fuzz.report(first)]
    pytest.fail("\n".join(lines), pytrace=False)


@pytest.mark.slow
def test_batching_and_a_restart_do_not_change_the_rows() -> None:
    """One stream per kind, in one batch, and again in random batches with a restart from the
    serialised states near the mutation: the same rows (the processor is batch-agnostic and
    its state is all it needs)."""
    differ: list[str] = []
    for k, kind in enumerate(fuzz.KINDS):
        index = k + 7 * len(fuzz.KINDS)
        rng = fuzz.case_rng(SEED, index)
        night = fuzz.load_night(*fuzz.NIGHTS[index % len(fuzz.NIGHTS)])
        mutation = fuzz.mutate(rng, night, kind)
        scope = mutation.tables() & set(night.by_table)
        messages = mutation.apply(night.messages, night.table_of, scope)
        whole = fuzz.run_stream(messages, rng, cuts=[0, len(messages)])
        first = min(e.index for e in mutation.edits)
        around = sum(1 for t in night.table_of[:first] if t in scope)
        cut = fuzz.run_stream(messages, rng, around=around, restart=True)
        if whole.crash or cut.crash:
            continue  # a crash is the other test's finding
        for table in sorted(set(whole.rows) | set(cut.rows)):
            a = Counter(map(_canonical, whole.rows.get(table, [])))
            b = Counter(map(_canonical, cut.rows.get(table, [])))
            if a != b:
                differ.append(
                    f"{kind} (stream {index}, restart after message {cut.restarted_at}): "
                    f"{table} differs: only in one batch {list((a - b).elements())[:2]}, "
                    f"only when cut {list((b - a).elements())[:2]}\n{mutation.describe(night)}"
                )
    assert not differ, "\n\n".join(differ)


def _canonical(row: object) -> str:
    if isinstance(row, dict):
        return repr(sorted((k, repr(v)) for k, v in row.items()))
    return repr(row)
