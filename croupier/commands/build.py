"""`croupier build`: `dbt build` of the marts (infra/marts.py), once or every few seconds."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from croupier.commands import FiniteRange, metrics_host_option, serve_metrics
from croupier.commands.lake import existing_lake
from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import BuildError, build_marts, default_marts_path

if TYPE_CHECKING:
    from consumers.metrics import MetricsServer


@click.command()
@click.option(
    "--lake",
    "lake_path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Lake to read (default: the configured lake, var/lake).",
)
@click.option(
    "--marts",
    "marts_path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Marts store to write (default: $CROUPIER_MARTS_PATH, else marts/ beside the lake).",
)
@click.option("--full-refresh", is_flag=True, help="Rebuild incremental models from scratch.")
@click.option(
    "--re-evaluate",
    is_flag=True,
    help="With --full-refresh: evaluate every round's hold and hole-carding evidence from the "
    "events again instead of reading `croupier evidence`'s rows (slow: after a fix to the "
    "games' math, or to repair a stored row).",
)
@click.option("--select", default=None, help="dbt node selection, e.g. 'marts.revenue+'.")
@click.option("--quiet", is_flag=True, help="Only dbt's errors and the summary line.")
@click.option(
    "--every",
    type=FiniteRange(min=1, max=86_400),
    default=None,
    metavar="SECONDS",
    help="Build again every SECONDS until stopped (a failed build is reported, then retried).",
)
@click.option(
    "--timeout",
    type=FiniteRange(min=1, max=86_400),
    default=None,
    metavar="SECONDS",
    help="Kill a build that runs longer than SECONDS (a hung dbt) and report it failed, its "
    "marts unpublished; with --every, the next build comes at the next interval. Default: none.",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="With --every: serve Prometheus metrics (/metrics: builds by result, build seconds, "
    "the published lake snapshot) and a health check (/healthz) on this port. "
    "docs/operations.md says what to alert on.",
)
@metrics_host_option
def build(
    lake_path: Path | None,
    marts_path: Path | None,
    full_refresh: bool,
    re_evaluate: bool,
    select: str | None,
    quiet: bool,
    every: float | None,
    timeout: float | None,
    metrics_port: int | None,
    metrics_host: str,
) -> None:
    """Build the revenue and integrity marts with dbt, and run every test on them.

    Runs `dbt build` (seeds, models, generic, singular and unit tests) of dbt_project/ on the
    lake pinned at its current snapshot, so the whole build sees one consistent state while the
    consumer keeps writing. Incremental models only read rows new since the last build; a lake
    created anew since then, or one that did more than add rows since (a delete, an update, a
    table altered; or a snapshot since expired, which cannot tell), triggers a full refresh,
    which reads the hold and hole-carding evaluations `croupier evidence` stored like any build
    (--re-evaluate: computes them all again). A build that passes publishes its marts
    snapshot in <marts>/published.json; readers see that build's marts, whole, meanwhile and
    after a failed or killed build: `croupier sql --lake <marts>`, the dashboards, or `duckdb`
    with `ATTACH 'ducklake:sqlite:<marts>/catalog.sqlite' (READ_ONLY, SNAPSHOT_VERSION <id>)`.
    """
    if re_evaluate and not full_refresh:
        raise click.UsageError("--re-evaluate evaluates every round again: add --full-refresh")
    if metrics_port is not None and every is None:
        raise click.UsageError("--metrics-port serves a running builder: add --every")
    store = existing_lake(lake_path)
    marts = marts_path if marts_path is not None else default_marts_path(store)
    metrics, server = _serve_metrics(metrics_host, metrics_port, every or 0.0)
    dbt = DbtWorker()  # kept from build to build: dbt starts and parses once
    try:
        while True:
            started = time.monotonic()
            try:
                result = build_marts(
                    store, marts, full_refresh=full_refresh, select=select, quiet=quiet,
                    re_evaluate=re_evaluate, dbt=dbt, timeout=timeout,
                )  # fmt: skip
            except (BuildError, lakes.LakeError) as exc:
                click.echo(f"error: {exc}", err=True)
                if metrics is not None:
                    metrics.failed(exc, time.monotonic() - started)
                if every is None:
                    sys.exit(1)
            else:
                click.echo(
                    f"marts built in {result.seconds:.1f} s into {marts} from lake snapshot "
                    f"{result.lake_snapshot_id}{' (full refresh)' if result.full_refresh else ''}"
                )
                if metrics is not None:
                    metrics.passed(result.lake_snapshot_id, time.monotonic() - started)
            if every is None:
                return
            full_refresh = re_evaluate = False
            time.sleep(every)
    finally:
        dbt.close()
        if server is not None:
            server.close()


def _serve_metrics(
    host: str, port: int | None, every: float
) -> tuple[BuildMetrics | None, MetricsServer | None]:
    """The builder's metrics and their server (None, None without a port); a port that
    cannot be used is one line on stderr and exit 2."""
    if port is None:
        return None, None
    metrics = BuildMetrics(every)
    server = serve_metrics(metrics, host, port)
    click.echo(f"metrics on {server.url}/metrics, health on {server.url}/healthz", err=True)
    return metrics, server


class BuildHealth:
    """Whether `croupier build --every` keeps the marts fresh: healthy until a build fails, and
    while the last passing build (or the start) is no older than `STALE_BUILDS` intervals plus
    the longest build seen (a slow first build is not a failure)."""

    STALE_BUILDS = 3

    def __init__(self, every: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self._clock = clock
        self._since = clock()  # of the last passing build, or the start
        self._longest = 0.0
        self._builds = 0
        self._error: str | None = None

    def passed(self, seconds: float) -> None:
        self._since, self._error = self._clock(), None
        self._builds += 1
        self._longest = max(self._longest, seconds)

    def failed(self, error: BaseException, seconds: float) -> None:
        self._error = str(error).splitlines()[0][:500] if str(error) else type(error).__name__
        self._longest = max(self._longest, seconds)

    def check(self) -> tuple[bool, dict[str, Any]]:
        age = self._clock() - self._since
        body: dict[str, Any] = {"builds_passed": self._builds, "age_s": round(age, 3)}
        allowed = self.STALE_BUILDS * self.every + self._longest
        reason = None
        if self._error is not None:
            reason = f"the last build failed: {self._error}"
        elif age > allowed and self._builds:
            reason = f"no build has passed for {age:.0f} s (more than {allowed:.0f} s)"
        elif age > allowed:
            reason = f"the first build has not passed in {age:.0f} s (more than {allowed:.0f} s)"
        if reason is None:
            return True, {"status": "ok", **body}
        return False, {"status": "unhealthy", "reason": reason, **body}


class BuildMetrics:
    """`croupier_build_*`: builds by result, their seconds, the time of the last passing one
    and the lake snapshot its marts were built from (readers see that build)."""

    def __init__(self, every: float) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.health = BuildHealth(every)
        self.builds = Counter(
            "croupier_build_builds", "Builds run, by result.", ["result"], registry=registry
        )
        self.seconds = Histogram(
            "croupier_build_seconds",
            "Seconds a build took (dbt and the publication), passed or failed.",
            buckets=(1, 2.5, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1800, 3600),
            registry=registry,
        )
        self.last_passed = Gauge(
            "croupier_build_last_passed_timestamp_seconds",
            "When the last passing build ended (Unix time).",
            registry=registry,
        )
        self.lake_snapshot = Gauge(
            "croupier_build_published_lake_snapshot",
            "Lake snapshot id the published marts were built from.",
            registry=registry,
        )
        for result in ("passed", "failed"):
            self.builds.labels(result)

    def passed(self, lake_snapshot: int, seconds: float) -> None:
        self.builds.labels("passed").inc()
        self.seconds.observe(seconds)
        self.last_passed.set(time.time())
        self.lake_snapshot.set(lake_snapshot)
        self.health.passed(seconds)

    def failed(self, error: BaseException, seconds: float) -> None:
        self.builds.labels("failed").inc()
        self.seconds.observe(seconds)
        self.health.failed(error, seconds)
