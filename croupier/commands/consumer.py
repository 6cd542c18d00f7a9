"""`croupier consume`, `replay` and `status`: run and watch the settlement consumer."""

from __future__ import annotations

import json
import logging
import signal
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import click

from croupier.commands import SECONDS, FiniteRange, metrics_host_option, serve_metrics
from croupier.commands.lake import lake_at, lake_option
from infra import lake as lakes

if TYPE_CHECKING:
    from consumers.metrics import ConsumerMetrics, MetricsServer
    from consumers.pipeline import StreamPolicy
    from infra.config import Settings
    from infra.maintenance import Schedule


def _logging(verbose: bool, log_format: str = "text") -> None:
    from infra import logs

    logs.configure(log_format, verbose=verbose)


_log_format_option = click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    envvar="CROUPIER_LOG_FORMAT",
    show_envvar=True,
    help="Log lines on stderr: readable text, or one JSON object per line (at, level, "
    "logger, msg and structured fields).",
)


def _policy(settings: Settings) -> StreamPolicy:
    """What the consumer accepts, from the settings (see `StreamPolicy`)."""
    from consumers.pipeline import StreamPolicy

    return StreamPolicy(casino_id=settings.casino_id, max_skew_s=settings.max_clock_skew_s)


def _maintenance(settings: Settings) -> Schedule | None:
    """The consumer's lake maintenance schedule (None: off), from the settings."""
    from infra.maintenance import Schedule

    return Schedule.from_settings(settings)


@click.command()
@lake_option
@click.option(
    "--file",
    "recording",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    help="Settle this recording (JSON lines, as `simulate --out` writes them; - = stdin) "
    "instead of reading Kafka.",
)
@click.option("--topic", default=None, help="Topic to read (default: configured kafka_topic).")
@click.option("--group", default=None, help="Consumer group (default: kafka_consumer_group).")
@click.option(
    "--batch-size", default=50_000, show_default=True, help="Most messages per transaction."
)
@click.option(
    "--stop-when-idle",
    type=FiniteRange(min=0, max=86_400),
    default=None,
    help="Exit after this many seconds with nothing to read (default: run until SIGTERM).",
)
@click.option(
    "--metrics-every",
    type=SECONDS,
    default=10.0,
    show_default=True,
    help="Seconds between metrics.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Consumer processes in the group (one per core; partitions are shared among them).",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve Prometheus metrics (/metrics) and a health check (/healthz) on this port "
    "[env CROUPIER_METRICS_PORT; default: no server]; with --workers N, worker i uses "
    "PORT+i. docs/operations.md lists the metrics.",
)
@metrics_host_option
@click.option(
    "--adopt",
    is_flag=True,
    help="Bind the lake to this stream even though it holds another (a lake records the "
    "cluster, topic and group it was created for, and refuses others); recorded in the lake.",
)
@click.option("-v", "--verbose", is_flag=True, help="Debug logs.")
@_log_format_option
def consume(
    lake_path: Path | None,
    recording: Path | None,
    topic: str | None,
    group: str | None,
    batch_size: int,
    stop_when_idle: float | None,
    metrics_every: float,
    workers: int,
    metrics_port: int | None,
    metrics_host: str,
    adopt: bool,
    verbose: bool,
    log_format: str,
) -> None:
    """Settle table events from Kafka into the lake, exactly once, until SIGTERM.

    Each batch of messages becomes one lake transaction holding its rows and the Kafka
    offsets they came from; on start and on every rebalance the consumer seeks to the offsets
    in the lake. Bad messages go to `dead_letters` (and the dead-letter topic) and never stop
    it. On SIGTERM it finishes the batch in hand, commits, and exits 0. With --workers N it
    runs N such processes in the group (Python settles on one core per process).

    With --file it settles a recording instead, through the same processor and sink, with the
    same dead letters and violations: one message per line (blank lines skipped), keyed by its
    table_id. Positions (the file's content hash as topic, the line number as offset) commit
    with the rows, so running the same recording again, from any path, adds nothing, and a
    run stopped or killed midway resumes where the lake says. Standard input (-) is first
    copied to a temporary file. Prints a JSON summary; exits 0 once every line is in the lake,
    128+N if signal N stopped it first (it commits the batch in hand; run again to finish).
    --topic, --group, --workers, --stop-when-idle, --metrics-every and --metrics-port/-host
    are for Kafka only.

    With --metrics-port (or CROUPIER_METRICS_PORT) it serves Prometheus metrics on /metrics
    and /healthz (200 while its loop turns and its last lake commit did not fail, 503 with the
    reason otherwise); a port that cannot be used exits 2 before anything is read.

    A lake holds one stream: the first run binds it to the Kafka cluster, topic and group it
    reads (or to recordings, for --file); another stream is refused with exit 2 before anything
    is written, unless --adopt. `croupier lake info` shows the binding.
    """
    if recording is not None:
        _refuse_kafka_options(click.get_current_context())
    if not metrics_host.strip():  # "" would listen on every interface, unasked
        raise click.BadParameter(
            "empty: give an address (127.0.0.1: this machine only, 0.0.0.0: every interface)",
            param_hint="--metrics-host",
        )
    if workers > 1:
        raise SystemExit(_run_workers(workers, _metrics_port(metrics_port), metrics_host))
    from consumers.kafka_source import ConsumeOptions, DeadLetterCopiesUndelivered, run_consumer
    from consumers.pipeline import Pipeline, warm_up
    from consumers.sink import LakeSink
    from infra.binding import LakeBoundElsewhere
    from infra.config import get_settings
    from infra.kafka import KafkaSecurityError
    from infra.logs import fields
    from infra.signals import closing_after_stop

    _logging(verbose, log_format)
    if recording is not None:
        raise SystemExit(_consume_file(lake_path, recording, batch_size, adopt=adopt))
    settings = get_settings()
    metrics, server = _serve_metrics(metrics_host, _metrics_port(metrics_port))
    try:
        sink = LakeSink(lake_at(lake_path))
    except BaseException:
        if server is not None:
            server.close()
        raise
    try:
        pipeline = Pipeline(sink, policy=_policy(settings), maintenance=_maintenance(settings))
        warm_up()
        total = run_consumer(
            pipeline,
            settings.kafka_client_config(),
            ConsumeOptions(
                topic=topic or settings.kafka_topic,
                group_id=group or settings.kafka_consumer_group,
                dead_letter_topic=settings.kafka_dead_letter_topic,
                batch_size=batch_size,
                metrics_every_s=metrics_every,
                stop_when_idle_s=stop_when_idle,
                adopt=adopt,
            ),
            metrics=metrics,
        )
    except LakeBoundElsewhere as exc:
        click.echo(f"error: {sink.lake.root}: {exc}", err=True)
        raise SystemExit(2) from None
    except KafkaSecurityError as exc:
        raise click.ClickException(f"Kafka: {exc}") from None
    except DeadLetterCopiesUndelivered as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        # the metrics server's shutdown waits up to half a second for its loop: a second stop
        # then ended a run that had committed everything with "Aborted!" and exit 1
        with closing_after_stop():
            try:
                sink.close()
            finally:
                if server is not None:
                    server.close()
    logging.getLogger("croupier.consumer").info("consumed", extra=fields(messages=total))


def _metrics_port(given: int | None) -> int | None:
    """--metrics-port, else the `metrics_port` setting (None: no metrics server)."""
    if given is not None:
        return given
    from infra.config import get_settings

    return get_settings().metrics_port


def _serve_metrics(
    host: str, port: int | None
) -> tuple[ConsumerMetrics | None, MetricsServer | None]:
    """The consumer's metrics and their server, before anything is read; a port that cannot
    be used is one line on stderr and exit 2."""
    if port is None:
        return None, None
    from consumers.metrics import ConsumerMetrics
    from infra.logs import fields

    metrics = ConsumerMetrics()
    server = serve_metrics(metrics, host, port)
    logging.getLogger("croupier.consumer").info(
        "metrics served", extra=fields(url=server.url, paths=["/metrics", "/healthz"])
    )
    return metrics, server


_KAFKA_ONLY = (
    "topic",
    "group",
    "workers",
    "stop_when_idle",
    "metrics_every",
    "metrics_port",
    "metrics_host",
)


def _refuse_kafka_options(ctx: click.Context) -> None:
    from click.core import ParameterSource

    given = [
        "--" + name.replace("_", "-")
        for name in _KAFKA_ONLY
        if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)
    ]
    if given:
        raise click.UsageError(
            f"--file reads a recording, not Kafka: it cannot be combined with {', '.join(given)}",
            ctx=ctx,
        )


def _consume_file(lake_path: Path | None, path: Path, batch_size: int, *, adopt: bool) -> int:
    """Settle a recording into the lake; returns the exit code."""
    from consumers.file_source import FileSource, LakeBusyError, lock_lake, open_recording
    from consumers.pipeline import Pipeline
    from consumers.sink import LakeSink
    from infra.binding import LakeBoundElsewhere, StreamBinding
    from infra.config import get_settings
    from infra.signals import closing_after_stop

    store = lake_at(lake_path)
    try:
        with open_recording(path) as recording, lock_lake(store.root):
            sink = LakeSink(store)
            try:
                sink.bind(StreamBinding(kind="file"), adopt=adopt)
            except LakeBoundElsewhere as exc:
                sink.close()
                click.echo(f"error: {store.root}: {exc}", err=True)
                return 2
            settings = get_settings()
            pipeline = Pipeline(sink, policy=_policy(settings), maintenance=_maintenance(settings))
            try:
                with click.progressbar(
                    length=max(recording.size, 1),
                    label=f"settling {recording.name}",
                    file=sys.stderr,
                    hidden=not sys.stderr.isatty(),
                ) as bar:
                    source = FileSource(
                        pipeline,
                        recording,
                        batch_size=batch_size,
                        on_progress=lambda done: bar.update(done - bar.pos),
                    )
                    report = source.run()
            finally:
                with closing_after_stop():
                    pipeline.close()
                    sink.close()
    except (LakeBusyError, lakes.LakeError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:  # the recording or the lake could not be read or written
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(report.as_dict()))
    if report.stopped_by is not None:
        click.echo(
            f"stopped by {report.stopped_by}: {report.committed} messages committed; "
            "run the same command again to settle the rest",
            err=True,
        )
        return 128 + signal.Signals[report.stopped_by]
    return 0


def _run_workers(workers: int, metrics_port: int | None, metrics_host: str) -> int:
    """Run this same command `workers` times as single-worker processes; forward SIGTERM and
    SIGINT to them; exit with the worst exit code (a worker killed by signal N counts as
    128 + N). With a metrics port, worker i serves its metrics on that port + i: every one is
    free, or nothing starts. A worker that refuses its input (exit 2) stops the others."""
    import subprocess
    import time

    from consumers.metrics import ConsumerMetrics, MetricsServer, MetricsServerError
    from infra.signals import stop_on_signals

    args: list[str] = []
    skip_value = False
    for arg in sys.argv[1:]:
        if skip_value:
            skip_value = False
        elif arg in ("--workers", "--metrics-port"):
            skip_value = True
        elif not arg.startswith(("--workers=", "--metrics-port=")):
            args.append(arg)

    def command(i: int) -> list[str]:
        if metrics_port is None:
            return [sys.executable, "-m", "croupier", *args]
        port = metrics_port + i if metrics_port else 0  # 0: each worker a free port of its own
        return [sys.executable, "-m", "croupier", *args, "--metrics-port", str(port)]

    if metrics_port is not None and metrics_port + workers - 1 > 65535:
        click.echo(f"error: --metrics-port: {metrics_port}+{workers - 1} is past 65535", err=True)
        return 2
    for i in range(workers if metrics_port else 0):  # 0: each worker finds a free one
        try:
            MetricsServer(ConsumerMetrics(), metrics_host, metrics_port + i).close()  # type: ignore[operator]
        except MetricsServerError as exc:
            click.echo(f"error: --metrics-port: {exc.strerror}", err=True)
            return 2
    children = [subprocess.Popen(command(i)) for i in range(workers)]

    def forward(signum: int, _frame: object) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    codes: dict[int, int] = {}
    with stop_on_signals(forward):
        while len(codes) < len(children):
            for i, child in enumerate(children):
                if i not in codes and (code := child.poll()) is not None:
                    codes[i] = code if code >= 0 else 128 - code  # killed by signal N: 128 + N
                    if code == 2:  # bad input or a port taken meanwhile: all or none
                        forward(signal.SIGTERM, None)
            time.sleep(0.1)
    return max(codes.values())


@click.command()
@click.option(
    "--lake",
    "lake_path",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="A NEW lake folder to rebuild into (must not exist).",
)
@click.option(
    "--catalog",
    "catalog_url",
    default=None,
    help="Keep the new lake's catalog in this empty PostgreSQL database "
    "(postgres://user@host:port/database; password from PGPASSWORD) instead of a SQLite file "
    "in the folder. The configured lake_catalog is not used: replay never touches a live lake.",
)
@click.option("--topic", default=None, help="Topic to replay (default: configured kafka_topic).")
@click.option(
    "--idle",
    type=SECONDS,
    default=5.0,
    show_default=True,
    help="Seconds of silence that end it.",
)
@_log_format_option
def replay(
    lake_path: Path, catalog_url: str | None, topic: str | None, idle: float, log_format: str
) -> None:
    """Rebuild every derived table from offset 0 into a fresh lake; print a hash per table.

    Two replays of the same topic print the same hashes, on either catalog: the derived tables
    are a pure function of the events. Uses a throw-away consumer group, so the live consumer's
    group is untouched.
    """
    from consumers.kafka_source import ConsumeOptions, run_consumer
    from consumers.pipeline import Pipeline
    from consumers.sink import LakeSink, content_hashes
    from infra.config import get_settings

    if lake_path.exists():
        raise click.BadParameter(
            f"{lake_path} exists; replay builds a fresh lake", param_hint="--lake"
        )
    store = lakes.Lake(root=lake_path, catalog_url=_fresh_catalog(catalog_url))
    _logging(False, log_format)
    settings = get_settings()
    try:
        sink = LakeSink(store)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        run_consumer(
            Pipeline(sink, policy=_policy(settings)),
            settings.kafka_client_config(),
            ConsumeOptions(
                topic=topic or settings.kafka_topic,
                group_id=f"croupier-replay-{uuid.uuid4().hex[:8]}",
                dead_letter_topic=None,
                stop_when_idle_s=idle,
                metrics_every_s=3600,
                binding_kind="replay",
            ),
        )
        click.echo(json.dumps(content_hashes(sink.con), indent=2, sort_keys=True))
    finally:
        sink.close()


def _fresh_catalog(url: str | None) -> str | None:
    """`url` checked, naming a database that holds no lake yet (else bad usage)."""
    if url is None:
        return None
    from infra.catalog_url import check_catalog_url, redact

    try:
        url = check_catalog_url(url)
        holds = lakes.Lake(root=Path("."), catalog_url=url).exists
    except ValueError as exc:
        raise click.BadParameter(redact(str(exc)), param_hint="--catalog") from None
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from None
    if holds:
        raise click.BadParameter(
            f"{redact(url)} already holds a lake; replay builds a fresh one",
            param_hint="--catalog",
        )
    return url


@click.command()
@lake_option
@click.option("--topic", default=None, help="Topic (default: configured kafka_topic).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(lake_path: Path | None, topic: str | None, as_json: bool) -> None:
    """Lag per partition (Kafka end offsets vs the offsets in the lake), the last committed
    snapshot, and rows per table."""
    from confluent_kafka import Consumer, TopicPartition

    from consumers.sink import OFFSETS
    from infra.config import get_settings

    settings = get_settings()
    topic = topic or settings.kafka_topic
    store = lakes.from_settings(lake_path)
    try:
        con = lakes.connect(store, read_only=True)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        stored = dict(
            con.execute(
                f"SELECT source_partition, max(next_offset) FROM {OFFSETS} "
                "WHERE source_topic = ? GROUP BY 1",
                [topic],
            ).fetchall()
        )
        report: dict[str, object] = {
            "lake": str(store.root),
            "snapshot_id": lakes.current_snapshot(con),
            "tables": lakes.table_counts(con),
        }
    finally:
        lakes.close(con)
    lag: dict[str, dict[str, int | None]] = {}
    probe = Consumer(
        settings.kafka_client_config(**{"group.id": "croupier-status", "log_level": 0})
    )
    try:
        metadata = probe.list_topics(topic, timeout=5)
        partitions = sorted(metadata.topics[topic].partitions) if topic in metadata.topics else []
        for p in partitions:
            _, high = probe.get_watermark_offsets(TopicPartition(topic, p), timeout=5)
            done = stored.get(p, 0)
            lag[str(p)] = {"end_offset": high, "lake_offset": done, "lag": high - done}
    except Exception as exc:
        report["kafka_error"] = str(exc)
    finally:
        probe.close()
    report["partitions"] = lag
    if as_json:
        click.echo(json.dumps(report, indent=2, default=str))
        return
    click.echo(f"lake {report['lake']}  snapshot {report['snapshot_id']}  topic {topic}")
    for p, row in lag.items():
        click.echo(
            f"  partition {p:>3}: end {row['end_offset']:>10}  "
            f"lake {row['lake_offset']:>10}  lag {row['lag']:>8}"
        )
    if "kafka_error" in report:
        click.echo(f"  kafka: {report['kafka_error']}")
    for name, count in report["tables"].items():  # type: ignore[attr-defined]
        click.echo(f"  {name:<32} {count:>12,}")
