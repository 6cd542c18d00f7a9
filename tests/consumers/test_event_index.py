"""The event_id index: exact against a Python set, and recovered exactly from a real DuckLake
lake on disk after kills, crashes mid-write, damaged or foreign directories and restored lakes."""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from consumers import event_index as ei
from consumers.event_index import EventIndex, fingerprints, repeats
from consumers.rows import RowBatch
from consumers.sink import LakeSink
from infra import lake as lakes

# --- pure --------------------------------------------------------------------------------------


def test_fingerprints_are_keyed_vectorised_mixes_of_both_halves() -> None:
    rng = random.Random(1)
    ids = [rng.getrandbits(128) for _ in range(10_000)]
    a = fingerprints(ids, 1)
    assert a.dtype == np.uint64 and a.shape == (10_000,)
    assert np.array_equal(a, fingerprints(ids, 1))  # deterministic
    assert np.array_equal(a[:10], fingerprints(ids[:10], 1))  # per id, not per batch
    assert np.count_nonzero(a == fingerprints(ids, 2)) == 0  # another key, other values
    # Both halves matter, and ids sharing a high half never collide (a bijection of the low).
    hi = 0xDEADBEEF << 64
    same_high = [hi | lo for lo in range(100_000)]
    assert len(set(fingerprints(same_high, 7).tolist())) == 100_000
    same_low = [(h << 64) | 5 for h in range(100_000)]
    assert len(set(fingerprints(same_low, 7).tolist())) == 100_000
    assert fingerprints([], 1).shape == (0,)
    halves = ei.id_halves([(2 << 64) | 3, (1 << 128) - 1])
    assert halves[0].tolist() == [2, (1 << 64) - 1] and halves[1].tolist() == [3, (1 << 64) - 1]


def test_text_halves_decode_canonical_uuids_and_fall_back_for_any_other_spelling() -> None:
    ids = [uuid.UUID(int=random.Random(2).getrandbits(128)) for _ in range(1000)]
    ids += [uuid.UUID(int=0), uuid.UUID(int=(1 << 128) - 1)]
    expected = ei.id_halves([u.int for u in ids])
    canonical = pa.array([str(u) for u in ids])
    for column in (
        canonical,
        canonical.slice(3),
        pa.array([str(u) for u in ids], pa.large_string()),
    ):
        hi, lo = ei.text_halves(column)
        skip = len(ids) - len(column)
        assert np.array_equal(hi, expected[0][skip:]) and np.array_equal(lo, expected[1][skip:])
    odd = pa.array([str(ids[0]).upper(), None, ids[1].hex])
    hi, lo = ei.text_halves(odd)
    assert hi.tolist() == expected[0][:2].tolist() and lo.tolist() == expected[1][:2].tolist()


def test_repeats_flags_every_occurrence_after_the_first() -> None:
    fps = np.array([5, 3, 5, 9, 3, 5, 1], dtype=np.uint64)
    assert repeats(fps).tolist() == [False, False, True, False, True, True, False]
    assert repeats(np.array([], dtype=np.uint64)).tolist() == []


def _check_against_a_set(index: EventIndex, batches: Iterator[np.ndarray]) -> int:
    """Feed batches through seen/add/seal/committed (every few batches persisted) and compare
    each answer with a Python set of everything added before."""
    truth: set[int] = set()
    checked = 0
    for n, fps in enumerate(batches):
        seen = index.seen(fps)
        expected = np.fromiter((f in truth for f in fps.tolist()), dtype=bool, count=len(fps))
        assert np.array_equal(seen, expected), f"batch {n}"
        new = fps[~(seen | repeats(fps))]
        index.add(new)
        assert index.seen(new).all()  # visible at once, before the commit
        truth.update(new.tolist())
        checked += len(fps)
        token = index.seal()
        if n % 7 == 3:  # a batch whose commit failed: forgotten
            index.discard(token)
            truth.difference_update(new.tolist())
            assert not index.seen(new).any()
            continue
        index.committed(token)
        if n % 5 == 4:
            index.persist()
    held = np.sort(np.concatenate([r.data for r in index._state.runs] + index._state.tail))
    assert len(truth) == len(held) and held.tolist() == sorted(truth)  # nothing else kept
    return checked


def _random_batches(seed: int, batches: int, size: int) -> Iterator[np.ndarray]:
    """Fresh ids mixed with repeats: from the previous batch, from long ago, within the batch."""
    rng = np.random.default_rng(seed)
    history: list[np.ndarray] = []
    for n in range(batches):
        fresh = rng.integers(0, 2**64, size=size, dtype=np.uint64)
        parts = [fresh]
        if history:
            parts.append(history[-1][rng.integers(0, len(history[-1]), size // 10)])  # recent
            old = history[rng.integers(0, len(history))]
            parts.append(old[rng.integers(0, len(old), size // 20)])  # however old
        parts.append(fresh[rng.integers(0, size, size // 50)])  # twice in this batch
        batch = np.concatenate(parts)
        rng.shuffle(batch)
        history.append(fresh)
        if n % 9 == 0:  # adversarial values: extremes, a narrow cluster, run boundaries
            edge = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1], dtype=np.uint64)
            cluster = np.uint64(12345 * 2**40) + rng.integers(0, 5000, 2000, dtype=np.uint64)
            batch = np.concatenate([batch, edge, cluster])
        yield batch


@pytest.mark.parametrize(("where", "batches"), [("memory", 125), ("disk", 65)])
def test_exact_against_a_python_set_over_millions_of_ids_in_many_runs(
    where: str, batches: int, tmp_path: Path
) -> None:
    index = EventIndex(None if where == "memory" else tmp_path / "idx", flush_ids=40_000)
    checked = _check_against_a_set(index, _random_batches(3, batches, 16_000))
    assert checked > batches * 16_000
    assert 1 <= index.runs <= 8  # merged in tiers: few runs after ~20 flushes
    index.close()


def test_fingerprints_of_real_ids_against_a_python_set(tmp_path: Path) -> None:
    index = EventIndex(tmp_path / "idx", flush_ids=20_000)
    rng = random.Random(4)
    pool = [uuid.UUID(int=rng.getrandbits(128)).int for _ in range(200_000)]

    def batches() -> Iterator[np.ndarray]:
        for start in range(0, len(pool), 10_000):
            ids = pool[start : start + 10_000] + rng.choices(pool[: start + 1], k=500)
            yield index.fingerprints(ids)

    _check_against_a_set(index, batches())
    index.close()


def test_heap_stays_bounded_by_the_unflushed_tail(tmp_path: Path) -> None:
    flush = 20_000
    index = EventIndex(tmp_path / "idx", flush_ids=flush)
    rng = np.random.default_rng(5)
    tracemalloc.start()
    try:
        for _ in range(250):  # 2.5M ids: 20 MB of runs on disk
            fps = rng.integers(0, 2**64, size=10_000, dtype=np.uint64)
            new = fps[~index.seen(fps)]
            index.add(new)
            index.committed(index.seal())
            assert index.pending <= 2 * flush + 10_000
            if index.pending >= flush:
                index.persist()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(index) >= 2_490_000
    assert peak < 4 * 2**20, f"peak heap {peak / 2**20:.1f} MiB for 20 MB of runs"
    index.close()


def test_a_second_index_on_the_same_directory_takes_the_next_one(tmp_path: Path) -> None:
    first = EventIndex(tmp_path / "idx")
    second = EventIndex(tmp_path / "idx")
    assert first.directory == tmp_path / "idx" and second.directory == tmp_path / "idx-1"
    first.close()
    third = EventIndex(tmp_path / "idx")
    assert third.directory == tmp_path / "idx"
    second.close()
    third.close()


# --- against a real DuckLake lake ----------------------------------------------------------------


def _payload(event_id: uuid.UUID) -> str:
    return json.dumps(
        {
            "event_id": str(event_id),
            "event_type": "card_dealt",
            "schema_version": 1,
            "casino_id": "casino",
            "table_id": "PGP-01",
            "game": "pai_gow",
            "round_id": None,
            "seq": 1,
            "occurred_at": "2025-01-01T00:00:00Z",
            "source_device": "dev",
        }
    )


_SEEDS = itertools.count(1)


class Writer:
    """A consumer's sink writing event rows; returns the snapshot each commit made."""

    def __init__(self, root: Path, partition: int = 0) -> None:
        self.sink = LakeSink(lakes.Lake(root=root))
        self.partition = partition
        self.offset = 0
        self.rng = random.Random(next(_SEEDS))  # every writer its own ids

    def new_ids(self, n: int) -> list[uuid.UUID]:
        return [uuid.UUID(int=self.rng.getrandbits(128)) for _ in range(n)]

    def commit(self, ids: list[uuid.UUID]) -> int:
        batch = RowBatch()
        for event_id in ids:
            batch.add("events", (_payload(event_id), self.partition, self.offset))
            self.offset += 1
        self.sink.commit(batch, offsets={("events", self.partition): self.offset})
        snapshot = ei.last_committed_snapshot(self.sink.con)
        assert snapshot is not None and snapshot == lakes.current_snapshot(self.sink.con)
        return snapshot

    def close(self) -> None:
        self.sink.close()


def lake_ids(con: object) -> list[int]:
    rows = con.execute("SELECT event_id FROM lake.events").fetchall()  # type: ignore[attr-defined]
    return [uuid.UUID(r[0]).int for r in rows]


def assert_exact(index: EventIndex, con: object, absent: Sequence[uuid.UUID] = ()) -> None:
    """Every id of the lake is seen, and no other: fresh ids and `absent` ones are not."""
    present = lake_ids(con)
    assert index.seen(index.fingerprints(present)).all()
    others = [uuid.uuid4().int for _ in range(2000)] + [u.int for u in absent]
    assert not index.seen(index.fingerprints(others)).any()


def _run_batches(index: EventIndex, writer: Writer, sizes: list[int]) -> None:
    """What the consumer does per batch: refresh, check, add, commit, tell the index."""
    for size in sizes:
        index.refresh(writer.sink.con)
        ids = writer.new_ids(size)
        fps = index.fingerprints([u.int for u in ids])
        assert not index.seen(fps).any()
        index.add(fps)
        token = index.seal()
        index.committed(token, writer.commit(ids))


@pytest.fixture
def lake(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "lake"


def test_recover_after_a_kill_adds_only_the_rows_after_the_watermark(
    lake: Path, tmp_path: Path
) -> None:
    writer = Writer(lake)
    con = writer.sink.con
    index = EventIndex(tmp_path / "idx", flush_ids=500)
    first = index.recover(con)
    assert first.rebuilt and first.reason == "no manifest" and first.ids == 0
    _run_batches(index, writer, [300, 5, 400, 3, 250])  # small ones are inlined in the catalog
    assert index.runs >= 1 and index.pending < 500  # one run written when 500 were pending
    index.refresh(con)
    index.persist()
    persisted = index.watermark
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["watermark"] == persisted
    # More commits, then the kill: the unflushed tail and a batch whose commit never ran are lost.
    _run_batches(index, writer, [200, 7])
    lost = writer.new_ids(50)
    index.add(index.fingerprints([u.int for u in lost]))
    index.seal()
    index.close(persist=False)
    other = Writer(lake, partition=1)  # another process's rows, never seen by this index
    other.commit(other.new_ids(120))
    other.commit(other.new_ids(4))

    again = EventIndex(tmp_path / "idx", flush_ids=500)
    recovery = again.recover(con)
    assert not recovery.rebuilt, recovery.reason
    assert recovery.tail == 200 + 7 + 120 + 4  # only the rows after the persisted watermark
    assert recovery.watermark > persisted
    assert_exact(again, con, absent=lost)
    # The lake compacted (inlined rows flushed, files merged): still exact, still read cheaply.
    con.execute("CALL ducklake_flush_inlined_data('lake')")
    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    assert again.refresh(con) == 0
    again.close()
    third = EventIndex(tmp_path / "idx", flush_ids=500)
    assert not third.recover(con).rebuilt
    assert_exact(third, con, absent=lost)
    third.close()
    other.close()
    writer.close()


def test_refresh_reads_what_other_writers_commit_and_skips_its_own(
    lake: Path, tmp_path: Path
) -> None:
    mine, theirs = Writer(lake), Writer(lake, partition=1)
    con = mine.sink.con
    index = EventIndex(tmp_path / "idx", flush_ids=10_000)
    index.recover(con)
    _run_batches(index, mine, [100])
    assert index.refresh(con) == 0  # its own commit is not read back
    their_ids = theirs.new_ids(30)
    theirs.commit(their_ids)
    _run_batches(index, mine, [50])  # its refresh reads their 30 rows, not its own 100
    assert index.refresh(con) == 0
    theirs.commit(theirs.new_ids(2))
    _run_batches(index, mine, [20])
    theirs.commit(theirs.new_ids(3))
    assert index.refresh(con) == 3
    assert index.refresh(con) == 0
    assert index.seen(index.fingerprints([u.int for u in their_ids])).all()
    # Overlapped, as the pipeline runs: the commit thread tells `own` right after its commit,
    # and the next batch's refresh runs before `committed` does: nothing is read back, the
    # batch in flight is seen meanwhile, and once `committed` lands the index is exact.
    ids = mine.new_ids(40)
    index.add(index.fingerprints([u.int for u in ids]))
    token = index.seal()
    snapshot = mine.commit(ids)
    index.own(snapshot)
    assert index.refresh(con) == 0
    assert index.seen(index.fingerprints([u.int for u in ids])).all()
    index.committed(token, snapshot)
    assert index.refresh(con) == 0
    assert_exact(index, con)
    # A commit without a snapshot is read back (correct, only slower).
    ids = mine.new_ids(10)
    index.add(index.fingerprints([u.int for u in ids]))
    index.committed(index.seal())
    mine.commit(ids)
    assert index.refresh(con) == 10
    assert_exact(index, con)
    index.close()
    mine.close()
    theirs.close()


def test_refresh_costs_no_query_while_nothing_is_committed_and_misses_no_commit(
    lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, theirs = Writer(lake), Writer(lake)
    con = mine.sink.con
    index = EventIndex(tmp_path / "idx")
    index.recover(con)
    catalog = index._lake.catalog  # type: ignore[union-attr]
    queries: list[str] = []
    real_query = catalog.query

    def counted(*args: Any) -> list[tuple[Any, ...]]:
        queries.append(args[0])
        return real_query(*args)

    monkeypatch.setattr(catalog, "query", counted)
    for round_ in range(3):
        time.sleep(ei.RACY_SECONDS * 2)  # the catalog's last change is old enough to trust
        assert index.refresh(con) == 0
        asked = len(queries)
        for _ in range(20):
            assert index.refresh(con) == 0
        assert len(queries) == asked, "nothing was committed: no query"
        ids = theirs.new_ids(3 + round_)
        theirs.commit(ids)  # right after a trusted look at the catalog: must be seen
        assert index.refresh(con) == 3 + round_
        assert index.seen(index.fingerprints([u.int for u in ids])).all()
    index.close()
    mine.close()
    theirs.close()


class Crash(Exception):
    pass


def test_a_crash_at_any_file_operation_leaves_an_index_recover_makes_exact(
    lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = Writer(lake)
    con = writer.sink.con
    directory = tmp_path / "idx"
    index = EventIndex(directory, flush_ids=200, ratio=2)
    index.recover(con)
    _run_batches(index, writer, [150, 150, 150])
    index.persist()
    index.close()
    real_replace, real_fsync = os.replace, os.fsync
    step = 1
    while True:
        calls = 0

        def crashing(real: Callable[..., None], step: int = step) -> Callable[..., None]:
            def call(*args: Any) -> None:
                nonlocal calls
                calls += 1
                if calls == step:
                    raise Crash
                real(*args)

            return call

        index = EventIndex(directory, flush_ids=200, ratio=2)
        assert not index.recover(con).rebuilt
        _run_batches(index, writer, [170, 170])  # two runs' worth: a flush and a merge
        monkeypatch.setattr(os, "replace", crashing(real_replace))
        monkeypatch.setattr(os, "fsync", crashing(real_fsync))
        crashed = False
        try:
            index.persist()
        except Crash:
            crashed = True
        monkeypatch.setattr(os, "replace", real_replace)
        monkeypatch.setattr(os, "fsync", real_fsync)
        index.close(persist=False)
        after = EventIndex(directory, flush_ids=200, ratio=2)
        recovery = after.recover(con)
        assert not recovery.rebuilt, (step, recovery.reason)  # never needs a full rebuild
        assert_exact(after, con)
        names = sorted(p.name for p in directory.iterdir())
        assert not [n for n in names if n.endswith(".tmp")]
        after.close()
        if not crashed:
            break
        step += 1
    assert step >= 6  # run file, its rename, merges, manifest, directory syncs
    writer.close()


def _lake_with_index(lake: Path, directory: Path) -> tuple[Writer, EventIndex]:
    writer = Writer(lake)
    index = EventIndex(directory, flush_ids=100)
    index.recover(writer.sink.con)
    _run_batches(index, writer, [120, 3, 90])
    index.refresh(writer.sink.con)
    index.close()
    return writer, index


@pytest.mark.parametrize(
    "damage",
    ["flip a byte", "truncate", "delete a run", "garbage manifest", "no directory", "other key"],
)
def test_a_damaged_directory_is_rebuilt_from_the_lake(
    damage: str, lake: Path, tmp_path: Path
) -> None:
    directory = tmp_path / "idx"
    writer, _ = _lake_with_index(lake, directory)
    con = writer.sink.con
    manifest = json.loads((directory / "manifest.json").read_text())
    run = directory / manifest["runs"][0]["file"]
    if damage == "flip a byte":
        data = bytearray(run.read_bytes())
        data[len(data) // 2] ^= 0x40
        run.write_bytes(bytes(data))
    elif damage == "truncate":
        run.write_bytes(run.read_bytes()[:-8])
    elif damage == "delete a run":
        run.unlink()
    elif damage == "garbage manifest":
        (directory / "manifest.json").write_text('{"format": "croupier-event-index", "ver')
    elif damage == "no directory":
        shutil.rmtree(directory)
    elif damage == "other key":  # edited without its checksum: not trusted
        manifest["key"] = "0123456789abcdef"
        (directory / "manifest.json").write_text(json.dumps(manifest))
    index = EventIndex(directory, flush_ids=100)
    recovery = index.recover(con)
    assert recovery.rebuilt and recovery.reason
    assert_exact(index, con)
    index.close()
    again = EventIndex(directory, flush_ids=100)
    assert not again.recover(con).rebuilt
    assert_exact(again, con)
    again.close()
    writer.close()


def test_an_index_of_another_lake_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "idx"
    writer, _ = _lake_with_index(tmp_path / "lake-a", directory)
    writer.close()
    other = Writer(tmp_path / "lake-b", partition=3)
    for _ in range(8):  # more snapshots than lake A: watermark checks alone would pass
        other.commit(other.new_ids(20))
    index = EventIndex(directory, flush_ids=100)
    recovery = index.recover(other.sink.con)
    assert recovery.rebuilt and "made for table" in str(recovery.reason)
    assert_exact(index, other.sink.con)
    index.close()
    other.close()


def _copy_lake(source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)


@pytest.mark.parametrize("written_after_restore", [0, 12])
def test_an_index_ahead_of_a_restored_lake_is_rebuilt(
    written_after_restore: int, tmp_path: Path
) -> None:
    # Runs persisted past what the lake has: the lake was restored from a backup after the
    # index was written (then possibly written again, past the index's watermark).
    lake, backup, directory = tmp_path / "lake", tmp_path / "backup", tmp_path / "idx"
    writer = Writer(lake)
    index = EventIndex(directory, flush_ids=100)
    index.recover(writer.sink.con)
    _run_batches(index, writer, [80, 80])
    writer.close()
    _copy_lake(lake, backup)
    writer = Writer(lake)
    writer.offset = 160
    index.recover(writer.sink.con)
    _run_batches(index, writer, [150, 150])
    gone = [
        uuid.UUID(r[0])
        for r in writer.sink.con.execute(
            "SELECT event_id FROM lake.events WHERE source_offset >= 160"
        ).fetchall()
    ]
    index.refresh(writer.sink.con)
    index.close()
    writer.close()
    _copy_lake(backup, lake)
    writer = Writer(lake, partition=5)
    for _ in range(written_after_restore):
        writer.commit(writer.new_ids(3))
    index = EventIndex(directory, flush_ids=100)
    recovery = index.recover(writer.sink.con)
    assert recovery.rebuilt, recovery
    assert_exact(index, writer.sink.con, absent=gone)
    index.close()
    writer.close()


def test_a_new_lake_and_a_recreated_events_table(lake: Path, tmp_path: Path) -> None:
    con = lakes.connect(lakes.Lake(root=lake), create=True)  # no tables yet
    index = EventIndex(tmp_path / "idx")
    recovery = index.recover(con)
    assert recovery.rebuilt and recovery.ids == 0
    writer = Writer(lake)  # creates the tables, then writes
    ids = writer.new_ids(20)
    writer.commit(ids)
    assert index.refresh(con) == 20
    con.execute("DROP TABLE lake.events")
    writer.sink.close()
    writer = Writer(lake, partition=1)
    writer.commit(writer.new_ids(7))
    in_flight = writer.new_ids(4)  # a batch processed, its commit not yet done
    fps = index.fingerprints([u.int for u in in_flight])
    index.add(fps)
    token = index.seal()
    index.refresh(con)  # rebuilt: the old table's ids are gone with it, the batch stays
    assert index.seen(fps).all()
    index.committed(token, writer.commit(in_flight))
    assert_exact(index, con, absent=ids)
    index.close()
    writer.close()
    con.close()


def test_the_pipeline_never_reads_its_own_overlapped_commit_back(tmp_path: Path) -> None:
    """The pipeline processes batch N+1 while batch N commits; N's snapshot is known to be its
    own as soon as it commits, so N+1's refresh of the id indexes reads nothing from the lake
    (it read every id of N back before: a scan per batch on a single consumer)."""
    from consumers.pipeline import Pipeline
    from consumers.processor import RawMessage
    from tests.consumers.helpers import night

    messages = night(tables=2, hours=0.5, seed=3, faults="none").messages
    raw = [
        RawMessage(value=m.value, key=m.key.encode(), topic="t", partition=0, offset=i)
        for i, m in enumerate(messages)
    ]
    sink = LakeSink(lakes.Lake(root=tmp_path / "lake"))
    pipeline = Pipeline(sink)
    read_back: list[int] = []
    for index in pipeline._ids:
        inner = index._index
        refresh = inner.refresh

        def spy(con: Any = None, refresh: Callable[..., int] = refresh) -> int:
            added = refresh(con)
            read_back.append(added)
            return added

        inner.refresh = spy  # type: ignore[method-assign]
    size = len(raw) // 4
    for start in range(0, len(raw), size):
        pipeline.handle(raw[start : start + size])
        deadline = time.monotonic() + 60
        while not pipeline.idle() and time.monotonic() < deadline:  # committed, not flushed
            time.sleep(0.01)
    pipeline.close()
    assert len(read_back) >= 6 and not any(read_back), read_back
    con = sink.con
    stored = con.execute("SELECT count(*) FROM events").fetchone()
    assert stored is not None and stored[0] == len(raw)
    sink.close()
