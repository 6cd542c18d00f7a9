"""`croupier kafka start|stop|status`: the local KRaft broker for development and tests."""

from __future__ import annotations

import time

import click

from croupier.commands import SECONDS
from infra import kafka_local


@click.group()
def kafka() -> None:
    """Run a local Apache Kafka 4 broker (KRaft, no Docker) from Maven Central jars.

    The jars are fetched once by Maven into the user cache (~/.cache/croupier); the broker's
    config, data, log and pid file live in <data_dir>/kafka. Needs Java 17+ and Maven.
    """


@kafka.command()
@click.option(
    "--timeout",
    type=SECONDS,
    default=120.0,
    show_default=True,
    help="Seconds to wait for it to answer.",
)
def start(timeout: float) -> None:
    """Start the broker and wait until it answers a metadata request."""
    broker = kafka_local.from_settings()
    begun = time.monotonic()
    try:
        if not (broker.lib_dir / ".complete").exists():
            click.echo(f"Fetching Kafka {broker.version} jars (once)...", err=True)
        pid, started = kafka_local.start(broker, timeout=timeout)
    except kafka_local.KafkaLocalError as exc:
        raise click.ClickException(str(exc)) from exc
    if started:
        click.echo(
            f"Kafka {broker.version} started (pid {pid}) in {time.monotonic() - begun:.1f} s; "
            f"logs in {broker.log_file}",
            err=True,
        )
    else:
        click.echo(f"Kafka is already running (pid {pid}); nothing to do.", err=True)
    click.echo(broker.bootstrap)


@kafka.command()
def stop() -> None:
    """Stop the broker started by `croupier kafka start` (and only that one)."""
    broker = kafka_local.from_settings()
    if kafka_local.stop(broker):
        click.echo("Kafka stopped.")
    else:
        click.echo("No local Kafka broker was running.")


@kafka.command()
def status() -> None:
    """Say whether the local broker runs and answers; exit 1 when it does not."""
    broker = kafka_local.from_settings()
    pid = kafka_local.running_pid(broker)
    if pid is None:
        click.echo("stopped")
        raise SystemExit(1)
    answers = kafka_local.broker_answers(broker.bootstrap)
    click.echo(
        f"running pid={pid} bootstrap={broker.bootstrap} answers={'yes' if answers else 'no'}"
    )
    if not answers:
        raise SystemExit(1)
