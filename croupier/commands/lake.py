"""`croupier lake init|info` and `croupier sql`: create, inspect and query the DuckLake store."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import duckdb

from infra import lake as lakes
from infra import readonly
from infra.catalog_url import redact
from infra.marts import PUBLISHED, connect_marts

lake_option = click.option(
    "--lake",
    "lake_path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Lake folder (default: the configured lake, var/lake).",
)


def lake_at(lake_path: Path | None) -> lakes.Lake:
    """The configured lake (or the one at `lake_path`); a marts store given instead is bad
    usage (exit 2): a writer would give it the lake's tables."""
    store = lakes.from_settings(lake_path)
    if (store.root / PUBLISHED).is_file():
        raise click.UsageError(f"{store.root} is a marts store (croupier build's), not a lake")
    return store


def existing_lake(lake_path: Path | None) -> lakes.Lake:
    """`lake_at`, which must exist: a missing one is bad usage (exit 2), a catalog server that
    does not answer or refuses us a failure (exit 1)."""
    store = lake_at(lake_path)
    try:
        found = store.exists
    except lakes.LakeError as exc:  # the catalog's server does not answer or refuses us
        raise click.ClickException(str(exc)) from None
    if not found:
        raise click.UsageError(
            f"no lake at {store.where}: run `croupier demo` or `croupier lake init`"
        )
    return store


@click.group()
def lake() -> None:
    """Create and inspect the DuckLake store (SQLite catalog + Parquet data folder)."""


@lake.command()
@lake_option
def init(lake_path: Path | None) -> None:
    """Create the lake (or open an existing one) and its tables; extensions install offline."""
    from consumers.schema import create_tables
    from consumers.sink import retry_when_locked

    store = lakes.from_settings(lake_path)
    try:
        existed = store.exists
        con = lakes.connect(store, create=True)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        # several inits (services started together) may race to create the tables: again
        retry_when_locked(lambda: create_tables(con), conflicts=True)
    finally:
        lakes.close(con)
    click.echo(f"{'Opened existing' if existed else 'Created'} lake at {store.where}")


@lake.command()
@lake_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def info(lake_path: Path | None, as_json: bool) -> None:
    """Print the lake's location, identity, the stream it is bound to (Kafka cluster, topic
    and group), current snapshot id and the row count of every table."""
    from infra import binding

    store = lakes.from_settings(lake_path)
    try:
        con = lakes.connect(store, read_only=True)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        made = binding.identity(con)
        bound = binding.current(con)
        report = {
            "lake": str(store.root),
            "catalog": redact(store.catalog_url) if store.catalog_url else "sqlite",
            "data": store.data_location,
            "lake_id": made[0] if made else None,
            "created_at": made[1].isoformat() if made else None,
            "bound_to": vars(bound) if bound else None,
            "snapshot_id": lakes.current_snapshot(con),
            "tables": lakes.table_counts(con),
        }
    finally:
        lakes.close(con)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"lake:      {report['lake']}\ncatalog:   {report['catalog']}")
    click.echo(f"data:      {report['data']}")
    click.echo(f"snapshot:  {report['snapshot_id']}")
    click.echo(f"lake id:   {report['lake_id']} (created {report['created_at']})")
    click.echo(f"bound to:  {bound.describe() if bound else '(no stream yet)'}")
    tables: dict[str, int] = report["tables"]  # type: ignore[assignment]
    if not tables:
        click.echo("tables:    (none yet)")
    for name, count in tables.items():
        click.echo(f"  {name:<40} {count:>12,} rows")


@lake.command()
@lake_option
@click.option(
    "--retention",
    default=None,
    help="Expire snapshots older than this (e.g. '1 day'; default: the setting "
    "lake_snapshot_retention, env CROUPIER_LAKE_SNAPSHOT_RETENTION).",
)
@click.option(
    "--grace",
    default=None,
    help="Delete obsolete and orphaned files only once this old (e.g. '10 minutes'; "
    "default: the setting lake_file_grace, env CROUPIER_LAKE_FILE_GRACE).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def maintain(
    lake_path: Path | None, retention: str | None, grace: str | None, as_json: bool
) -> None:
    """Merge small files, expire old snapshots, delete obsolete and orphaned files; print
    what it did (files and bytes before and after, snapshots expired).

    Every consumer batch commits small Parquet files; one pass merges each table's into a few
    large ones (row ids, time travel and change feeds unchanged), flushes rows inlined in the
    catalog, expires snapshots older than the retention (TIME TRAVEL TO THEM IS THEN GONE; the
    rows stay), and deletes files no snapshot reads once they are older than the grace
    (merged-away files, a killed writer's leftovers). Snapshots an id index of the consumer
    still needs (its manifest's watermark and later) are kept whatever their age. Safe while
    the consumer and readers run: each step is its own short commit, retried when it meets
    another commit. The consumer runs the same pass itself every lake_maintenance_every_s
    seconds (env CROUPIER_LAKE_MAINTENANCE_EVERY_S; 0 = off).

    Exit codes: 0 done, 1 failed (the lake is as the failed step found it), 3 skipped:
    another pass is running on this lake.
    """
    from infra import maintenance
    from infra.config import get_settings, parse_duration

    settings = get_settings()
    try:
        keep = parse_duration(retention or settings.lake_snapshot_retention)
        wait = parse_duration(grace or settings.lake_file_grace)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    store = lakes.from_settings(lake_path)
    try:
        con = lakes.connect(store)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        report = maintenance.maintain(con, store, retention=keep, grace=wait)
    except maintenance.MaintenanceBusy as exc:
        click.echo(f"skipped: {exc}", err=True)
        raise SystemExit(3) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"maintenance failed: {exc}") from exc
    finally:
        lakes.close(con)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, default=str))
        return
    r = report
    click.echo(f"lake maintenance of {r.lake} in {r.seconds:.1f} s")
    click.echo(
        f"  files:      {r.before.files:,} -> {r.after.files:,} "
        f"({_size(r.before.bytes)} -> {_size(r.after.bytes)}); "
        f"read by the latest snapshot {r.live_files_before:,} -> {r.live_files_after:,}"
    )
    click.echo(f"  merged:     {r.files_merged:,} files into {r.files_created:,}")
    click.echo(f"  flushed:    {r.inlined_rows_flushed:,} rows inlined in the catalog")
    held = f"; kept for {r.pinned_by} from #{r.pinned_at}" if r.pinned_by else ""
    click.echo(
        f"  snapshots:  {r.snapshots_expired:,} expired, {r.snapshots_kept:,} kept "
        f"(oldest #{r.oldest_snapshot_kept}{held})"
    )
    click.echo(
        f"  deleted:    {r.obsolete_files_deleted:,} obsolete, {r.orphaned_files_deleted:,} "
        f"orphaned; {r.obsolete_files_deferred:,} obsolete left for the next pass (grace)"
    )
    if r.writes_in_flight:
        click.echo(f"  spared:     the files of {r.writes_in_flight} commit(s) in flight")


@lake.command()
@lake_option
@click.option(
    "--to",
    "catalog_url",
    required=True,
    help="The new catalog: postgres://user@host:port/database (an empty database; the "
    "password from PGPASSWORD, or in the URL).",
)
@click.option(
    "--to-lake",
    "target_path",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="The new lake's folder (its data/ must be empty or missing): where every machine "
    "of the lake reaches its Parquet files.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def migrate(lake_path: Path | None, catalog_url: str, target_path: Path, as_json: bool) -> None:
    """Copy a lake with the embedded SQLite catalog to one with its catalog on PostgreSQL.

    The catalog is copied row for row (snapshots, time travel, row ids, the lake's identity,
    its stream binding and the Kafka offsets committed with the rows), the Parquet files to
    the new folder; then every table of both lakes is hashed, row ids included, and must be
    equal. Stop the consumers first: a source written during the copy is refused. The source
    is only read and stays as it was; point the consumers at the new lake
    (CROUPIER_LAKE_CATALOG, CROUPIER_LAKE_PATH) and they continue where they stopped.

    Interrupted (Ctrl-C, a kill)? Run it again as it was: it starts over, or verifies the
    copy if that was committed before the interruption.

    Exit codes: 0 copied and verified, 1 refused or failed (the source is untouched; the
    target's catalog holds nothing, or a committed copy that says it was not verified), 2 bad
    usage.
    """
    from infra.catalog_url import check_catalog_url
    from infra.maintenance import MaintenanceBusy
    from infra.migrate import migrate as copy_lake

    try:
        url = check_catalog_url(catalog_url)
    except ValueError as exc:
        raise click.BadParameter(redact(str(exc)), param_hint="--to") from None
    from infra.config import get_settings

    # The source is a SQLite-catalog lake whatever lake_catalog says (that may be the target).
    if get_settings().lake_data:
        raise click.UsageError(
            "lake migrate copies a lake whose files are in its folder's data/ (lake_data is set)"
        )
    source = lakes.Lake(root=lake_path or get_settings().lake_dir)
    if not source.catalog.is_file():
        raise click.UsageError(f"no lake with a SQLite catalog at {source.root}")
    target = lakes.Lake(root=target_path.resolve(), catalog_url=url)
    try:
        total = sum(f.stat().st_size for f in source.data_path.rglob("*") if f.is_file())
        with click.progressbar(length=total, label="copying data files", file=sys.stderr) as bar:
            report = copy_lake(source, target, on_file=bar.update)
    except (lakes.LakeError, MaintenanceBusy, OSError) as exc:
        raise click.ClickException(redact(str(exc))) from None
    except duckdb.Error as exc:
        raise click.ClickException(f"migration failed: {redact(str(exc))}") from None
    summary = {
        "from": source.where,
        "to": target.where,
        "snapshot_id": report.snapshot_id,
        "files": report.files,
        "bytes": report.bytes,
        "seconds": round(report.seconds, 2),
        "tables": report.tables,
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(f"copied {source.where}\n    to {target.where}")
    click.echo(
        f"  {report.files:,} files ({_size(report.bytes)}), catalog at snapshot "
        f"#{report.snapshot_id}, in {report.seconds:.1f} s; verified: every table hashes equal"
    )
    for name, rows in report.tables.items():
        click.echo(f"  {name:<40} {rows:>12,} rows")
    click.echo(
        "Use it: CROUPIER_LAKE_CATALOG=<the URL> CROUPIER_LAKE_PATH="
        f"{target.root} (the source lake is unchanged; delete it yourself when done)"
    )


def _size(count: int) -> str:
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TiB"


@click.command()
@lake_option
@click.option("-c", "--command", "query", help="Run this SQL and exit (else an interactive shell).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output format of result rows.",
)
def sql(lake_path: Path | None, query: str | None, fmt: str) -> None:
    """Query the lake with DuckDB SQL; the lake is attached READ-ONLY as `lake` and in use.
    A marts store (`--lake var/marts`) is attached as `marts`, at its last successful build.

    The session runs queries only (SELECT, FROM, WITH, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN,
    PRAGMAs that read): no ATTACH, DETACH, USE, SET, COPY, INSTALL/LOAD or function that
    writes; it reads no file but the store's own. A refused statement exits 2, a failed one 1.

    \b
    Examples:
      croupier sql -c "SELECT game, count(*) FROM rounds GROUP BY game"
      croupier sql            # interactive; end statements with ';', quit with .quit or Ctrl-D
    """
    store = lakes.from_settings(lake_path)
    try:
        if (store.root / PUBLISHED).is_file():  # a marts store: its last successful build
            con = connect_marts(store.root)
            store = lakes.Lake(root=store.root)  # its data is its own folder's
        else:
            con = lakes.connect(store, read_only=True)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        readonly.lock(con, [store.data_location])
        if query is not None:
            outcome = _run(con, query, fmt)
            if outcome:
                raise SystemExit(outcome)
            return
        _shell(con, fmt)
    finally:
        lakes.close(con)  # a query Ctrl-C interrupted must not hang the close


def _run(con: duckdb.DuckDBPyConnection, query: str, fmt: str) -> int:
    """Run `query` and print its rows: 0, or 2 when refused, 1 when it failed."""
    cursor = None
    try:
        for statement in readonly.checked(con, query):
            cursor = con.execute(statement)
    except readonly.Refused as exc:
        click.echo(f"refused: {exc}", err=True)
        return 2
    except duckdb.Error as exc:
        click.echo(f"error: {exc}", err=True)
        return 1
    if cursor is None or cursor.description is None:
        return 0
    columns = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    if fmt == "json":
        for row in rows:
            click.echo(json.dumps(dict(zip(columns, row, strict=True)), default=str))
    elif fmt == "csv":
        import csv

        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    else:
        _print_table(columns, rows)
    return 0


def _print_table(columns: list[str], rows: list[tuple[object, ...]]) -> None:
    cells = [[("NULL" if v is None else str(v)) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    click.echo("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    click.echo("  ".join("-" * w for w in widths))
    for row in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
    click.echo(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")


def _shell(con: duckdb.DuckDBPyConnection, fmt: str) -> None:
    interactive = sys.stdin.isatty()
    if interactive:
        click.echo("croupier sql: the lake is attached read-only. End with ';'. .quit to leave.")
    buffer: list[str] = []
    while True:
        try:
            line = (
                input("lake> " if not buffer else "  ...> ")
                if interactive
                else sys.stdin.readline()
            )
        except EOFError:
            break
        if not interactive and line == "":
            break
        if line.strip() in (".quit", ".exit", "\\q"):
            break
        buffer.append(line)
        if line.rstrip().endswith(";"):
            _run(con, "\n".join(buffer), fmt)
            buffer = []
    if "".join(buffer).strip():
        _run(con, "\n".join(buffer), fmt)
