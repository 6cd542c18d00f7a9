"""Subcommands of the `croupier` CLI, one module per area."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from consumers.metrics import MetricsServer, Served


class FiniteRange(click.FloatRange):
    """click's FloatRange that also refuses `nan` and `inf` (which pass its comparisons)."""

    name = "float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


# A number of seconds to wait or between two things: above zero, at most a day.
SECONDS = FiniteRange(min=0, min_open=True, max=86_400)


# Where a long-running command's /metrics and /healthz listen (`consume`, `build --every`).
metrics_host_option = click.option(
    "--metrics-host",
    default="127.0.0.1",
    show_default=True,
    help="Address the metrics server listens on (0.0.0.0: every interface, as in compose).",
)


def serve_metrics(metrics: Served, host: str, port: int) -> MetricsServer:
    """`metrics` served on host:port; a port that cannot be used is one line on stderr and
    exit 2."""
    from consumers.metrics import MetricsServer, MetricsServerError

    try:
        return MetricsServer(metrics, host, port)
    except MetricsServerError as exc:
        click.echo(f"error: --metrics-port: {exc.strerror}", err=True)
        raise SystemExit(2) from None
