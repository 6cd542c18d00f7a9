"""`croupier lake init|info` and `croupier sql`: create, inspect and query the DuckLake store."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import duckdb

from croupier import lake as lakes

lake_option = click.option(
    "--lake",
    "lake_path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Lake folder (default: the configured lake, var/lake).",
)


@click.group()
def lake() -> None:
    """Create and inspect the DuckLake store (SQLite catalog + Parquet data folder)."""


@lake.command()
@lake_option
def init(lake_path: Path | None) -> None:
    """Create the lake (or open an existing one) and its tables; extensions install offline."""
    from consumers.schema import create_tables

    store = lakes.from_settings(lake_path)
    existed = store.exists
    try:
        con = lakes.connect(store, create=True)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        create_tables(con)
    finally:
        con.close()
    click.echo(f"{'Opened existing' if existed else 'Created'} lake at {store.root}")


@lake.command()
@lake_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def info(lake_path: Path | None, as_json: bool) -> None:
    """Print the lake's location, current snapshot id and the row count of every table."""
    store = lakes.from_settings(lake_path)
    try:
        con = lakes.connect(store, read_only=True)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        report = {
            "lake": str(store.root),
            "snapshot_id": lakes.current_snapshot(con),
            "tables": lakes.table_counts(con),
        }
    finally:
        con.close()
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"lake:      {report['lake']}\nsnapshot:  {report['snapshot_id']}")
    tables: dict[str, int] = report["tables"]  # type: ignore[assignment]
    if not tables:
        click.echo("tables:    (none yet)")
    for name, count in tables.items():
        click.echo(f"  {name:<40} {count:>12,} rows")


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

    \b
    Examples:
      croupier sql -c "SELECT game, count(*) FROM rounds GROUP BY game"
      croupier sql            # interactive; end statements with ';', quit with .quit or Ctrl-D
    """
    store = lakes.from_settings(lake_path)
    try:
        con = lakes.connect(store, read_only=True)
    except lakes.LakeError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        if query is not None:
            if not _run(con, query, fmt):
                raise SystemExit(1)
            return
        _shell(con, fmt)
    finally:
        con.close()


def _run(con: duckdb.DuckDBPyConnection, query: str, fmt: str) -> bool:
    try:
        cursor = con.execute(query)
    except duckdb.Error as exc:
        click.echo(f"error: {exc}", err=True)
        return False
    if cursor.description is None:
        return True
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
    return True


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
