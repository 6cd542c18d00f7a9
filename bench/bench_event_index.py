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


def timed_batches(index: EventIndex, batch: int, rng: np.random.Generator) -> tuple[float, int]:
    """Seconds and ids for batches worth 2 flushes, with the persists/merges they trigger."""
    old = np.asarray(index._state.runs[0].data[:: max(1, len(index._state.runs[0].data) // 10_000)])
    ids = 0
    started = time.perf_counter()
    while ids < 2 * index.flush_ids:
        fps = rng.integers(0, 2**64, size=batch, dtype=np.uint64)
        fps[: batch // 20] = old[rng.integers(0, len(old), batch // 20)]
        new = fps[~index.seen(fps)]
        index.add(new)
        index.committed(index.seal())
        if index.pending >= index.flush_ids:
            index.persist()
        ids += batch
    return time.perf_counter() - started, ids


def bench_size(total: int, batch: int, flush_ids: int, fanout: int) -> None:
    directory = Path(tempfile.mkdtemp(prefix="bench-event-index-"))
    try:
        rng = np.random.default_rng(1)
        index = EventIndex(directory / "idx", flush_ids=flush_ids, fanout=fanout)
        fill_s = fill(index, total, rng)
        sizes = sorted((len(r) for r in index._state.runs), reverse=True)
        disk = sum(p.stat().st_size for p in (directory / "idx").iterdir())
        # seen only, on the filled index (runs hot in the page cache)
        probe = rng.integers(0, 2**64, size=batch, dtype=np.uint64)
        index.seen(probe)
        reps = 50
        t0 = time.perf_counter()
        for _ in range(reps):
            index.seen(rng.integers(0, 2**64, size=batch, dtype=np.uint64))
        seen_us = (time.perf_counter() - t0) / (reps * batch) * 1e6
        seconds, ids = timed_batches(index, batch, rng)
        print(
            f"{total:>11,} ids: fill {fill_s:6.1f} s ({fill_s / total * 1e6:.2f} us/id), "
            f"{len(sizes)} runs {sizes[:6]}{'...' if len(sizes) > 6 else ''}, "
            f"disk {disk / total:.1f} B/id"
        )
        print(
            f"{'':>16}seen {seen_us:.3f} us/id; seen+add+commit+persist/merge "
            f"{seconds / ids * 1e6:.3f} us/id (batches of {batch:,}); "
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
    t0 = time.perf_counter()
    for _ in range(reps):
        fingerprints(ids, 1)
    per_id = (time.perf_counter() - t0) / (reps * batch)
    print(f"fingerprints of UUID ints: {per_id * 1e9:.0f} ns/id")


def bench_refresh() -> None:
    from consumers.sink import LakeSink
    from croupier import lake as lakes

    root = Path(tempfile.mkdtemp(prefix="bench-event-index-lake-"))
    try:
        sink = LakeSink(lakes.Lake(root=root / "lake"))
        index = EventIndex(root / "idx")
        index.recover(sink.con)
        index.refresh(sink.con)
        reps = 2000
        t0 = time.perf_counter()
        for _ in range(reps):
            index.refresh(sink.con)
        print(f"refresh, nothing new: {(time.perf_counter() - t0) / reps * 1e6:.1f} us per call")
        index.close()
        sink.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--flush-ids", type=int, default=1 << 20)
    parser.add_argument("--fanout", type=int, default=4)
    args = parser.parse_args()
    print(f"pid {os.getpid()}, {os.cpu_count()} cpus")
    bench_fingerprints(args.batch)
    bench_refresh()
    for total in args.ids:
        bench_size(total, args.batch, args.flush_ids, args.fanout)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max RSS {rss:.0f} MiB (includes the page cache's mapped run pages)")


if __name__ == "__main__":
    main()
