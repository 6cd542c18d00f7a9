"""Scaling out: consumer processes of one group writing one lake, on each catalog.

1. throughput: events/s from first commit to last with 1, 2 and 3 `croupier consume` processes
   of one group over a 6-partition backlog, into a lake with the embedded SQLite catalog and
   into one with its catalog on a real PostgreSQL server, beside the raw consume rate of the
   same messages; the lake commits per second each run made (what the catalog sustained);
2. CPU: CPU-seconds per million events of the consumer processes (each one's own rusage), and
   of the PostgreSQL server (its processes' CPU over the run): on these 2-core machines the
   events/s of 2-3 processes say little, CPU per event is what predicts a bigger machine;
3. freshness: send -> visible to a reader (p50, p99) at a steady 2,000 events/s on each catalog.

Targets (issue 19): the PostgreSQL catalog costs under 20 % more consumer CPU per event than
SQLite; CPU per event grows under 10 % from 1 to 3 processes; freshness p99 under 500 ms.
Starts a private broker and PostgreSQL server unless --bootstrap is given (the server always).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import bench_consumer as bc

from infra import kafka_local, postgres_local

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    catalog: str
    members: int
    rate: float  # events/s, first commit to last
    cpu_s: float  # the consumer processes' CPU-seconds
    idle_cpu_s: float  # theirs on an empty topic: start-up, joining, the idle wait, shutdown
    server_cpu_s: float  # PostgreSQL's
    commits: int
    seconds: float


def server_cpu_s(server: postgres_local.LocalPostgres | None) -> float:
    """CPU-seconds the PostgreSQL server has used: the postmaster's own and its reaped children's
    (each connection's backend is a child that exits when the connection closes)."""
    pid = postgres_local.running_pid(server) if server else None
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # utime, stime, cutime, cstime are fields 14-17 of stat; [0] here is field 3
    return sum(int(v) for v in fields[11:15]) / TICKS


def run_members(
    bootstrap: str,
    topic: str,
    sent: int,
    folder: Path,
    members: int,
    catalog: str | None,
    server: postgres_local.LocalPostgres | None,
) -> Run:
    """`members` processes of one group over the backlog; then the same over an empty topic,
    whose CPU (each process's fixed cost) is taken off to leave the cost of the events."""
    run = _members(bootstrap, topic, sent, folder, members, catalog, server)
    empty = f"bench-empty-{uuid.uuid4().hex[:8]}"
    bc.create_topic(bootstrap, empty)
    if server is not None and catalog is not None:
        catalog = postgres_local.create_database(server, f"idle_{uuid.uuid4().hex[:8]}")
    run.idle_cpu_s = _members(bootstrap, empty, 0, folder, members, catalog, server).cpu_s
    return run


def _members(
    bootstrap: str,
    topic: str,
    sent: int,
    folder: Path,
    members: int,
    catalog: str | None,
    server: postgres_local.LocalPostgres | None,
) -> Run:
    lake = folder / f"lake-{uuid.uuid4().hex[:6]}"
    group = f"scale-{uuid.uuid4().hex[:6]}"
    logs = [(folder / f"{lake.name}-{i}.log").open("w") for i in range(members)]
    server_before = server_cpu_s(server)
    processes = [
        bc.consumer_process(bootstrap, lake, topic, "--stop-when-idle", "3",
                            catalog=catalog, group=group, stderr=log)
        for log in logs
    ]  # fmt: skip
    reader = bc.LakeReader(lake, catalog)
    first_at = first_done = None
    first_snapshot = last_snapshot = 0
    try:
        while True:
            done = reader.progress(topic)
            now = time.perf_counter()
            if done and first_at is None:
                first_at, first_done = now, done
                first_snapshot = snapshot(reader)
            if (sent and done >= sent) or all(map(exited, processes)):
                last_snapshot = snapshot(reader)
                break
            time.sleep(0.1)
    finally:
        reader.close()
    elapsed = max(1e-9, time.perf_counter() - (first_at or 0))
    cpu = 0.0
    for process, log in zip(processes, logs, strict=True):
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        cpu += usage.ru_utime + usage.ru_stime
        log.close()
        if process.returncode != 0:
            raise SystemExit(f"a consumer failed:\n{Path(log.name).read_text()[-3000:]}")
    return Run(
        catalog="PostgreSQL" if catalog else "SQLite",
        members=members,
        rate=(sent - (first_done or 0)) / elapsed,
        cpu_s=cpu,
        idle_cpu_s=0.0,
        server_cpu_s=server_cpu_s(server) - server_before,
        commits=last_snapshot - first_snapshot,
        seconds=elapsed,
    )


def exited(process: subprocess.Popen[str]) -> bool:
    """Whether `process` has ended, leaving it unreaped (its rusage is read by `os.wait4`)."""
    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
    return os.waitid(os.P_PID, process.pid, flags) is not None


def snapshot(reader: bc.LakeReader) -> int:
    rows = reader.query("FROM lake.current_snapshot()")
    return int(str(rows[0][0])) if rows else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI)")
    parser.add_argument("--bootstrap", default=None, help="Kafka bootstrap servers")
    parser.add_argument("--events", type=int, default=None, help="backlog size")
    args = parser.parse_args()
    total = args.events or (120_000 if args.quick else 600_000)
    folder = Path(tempfile.mkdtemp(prefix="bench-scale-out-"))
    try:
        with kafka_local.available(args.bootstrap) as bootstrap, postgres_local.private() as pg:
            print(f"broker {bootstrap}; PostgreSQL {pg.dsn().split('@')[-1]}")
            topic = f"bench-scale-{uuid.uuid4().hex[:8]}"
            bc.create_topic(bootstrap, topic)
            sent = bc.publish(bootstrap, topic, bc.messages(total))
            raw = bc.raw_consume_rate(bootstrap, topic, sent, bc.UNTHROTTLED)
            print(f"throughput on a backlog of {sent:,} messages ({bc.PARTITIONS} partitions)")
            bc.line("raw confluent-kafka consume, no processing", f"{raw:>12,.0f} msg/s")
            runs: list[Run] = []
            for members in (1, 2, 3):
                runs.append(run_members(bootstrap, topic, sent, folder, members, None, None))
                url = postgres_local.create_database(pg, f"scale_{uuid.uuid4().hex[:8]}")
                runs.append(run_members(bootstrap, topic, sent, folder, members, url, pg))
            report(runs, sent, raw)
            for url in (None, postgres_local.create_database(pg, "freshness")):
                bc.bench_latency(bootstrap, 2_000, 10 if args.quick else 60, folder, url)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def report(runs: list[Run], sent: int, raw: float) -> None:
    """CPU-s/M ev: all the consumer processes' CPU per million events, less what the same
    processes spent on an empty topic (start-up, joining the group, the idle wait, shutdown:
    idle CPU-s, per process); `all in` keeps it."""
    per_million = {(r.catalog, r.members): (r.cpu_s - r.idle_cpu_s) / sent * 1e6 for r in runs}
    header = f"  {'catalog':<11}{'procs':>6}{'events/s':>11}{'of raw':>8}{'commits/s':>10}"
    print(
        header + f"{'CPU-s/M ev':>11}{'vs 1 proc':>10}{'all in':>8}{'idle CPU-s':>11}"
        f"{'PG server CPU-s/M':>19}"
    )
    for r in runs:
        cpu = per_million[(r.catalog, r.members)]
        growth = cpu / per_million[(r.catalog, 1)]
        server = f"{r.server_cpu_s / sent * 1e6:>19.1f}" if r.catalog == "PostgreSQL" else ""
        print(
            f"  {r.catalog:<11}{r.members:>6}{r.rate:>11,.0f}{r.rate / raw:>8.2f}"
            f"{r.commits / r.seconds:>10.1f}{cpu:>11.1f}{growth:>10.2f}"
            f"{r.cpu_s / sent * 1e6:>8.1f}{r.idle_cpu_s / r.members:>11.2f}{server}"
        )
    pg_cost = per_million[("PostgreSQL", 1)] / per_million[("SQLite", 1)]
    bc.line(
        "PostgreSQL / SQLite consumer CPU per event, 1 process (target < 1.20)", f"{pg_cost:>8.2f}"
    )
    server = next(r.server_cpu_s for r in runs if r.catalog == "PostgreSQL" and r.members == 1)
    pg_total = per_million[("PostgreSQL", 1)] + server / sent * 1e6
    with_server = pg_total / per_million[("SQLite", 1)]
    bc.line("  the same, the PostgreSQL server's CPU counted in", f"{with_server:>8.2f}")
    for catalog in ("SQLite", "PostgreSQL"):
        growth = per_million[(catalog, 3)] / per_million[(catalog, 1)]
        bc.line(f"{catalog}: CPU per event, 3 processes / 1 (target < 1.10)", f"{growth:>8.2f}")


if __name__ == "__main__":
    sys.exit(main())
