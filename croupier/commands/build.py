"""`croupier build`: `dbt build` of the marts (infra/marts.py), once or every few seconds."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

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
@click.option("--select", default=None, help="dbt node selection, e.g. 'marts.revenue+'.")
@click.option("--quiet", is_flag=True, help="Only dbt's errors and the summary line.")
@click.option(
    "--every",
    type=click.FloatRange(min=1),
    default=None,
    metavar="SECONDS",
    help="Build again every SECONDS until stopped (a failed build is reported, then retried).",
)
def build(
    lake_path: Path | None,
    marts_path: Path | None,
    full_refresh: bool,
    select: str | None,
    quiet: bool,
    every: float | None,
) -> None:
    """Build the revenue and integrity marts with dbt, and run every test on them.

    Runs `dbt build` (seeds, models, generic, singular and unit tests) of dbt_project/ on the
    lake pinned at its current snapshot, so the whole build sees one consistent state while the
    consumer keeps writing. Incremental models only read rows new since the last build; a lake
    created anew since then triggers a full refresh. A build that passes publishes its marts
    snapshot in <marts>/published.json; readers see that build's marts, whole, meanwhile and
    after a failed or killed build: `croupier sql --lake <marts>`, the dashboards, or `duckdb`
    with `ATTACH 'ducklake:sqlite:<marts>/catalog.sqlite' (READ_ONLY, SNAPSHOT_VERSION <id>)`.
    """
    store = existing_lake(lake_path)
    marts = marts_path if marts_path is not None else default_marts_path(store)
    while True:
        try:
            result = build_marts(
                store, marts, full_refresh=full_refresh, select=select, quiet=quiet
            )
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
        full_refresh = False
        time.sleep(every)
