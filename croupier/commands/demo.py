"""`croupier demo`: a casino night simulated, settled and checked end to end on one machine.

In-process by default (simulator -> queue -> processor -> lake, no servers); `--kafka` sends the
same night through a Kafka broker and the real consumer instead.
"""

from __future__ import annotations

import io
import json
import queue
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from croupier.commands import FiniteRange
from events.models import Game
from infra import lake as lakes

BATCH = 5_000


def run_in_process(
    lake: lakes.Lake,
    *,
    tables: Mapping[Game, int] | int,
    hours: float,
    seed: int,
    faults: str,
    truth: Path | None = None,
    progress: bool = True,
    players: str | None = None,
    start: datetime | None = None,
    first_table: int = 1,
) -> int:
    """Simulate and settle into `lake` with an in-process queue; returns messages processed.
    `players`: a `--players` mix (None: every player typical); `start`: the night's UTC start
    (None: the simulator's); `first_table`: as `simulate` takes it (another night into the
    same lake needs tables of its own)."""
    from consumers.pipeline import Pipeline, RawMessage
    from consumers.sink import LakeSink
    from infra.binding import StreamBinding
    from producers.simulator import DEFAULT_START, parse_faults, parse_players, simulate

    records: list[str] = []
    mix = None if players is None else parse_players(players)
    sim = simulate(
        tables=tables,
        hours=hours,
        seed=seed,
        faults=parse_faults(faults),
        on_fault=lambda f: records.append(f.to_json()),
        start=start or DEFAULT_START,
        players=mix,
        on_player=None if mix is None else lambda p: records.append(p.to_json()),
        first_table=first_table,
    )
    handoff: queue.Queue[list[RawMessage] | BaseException | None] = queue.Queue(maxsize=8)

    def produce() -> None:
        try:
            batch: list[RawMessage] = []
            for position, msg in enumerate(sim):
                batch.append(
                    RawMessage(
                        value=msg.value,
                        key=msg.key.encode(),
                        topic="in-process",
                        partition=0,
                        offset=position,
                    )
                )
                if len(batch) >= BATCH:
                    handoff.put(batch)
                    batch = []
            handoff.put(batch)
            handoff.put(None)
        except BaseException as exc:  # surfaced in the consuming thread
            handoff.put(exc)

    sink = LakeSink(lake)
    sink.bind(StreamBinding(kind="demo"))
    pipeline = Pipeline(sink)
    thread = threading.Thread(target=produce, name="simulator", daemon=True)
    thread.start()
    total = 0
    with click.progressbar(
        length=1000, label="casino night", file=sys.stderr if progress else io.StringIO()
    ) as bar:
        done = 0
        while True:
            item = handoff.get()
            if item is None:
                break
            if isinstance(item, BaseException):
                raise item
            pipeline.handle(item)
            total += len(item)
            now = int(sim.progress * 1000)
            bar.update(now - done)
            done = now
        bar.update(1000 - done)
    pipeline.close()
    sink.close()
    thread.join()
    if truth is not None:
        truth.write_text("".join(r + "\n" for r in records))
    return total


def summary(lake: lakes.Lake) -> dict[str, Any]:
    con = lakes.connect(lake, read_only=True)
    try:
        rounds = con.execute(
            "SELECT game, status, count(*) FROM rounds GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        money = con.execute(
            "SELECT game, sum(wager_cents), sum(house_result_cents), sum(commission_cents), "
            "count(*) FROM settlements GROUP BY game ORDER BY game"
        ).fetchall()
        violations = con.execute(
            "SELECT rule_id, count(*) FROM violations GROUP BY 1 ORDER BY 2 DESC, 1"
        ).fetchall()
        dead = con.execute("SELECT count(*) FROM dead_letters").fetchone()
    finally:
        lakes.close(con)
    return {
        "rounds": {f"{g}/{s}": n for g, s, n in rounds},
        "by_game": {
            g: {
                "bets": n,
                "handle_cents": int(h or 0),
                "house_result_cents": int(r or 0),
                "commission_cents": int(c or 0),
            }
            for g, h, r, c, n in money
        },
        "violations_by_rule": dict(violations),
        "dead_letters": int(dead[0]) if dead else 0,
    }


def _soles(cents: int) -> str:
    return f"S/ {cents / 100:,.2f}"


@click.command()
@click.option(
    "--tables",
    type=click.IntRange(0, 99),
    default=3,
    show_default=True,
    help="Tables of each game.",
)
@click.option(
    "--hours",
    type=FiniteRange(min=0, min_open=True, max=24 * 365),
    default=8.0,
    show_default=True,
    help="Hours of play.",
)
@click.option("--seed", default=2025, show_default=True, help="Same seed, same night.")
@click.option(
    "--faults",
    default="default",
    show_default=True,
    help="'default', 'none', or name:rate,... (see `croupier simulate --help`).",
)
@click.option(
    "--dir",
    "folder",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The demo's own folder, replaced on every run: its lake and marts (default: "
    "data_dir/demo, i.e. var/demo). Never the configured lake; a folder that is not a demo's "
    "is refused.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--no-build", is_flag=True, help="Skip building the dbt marts at the end.")
@click.option("--open", "open_dashboard", is_flag=True, help="End by serving the dashboards.")
def demo(
    tables: int,
    hours: float,
    seed: int,
    faults: str,
    folder: Path | None,
    as_json: bool,
    no_build: bool,
    open_dashboard: bool,
) -> None:
    """Simulate a casino night, settle it and build the marts, end to end, with no servers.

    A few tables of each game play for a night with dealer mistakes and device faults switched
    on; every event goes through the same processor and sink as the Kafka consumer (here over
    an in-process queue) into a fresh lake; the summary shows rounds, handle, house result,
    commission and violations by rule; then `dbt build` makes the revenue and integrity marts.
    Query with `croupier sql --lake <dir>/lake`; `--open` ends by serving the dashboards on it.

    The demo works in a folder of its own (var/demo by default: `lake/` and `marts/`), which it
    replaces on every run; it never touches the configured lake, and refuses a folder it did
    not make (exit 2).
    """
    folder = prepare_folder(folder)
    store = lakes.Lake(root=folder / "lake")
    started = time.monotonic()
    total = run_in_process(
        store, tables=tables, hours=hours, seed=seed, faults=faults, progress=not as_json
    )
    elapsed = time.monotonic() - started
    report = summary(store)
    report["messages"] = total
    report["seconds"] = round(elapsed, 1)
    report["lake"] = str(store.root)
    marts = _build(store, quiet=as_json) if not no_build else None
    report["marts"] = str(marts) if marts else None
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        _print(report, total, elapsed, store)
    if open_dashboard:
        from croupier.commands.dashboard import serve

        serve(store, folder / "marts")


MARKER = "CROUPIER_DEMO"


def prepare_folder(folder: Path | None) -> Path:
    """The demo's folder, emptied: the default `data_dir/demo`, or `folder`. Only a folder the
    demo made (it holds the MARKER file) or an empty one is emptied; anything else, and the
    configured lake, is refused with exit 2."""
    from infra.config import get_settings

    settings = get_settings()
    folder = folder if folder is not None else settings.data_dir / "demo"
    configured = settings.lake_dir.resolve()
    target = folder.resolve()
    if configured.is_relative_to(target) or target.is_relative_to(configured):
        _refuse(f"{folder} holds or is inside the configured lake ({settings.lake_dir}); the "
                "demo never writes there. Choose another --dir.")  # fmt: skip
    if folder.exists():
        if not folder.is_dir():
            _refuse(f"{folder} is not a folder")
        if any(folder.iterdir()) and not (folder / MARKER).is_file():
            _refuse(f"{folder} exists and is not a demo folder (no {MARKER} file); the demo "
                    "only replaces its own. Choose another --dir.")  # fmt: skip
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / MARKER).write_text(
        "Made by `croupier demo`, which replaces this folder on every run.\n"
    )
    return folder


def _refuse(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(2)


def _build(store: lakes.Lake, *, quiet: bool) -> Path:
    from infra.marts import BuildError, build_marts

    marts = store.root.parent / "marts"
    try:
        result = build_marts(store, marts, quiet=True)
    except BuildError as exc:
        raise click.ClickException(f"dbt build failed: {exc}") from exc
    if not quiet:
        click.echo(f"marts built with dbt in {result.seconds:.1f} s into {marts}", err=True)
    return marts


def _print(report: dict[str, Any], total: int, elapsed: float, store: lakes.Lake) -> None:
    click.echo(f"\n{total:,} events settled in {elapsed:.1f} s into {store.root}\n")
    click.echo("rounds:")
    for key, n in report["rounds"].items():
        click.echo(f"  {key:<28} {n:>8,}")
    click.echo("\nmoney (house view):")
    for game, m in report["by_game"].items():
        click.echo(
            f"  {game:<10} handle {_soles(m['handle_cents']):>16}   "
            f"house result {_soles(m['house_result_cents']):>15}   "
            f"commission {_soles(m['commission_cents']):>12}"
        )
    click.echo("\nviolations by rule:")
    for rule, n in report["violations_by_rule"].items():
        click.echo(f"  {rule:<12} {n:>6}")
    click.echo(f"\ndead letters: {report['dead_letters']}")
    if report["marts"]:
        click.echo(f"marts: {report['marts']}")
    where = shlex.quote(str(store.root))
    click.echo(f"\nthe demo's own folder: {store.root.parent} (replaced on every demo run)")
    click.echo(f"browse: ./run croupier dashboard --lake {where}")
    click.echo(f'query:  ./run croupier sql --lake {where} -c "SELECT * FROM violations LIMIT 5"')
