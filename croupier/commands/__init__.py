"""Subcommands of the `croupier` CLI, one module per area."""

from __future__ import annotations

import math
from typing import Any

import click


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
