"""`croupier what-if`: the lake's recorded rounds re-settled under another rule profile
(consumers/what_if.py), compared per game, table and UTC day; `--store` keeps the comparison for
the `agg_what_if_daily` mart and the Revenue page's "What if" panel."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from croupier.commands.lake import existing_lake, lake_option
from infra import lake as lakes

# Exit codes beyond click's (2: bad usage or input).
EXIT_NOTHING = 3
GAME_NAMES = ("pai-gow", "tripoker", "holdem")
# Where `--store` keeps the comparisons, inside the marts folder (not a lake table), and the
# environment variable through which `agg_what_if_daily` reads them (it is enabled only then).
STORED_FILE = Path("what_if") / "comparisons.parquet"
STORE_ENV = "CROUPIER_WHAT_IF_PATH"
MART = "agg_what_if_daily"


@click.command("what-if")
@click.option(
    "--profile",
    "profile_ref",
    required=True,
    metavar="NAME[@VERSION]",
    help="The rule profile to re-settle under, e.g. tripoker/standard (its latest version) or "
    "tripoker/standard@1.",
)
@click.option(
    "--game",
    type=click.Choice(GAME_NAMES),
    default=None,
    help="Game whose rounds are re-settled (default and only choice: the profile's game).",
)
@click.option(
    "--from",
    "start",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    metavar="DATE",
    help="First UTC day (YYYY-MM-DD, inclusive) of the rounds' start.",
)
@click.option(
    "--to",
    "end",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    metavar="DATE",
    help="Last UTC day (YYYY-MM-DD, INCLUSIVE) of the rounds' start.",
)
@click.option("--table", "table_id", default=None, help="Only this table.")
@click.option(
    "--decisions",
    type=click.Choice(["as-played", "strategy"]),
    default="as-played",
    show_default=True,
    help="as-played: the players' decisions fixed. strategy (Tripóker): play/fold decided "
    "again by the target profile's strategy.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output: a table (soles), or CSV / JSON lines (céntimos, hold as a fraction).",
)
@lake_option
@click.option(
    "--store",
    is_flag=True,
    help=f"Also keep the comparison's rounds (replacing an earlier comparison of the same "
    f"profile, decisions and game) in <marts>/{STORED_FILE} and build the {MART} mart "
    "from them (per casino day, like the other marts), which the Revenue page's What if "
    "panel shows. Needs the marts built once (`croupier build`).",
)
@click.option(
    "--marts",
    "marts_path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Marts store for --store (default: $CROUPIER_MARTS_PATH, else marts/ beside the lake).",
)
def what_if(
    profile_ref: str,
    game: str | None,
    start: datetime | None,
    end: datetime | None,
    table_id: str | None,
    decisions: str,
    fmt: str,
    lake_path: Path | None,
    store: bool,
    marts_path: Path | None,
) -> None:
    """Re-settle the lake's recorded rounds under another rule profile and compare.

    Every settled round of the profile's game is rebuilt from the events the lake stored (the
    cards and decisions as played) and settled again by the same rules engine as the consumer,
    under --profile. Printed per game, table and UTC day (of the round's start): handle, house
    result as recorded and as re-settled, the difference (re-settled − recorded: + the house
    would win more) and the hold % of each, with the profile versions; then the total.

    \b
    READ-ONLY: the lake is attached read-only at its current snapshot; its settlements,
    rounds and jackpot ledger are never changed.
    DECISIONS STAY AS PLAYED (default): a rule that changes what players decide (Tripóker's
    exposed dealer card, TCP-A10b) then costs nothing by itself; the difference is the cost
    of the paytables and forfeit rules (e.g. a fold forfeiting pair plus, TCP-A11b) with the
    players' decisions fixed. --decisions strategy (Tripóker) decides each ante player's
    play/fold again by the target profile's strategy: queen-6-4 or better when the dealer's
    cards are all face down, and with an exposed dealer card the play that returns more than
    folding given that card (exact, over the 1,128 dealer hands left).
    PROGRESSIVE METER (Hold'em): each round is re-settled against the meter the lake recorded
    before it; re-settled contributions and hits are never carried to the next round nor
    written: the recorded meter is left as it is.

    \b
    Exit codes: 0 done; 1 failure at run time (lake unreadable, --store's build failed);
    2 bad usage or input (unknown profile, a --game the profile does not settle, --to before
    --from, no lake); 3 no settled round of the game in the range.
    """
    from consumers import what_if as wi
    from events.models import Game
    from games.profiles import load_profile
    from rules.profile import ProfileError

    try:
        profile = load_profile(profile_ref)
    except (ProfileError, ValueError, KeyError) as exc:
        raise click.BadParameter(str(exc), param_hint="--profile") from None
    try:
        chosen = wi.check(
            profile,
            Game.from_slug(game) if game is not None else None,
            "strategy" if decisions == "strategy" else "as-played",
        )
        first, after = wi.day_range(start.date() if start else None, end.date() if end else None)
    except wi.WhatIfError as exc:
        raise click.UsageError(str(exc)) from None
    lake = existing_lake(lake_path)
    marts = _marts(lake, marts_path) if store else None
    selection = wi.Selection(game=chosen, start=first, end=after, table_id=table_id)
    try:
        with click.progressbar(
            length=1, label="re-settling", file=sys.stderr, hidden=not sys.stderr.isatty()
        ) as bar:

            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)

            comparison = wi.compare(
                lake,
                profile,
                selection,
                decisions="strategy" if decisions == "strategy" else "as-played",
                on_progress=progress,
            )
    except wi.NothingToCompare as exc:
        click.echo(f"nothing to compare: {exc}", err=True)
        sys.exit(EXIT_NOTHING)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from None
    out = wi.rows(comparison)
    if fmt == "json":
        for row in out:
            click.echo(json.dumps(row, default=str))
    elif fmt == "csv":
        import csv

        writer = csv.DictWriter(sys.stdout, fieldnames=wi.COLUMNS)
        writer.writeheader()
        writer.writerows(out)
    else:
        _print(comparison, out)
    if comparison.not_resettled:
        click.echo(
            f"warning: {comparison.not_resettled} round(s) could not be settled under "
            f"{comparison.profile} and are left out",
            err=True,
        )
    if marts is not None:
        _store(lake, marts, comparison)


def _marts(lake: lakes.Lake, marts_path: Path | None) -> Path:
    from infra.marts import default_marts_path, published_build

    marts = marts_path if marts_path is not None else default_marts_path(lake)
    published = published_build(marts)
    if published is None:
        raise click.UsageError(
            f"no marts built at {marts}: run `croupier build` first, then --store again"
        )
    if Path(published.lake_path) != lake.root.resolve() or published.lake_created_at != _created(
        lake
    ):
        raise click.UsageError(
            f"the marts at {marts} were built from another lake: run `croupier build` on "
            f"{lake.root} first, then --store again"
        )
    return marts


def _created(lake: lakes.Lake) -> datetime | None:
    from infra.binding import identity

    con = lakes.connect(lake, read_only=True)
    try:
        made = identity(con)
    finally:
        lakes.close(con)
    return made[1] if made is not None else None


def _store(lake: lakes.Lake, marts: Path, comparison: Any) -> None:
    """Keep the comparison's rounds (replacing the same profile, decisions and game's earlier
    ones) beside the marts, then build only the what-if mart from them, pinned at the lake
    snapshot the published marts read (so the next build's bookkeeping is unchanged)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from infra.marts import BuildError, build_marts, published_build

    path = marts / STORED_FILE
    key = (comparison.profile, comparison.decisions, comparison.selection.game.value)
    stored_at = datetime.now(UTC)
    new = [
        {
            "whatif_profile": comparison.profile,
            "decisions": comparison.decisions,
            "game": comparison.selection.game.value,
            "round_id": r.round_id,
            "table_id": r.table_id,
            "started_at": r.started_at,
            "ended_at": r.ended_at,
            "recorded_profile": r.recorded_profile,
            "handle_cents": r.handle_cents,
            "house_result_cents": r.house_result_cents,
            "whatif_handle_cents": r.whatif_handle_cents,
            "whatif_house_result_cents": r.whatif_house_result_cents,
            "decisions_changed": r.decisions_changed,
            "lake_snapshot_id": comparison.lake_snapshot_id,
            "stored_at": stored_at,
        }
        for r in comparison.rounds
    ]
    kept: list[dict[str, Any]] = []
    if path.is_file():
        try:
            kept = [
                row
                for row in pq.read_table(path).to_pylist()
                if (row["whatif_profile"], row["decisions"], row["game"]) != key
            ]
        except (pa.ArrowException, OSError, KeyError) as exc:
            # never overwritten unasked: what it holds may be the only copy of past comparisons
            raise click.ClickException(
                f"cannot read the stored comparisons {path} ({exc}); nothing was stored: move "
                "the file aside (or delete it) to store again"
            ) from None
    schema = pa.schema(
        [
            ("whatif_profile", pa.string()),
            ("decisions", pa.string()),
            ("game", pa.string()),
            ("round_id", pa.string()),
            ("table_id", pa.string()),
            ("started_at", pa.timestamp("us", tz="UTC")),
            ("ended_at", pa.timestamp("us", tz="UTC")),
            ("recorded_profile", pa.string()),
            ("handle_cents", pa.int64()),
            ("house_result_cents", pa.int64()),
            ("whatif_handle_cents", pa.int64()),
            ("whatif_house_result_cents", pa.int64()),
            ("decisions_changed", pa.int64()),
            ("lake_snapshot_id", pa.int64()),
            ("stored_at", pa.timestamp("us", tz="UTC")),
        ]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    pq.write_table(pa.Table.from_pylist(kept + new, schema=schema), tmp)
    tmp.replace(path)
    published = published_build(marts)
    os.environ[STORE_ENV] = str(path.resolve())
    try:
        build_marts(
            lake,
            marts,
            select=MART,
            quiet=True,
            lake_snapshot=published.lake_snapshot_id if published is not None else None,
        )
    except (BuildError, lakes.LakeError) as exc:
        raise click.ClickException(f"stored {path}, but the {MART} build failed: {exc}") from None
    finally:
        os.environ.pop(STORE_ENV, None)
    click.echo(f"stored in {path} and built {MART} in {marts}", err=True)


def _soles(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{part:02d}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.2f} %"


def _print(comparison: Any, out: list[dict[str, Any]]) -> None:
    from consumers import what_if as wi

    total = comparison.total()
    recorded = ", ".join(sorted(total.recorded_profiles))
    mode = (
        "decisions as played (the cost of the paytables and forfeit rules with the players' "
        "decisions fixed)"
        if comparison.decisions == "as-played"
        else "play/fold decided again by the target profile's strategy"
    )
    click.echo(
        f"what if: {comparison.selection.game.slug} rounds recorded under {recorded}, "
        f"re-settled under {comparison.profile}; {mode}; lake snapshot "
        f"{comparison.lake_snapshot_id}; days are UTC; money in soles"
    )
    strategy = comparison.decisions == "strategy"
    header = ["day", "table", "rounds", "recorded", "handle", "house", "hold"]
    if strategy:
        header += ["what-if handle"]
    header += ["what-if house", "what-if hold", "difference"]
    if strategy:
        header += ["decisions changed"]

    def cells(row: dict[str, Any]) -> list[str]:
        values = [
            str(row["day"]),
            row["table_id"],
            f"{row['rounds']:,}",
            row["recorded_profiles"],
            _soles(row["handle_cents"]),
            _soles(row["house_result_cents"]),
            _pct(row["hold_pct"]),
        ]
        if strategy:
            values.append(_soles(row["whatif_handle_cents"]))
        values += [
            _soles(row["whatif_house_result_cents"]),
            _pct(row["whatif_hold_pct"]),
            _soles(row["difference_cents"]),
        ]
        if strategy:
            values.append(f"{row['decisions_changed']:,}")
        return values

    body = [cells(row) for row in out]
    total_row = wi.rows(
        wi.Comparison(
            profile=comparison.profile,
            decisions=comparison.decisions,
            selection=comparison.selection,
            lake_snapshot_id=comparison.lake_snapshot_id,
            cells=(total,),
            not_resettled=0,
        )
    )[0]
    footer = cells(total_row)
    footer[0] = "total"
    widths = [max(len(h), *(len(r[i]) for r in [*body, footer])) for i, h in enumerate(header)]
    left = {0, 1, 3}

    def line(values: list[str]) -> str:
        return "  ".join(
            v.ljust(w) if i in left else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ).rstrip()

    click.echo(line(header))
    click.echo("  ".join("-" * w for w in widths))
    for values in body:
        click.echo(line(values))
    click.echo("  ".join("-" * w for w in widths))
    click.echo(line(footer))
