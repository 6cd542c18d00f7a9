"""Cost of the event_id index (consumers/event_index.py) per id, as the consumer uses it.

    uv run python bench/bench_event_index.py [--ids 1000000 10000000] [--batch 5000]

For each size: the index is filled to that many ids in batches (on disk, memory-mapped runs),
then timed over further batches: `seen` of a batch (95 % new ids, 5 % repeats of old ones)
plus `add`, `seal`, `committed` and the writes and merges that come due (amortised over the
timed batches, which cover at least one flush). Also: `fingerprints` of UUID ints, `refresh`
with nothing new on a real DuckLake lake, and the heap the index holds.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from consumers.event_index import EventIndex, fingerprints


def fill(index: EventIndex, total: int, rng: np.random.Generator) -> float:
    started = time.perf_counter()
    step = 200_000
    for start in range(0, total, step):
        fps = rng.integers(0, 2**64, size=min(step, total - start), dtype=np.uint64)
        index.add(fps)
        index.committed(index.seal())
        if index.pending >= index.flush_ids:
            index.persist()
    index.persist()
    return time.perf_counter() - started


def timed_batches(
    index: EventIndex, batch: int, rng: np.random.Generator
) -> tuple[float, float, int]:
    """Wall and CPU seconds and ids for batches worth 2 flushes, with the persists/merges they
    trigger."""
    old = np.asarray(index._state.runs[0].data[:: max(1, len(index._state.runs[0].data) // 10_000)])
    ids = 0
    started, cpu = time.perf_counter(), time.process_time()
    while ids < 2 * index.flush_ids:
        fps = rng.integers(0, 2**64, size=batch, dtype=np.uint64)
        fps[: batch // 20] = old[rng.integers(0, len(old), batch // 20)]
        new = fps[~index.seen(fps)]
        index.add(new)
        index.committed(index.seal())
        if index.pending >= index.flush_ids:
            index.persist()
        ids += batch
    return time.perf_counter() - started, time.process_time() - cpu, ids


def bench_size(total: int, batch: int, flush_ids: int, ratio: int) -> None:
    directory = Path(tempfile.mkdtemp(prefix="bench-event-index-"))
    try:
        rng = np.random.default_rng(1)
        index = EventIndex(directory / "idx", flush_ids=flush_ids, ratio=ratio)
        fill_s = fill(index, total, rng)
        sizes = sorted((len(r) for r in index._state.runs), reverse=True)
        disk = sum(p.stat().st_size for p in (directory / "idx").iterdir())
        # seen only, on the filled index (runs hot in the page cache)
        probe = rng.integers(0, 2**64, size=batch, dtype=np.uint64)
        index.seen(probe)
        reps = 50
        probes = [rng.integers(0, 2**64, size=batch, dtype=np.uint64) for _ in range(reps)]
        t0, c0 = time.perf_counter(), time.process_time()
        for probe in probes:
            index.seen(probe)
        seen_us = (time.perf_counter() - t0) / (reps * batch) * 1e6
        seen_cpu = (time.process_time() - c0) / (reps * batch) * 1e6
        seconds, cpu, ids = timed_batches(index, batch, rng)
        print(
            f"{total:>11,} ids: fill {fill_s:6.1f} s ({fill_s / total * 1e6:.2f} us/id), "
            f"{len(sizes)} runs {sizes[:6]}{'...' if len(sizes) > 6 else ''}, "
            f"disk {disk / total:.1f} B/id"
        )
        print(
            f"{'':>16}seen {seen_cpu:.3f} us/id CPU ({seen_us:.3f} wall); "
            f"seen+add+commit+persist/merge {cpu / ids * 1e6:.3f} us/id CPU "
            f"({seconds / ids * 1e6:.3f} wall; batches of {batch:,}); "
            f"heap tail {index.pending * 8 / 2**20:.1f} MiB"
        )
        index.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def bench_fingerprints(batch: int) -> None:
    rng = random.Random(2)
    ids = [uuid.UUID(int=rng.getrandbits(128)).int for _ in range(batch)]
    fingerprints(ids, 1)
    reps = 20
    t0 = time.process_time()
    for _ in range(reps):
        fingerprints(ids, 1)
    per_id = (time.process_time() - t0) / (reps * batch)
    print(f"fingerprints of UUID ints: {per_id * 1e9:.0f} ns/id CPU")


def bench_refresh() -> None:
    from consumers.sink import LakeSink
    from infra import lake as lakes

    root = Path(tempfile.mkdtemp(prefix="bench-event-index-lake-"))
    try:
        sink = LakeSink(lakes.Lake(root=root / "lake"))
        index = EventIndex(root / "idx")
        index.recover(sink.con)
        index.refresh(sink.con)
        time.sleep(0.2)  # the catalog's last change must be older than RACY_SECONDS
        reps = 2000
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(reps):
            index.refresh(sink.con)
        idle = (time.process_time() - c0) / reps * 1e6, (time.perf_counter() - t0) / reps * 1e6
        # Right after a commit (the consumer's case: its own batch just landed): one query.
        reps = 20
        spent = [0.0, 0.0]
        for _ in range(reps):
            sink.con.execute("INSERT INTO lake.consumer_offsets VALUES ('t', 0, 1)")
            t0, c0 = time.perf_counter(), time.process_time()
            index.refresh(sink.con)
            spent[0] += time.process_time() - c0
            spent[1] += time.perf_counter() - t0
        print(
            f"refresh, nothing committed: {idle[0]:.1f} us CPU ({idle[1]:.1f} wall); "
            f"after a commit touching no events: {spent[0] / reps * 1e3:.2f} ms CPU "
            f"({spent[1] / reps * 1e3:.2f} wall)"
        )
        index.close()
        sink.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bench_lake(commits: int) -> None:
    """recover() on a lake of many commits: a full rebuild, then loading the runs and reading
    only the rows after the watermark; refresh() reading one foreign commit; and the files
    DuckDB opened for that tail read (EXPLAIN ANALYZE)."""
    import json

    from consumers.event_index import last_committed_snapshot
    from consumers.rows import RowBatch
    from consumers.sink import LakeSink
    from infra import lake as lakes

    root = Path(tempfile.mkdtemp(prefix="bench-event-index-lake-"))
    rng = random.Random(3)
    offset = 0

    def commit(sink: LakeSink, n: int) -> int:
        nonlocal offset
        batch = RowBatch()
        for _ in range(n):
            event_id = uuid.UUID(int=rng.getrandbits(128))
            payload = json.dumps({"event_id": str(event_id), "event_type": "card_dealt"})
            batch.add("events", (payload, 0, offset))
            offset += 1
        sink.commit(batch, offsets={("events", 0): offset})
        return last_committed_snapshot(sink.con) or 0

    try:
        sink = LakeSink(lakes.Lake(root=root / "lake"))
        started = time.perf_counter()
        for n in range(commits):
            commit(sink, (5, 300, 2000)[n % 3])  # 5 rows are inlined in the catalog
        print(
            f"lake: {offset:,} events in {commits} commits ({time.perf_counter() - started:.0f} s)"
        )
        index = EventIndex(root / "idx")
        first = index.recover(sink.con)
        per_row = first.seconds / offset * 1e6
        print(f"recover, no index: full scan {first.seconds:.2f} s ({per_row:.1f} us/row)")
        index.close()
        more = [commit(sink, 2000) for _ in range(10)]
        index = EventIndex(root / "idx")
        again = index.recover(sink.con)
        print(
            f"recover, index 10 commits behind: {again.seconds * 1e3:.0f} ms "
            f"({again.tail:,} rows read, rebuilt={again.rebuilt})"
        )
        other = LakeSink(lakes.Lake(root=root / "lake"))
        commit(other, 2000)
        t0 = time.perf_counter()
        added = index.refresh(sink.con)
        spent = (time.perf_counter() - t0) * 1e3
        print(f"refresh, one foreign commit of {added:,} rows: {spent:.1f} ms")
        plan = sink.con.execute(
            "EXPLAIN ANALYZE SELECT event_id FROM "
            f"ducklake_table_insertions('lake', 'main', 'events', {more[0]}, {more[-1]})"
        ).fetchall()[0][1]
        flat = re.sub(r"[│\s]+", " ", plan)
        labels = "Total Files Read|Total Files Skipped|Inlined Tables Read"
        found = dict(re.findall(rf"({labels}): ([\d,]+)", flat))
        data_files = sum(1 for _ in (root / "lake" / "data").rglob("*.parquet"))
        print(f"tail read of 10 commits, EXPLAIN ANALYZE: {found} (of {data_files} data files)")
        index.close()
        other.close()
        sink.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--flush-ids", type=int, default=1 << 20)
    parser.add_argument("--ratio", type=int, default=4)
    parser.add_argument("--lake-commits", type=int, default=150)
    parser.add_argument("--quick", action="store_true", help="small sizes (CI)")
    args = parser.parse_args()
    if args.quick:
        args.ids, args.lake_commits = [200_000], 20
    print(f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}")
    bench_fingerprints(args.batch)
    bench_refresh()
    if args.lake_commits:
        bench_lake(args.lake_commits)
    for total in args.ids:
        bench_size(total, args.batch, args.flush_ids, args.ratio)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max RSS {rss:.0f} MiB (includes the page cache's mapped run pages)")


if __name__ == "__main__":
    main()
