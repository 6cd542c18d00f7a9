"""The `croupier` command line: one entry point, subcommands loaded lazily from their modules.

Each subcommand lives beside the code it drives; this file only names them, so `croupier --help`
stays fast (no NumPy, DuckDB or Kafka import until a command runs).
"""

from __future__ import annotations

import contextlib
import importlib
import sys

import click

from croupier import __version__

# name -> "module:attribute" of a click command or group. Keep sorted.
COMMANDS: dict[str, str] = {
    "build": "croupier.commands.build:build",
    "consume": "croupier.commands.consumer:consume",
    "dashboard": "croupier.commands.dashboard:dashboard",
    "demo": "croupier.commands.demo:demo",
    "evidence": "croupier.commands.evidence:evidence",
    "hand": "croupier.commands.hand:hand",
    "house-way": "croupier.commands.rules_cli:house_way",
    "kafka": "croupier.commands.kafka:kafka",
    "lake": "croupier.commands.lake:lake",
    "odds": "croupier.commands.rules_cli:odds",
    "postgres": "croupier.commands.postgres:postgres",
    "publish": "croupier.commands.simulate:publish",
    "replay": "croupier.commands.consumer:replay",
    "settle": "croupier.commands.rules_cli:settle",
    "simulate": "croupier.commands.simulate:simulate",
    "sql": "croupier.commands.lake:sql",
    "status": "croupier.commands.consumer:status",
    "trace": "croupier.commands.trace:trace",
    "what-if": "croupier.commands.what_if:what_if",
}


def _interrupt_connections(exc: BaseException) -> None:
    """DuckDB (1.5) leaves a query that Ctrl-C interrupted half stopped: closing its connection
    then waits forever (the CLI printed "Aborted!" and hung) unless the connection is
    interrupted once more (`infra.lake.close` does so for a command's own close). Here for the
    connections a command leaves open: the frames' locals (or their attributes) along the
    traceback, closed when those frames go."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is None:
        return
    tb = exc.__traceback__
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            for candidate in (value, *getattr(value, "__dict__", {}).values()):
                if isinstance(candidate, duckdb.DuckDBPyConnection):
                    with contextlib.suppress(duckdb.Error):  # closed already: nothing to stop
                        candidate.interrupt()
        tb = tb.tb_next


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when used."""

    def invoke(self, ctx: click.Context) -> object:
        """Run the subcommand; a setting that does not validate is bad input (exit 2) with
        pydantic's message (which never shows the values: they may hold a password)."""
        from pydantic import ValidationError

        try:
            return super().invoke(ctx)
        except ValidationError as exc:
            click.echo(f"Error: bad configuration: {exc}", err=True)
            ctx.exit(2)
        except RuntimeError as exc:
            # Ctrl-C inside a DuckDB query comes out as this, not as KeyboardInterrupt: the
            # same "Aborted!" (exit 1) as anywhere else; DuckDB rolled the query back
            if str(exc) != "Query interrupted":
                raise
            _interrupt_connections(exc)
            raise click.Abort() from None
        except Exception as exc:
            # The lake's storage failed under a command (a bucket or server away, credentials
            # refused, a file gone): DuckDB's message, without a traceback; what was
            # committed stays committed, and the command can be run again.
            duckdb = sys.modules.get("duckdb")
            if duckdb is None or not isinstance(exc, duckdb.IOException):
                raise
            from infra.catalog_url import redact

            click.echo(f"Error: the lake's storage: {redact(str(exc))}", err=True)
            ctx.exit(1)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="croupier")
def main() -> None:
    """Croupier: settle and audit casino table games from their event stream.

    Table devices publish events to Kafka; the consumer settles every bet by the Peruvian
    regulations (Pai Gow Poker, Tripóker, Progressive Texas Hold'em), checks every procedure,
    and writes the results to a DuckLake lakehouse that dbt and the dashboards read.

    Exit codes: 0 success, 1 failure at run time, 2 bad usage or bad input.
    """
