"""Soak test in compressed time: simulated days of a casino through one long-lived consumer.

Day after day (the tables close at the end of each day and open again the next, their seq,
round, deck and dealer numbering going on), the day's events are published to Kafka and settled
by ONE `croupier consume --batch-size 300` process that runs for the whole soak (small commits,
as on a live floor), with lake maintenance as configured. Once the lake holds the whole day:
Parquet files in the lake, catalog size, the consumer's RSS, the day's events/s, a fixed set of
analyst queries on a fresh read-only connection, and that day's `croupier build` of the marts.

Targets (judged on the LAST day against the baseline = the larger of days 1 and 2: day 1 alone
is a small lake that maintenance may not have touched yet):
  files in the lake      <= 2.0 x baseline
  analyst queries (sum)  <= 2.0 x baseline   (bounded queries: a day or a week of data)
  consumer RSS           <= 1.5 x baseline
  no error: the consumer alive and without ERROR lines, every build and query succeeded.
Catalog size, events/s and build time are printed beside them, not judged.

Run: uv run python bench/bench_soak.py [--quick] [--days N] [--tables N] [--hours-per-day H]
Full size: 30 days x 10 tables x 24 h (about 9M events): about 4 min per simulated day on a
loaded 2-core machine (1,200-2,000 events/s at 300 a commit, plus the day's build), ~2 h.
Exits 1 when a target is missed or a step fails.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from events import Game, occurred_at_ms
from infra import kafka_local
from infra import lake as lakes
from producers.simulator import DEFAULT_START, Simulation, parse_faults, simulate

PARTITIONS = 6
DAY = timedelta(days=1)
# A table closes this long before the next day's opening: its closing events (5 simulated
# minutes) must not overlap the next opening on the same table.
CLOSING_GAP_H = 0.25
FILES_LIMIT = 2.0
QUERIES_LIMIT = 2.0
REMEASURE_AFTER_S = 5.0  # the analyst queries are timed twice a day, this far apart
RSS_LIMIT = 1.5
# Set by SIGTERM/SIGINT. The handler's SystemExit alone is not enough: raised inside a DuckDB
# call it comes back as a duckdb.InterruptException, which a polling loop swallows.
STOP = threading.Event()
ERROR_LINE = re.compile(r"^\S+ (ERROR|CRITICAL) |^Traceback |lake maintenance failed")
MAINTENANCE_LINE = re.compile(r"^\S+ INFO \S+ lake maintenance( |$)")


# -- producing: one simulated day at a time, the devices' numbering going on ----------------------

# Per table of the generator process: numbering and chips carried from one day to the next.
_CARRY: dict[str, dict[str, int]] = {}
_CARRIED = ("round_no", "deck_no", "dealer_no", "tray_cents")


def table_counts(tables: int) -> dict[Game, int]:
    """`tables` spread over the games as evenly as they go (10 -> 4, 3, 3)."""
    games = list(Game)
    return {g: tables // len(games) + (i < tables % len(games)) for i, g in enumerate(games)}


def generate_day(
    day: int, tables: int, hours: float, seed: int, faults: str
) -> list[tuple[str, bytes]]:
    """Day `day`'s messages. Runs in the generator process, which keeps `_CARRY`: a new
    Simulation numbers seq, rounds and decks from 1, as a fresh device would; here the
    devices go on from where yesterday's closing left them (a restarted numbering would be an
    EVT-SEQ every morning, a repeated round id a collision in the marts)."""
    sim: Simulation = simulate(
        tables=table_counts(tables),
        hours=hours,
        seed=seed * 1000 + day,
        faults=parse_faults(faults),
        start=DEFAULT_START + day * DAY,
    )
    for table in sim.tables:  # set before iterating: batches() reads them at the opening
        carried = _CARRY.get(table.table_id)
        if carried is not None:
            table.stream.seq = carried["seq"]
            for name in _CARRIED:
                setattr(table, name, carried[name])
    out = [(msg.key, msg.value) for msg in sim]
    for table in sim.tables:
        _CARRY[table.table_id] = {
            "seq": table.stream.seq,
            **{name: getattr(table, name) for name in _CARRIED},
        }
    return out


def publish(producer: Producer, topic: str, messages: list[tuple[str, bytes]]) -> None:
    for key, value in messages:
        while True:
            try:
                producer.produce(
                    topic,
                    key=key.encode(),
                    value=value,
                    timestamp=occurred_at_ms(value) or 0,  # as our publishers stamp it
                )
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120) != 0:
        raise RuntimeError("the producer could not deliver the day's messages in 120 s")


# -- measuring -----------------------------------------------------------------------------------


def lake_files(lake: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(lake / "data"))


def catalog_bytes(lake: Path) -> int:
    return sum(
        p.stat().st_size
        for p in (lake / "catalog.sqlite", lake / "catalog.sqlite-wal")
        if p.exists()
    )


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of process `pid` in MB."""
    values = {}
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = row.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def lake_progress(con: Any, topic: str) -> int:
    """Messages of `topic` the lake holds (sum over partitions of the next offset)."""
    rows = con.execute(
        "SELECT coalesce(sum(o), 0) FROM (SELECT max(next_offset) o FROM consumer_offsets "
        "WHERE source_topic = ? GROUP BY source_partition)",
        [topic],
    ).fetchall()  # fetchall: a half-read result holds the catalog's read lock
    return int(rows[0][0])


# The analyst's questions, bounded to recent data (`$day` = the start of the last simulated
# day, `$since` = the day before it): their time should not grow with the lake's history.
QUERIES: dict[str, str] = {
    "revenue by game and day, last 2 days": """
        SELECT game, CAST(settled_at AS DATE) AS day, sum(wager_cents) AS handle_cents,
               sum(house_result_cents) AS house_result_cents, count(*) AS lines
        FROM settlements WHERE settled_at >= $since GROUP BY ALL ORDER BY ALL""",
    "violations by rule, last day": """
        SELECT rule_id, severity, count(*) AS n FROM violations WHERE occurred_at >= $day
        GROUP BY ALL ORDER BY n DESC""",
    "one table's rounds, last day": """
        SELECT round_id, dealer_id, started_at, ended_at, status, bets, wager_cents,
               house_result_cents, violations
        FROM rounds WHERE table_id = $table AND started_at >= $day ORDER BY started_at""",
    "events in the last day": "SELECT count(*) FROM events WHERE occurred_at >= $day",
    "one round's events, last day": """
        SELECT seq, event_type, occurred_at, payload FROM events
        WHERE round_id = $round AND occurred_at >= $day ORDER BY seq""",
}
# Printed, not judged: it reads the whole history, so it grows with the data by design.
HISTORY_QUERY = (
    "revenue by game, all history",
    "SELECT game, sum(wager_cents), sum(house_result_cents) FROM settlements GROUP BY game",
)


@dataclass
class DayResult:
    day: int
    events: int
    files: int = 0
    catalog_mb: float = 0.0
    rss_mb: float = 0.0
    hwm_mb: float = 0.0
    rate: float = 0.0
    attach_ms: float = 0.0
    queries_ms: float = 0.0
    query_ms: dict[str, float] = field(default_factory=dict)
    history_ms: float = 0.0
    build_s: float = 0.0
    last_day_events: int = 0
    maintenance: int = 0


def time_query(con: Any, sql: str, params: dict[str, object]) -> tuple[float, list[Any]]:
    """Best of three runs, in ms, and the rows."""
    best, rows = float("inf"), []
    for _ in range(3):
        started = time.perf_counter()
        rows = con.execute(sql, params).fetchall()
        best = min(best, (time.perf_counter() - started) * 1000)
    return best, rows


def analyst_queries(lake: Path, day: int, hours: float, result: DayResult) -> None:
    day_start = DEFAULT_START + day * DAY
    since = day_start - DAY
    started = time.perf_counter()
    con = lakes.connect(lakes.Lake(root=lake), read_only=True)
    result.attach_ms = (time.perf_counter() - started) * 1000
    try:
        table = "PG-01"  # Pai Gow table 1
        last = con.execute(
            "SELECT max(round_id) FROM rounds WHERE table_id = ? AND started_at >= ?",
            [table, day_start],
        ).fetchall()[0][0]
        params: dict[str, object] = {
            "day": day_start, "since": since, "table": table, "round": last or "",
        }  # fmt: skip
        # Two rounds of best-of-3, REMEASURE_AFTER_S apart: a moment when the shared machine is
        # slow (a CI run's day 5 saw every query and the event rate slow down 2-7x at once, the
        # next run 1x) is not taken for the lake's growth; a real slowdown stays in both rounds.
        for attempt in range(2):
            if attempt:
                time.sleep(REMEASURE_AFTER_S)
            for name, sql in QUERIES.items():
                used = {k: v for k, v in params.items() if f"${k}" in sql}
                ms, rows = time_query(con, sql, used)
                result.query_ms[name] = min(ms, result.query_ms.get(name, ms))
                if name == "events in the last day":
                    result.last_day_events = int(rows[0][0])
        result.queries_ms = sum(result.query_ms.values())
        result.history_ms, _ = time_query(con, HISTORY_QUERY[1], {})
    finally:
        con.close()
    del hours


def build(lake: Path, marts: Path, env: dict[str, str], log: Path) -> float:
    started = time.perf_counter()
    with log.open("a") as out:
        out.write(f"\n== build at {datetime.now().isoformat(timespec='seconds')}\n")
        out.flush()
        done = subprocess.run(
            [sys.executable, "-m", "croupier", "build", "--lake", str(lake),
             "--marts", str(marts), "--quiet"],
            env=env, stdout=out, stderr=subprocess.STDOUT, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        tail = log.read_text()[-3000:]
        raise RuntimeError(f"croupier build failed (exit {done.returncode}):\n{tail}")
    return time.perf_counter() - started


# -- the consumer ----------------------------------------------------------------------------------


def maintenance_env(every_s: float, retention: str, grace: str) -> tuple[dict[str, str], str]:
    """The environment that turns the consumer's lake maintenance on, and a line saying what.
    Simulated days pass in minutes of wall time: retention and file grace (wall-clock
    durations) are set short to match."""
    from infra.config import Settings

    fields = Settings.model_fields
    if "lake_maintenance_every_s" not in fields:
        return {}, (
            "NOT AVAILABLE: this tree has no lake_maintenance_every_s setting "
            "(infra/config.py); the consumer runs without maintenance"
        )
    env = {"CROUPIER_LAKE_MAINTENANCE_EVERY_S": str(every_s)}
    said = [f"CROUPIER_LAKE_MAINTENANCE_EVERY_S={every_s:g}"]
    for name, value in (("lake_snapshot_retention", retention), ("lake_file_grace", grace)):
        if name in fields:
            env[f"CROUPIER_{name.upper()}"] = value
            said.append(f"CROUPIER_{name.upper()}={value!r}")
        else:
            said.append(f"(no {name} setting)")
    return env, ", ".join(said)


def start_consumer(
    env: dict[str, str], lake: Path, topic: str, batch_size: int, log: Path
) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "croupier", "consume", "--lake", str(lake), "--topic", topic,
             "--group", f"soak-{uuid.uuid4().hex[:6]}", "--batch-size", str(batch_size),
             "--metrics-every", "60"],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def error_lines(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [row for row in log.read_text(errors="replace").splitlines() if ERROR_LINE.search(row)]


def maintenance_passes(log: Path) -> int:
    """Maintenance passes the consumer logged so far."""
    if not log.exists():
        return 0
    rows = log.read_text(errors="replace").splitlines()
    return sum(1 for row in rows if MAINTENANCE_LINE.search(row))


def wait_for_lake(
    lake: Path, topic: str, target: int, consumer: subprocess.Popen[bytes], timeout_s: float
) -> None:
    """Until the lake's stored positions reach `target` messages of `topic`."""
    deadline = time.monotonic() + timeout_s
    con = None
    try:
        while True:
            if STOP.is_set():
                raise SystemExit(143)
            if consumer.poll() is not None:
                raise RuntimeError(f"the consumer exited (code {consumer.returncode})")
            if con is None and (lake / "catalog.sqlite").exists():
                try:
                    con = lakes.connect(lakes.Lake(root=lake), read_only=True)
                except Exception:
                    con = None
            done = 0
            if con is not None:
                try:
                    done = lake_progress(con, topic)
                except Exception:  # the consumer has not created its tables yet
                    done = 0
            if done >= target:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the lake holds {done:,} of {target:,} messages after "
                                   f"{timeout_s:.0f} s")  # fmt: skip
            time.sleep(0.2)
    finally:
        if con is not None:
            con.close()


# -- the run ------------------------------------------------------------------------------------


def print_day(r: DayResult, header: bool = False) -> None:
    if header:
        print(
            f"{'day':>4} {'events':>9} {'files':>7} {'catalog MB':>10} {'RSS MB':>7} "
            f"{'events/s':>9} {'attach ms':>9} {'queries ms':>10} {'history ms':>10} "
            f"{'build s':>8} {'maint':>6}",
            flush=True,
        )
    print(
        f"{r.day:>4} {r.events:>9,} {r.files:>7,} {r.catalog_mb:>10.1f} {r.rss_mb:>7.0f} "
        f"{r.rate:>9,.0f} {r.attach_ms:>9.0f} {r.queries_ms:>10.0f} {r.history_ms:>10.0f} "
        f"{r.build_s:>8.1f} {r.maintenance:>6}",
        flush=True,
    )


def summary(results: list[DayResult], errors: list[str], days: int) -> bool:
    print()
    picks = sorted({d for d in (1, 10, 20, 30, days) if d <= len(results)})
    print(f"days {', '.join(map(str, picks))}:")
    for i, d in enumerate(picks):
        print_day(results[d - 1], header=i == 0)
    if picks:
        print("  queries (best of 2 x 3 runs, ms):")
        names = [*QUERIES, HISTORY_QUERY[0] + " (not judged)"]
        print(f"    {'':<46}" + "".join(f"{'day ' + str(d):>9}" for d in picks))
        for n, name in enumerate(names):
            cells = [
                results[d - 1].history_ms if n == len(QUERIES) else results[d - 1].query_ms[name]
                for d in picks
            ]
            print(f"    {name:<46}" + "".join(f"{c:>9.1f}" for c in cells))
    print()
    print("targets (last day vs baseline = max(day 1, day 2)):")
    ok = not errors
    if len(results) >= 3:
        last, first2 = results[-1], results[:2]

        def judge(label: str, value: float, base: float, limit: float, unit: str) -> bool:
            ratio = value / base if base else float("inf")
            met = ratio <= limit
            worst = max((getattr(r, attr_of[label]) for r in results[2:]), default=value)
            print(
                f"  {label:<26} day {last.day}: {value:>10,.1f} {unit:<3} baseline "
                f"{base:>10,.1f}  ratio {ratio:>5.2f} (limit {limit:.1f}, worst day after 2: "
                f"{worst:,.1f})  {'met' if met else 'NOT MET'}"
            )
            return met

        attr_of = {"Parquet files": "files", "analyst queries": "queries_ms",
                   "consumer RSS": "rss_mb", "catalog size": "catalog_mb",
                   "build time": "build_s", "events/s": "rate"}  # fmt: skip
        ok &= judge("Parquet files", last.files, max(r.files for r in first2), FILES_LIMIT, "")
        ok &= judge(
            "analyst queries", last.queries_ms, max(r.queries_ms for r in first2),
            QUERIES_LIMIT, "ms",
        )  # fmt: skip
        ok &= judge("consumer RSS", last.rss_mb, max(r.rss_mb for r in first2), RSS_LIMIT, "MB")
        print("  not judged:")
        for label, attr, base in (
            ("catalog size", "catalog_mb", max(r.catalog_mb for r in first2)),
            # day 1's build is the full one; day 2's is the first incremental
            ("build time", "build_s", results[1].build_s),
            ("events/s", "rate", max(r.rate for r in first2)),
        ):
            value = getattr(last, attr)
            print(
                f"    {label:<24} day {last.day}: {value:>10,.1f}  baseline {base:>10,.1f}  "
                f"ratio {value / base if base else float('inf'):>5.2f}"
            )
    else:
        print("  fewer than 3 days: nothing to compare (use --days 3 or more)")
        ok = False
    if len(results) < days:
        print(f"  days done: {len(results)} of {days}  NOT MET")
        ok = False
    print(f"  no error: {'met' if not errors else 'NOT MET'}")
    for e in errors[:20]:
        print(f"    {e[:300]}")
    print(f"soak {'PASSED' if ok else 'FAILED'}", flush=True)
    return ok


def run(args: argparse.Namespace, folder: Path) -> bool:
    lake, marts = folder / "lake", folder / "marts"
    consumer_log, build_log = folder / "consumer.log", folder / "build.log"
    topic = f"soak-{uuid.uuid4().hex[:8]}"
    extra, said = maintenance_env(args.maintenance_every, args.snapshot_retention, args.file_grace)
    env = {
        **os.environ,
        "CROUPIER_DATA_DIR": str(folder),
        "CROUPIER_KAFKA_DEAD_LETTER_TOPIC": f"{topic}.dead-letters",
        **extra,
    }
    counts = table_counts(args.tables)
    print(
        f"soak: {args.days} days x {args.tables} tables "
        f"({', '.join(f'{g}={n}' for g, n in counts.items())}) x {args.hours_per_day:g} h open, "
        f"faults {args.faults!r}, consumer --batch-size {args.batch_size}"
    )
    print(f"lake maintenance: {said}")
    print(f"work folder {folder} (consumer log {consumer_log}, build log {build_log})", flush=True)
    results: list[DayResult] = []
    errors: list[str] = []
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool, kafka_local.available(args.bootstrap) as bootstrap:
        env["KAFKA_BOOTSTRAP_SERVERS"] = bootstrap
        print(f"broker {bootstrap}, topic {topic} ({PARTITIONS} partitions)", flush=True)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])[
            topic
        ].result(timeout=30)
        producer = Producer(
            {"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10_000}
        )
        gen_args = (args.tables, args.hours_per_day, args.seed, args.faults)
        pending = pool.apply_async(generate_day, (0, *gen_args))
        consumer = start_consumer(env, lake, topic, args.batch_size, consumer_log)
        sent = 0
        try:
            for day in range(args.days):
                while not pending.ready():
                    if STOP.is_set():
                        raise SystemExit(143)
                    pending.wait(1)
                messages = pending.get()
                if day + 1 < args.days:  # tomorrow is simulated while today is consumed
                    pending = pool.apply_async(generate_day, (day + 1, *gen_args))
                result = DayResult(day=day + 1, events=len(messages))
                started = time.perf_counter()
                publish(producer, topic, messages)
                sent += len(messages)
                del messages
                wait_for_lake(lake, topic, sent, consumer, args.day_timeout)
                result.rate = result.events / (time.perf_counter() - started)
                if day + 1 < args.days:  # nothing else running while measuring
                    while not pending.ready() and not STOP.is_set():
                        pending.wait(1)
                result.rss_mb, result.hwm_mb = rss_mb(consumer.pid)
                result.files = lake_files(lake)
                result.catalog_mb = catalog_bytes(lake) / 1e6
                result.maintenance = maintenance_passes(consumer_log)
                analyst_queries(lake, day, args.hours_per_day, result)
                result.build_s = build(lake, marts, env, build_log)
                results.append(result)
                print_day(result, header=day == 0)
                if STOP.is_set():
                    raise SystemExit(143)
        except Exception as exc:
            errors.append(f"day {len(results) + 1}: {type(exc).__name__}: {exc}")
        finally:
            stop_process(consumer)
            if consumer.returncode not in (0, None):
                errors.append(f"consumer exit code {consumer.returncode}")
    errors += [f"consumer log: {row}" for row in error_lines(consumer_log)]
    return summary(results, errors, args.days)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]),
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="small sizes (CI): 5 short days")
    parser.add_argument("--days", type=int, default=None, help="simulated days (30; quick 5)")
    parser.add_argument("--tables", type=int, default=None, help="tables in all (10; quick 3)")
    parser.add_argument(
        "--hours-per-day", type=float, default=None,
        help=f"hours a table is open each day (24 - {CLOSING_GAP_H}; quick 2)",
    )  # fmt: skip
    parser.add_argument("--batch-size", type=int, default=300, help="consumer --batch-size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--faults", default="default", help="simulator faults ('none', ...)")
    parser.add_argument(
        "--maintenance-every", type=float, default=None,
        help="CROUPIER_LAKE_MAINTENANCE_EVERY_S for the consumer (60; quick 10)",
    )  # fmt: skip
    parser.add_argument(
        "--snapshot-retention", default=None,
        help="CROUPIER_LAKE_SNAPSHOT_RETENTION ('5 minutes'; quick '30 seconds')",
    )  # fmt: skip
    parser.add_argument(
        "--file-grace", default=None,
        help="CROUPIER_LAKE_FILE_GRACE ('2 minutes'; quick '20 seconds')",
    )  # fmt: skip
    parser.add_argument("--bootstrap", default=None, help="Kafka bootstrap servers")
    parser.add_argument("--day-timeout", type=float, default=1800, help="s to settle one day")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    quick = args.quick
    args.days = args.days or (5 if quick else 30)
    args.tables = args.tables or (3 if quick else 10)
    args.hours_per_day = args.hours_per_day or (2.0 if quick else 24 - CLOSING_GAP_H)
    if args.hours_per_day > 24 - CLOSING_GAP_H:
        parser.error(f"--hours-per-day at most {24 - CLOSING_GAP_H} (tables close each day)")
    args.maintenance_every = args.maintenance_every or (10.0 if quick else 60.0)
    args.snapshot_retention = args.snapshot_retention or ("30 seconds" if quick else "5 minutes")
    args.file_grace = args.file_grace or ("20 seconds" if quick else "2 minutes")
    folder = Path(tempfile.mkdtemp(prefix="bench-soak-"))

    # SIGTERM runs the finally blocks too: no broker or consumer left behind.
    def on_signal(signum: int, _frame: object) -> None:
        STOP.set()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    ok = False
    try:
        ok = run(args, folder)
    finally:
        if args.keep:
            print(f"work folder kept: {folder}")
        elif not ok:  # the logs, for the diagnosis; not the lake (GBs on a full run)
            for data in ("lake", "marts"):
                shutil.rmtree(folder / data, ignore_errors=True)
            print(f"logs kept in {folder} (--keep keeps the lake too)")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    threading.current_thread().name = "soak"
    main()
