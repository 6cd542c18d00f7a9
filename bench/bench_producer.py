"""Simulator and producer speed: simulation alone to a file, then simulate + validate + publish to a
real broker beside the same producer sending the same pre-serialised messages, and the RSS.

Run: uv run python bench/bench_producer.py [--quick] [--bootstrap HOST:PORT]. Without a reachable
broker (--bootstrap, else the configuration) it starts a private one with `infra.kafka_local`.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from confluent_kafka.admin import AdminClient

from events import parse_event
from infra import kafka_local
from producers.client import TableEventProducer
from producers.simulator import Message, simulate


def rss_mb() -> float:
    """Current resident set size (Linux /proc), in MB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 1e6


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def line(label: str, value: str) -> None:
    print(f"{label:<58} {value}", flush=True)


def night(tables: int, hours: float, seed: int) -> Iterator[Message]:
    """Every game, `tables` of each; faults off so every message passes validation."""
    return iter(simulate(tables=tables, hours=hours, seed=seed, faults={}))


def bench_file(tables: int, hours: float, folder: Path) -> None:
    list(itertools.islice(night(1, 1, 99), 2000))  # build the ranking tables once, untimed
    path = folder / "night.jsonl"
    count = 0
    samples: list[float] = []
    start = time.perf_counter()
    with path.open("wb") as out:
        for _key, value in night(tables, hours, 1):
            out.write(value + b"\n")
            count += 1
            if count % 250_000 == 0:
                samples.append(rss_mb())
    seconds = time.perf_counter() - start
    rate = count / seconds
    line("simulation alone to a JSON-lines file", f"{rate:>12,.0f} events/s  ({count:,} events)")
    line("  target", "≥ 150,000 events/s " + ("(met)" if rate >= 150_000 else "(NOT met)"))
    line("  file size", f"{path.stat().st_size / 1e6:,.1f} MB")
    if samples:
        line("  RSS every 250k events (flat = no growth)", " ".join(f"{s:.0f}" for s in samples))
    path.unlink()


def publish(bootstrap: str, count: int, messages: list[Message] | None = None) -> float:
    """Events/s through one TableEventProducer, flush included. With `messages` (sent over and
    over up to `count`): the raw rate of pre-serialised messages (`send_unchecked`); without:
    simulate + validate (`send`)."""
    topic = f"bench-{uuid.uuid4().hex[:10]}"
    producer = TableEventProducer(
        bootstrap_servers=bootstrap, topic=topic, partitions=6, flush_on_sigterm=False
    )
    # Untimed warm-up: topic metadata and the idempotent producer id are fetched once.
    producer.send_unchecked(None, b"{}")
    producer.flush(30)
    samples = []
    start = time.perf_counter()
    if messages is not None:
        for key, value in itertools.islice(itertools.cycle(messages), count):
            producer.send_unchecked(key, value)
    else:
        for sent, message in enumerate(itertools.islice(night(12, 48, 3), count), 1):
            producer.send(message.value)
            if sent % 100_000 == 0:
                samples.append(rss_mb())
    producer.close()
    seconds = time.perf_counter() - start
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([topic], operation_timeout=30)[topic].result(30)  # leave no litter
    if samples:
        line("  RSS every 100k events published, MB", " ".join(f"{s:.0f}" for s in samples))
    if producer.delivered != count + 1:
        raise SystemExit(f"only {producer.delivered} of {count} messages were delivered")
    return count / seconds


def bench_kafka(bootstrap: str, count: int) -> None:
    full = publish(bootstrap, count)
    line("simulate + validate + publish", f"{full:>12,.0f} events/s  ({count:,} events)")
    line("  peak RSS so far (target < 500 MB)", f"{peak_rss_mb():,.0f} MB")
    # The same kind of messages made beforehand (100k, sent in a loop): no simulation, no checks.
    messages = list(itertools.islice(night(12, 48, 7), min(count, 100_000)))
    size = sum(len(v) for _, v in messages) / len(messages)
    raw = publish(bootstrap, count, messages)
    line("raw producer, pre-serialised messages", f"{raw:>12,.0f} events/s  (avg {size:.0f} B)")
    line(
        "  simulate + validate + publish ≥ 100,000 events/s",
        "met" if full >= 100_000 else "NOT met",
    )
    ratio = full / raw
    line(
        "  ratio to raw (target ≥ 0.50)",
        f"{ratio:.2f} " + ("(met)" if ratio >= 0.5 else "(NOT met)"),
    )
    stages(min(count, 100_000), raw)


def stages(count: int, raw: float) -> None:
    """Where a published event's time goes, stage by stage on the same events, one thread: the
    ratio to the raw rate cannot exceed publish / (simulate + validate + publish)."""
    begun = time.perf_counter()
    values = [value for _, value in itertools.islice(night(12, 48, 3), count)]
    simulate_us = (time.perf_counter() - begun) / count * 1e6
    begun = time.perf_counter()
    for value in values:
        parse_event(value)
    validate_us = (time.perf_counter() - begun) / count * 1e6
    publish_us = 1e6 / raw
    total = simulate_us + validate_us + publish_us
    line("per event: simulate (to bytes)", f"{simulate_us:>9.2f} µs")
    line("per event: validate (events.parse_event)", f"{validate_us:>9.2f} µs")
    line("per event: publish (raw producer rate)", f"{publish_us:>9.2f} µs")
    line("  ratio ceiling in one thread: publish / sum", f"{publish_us / total:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (CI), under a minute")
    parser.add_argument("--bootstrap", default=None, help="a running broker (default: config)")
    args = parser.parse_args()
    tables, hours, count = (3, 12, 100_000) if args.quick else (6, 48, 500_000)
    with tempfile.TemporaryDirectory() as folder:
        bench_file(tables, hours, Path(folder))
    with kafka_local.available(args.bootstrap) as bootstrap:
        line("broker", bootstrap)
        bench_kafka(bootstrap, count)


if __name__ == "__main__":
    main()
