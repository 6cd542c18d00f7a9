"""Every `event_id` the lake has ever stored, as keyed 64-bit fingerprints in a small LSM tree.

The consumer must recognise a repeated `event_id` however old it is. A SQLite or DuckDB primary
key costs 5-17 us per id at 2M ids; here `seen` + `add` + commit + run writes and merges cost
0.45 us per id at 1M ids and 0.7 at 10M (CPU, on the 2-core machine under heavy load), plus
0.14 us for `fingerprints` (see `bench/bench_event_index.py`), with bounded heap:

* Each id (a UUID as a 128-bit int) becomes a 64-bit fingerprint: a keyed, vectorised mix of its
  high and low halves (`fingerprints`). The 64-bit key is random per index and kept with it, so
  a producer cannot craft colliding ids without reading the index's directory.
* Fingerprints live in sorted runs. Keyed fingerprints are uniform, so each large run has a
  directory of bucket starts (by the top bits): a lookup reads one entry, then searches a
  window of ~32 values branch-free (`_Sorted`), 4-8x faster than np.searchsorted on
  multi-million runs. Runs are merged by size ratio (each more than `ratio` times the next),
  so a lookup touches O(log n) runs: 2 at 10M ids, at most 5 up to 1e9. Written runs are raw
  little-endian uint64 files (8 bytes per id, plus 1 for the directory), memory-mapped when
  loaded: they live in the OS page cache, not in the heap.
* The heap holds the unflushed tail: the batches added but not yet committed, and the
  committed fingerprints not yet written (`flush_ids`, at most twice that), plus chunks of
  CHUNK values while merging: about 22 MiB at the default 1M ids, whatever the history's size.

The index is derived data; the lake is the truth. A written run only ever holds fingerprints of
rows the lake has committed, and the manifest records the lake snapshot `watermark` the runs
cover (every `events` row committed at a snapshot <= watermark is in them). `recover` loads the
runs and adds the rows committed after the watermark, read with `ducklake_table_insertions`,
which opens only the data files (and inlined rows) of those snapshots. A missing, corrupt,
foreign or stale directory (other lake or `events` table, a watermark the lake does not have
or whose snapshot differs: a lake restored from a backup) is rebuilt from a full scan of
`events.event_id` (~2 us per row), never trusted and never fatal. Files are written to a
temporary name, fsynced and renamed, the manifest last: a crash at any moment leaves the old
state or the new one, and `recover` makes either exact again.

Use (from one thread; the pipeline's commit thread only runs the sink's commit)::

    index = EventIndex(lake_root / "event_index")
    index.recover(con)                      # con: any connection with the lake attached
    ...per batch:
    index.refresh(con)                      # rows others committed (~10 us if none)
    fps = index.fingerprints([e.event_id.int for e in events])
    dup = index.seen(fps) | repeats(fps)    # in the history, or earlier in this batch
    index.add(fps[~dup])                    # EVERY event the batch stores in `events`
    token = index.seal()
    ...the sink commits the batch; then, on its connection: last_committed_snapshot(con)
    index.committed(token, snapshot)        # now durable; `discard(token)` if it failed
    ...at shutdown:
    index.close()

Limits. A hit is a fingerprint match: two distinct ids collide with probability 2^-64 per pair,
so over n ids in the history the chance that any genuine new id is ever taken for a repeat is
about n^2 / 2^65 (1e8 ids: 3e-4; 1e9: 3 %); confirm a hit against the lake before acting on
it. Two processes committing the same id within one batch's time (between a `refresh` and the
other's commit) both store it: the index sees other processes only through the lake. Rows
deleted from `events` stay in the index until it is rebuilt (delete the directory).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import secrets
import sys
import time
import uuid
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import duckdb
import numpy as np

log = logging.getLogger(__name__)

FORMAT = "croupier-event-index"
VERSION = 1
MANIFEST = "manifest.json"
LOCK = "LOCK"
RUN_SUFFIX = ".u64"
DIRECTORY_SUFFIX = ".dir"
TMP_SUFFIX = ".tmp"
# Bucket directories: about 4 values per bucket (1 byte per id as uint32 starts), for arrays
# of at least 2**18 values: smaller ones (2 MiB) are binary-searched about as fast, and the
# tail's arrays, merged again and again, are spared rebuilding directories.
BUCKET_MEAN = 4
DIRECTORY_MIN = 1 << 18
# The committed tail's arrays: each more than TAIL_FACTOR times the next (fewer arrays to search
# against more rewriting per id; 4 measured best of 2, 4 and 8).
TAIL_FACTOR = 4
# Values per step when merging runs or building a directory, rows per Arrow batch when reading
# event_ids from the lake: what the heap holds beyond the tail while writing or reading.
CHUNK = 1 << 18
# A catalog file changed less than this long ago may change again within the same mtime.
RACY_SECONDS = 0.1
# Other processes sharing the lake take the next free directory: `<dir>-1`, `<dir>-2`, ...
MAX_SLOTS = 16

_MASK = (1 << 64) - 1
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_EMPTY = np.empty(0, dtype=np.uint64)
# Catalog changes that add rows to a table: `<kind>:<table_id>` in ducklake_snapshot_changes.
_INSERTS = ("inserted_into_table", "inlined_insert")
# ...and those that cannot (rows moved between files, deleted, columns altered).
_NO_NEW_ROWS = (
    "inline_flush",
    "flushed_inlined",
    "merge_adjacent",
    "compacted_table",
    "deleted_from_table",
    "inlined_delete",
    "altered_table",
)
# Each event_id in DuckDB's canonical UUID text (lowercase, 36 characters: any spelling DuckDB
# reads as a UUID is normalised); what is not a UUID is left out (no UUID.int can match it).
_CANONICAL_IDS_SQL = """
    SELECT u FROM (SELECT CAST(TRY_CAST({column} AS UUID) AS VARCHAR) AS u FROM {source})
    WHERE u IS NOT NULL"""
_HEX_COLUMNS = np.array(
    [*range(0, 8), *range(9, 13), *range(14, 18), *range(19, 23), *range(24, 36)]
)
_HEX_VALUE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX_VALUE[_c] = _i


# --- fingerprints ----------------------------------------------------------------------------


def _splitmix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _fmix(x: np.ndarray, tmp: np.ndarray) -> None:
    """splitmix64's finaliser, in place (a bijection of uint64; numpy wraps on overflow)."""
    np.right_shift(x, 30, out=tmp)
    x ^= tmp
    x *= _M1
    np.right_shift(x, 27, out=tmp)
    x ^= tmp
    x *= _M2
    np.right_shift(x, 31, out=tmp)
    x ^= tmp


def fingerprint_halves(hi: np.ndarray, lo: np.ndarray, key: int) -> np.ndarray:
    """Fingerprints of ids given as their high and low 64 bits.

    fp = fmix((fmix(hi ^ k1) + lo) ^ k2), with k1, k2 derived from `key`: for a given high half
    the map from the low half is a bijection, so ids sharing their high half never collide, and
    two ids with different high halves collide only for one low-half difference that depends
    on fmix(hi ^ k1), unknown without the key."""
    k1 = _splitmix(key & _MASK)
    k2 = _splitmix(k1)
    x = np.bitwise_xor(np.asarray(hi, dtype=np.uint64), np.uint64(k1))
    tmp = np.empty_like(x)
    _fmix(x, tmp)
    x += np.asarray(lo, dtype=np.uint64)
    x ^= np.uint64(k2)
    _fmix(x, tmp)
    return x


def id_halves(ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """128-bit ints (UUID.int) -> (high, low) uint64 arrays. One `int.to_bytes` per id joined
    into one buffer and viewed by numpy: ~120 ns per id, the cheapest of the ways measured
    (shifts and masks per id, object arrays, hex text: 1.5-9x slower)."""
    if not len(ids):
        return _EMPTY, _EMPTY
    raw = b"".join([i.to_bytes(16, "little") for i in ids])
    pairs = np.frombuffer(raw, dtype="<u8").reshape(-1, 2)
    return pairs[:, 1].astype(np.uint64), pairs[:, 0].astype(np.uint64)


def text_halves(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """An Arrow string array of canonical UUID texts -> (high, low) uint64 arrays, decoded
    in numpy straight from the Arrow buffers (DuckDB's own hex casts cost 3 us per row).
    Anything else (nulls, other spellings) goes through `uuid.UUID`, one by one."""
    n = len(column)
    if n == 0:
        return _EMPTY, _EMPTY
    kind = str(column.type)
    if column.null_count == 0 and kind in ("string", "large_string"):
        _, offsets_buffer, data_buffer = column.buffers()
        width = 8 if kind == "large_string" else 4
        offsets = np.frombuffer(
            offsets_buffer, dtype=f"<i{width}", count=n + 1, offset=column.offset * width
        )
        first = int(offsets[0])
        if int(offsets[-1]) - first == 36 * n and (np.diff(offsets) == 36).all():
            text = np.frombuffer(data_buffer, dtype=np.uint8, count=36 * n, offset=first)
            nibbles = _HEX_VALUE[text.reshape(n, 36)[:, _HEX_COLUMNS]]
            if not (nibbles > 15).any():
                octets = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
                halves = np.ascontiguousarray(octets).view(">u8")
                return halves[:, 0].astype(np.uint64), halves[:, 1].astype(np.uint64)
    ints = [uuid.UUID(t).int for t in column.to_pylist() if t is not None]
    return id_halves(ints)


def fingerprints(ids: Sequence[int], key: int) -> np.ndarray:
    """Keyed 64-bit fingerprints of 128-bit ids (UUID.int), as a uint64 array in input order."""
    hi, lo = id_halves(ids)
    return fingerprint_halves(hi, lo, key)


def last_committed_snapshot(con: duckdb.DuckDBPyConnection, catalog: str = "lake") -> int | None:
    """The snapshot the last commit on `con` created (for `EventIndex.committed`), or None.
    Call it on the committing connection right after COMMIT (2-5 ms: a DuckLake query)."""
    rows = con.execute(f'FROM "{catalog}".last_committed_snapshot()').fetchall()
    return None if not rows or rows[0][0] is None else int(rows[0][0])


def repeats(fps: np.ndarray) -> np.ndarray:
    """True where a fingerprint already occurred earlier in `fps` (the first stays False)."""
    fps = np.asarray(fps, dtype=np.uint64)
    out = np.zeros(len(fps), dtype=bool)
    if len(fps) > 1:
        order = np.argsort(fps, kind="stable")
        ordered = fps[order]
        out[order[1:]] = ordered[1:] == ordered[:-1]
    return out


# --- sorted arrays ---------------------------------------------------------------------------


def _unique_sorted(values: np.ndarray) -> np.ndarray:
    """Drop adjacent equal values of a sorted array."""
    if len(values) < 2:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values if keep.all() else values[keep]


def _sorted_unique(values: Any) -> np.ndarray:
    array = np.array(values, dtype=np.uint64, copy=True).ravel()
    array.sort()
    return _unique_sorted(array)


def _merged_chunks(inputs: Sequence[np.ndarray], chunk: int) -> Iterator[np.ndarray]:
    """The sorted, deduplicated union of sorted arrays, as consecutive chunks of about
    `chunk` values: heap stays bounded while merging memory-mapped runs of any size."""
    inputs = [a for a in inputs if len(a)]
    if not inputs:
        return
    total = sum(len(a) for a in inputs)
    big = max(inputs, key=len)
    parts = max(1, math.ceil(total / chunk))
    # Pivots are values of the largest input: a value equal to a pivot falls in the same chunk
    # of every input (side="left" everywhere), so equal values always meet in one chunk.
    pivots = np.asarray(big[[len(big) * i // parts for i in range(1, parts)]], dtype=np.uint64)
    bounds = [
        np.concatenate(([0], np.searchsorted(a, pivots, side="left"), [len(a)])) for a in inputs
    ]
    for j in range(parts):
        pieces = [a[b[j] : b[j + 1]] for a, b in zip(inputs, bounds, strict=True)]
        pieces = [p for p in pieces if len(p)]
        if not pieces:
            continue
        if len(pieces) == 1:
            yield _unique_sorted(np.asarray(pieces[0]))
            continue
        merged = np.concatenate(pieces)
        merged.sort(kind="stable")  # timsort: merges the sorted pieces in linear-ish time
        yield _unique_sorted(merged)


def _contains(sorted_values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Membership of `queries` in a small sorted array (binary search)."""
    n = len(sorted_values)
    pos = np.searchsorted(sorted_values, queries)
    np.minimum(pos, n - 1, out=pos)
    found: np.ndarray = sorted_values[pos] == queries
    return found


def _bucket_bits(count: int) -> int:
    """Buckets (top bits of a fingerprint) for `count` values: about BUCKET_MEAN per bucket;
    0 (no directory) for arrays small enough to stay in the CPU cache."""
    if count < DIRECTORY_MIN:
        return 0
    return (count // BUCKET_MEAN).bit_length() - 1


class _Buckets:
    """Builds the directory of a sorted array fed in consecutive chunks: entry j is the
    number of values below j << (64 - bits), the last entry the total (B + 1 entries)."""

    def __init__(self, bits: int, dtype: Any) -> None:
        self.bits = bits
        self.shift = np.uint64(64 - bits)
        self.dtype = dtype
        self.next = 0  # first bucket whose start is not yet known
        self.last = 0  # the last start emitted
        self.largest = 0  # values in the fullest bucket

    def feed(self, chunk: np.ndarray, offset: int) -> np.ndarray:
        """Starts of the buckets that begin in `chunk` (which starts at position `offset`)."""
        buckets = (chunk >> self.shift).view(np.int64)  # < 2**bits: the same values
        base, top = int(buckets[0]), int(buckets[-1])
        if top < self.next:
            return np.empty(0, dtype=self.dtype)
        # below[k]: values of the chunk in buckets < base + k; every value of earlier chunks is
        # below the buckets from self.next on (chunks are sorted), hence the offset.
        # Buckets from self.next up to base hold no values: they start at `offset` too.
        below = np.zeros(top - base + 2, dtype=np.int64)
        np.cumsum(np.bincount(buckets - base, minlength=top - base + 1), out=below[1:])
        first = max(self.next, base)
        starts = offset + below[first - base : top - base + 1]
        if first > self.next:
            starts = np.concatenate([np.full(first - self.next, offset, dtype=np.int64), starts])
        self.next = top + 1
        return self._track(starts)

    def finish(self, count: int) -> np.ndarray:
        return self._track(np.full((1 << self.bits) + 1 - self.next, count, dtype=np.int64))

    def _track(self, starts: np.ndarray) -> np.ndarray:
        if len(starts):
            sizes = np.diff(starts, prepend=self.last)
            self.largest = max(self.largest, int(sizes.max()))
            self.last = int(starts[-1])
        return starts.astype(self.dtype)


def _directory_dtype(count: int) -> Any:
    return np.dtype("<u4") if count < 2**32 else np.dtype("<u8")


@dataclass
class _Sorted:
    """A sorted, deduplicated array of fingerprints and, when large, its bucket directory.

    Fingerprints are uniform (keyed), so a value's top bits give its bucket, and the
    directory the bucket's first position: a lookup reads one directory entry and searches
    a window of `width` values (a power of two above the fullest bucket), branch-free, one
    vectorised step per halving. About 4 memory reads per lookup instead of log2(n) for a
    binary search, which on multi-million runs measured 4-8x faster than np.searchsorted."""

    data: np.ndarray
    directory: np.ndarray | None = None
    bits: int = 0
    width: int = 0

    def __len__(self) -> int:
        return len(self.data)

    @classmethod
    def of(cls, data: np.ndarray) -> _Sorted:
        bits = _bucket_bits(len(data))
        if not bits:
            return cls(data)
        buckets = _Buckets(bits, _directory_dtype(len(data)))
        directory = np.concatenate([buckets.feed(data, 0), buckets.finish(len(data))])
        return cls(data, directory, bits, _window(buckets.largest))

    def contains(self, queries: np.ndarray) -> np.ndarray:
        data = self.data
        if self.directory is None:
            return _contains(data, queries)
        pos = self.directory[queries >> np.uint64(64 - self.bits)].astype(np.intp)
        last = len(data) - 1
        probe = np.empty_like(pos)
        step = self.width >> 1
        while step:
            # pos += step wherever the value at pos + step - 1 is still below the query
            np.add(pos, step - 1, out=probe)
            np.minimum(probe, last, out=probe)
            pos += (data[probe] < queries) * step
            step >>= 1
        np.minimum(pos, last, out=pos)
        found: np.ndarray = data[pos] == queries
        return found


def _window(largest: int) -> int:
    """The search window: a power of two above the fullest bucket's size."""
    return 1 << int(largest).bit_length()


# --- runs, manifest, catalog -----------------------------------------------------------------


@dataclass
class _Run(_Sorted):
    """A run: memory-mapped from `file` (its directory from `file` + DIRECTORY_SUFFIX), or
    held in memory by an index without a directory."""

    watermark: int = -1
    file: str | None = None
    crc32: int = 0
    directory_crc32: int = 0

    def describe(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "count": len(self),
            "crc32": self.crc32,
            "bucket_bits": self.bits,
            "directory_crc32": self.directory_crc32,
            "watermark": self.watermark,
        }


class _Invalid(Exception):
    """The index directory cannot be trusted; the message says why (it is then rebuilt)."""


class LakeChanged(Exception):
    """The lake is not the one the index describes any more (table recreated, snapshots
    expired): the index is rebuilt."""


@dataclass(frozen=True)
class Recovery:
    """What `recover` did."""

    rebuilt: bool
    reason: str | None  # why the directory was rebuilt (None: loaded as it was)
    runs: int
    ids: int  # fingerprints in the runs (a repeat across runs counts twice)
    tail: int  # fingerprints read from rows committed after the watermark
    watermark: int
    seconds: float


class _Catalog:
    """Reads DuckLake's metadata tables through DuckDB (`__ducklake_metadata_<alias>`).

    Not with Python's sqlite3: DuckDB's SQLite extension writes the catalog through its own VFS
    and the -wal file stays empty, so a long-lived outside SQLite connection (in WAL mode, it
    trusts its page cache while the WAL index is unchanged) went on reading the snapshot of its
    first query, commits later. A query costs 1-3 ms; `stat` tells for ~10 us when nothing was
    committed since the last query."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, alias: str) -> None:
        self.cursor = cursor
        self.prefix = f'"__ducklake_metadata_{alias}".'
        rows = cursor.execute(
            "SELECT path, type FROM duckdb_databases() WHERE database_name = ?", [alias]
        ).fetchall()
        if not rows or rows[0][1] != "ducklake":
            raise ValueError(f"no DuckLake catalog attached as {alias!r}")
        path = str(rows[0][0] or "")
        self.files: list[Path] = []
        if path.startswith("sqlite:"):
            file = Path(path.removeprefix("sqlite:"))
            self.files = [
                file,
                file.with_name(file.name + "-wal"),
                file.with_name(file.name + "-journal"),
            ]
        self.trusted: tuple[tuple[int, int, int], ...] | None = None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.cursor.execute(sql.replace("{m}", self.prefix), list(params)).fetchall()

    def stat(self) -> tuple[tuple[int, int, int], ...] | None:
        """(mtime, size, inode) of the catalog's files, or None if they cannot tell (not a
        SQLite file, or one changed too recently for its mtime to prove anything: as git's
        racy-clean rule, a change within RACY_SECONDS of now may share the mtime of the next)."""
        if not self.files:
            return None
        now = time.time_ns()
        key = []
        for file in self.files:
            try:
                st = file.stat()
            except FileNotFoundError:
                key.append((0, -1, 0))
                continue
            except OSError:
                return None
            if st.st_mtime_ns >= now - RACY_SECONDS * 1e9:
                return None
            key.append((st.st_mtime_ns, st.st_size, st.st_ino))
        return tuple(key)

    def latest(self) -> int:
        rows = self.query("SELECT max(snapshot_id) FROM {m}ducklake_snapshot")
        return int(rows[0][0]) if rows and rows[0][0] is not None else -1

    def snapshot_time(self, snapshot: int) -> str | None:
        rows = self.query(
            "SELECT CAST(snapshot_time AS VARCHAR) FROM {m}ducklake_snapshot WHERE snapshot_id = ?",
            [snapshot],
        )
        return str(rows[0][0]) if rows else None

    def changes_after(self, snapshot: int) -> list[tuple[int, str | None]]:
        """(snapshot, changes_made) of every snapshot after `snapshot`, in order; LakeChanged if
        some were expired (DuckLake numbers snapshots 0, 1, 2, ...: a gap is an expired one,
        whose rows table_insertions() could no longer attribute to it)."""
        rows = [
            (int(s), None if c is None else str(c))
            for s, c in self.query(
                "SELECT snapshot_id, changes_made FROM {m}ducklake_snapshot_changes "
                "WHERE snapshot_id > ? ORDER BY snapshot_id",
                [snapshot],
            )
        ]
        if [s for s, _ in rows] == list(range(snapshot + 1, snapshot + 1 + len(rows))):
            return rows  # DuckLake writes one changes row per snapshot, in the same commit
        # A snapshot without its changes row, or expired ones: ask ducklake_snapshot.
        ids = [
            int(s)
            for (s,) in self.query(
                "SELECT snapshot_id FROM {m}ducklake_snapshot WHERE snapshot_id > ? "
                "ORDER BY snapshot_id",
                [snapshot],
            )
        ]
        if ids != list(range(snapshot + 1, snapshot + 1 + len(ids))):
            raise LakeChanged(f"snapshots after {snapshot} were expired")
        made = dict(rows)
        return [(s, made.get(s)) for s in ids]

    def table(self, schema: str, table: str) -> tuple[int, str] | None:
        """(table_id, table_uuid) of the current `schema.table`, or None."""
        rows = self.query(
            "SELECT t.table_id, t.table_uuid FROM {m}ducklake_table t "
            "JOIN {m}ducklake_schema s ON s.schema_id = t.schema_id "
            "WHERE s.schema_name = ? AND t.table_name = ? "
            "AND s.end_snapshot IS NULL AND t.end_snapshot IS NULL",
            [schema, table],
        )
        return (int(rows[0][0]), str(rows[0][1])) if rows else None


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _manifest_checksum(body: dict[str, Any]) -> int:
    return zlib.crc32(json.dumps(body, sort_keys=True).encode())


def _crc32_of(data: np.ndarray) -> int:
    """CRC-32 of an array's bytes, read in 8 MiB slices (through the mapping for a memmap:
    the page cache, not the heap)."""
    crc = 0
    step = 1 << 20
    for start in range(0, len(data), step):
        crc = zlib.crc32(np.ascontiguousarray(data[start : start + step]).view(np.uint8).data, crc)
    return crc


def _map(path: Path, dtype: Any, count: int) -> np.ndarray:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _Invalid(f"{path.name}: {exc.strerror or exc}") from exc
    if size != count * np.dtype(dtype).itemsize or count <= 0:
        raise _Invalid(f"{path.name}: {size} bytes for {count} entries")
    return _view(np.memmap(path, dtype=dtype, mode="r", shape=(count,)))


def _view(mapped: np.memmap) -> np.ndarray:
    """A plain ndarray over a mapping (it keeps the mapping open): np.memmap's Python-level
    __getitem__ cost as much as the lookups themselves."""
    return mapped.view(np.ndarray)


def _open_run(directory: Path, meta: dict[str, Any]) -> _Run:
    """Memory-map a run and its bucket directory after checking sizes and checksums."""
    try:
        name, count = str(meta["file"]), int(meta["count"])
        crc, bits = int(meta["crc32"]), int(meta["bucket_bits"])
        directory_crc, watermark = int(meta["directory_crc32"]), int(meta["watermark"])
    except (KeyError, TypeError, ValueError) as exc:
        raise _Invalid(f"malformed run entry: {exc!r}") from exc
    if "/" in name or not name.endswith(RUN_SUFFIX) or bits != _bucket_bits(count):
        raise _Invalid(f"bad run entry {meta!r}")
    data = _map(directory / name, np.uint64, count)
    if _crc32_of(data) != crc:
        raise _Invalid(f"{name}: checksum mismatch")
    run = _Run(data, watermark=watermark, file=name, crc32=crc)
    if bits:
        path = directory / (name + DIRECTORY_SUFFIX)
        starts = _map(path, _directory_dtype(count), (1 << bits) + 1)
        if _crc32_of(starts) != directory_crc:
            raise _Invalid(f"{path.name}: checksum mismatch")
        largest = 0
        for start in range(0, len(starts) - 1, 1 << 20):
            piece = np.asarray(starts[start : start + (1 << 20) + 1], dtype=np.int64)
            largest = max(largest, int(np.diff(piece).max()))
        run.directory, run.bits, run.width = starts, bits, _window(largest)
        run.directory_crc32 = directory_crc
    return run


# --- the index -------------------------------------------------------------------------------


@dataclass
class _Lake:
    """Where the index reads the lake: a cursor of the caller's connection (its own
    transactions, so it never runs inside the sink's), and the `events` table's identity."""

    cursor: duckdb.DuckDBPyConnection
    catalog: _Catalog
    alias: str
    schema: str
    table: str
    table_id: int | None = None
    table_uuid: str | None = None
    of: int = 0  # id() of the connection the cursor was made from
    column: str = "event_id"  # SQL giving each row's id as a UUID (or its 32 hex digits)


@dataclass
class _State:
    runs: list[_Run] = field(default_factory=list)
    tail: list[_Sorted] = field(default_factory=list)  # committed, not yet in a run
    watermark: int = -1
    watermark_time: str | None = None


class EventIndex:
    """The set of event_id fingerprints of every row of the lake's `events` table, plus the
    batches being processed. Not thread-safe: use it from one thread.

    `directory`: where runs are written (created if missing; the lake's `<root>/event_index`
    is meant). If another live process holds it, the first free `<directory>-N` is used
    (`directory` tells which). None: runs stay in memory (tests, tools).
    `flush_ids`: committed fingerprints kept in the heap before they are written as a run.
    `ratio`: each run is kept more than `ratio` times larger than the next (runs per lookup:
    about log_ratio(n / flush_ids) + 1).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        flush_ids: int = 1 << 20,
        ratio: int = 4,
        key: int | None = None,
    ) -> None:
        if flush_ids < 1 or ratio < 2:
            raise ValueError("flush_ids >= 1 and ratio >= 2")
        self.flush_ids = flush_ids
        self.ratio = ratio
        self._chunk = min(flush_ids, CHUNK)
        self.key = secrets.randbits(64) if key is None else key & _MASK
        self._state = _State()
        self._current: list[np.ndarray] = []  # added by the batch being processed
        self._open: dict[int, np.ndarray] = {}  # sealed batches, not yet known committed
        self._next_token = 1
        self._own: set[int] = set()  # snapshots > watermark known to hold only our batches
        self._told: deque[int] = deque()  # `own` snapshots from the committing thread
        self._next_run = 1
        self._lake: _Lake | None = None
        self._lock: IO[bytes] | None = None
        self._persisted: tuple[int, tuple[str | None, ...]] | None = None
        self.directory: Path | None = None
        if directory is not None:
            self.directory, self._lock = _lock_slot(Path(directory))

    # -- lookups ------------------------------------------------------------------------------

    def fingerprints(self, ids: Sequence[int]) -> np.ndarray:
        """Fingerprints of 128-bit ids (UUID.int) under this index's key. Valid until the index
        is rebuilt with a new key: compute them after `recover`."""
        return fingerprints(ids, self.key)

    def seen(self, fps: Any) -> np.ndarray:
        """For each fingerprint, whether it is in the index: in a run, in the committed tail, in
        a sealed batch or added by the current one. (Repeats inside `fps`: see `repeats`.)"""
        queries = np.asarray(fps, dtype=np.uint64).ravel()
        out = np.zeros(len(queries), dtype=bool)
        if not len(queries):
            return out
        # Sorted queries: binary searches follow each other (4x fewer mispredicted branches
        # than in random order), and the gathers from the runs walk forward through memory.
        order = np.argsort(queries)
        ordered = queries[order]
        hit = np.zeros(len(queries), dtype=bool)
        for part in (*self._state.runs, *self._state.tail):
            hit |= part.contains(ordered)
        for array in (*self._open.values(), *self._current):
            if len(array):
                hit |= _contains(array, ordered)
        out[order] = hit
        return out

    # -- batches ------------------------------------------------------------------------------

    def add(self, fps: Any) -> None:
        """Fingerprints of the events the current batch stores: `seen` reports them at once.
        They are persisted only after `seal` and `committed`."""
        array = _sorted_unique(fps)
        if len(array):
            self._current.append(array)
            if len(self._current) > 4:
                self._current = [np.concatenate(list(_merged_chunks(self._current, 1 << 62)))]

    def seal(self) -> int:
        """End the current batch: a token for `committed` or `discard`."""
        token = self._next_token
        self._next_token += 1
        chunks = self._current
        self._current = []
        self._open[token] = (
            _EMPTY if not chunks else np.concatenate(list(_merged_chunks(chunks, 1 << 62)))
        )
        return token

    def committed(self, token: int | None = None, snapshot: int | None = None) -> None:
        """The batch `token` (None: every sealed batch and the current one) is in the lake.

        `snapshot`: the lake snapshot its commit created (`last_committed_snapshot()` on the
        committing connection). Optional but cheap: `refresh` then skips reading that
        snapshot back from the lake."""
        if token is None:
            if self._current:
                self.seal()
            tokens = sorted(self._open)
        else:
            tokens = [token]
        for t in tokens:
            array = self._open.pop(t)
            if len(array):
                self._push_tail(array)
        if snapshot is not None and snapshot > self._state.watermark:
            self._own.add(int(snapshot))
        if self.pending > 2 * self.flush_ids:
            self._auto_persist()

    def own(self, snapshot: int) -> None:
        """`snapshot` holds only this index's batches: `refresh` skips reading it back. Safe on
        the committing thread, before `committed` runs on the index's own: a deque's append is
        thread-safe, and only `refresh`, on the index's thread, moves it into `_own`."""
        self._told.append(int(snapshot))

    def discard(self, token: int) -> None:
        """The batch `token` was not committed: forget what it added."""
        self._open.pop(token, None)

    def _push_tail(self, array: np.ndarray) -> None:
        """Append a sorted array to the committed tail, merging the smallest arrays so that
        each is more than TAIL_FACTOR times the next: O(log) arrays to search, O(log) merges
        per id."""
        tail = self._state.tail
        while tail and len(tail[-1]) <= TAIL_FACTOR * len(array):
            array = np.concatenate(list(_merged_chunks([tail.pop().data, array], 1 << 62)))
        tail.append(_Sorted.of(array))

    # -- sizes --------------------------------------------------------------------------------

    @property
    def watermark(self) -> int:
        """The lake snapshot up to which every committed `events` row is in the index."""
        return self._state.watermark

    @property
    def pending(self) -> int:
        """Fingerprints held in the heap (committed tail, sealed and current batches)."""
        return (
            sum(len(a) for a in self._state.tail)
            + sum(len(a) for a in self._open.values())
            + sum(len(a) for a in self._current)
        )

    @property
    def runs(self) -> int:
        return len(self._state.runs)

    def __len__(self) -> int:
        """Fingerprints held (a value repeated across runs or layers counts each time)."""
        return sum(len(r) for r in self._state.runs) + self.pending

    # -- the lake -----------------------------------------------------------------------------

    def recover(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        catalog: str = "lake",
        schema: str = "main",
        table: str = "events",
        column: str = "event_id",
    ) -> Recovery:
        """Load the runs, check they describe this lake, and add every row committed after
        their watermark; rebuild from a full scan of `events` if anything is off. Forgets the
        batches in progress and any in-memory state."""
        started = time.monotonic()
        self._detach()
        self._lake = self._attach(con, catalog, schema, table, column)
        self._current, self._open, self._own = [], {}, set()
        self._told.clear()
        reason: str | None = None
        tail = 0
        try:
            self._state = self._load()
            tail = self._catch_up()
        except (_Invalid, LakeChanged) as exc:
            reason = str(exc)
        if reason is not None:
            # A first build (no manifest yet) is routine; anything else is worth a warning.
            level = logging.INFO if reason == "no manifest" else logging.WARNING
            log.log(level, "event index %s: rebuilding from the lake: %s", self.directory, reason)
            self._rebuild(new_key=True)  # nothing computed with the old one is kept
        self._remove_orphans()
        return Recovery(
            rebuilt=reason is not None,
            reason=reason,
            runs=len(self._state.runs),
            ids=sum(len(r) for r in self._state.runs),
            tail=tail,
            watermark=self._state.watermark,
            seconds=time.monotonic() - started,
        )

    def refresh(self, con: duckdb.DuckDBPyConnection | None = None) -> int:
        """Add the rows committed to `events` since the watermark by anyone but this index's
        own batches (`committed` with a snapshot); call it once per batch, after `committed`.

        Costs a stat of the catalog files (~10 us) while nothing was committed, one catalog
        query (~1-3 ms) after any commit, and a read of only the new rows' files when someone
        else inserted events. Rebuilds (same key, batches in flight kept) if the table was
        recreated or snapshots after the watermark expired. Returns the fingerprints read;
        writes a run once `flush_ids` are pending."""
        self._require_lake(con)
        try:
            added = self._catch_up()
        except LakeChanged as exc:
            # Same key: the batches in flight and the caller's fingerprints stay valid.
            log.warning("event index %s: rebuilding from the lake: %s", self.directory, exc)
            self._rebuild(new_key=False)
            return sum(len(r) for r in self._state.runs)
        if self.pending >= self.flush_ids:
            self._auto_persist()
        return added

    def _require_lake(self, con: duckdb.DuckDBPyConnection | None) -> _Lake:
        if self._lake is None:
            raise RuntimeError("call recover(con) first")
        if con is not None and id(con) != self._lake.of:
            lake = self._lake
            self._lake = self._attach(con, lake.alias, lake.schema, lake.table, lake.column)
            self._lake.table_id, self._lake.table_uuid = lake.table_id, lake.table_uuid
            self._close_lake(lake)
        return self._lake

    def _attach(
        self, con: duckdb.DuckDBPyConnection, alias: str, schema: str, table: str, column: str
    ) -> _Lake:
        cursor = con.cursor()
        try:
            return _Lake(
                cursor, _Catalog(cursor, alias), alias, schema, table, of=id(con), column=column
            )
        except BaseException:
            cursor.close()
            raise

    def _catch_up(self) -> int:
        """Read the `events` rows of the snapshots after the watermark into the tail."""
        lake = self._lake
        assert lake is not None
        state = self._state
        catalog = lake.catalog
        key = catalog.stat()  # before the query: a commit after it changes the files again
        if key is not None and key == catalog.trusted:
            return 0  # nothing committed since the last query
        catalog.trusted = None
        changes = catalog.changes_after(state.watermark)
        if not changes:
            catalog.trusted = key
            return 0
        while self._told:  # own commits told by now (one told later is read back: only slower)
            self._own.add(self._told.popleft())
        latest = changes[-1][0]
        ranges: list[list[int]] = []  # [first, last] snapshots to read, in order
        identity = False
        for snapshot, made in changes:
            if snapshot in self._own:
                ranges.append([])  # an own batch: a gap between ranges
                continue
            relevant, moved = self._relevance(made, lake.table_id)
            identity |= moved
            if relevant:
                if ranges and ranges[-1]:
                    ranges[-1][1] = snapshot
                else:
                    ranges.append([snapshot, snapshot])
        if identity or lake.table_uuid is None:
            found = lake.catalog.table(lake.schema, lake.table)
            if found != (lake.table_id, lake.table_uuid) and lake.table_uuid is not None:
                raise LakeChanged(f"table {lake.schema}.{lake.table} was dropped or recreated")
            if found is not None and lake.table_uuid is None:
                # The table appeared after the watermark: all its rows are in the new snapshots.
                lake.table_id, lake.table_uuid = found
                ranges = [[changes[0][0], latest]]
        spans = [r for r in ranges if r]
        if len(spans) > 4:  # many foreign commits between ours: one read of the whole span
            spans = [[spans[0][0], spans[-1][1]]]
        added = 0
        if lake.table_uuid is not None:
            for first, last in spans:
                added += self._read_into_tail(
                    f"ducklake_table_insertions('{_q(lake.alias)}', '{_q(lake.schema)}', "
                    f"'{_q(lake.table)}', {first}, {last})"
                )
        state.watermark = latest
        state.watermark_time = None  # read when the manifest is written
        self._own = {s for s in self._own if s > latest}
        catalog.trusted = key
        return added

    @staticmethod
    def _relevance(made: str | None, table_id: int | None) -> tuple[bool, bool]:
        """(may add rows to the table, may have dropped or recreated it) for one snapshot's
        `changes_made`; unknown changes count as both."""
        if made is None:
            return True, True
        relevant = moved = False
        for change in made.split(","):
            kind, _, target = change.partition(":")
            if kind in ("created_table", "dropped_schema", "created_schema"):
                moved = True
            elif target.isdigit() and table_id is not None and int(target) == table_id:
                if kind in _INSERTS:
                    relevant = True
                elif kind == "dropped_table":
                    moved = True
                elif kind not in _NO_NEW_ROWS:
                    relevant = moved = True
            elif not target.isdigit() and kind not in (
                "created_view",
                "dropped_view",
                "created_scalar_macro",
                "dropped_scalar_macro",
                "created_table_macro",
                "dropped_table_macro",
            ):
                relevant = moved = True  # not a `kind:table_id` we know: be safe
        return relevant, moved

    def _read_into_tail(self, source: str) -> int:
        """Fingerprints of the event_ids `source` yields, into the committed tail (chunked:
        heap bounded by the chunk, whatever the number of rows)."""
        added = 0
        for hi, lo in self._scan(source):
            array = _sorted_unique(fingerprint_halves(hi, lo, self.key))
            added += len(array)
            if len(array):
                self._push_tail(array)
            if self.pending >= 2 * self.flush_ids:
                self._flush_tail(self._state.watermark)
        return added

    def _scan(self, source: str) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        lake = self._lake
        assert lake is not None
        query = _CANONICAL_IDS_SQL.format(column=lake.column, source=source)
        # 36 bytes of text per row, while decoded
        for batch in lake.cursor.execute(query).to_arrow_reader(self._chunk):
            if batch.num_rows:
                yield text_halves(batch.column(0))

    def _rebuild(self, *, new_key: bool) -> None:
        """New runs from a full scan of the table as of the latest snapshot (the batches in
        flight are kept: they are not in the lake yet)."""
        lake = self._lake
        assert lake is not None
        lake.catalog.trusted = None
        self._clear_directory()
        if new_key:
            self.key = secrets.randbits(64)
        self._state = _State()
        self._next_run = 1
        self._persisted = None
        latest = lake.catalog.latest()
        found = lake.catalog.table(lake.schema, lake.table)
        lake.table_id, lake.table_uuid = found if found else (None, None)
        if found is not None:
            self._read_into_tail(
                f'"{lake.alias}"."{lake.schema}"."{lake.table}" AT (VERSION => {latest})'
            )
        self._state.watermark = latest
        self._state.watermark_time = lake.catalog.snapshot_time(latest)
        self._own = {s for s in self._own if s > latest}
        self._flush_tail(latest)
        self._write_manifest()

    # -- persistence --------------------------------------------------------------------------

    def persist(self) -> None:
        """Write the committed tail as a run (merging runs as the tiers fill) and the manifest
        with the current watermark. Automatic once `flush_ids` are pending."""
        self._flush_tail(self._state.watermark)
        self._write_manifest()

    def _auto_persist(self) -> None:
        try:
            self.persist()
        except (OSError, duckdb.Error) as exc:  # still exact in memory; try again later
            log.warning("event index %s: could not persist: %s", self.directory, exc)

    def _flush_tail(self, watermark: int) -> None:
        """Write the committed tail as a run, merged with the newest runs that are not more
        than `ratio` times larger: runs stay more than `ratio` times larger than the next, so
        at most about log_ratio(n / flush_ids) + 1 of them (measured: 2 at 10M ids, 3-5 up to
        1e9), each id rewritten about ratio / 2 times per size class. Every event looks in
        every run once, so few runs beat little rewriting: tiering (ratio runs per class)
        kept up to twice as many runs for a third of the writes."""
        tail = self._state.tail
        if not tail:
            return
        runs = self._state.runs
        size = sum(len(t) for t in tail)
        merged = 0  # how many of the newest runs go into the new one
        while merged < len(runs) and len(runs[-1 - merged]) <= self.ratio * size:
            merged += 1
            size += len(runs[-merged])
        group = runs[len(runs) - merged :]
        run = self._write_run(
            _merged_chunks([r.data for r in group] + [t.data for t in tail], self._chunk),
            max([watermark] + [r.watermark for r in group]),
        )
        # Only now, with the run written: a failed write leaves the index as it was.
        del runs[len(runs) - merged :]
        if run is not None:
            runs.append(run)
        self._state.tail = []

    def _write_run(self, chunks: Iterable[np.ndarray], watermark: int) -> _Run | None:
        """A run of the sorted chunks: the values, then their bucket directory built from
        the written file (read back through the page cache), each fsynced and renamed."""
        if self.directory is None:
            parts = list(chunks)
            if not parts:
                return None
            made = _Sorted.of(np.concatenate(parts))
            return _Run(made.data, made.directory, made.bits, made.width, watermark=watermark)
        name = f"run-{self._next_run:08d}{RUN_SUFFIX}"
        self._next_run += 1
        path = self.directory / name
        index_path = self.directory / (name + DIRECTORY_SUFFIX)
        tmp = path.with_name(path.name + TMP_SUFFIX)
        index_tmp = index_path.with_name(index_path.name + TMP_SUFFIX)
        try:
            crc = count = 0
            with open(tmp, "wb") as f:
                for chunk in chunks:
                    view = np.ascontiguousarray(chunk, dtype="<u8").view(np.uint8).data
                    crc = zlib.crc32(view, crc)
                    f.write(view)
                    count += len(chunk)
                f.flush()
                os.fsync(f.fileno())
            if count == 0:
                tmp.unlink()
                return None
            run = _Run(_map(tmp, np.uint64, count), watermark=watermark, file=name, crc32=crc)
            bits = _bucket_bits(count)
            if bits:
                buckets = _Buckets(bits, _directory_dtype(count))
                with open(index_tmp, "wb") as g:

                    def write(starts: np.ndarray) -> None:
                        view = starts.view(np.uint8).data
                        run.directory_crc32 = zlib.crc32(view, run.directory_crc32)
                        g.write(view)

                    for start in range(0, count, self._chunk):
                        write(
                            buckets.feed(np.asarray(run.data[start : start + self._chunk]), start)
                        )
                    write(buckets.finish(count))
                    g.flush()
                    os.fsync(g.fileno())
                os.replace(index_tmp, index_path)
                run.directory = _map(index_path, buckets.dtype, (1 << bits) + 1)
                run.bits, run.width = bits, _window(buckets.largest)
            os.replace(tmp, path)  # the mapping follows the file
        except BaseException:
            for leftover in (tmp, index_tmp):
                with contextlib.suppress(OSError):
                    leftover.unlink()
            raise
        return run

    def _write_manifest(self) -> None:
        """Point the directory at the current runs (atomically), then delete the files no
        run uses."""
        if self.directory is None:
            return
        state = self._state
        files = tuple(r.file for r in state.runs)
        if self._persisted == (state.watermark, files):
            return
        lake = self._lake
        if state.watermark_time is None and lake is not None:
            state.watermark_time = lake.catalog.snapshot_time(state.watermark)
        body: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "byteorder": sys.byteorder,
            "key": f"{self.key:016x}",
            "lake": {
                "catalog": lake.alias if lake else None,
                "table": f"{lake.schema}.{lake.table}" if lake else None,
                "table_uuid": lake.table_uuid if lake else None,
            },
            "watermark": state.watermark,
            "watermark_time": state.watermark_time,
            "next_run": self._next_run,
            "runs": [r.describe() for r in state.runs],
        }
        document = dict(body, checksum=_manifest_checksum(body))
        _fsync_dir(self.directory)  # the runs' renames first
        path = self.directory / MANIFEST
        tmp = path.with_name(MANIFEST + TMP_SUFFIX)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(self.directory)
        self._persisted = (state.watermark, files)
        self._remove_orphans()

    def _load(self) -> _State:
        """The runs of the manifest, checked against the lake; _Invalid if anything is off."""
        lake = self._lake
        assert lake is not None
        if self.directory is None:
            raise _Invalid("no directory: built from the lake")
        try:
            document = json.loads((self.directory / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise _Invalid("no manifest") from exc
        except (OSError, ValueError) as exc:
            raise _Invalid(f"unreadable manifest: {exc}") from exc
        try:
            body = {k: v for k, v in document.items() if k != "checksum"}
            if document.get("checksum") != _manifest_checksum(body):
                raise _Invalid("manifest checksum mismatch")
            if (body["format"], body["version"]) != (FORMAT, VERSION):
                raise _Invalid(f"format {body['format']!r} v{body['version']}")
            if body["byteorder"] != sys.byteorder:
                raise _Invalid(f"written on a {body['byteorder']}-endian machine")
            key = int(body["key"], 16)
            watermark = int(body["watermark"])
            table_uuid = body["lake"]["table_uuid"]
            runs_meta = list(body["runs"])
            next_run = int(body["next_run"])
            watermark_time = body["watermark_time"]
        except (KeyError, TypeError, ValueError) as exc:
            raise _Invalid(f"malformed manifest: {exc!r}") from exc
        found = lake.catalog.table(lake.schema, lake.table)
        current_uuid = found[1] if found else None
        if table_uuid != current_uuid:
            raise _Invalid(f"made for table {table_uuid}, the lake's is {current_uuid}")
        lake.table_id, lake.table_uuid = found if found else (None, None)
        latest = lake.catalog.latest()
        if watermark > latest:
            raise _Invalid(f"watermark {watermark} is past the lake's latest snapshot {latest}")
        if lake.catalog.snapshot_time(watermark) != watermark_time:
            raise _Invalid(f"the lake's snapshot {watermark} is not the one indexed")
        runs = [_open_run(self.directory, meta) for meta in runs_meta]
        self.key = key
        self._next_run = next_run
        self._persisted = (watermark, tuple(r.file for r in runs))
        return _State(runs=runs, watermark=watermark, watermark_time=watermark_time)

    def _remove_orphans(self) -> None:
        if self.directory is None:
            return
        used = {MANIFEST, LOCK}
        for run in self._state.runs:
            used |= {str(run.file), f"{run.file}{DIRECTORY_SUFFIX}"}
        for path in self.directory.iterdir():
            if path.name not in used and path.name.endswith(
                (RUN_SUFFIX, DIRECTORY_SUFFIX, TMP_SUFFIX)
            ):
                with contextlib.suppress(OSError):
                    path.unlink()

    def _clear_directory(self) -> None:
        if self.directory is None:
            return
        with contextlib.suppress(FileNotFoundError):
            (self.directory / MANIFEST).unlink()
        _fsync_dir(self.directory)
        self._state.runs = []
        self._remove_orphans()

    # -- life ---------------------------------------------------------------------------------

    def close(self, *, persist: bool = True) -> None:
        """Persist the committed tail (unless `persist=False`), release the directory."""
        try:
            if persist and self._lake is not None and self.directory is not None:
                self._auto_persist()
        finally:
            self._detach()
            if self._lock is not None:
                self._lock.close()
                self._lock = None

    def _detach(self) -> None:
        if self._lake is not None:
            self._close_lake(self._lake)
            self._lake = None

    @staticmethod
    def _close_lake(lake: _Lake) -> None:
        with contextlib.suppress(duckdb.Error):
            lake.cursor.close()

    def __enter__(self) -> EventIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _q(text: str) -> str:
    return text.replace("'", "''")


def _lock_slot(directory: Path) -> tuple[Path, IO[bytes]]:
    """Take the first directory of `directory`, `directory-1`, ... that no live process holds
    (flock: released by the kernel when its holder dies)."""
    for slot in range(MAX_SLOTS):
        path = directory if slot == 0 else directory.with_name(f"{directory.name}-{slot}")
        path.mkdir(parents=True, exist_ok=True)
        handle = open(path / LOCK, "ab")  # noqa: SIM115 - held open for the index's life
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        return path, handle
    raise RuntimeError(f"{MAX_SLOTS} processes already hold an event index beside {directory}")
