"""`croupier build`: `dbt build` of the marts (infra/marts.py), once or every few seconds."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from croupier.commands import FiniteRange
from croupier.commands.lake import existing_lake
from infra import lake as lakes
from infra.marts import BuildError, build_marts, default_marts_path


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
def build(
    lake_path: Path | None,
    marts_path: Path | None,
    full_refresh: bool,
    re_evaluate: bool,
    select: str | None,
    quiet: bool,
    every: float | None,
) -> None:
    """Build the revenue and integrity marts with dbt, and run every test on them.

    Runs `dbt build` (seeds, models, generic, singular and unit tests) of dbt_project/ on the
    lake pinned at its current snapshot, so the whole build sees one consistent state while the
    consumer keeps writing. Incremental models only read rows new since the last build; a lake
    created anew since then triggers a full refresh, which reads the hold and hole-carding
    evaluations `croupier evidence` stored like any build (--re-evaluate: computes them all
    again). A build that passes publishes its marts
    snapshot in <marts>/published.json; readers see that build's marts, whole, meanwhile and
    after a failed or killed build: `croupier sql --lake <marts>`, the dashboards, or `duckdb`
    with `ATTACH 'ducklake:sqlite:<marts>/catalog.sqlite' (READ_ONLY, SNAPSHOT_VERSION <id>)`.
    """
    if re_evaluate and not full_refresh:
        raise click.UsageError("--re-evaluate evaluates every round again: add --full-refresh")
    store = existing_lake(lake_path)
    marts = marts_path if marts_path is not None else default_marts_path(store)
    while True:
        try:
            result = build_marts(
                store, marts, full_refresh=full_refresh, select=select, quiet=quiet,
                re_evaluate=re_evaluate,
            )  # fmt: skip
        except (BuildError, lakes.LakeError) as exc:
            click.echo(f"error: {exc}", err=True)
            if every is None:
                sys.exit(1)
        else:
            click.echo(
                f"marts built in {result.seconds:.1f} s into {marts} from lake snapshot "
                f"{result.lake_snapshot_id}{' (full refresh)' if result.full_refresh else ''}"
            )
        if every is None:
            return
        full_refresh = re_evaluate = False
        time.sleep(every)
