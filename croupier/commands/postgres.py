"""`croupier postgres start|stop|status`: a local PostgreSQL server for the lake's catalog."""

from __future__ import annotations

import time

import click

from croupier.commands import SECONDS
from infra import postgres_local


@click.group()
def postgres() -> None:
    """Run a local PostgreSQL server (no Docker) from the machine's server binaries.

    For a lake whose catalog is shared by several processes. The cluster, its log and a
    generated password live in <data_dir>/postgres; the server listens on 127.0.0.1 only
    (CROUPIER_LOCAL_POSTGRES_PORT, default 55432) and asks every client for the password.
    Needs Debian's `postgresql` package (`./run test` installs it where missing, as root).
    """


def _fail(exc: postgres_local.PostgresLocalError) -> click.ClickException:
    return click.ClickException(str(exc))


@postgres.command()
@click.option(
    "--timeout", type=SECONDS, default=60.0, show_default=True, help="Seconds to wait for it."
)
def start(timeout: float) -> None:
    """Start the server (creating its cluster and database the first time) and print the
    DSN without its password (the password is in <data_dir>/postgres/password)."""
    server = postgres_local.from_settings()
    begun = time.monotonic()
    try:
        pid, started = postgres_local.start(server, timeout=timeout)
    except postgres_local.PostgresLocalError as exc:
        raise _fail(exc) from exc
    if started:
        click.echo(
            f"PostgreSQL started (pid {pid}) in {time.monotonic() - begun:.1f} s; logs in "
            f"{server.log_file}, password in {server.password_file}",
            err=True,
        )
    else:
        click.echo(f"PostgreSQL is already running (pid {pid}); nothing to do.", err=True)
    click.echo(f"postgres://{server.user}@127.0.0.1:{server.port}/{server.database}")


@postgres.command()
def stop() -> None:
    """Stop the server started by `croupier postgres start` (and only that one); its data stays."""
    server = postgres_local.from_settings()
    try:
        stopped = postgres_local.stop(server)
    except postgres_local.PostgresLocalError as exc:
        raise _fail(exc) from exc
    click.echo("PostgreSQL stopped." if stopped else "No local PostgreSQL server was running.")


@postgres.command()
def status() -> None:
    """Say whether the local server runs and answers; exit 1 when it does not."""
    server = postgres_local.from_settings()
    pid = postgres_local.running_pid(server)
    if pid is None:
        click.echo("stopped")
        raise SystemExit(1)
    answers = postgres_local.answers(server)
    click.echo(
        f"running pid={pid} address=127.0.0.1:{server.port} database={server.database} "
        f"answers={'yes' if answers else 'no'}"
    )
    if not answers:
        raise SystemExit(1)
