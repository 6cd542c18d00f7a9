"""`croupier simulate` (a casino night of table events, faults included) and `croupier publish`.

`publish` replays a recorded file; both print one JSON summary line, progress goes to stderr.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import click

from croupier.commands import FiniteRange
from events import Game

_TABLE_KEY = re.compile(rb'"table_id":"([^"\\]{1,64})"')


def _producer(kafka: str, topic: str | None, partitions: int | None) -> Any:
    from infra.config import get_settings
    from producers.client import TableEventProducer

    settings = get_settings()
    return TableEventProducer(
        bootstrap_servers=kafka or settings.kafka_bootstrap_servers,
        topic=topic or settings.kafka_topic,
        partitions=partitions or settings.kafka_partitions,
        extra_config=settings.kafka_client_config(),
    )


def _start(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        start = datetime.fromisoformat(value)
    except ValueError:
        message = f"{value!r} is not an ISO date-time"
        raise click.BadParameter(message, param_hint="--start") from None
    if start.tzinfo is None:
        message = "give a UTC offset, e.g. 2025-01-10T23:00Z"
        raise click.BadParameter(message, param_hint="--start")
    return start


def _profiles(refs: tuple[str, ...]) -> dict[Game, str]:
    """Game -> the released profile its tables open with, each one loaded to check it."""
    from games.profiles import load_profile
    from rules.profile import ProfileError

    chosen: dict[Game, str] = {}
    for ref in refs:
        try:
            profile = load_profile(ref)
        except ProfileError as error:
            raise click.BadParameter(str(error), param_hint="--profile") from None
        if profile.game in chosen:
            message = f"two profiles for {profile.game.slug}: {chosen[profile.game]} and {ref}"
            raise click.BadParameter(message, param_hint="--profile")
        chosen[profile.game] = f"{profile.name}@{profile.version}"
    return chosen


def _tables_of_each_game(command: Callable[..., None]) -> Callable[..., None]:
    """`--<game> N` for every game of the contract (`--pai-gow`, `--tripoker`, `--holdem`)."""
    for game in reversed(Game):
        command = click.option(
            f"--{game.slug}",
            game.value,
            type=click.IntRange(0, 99),
            default=None,
            help=f"Tables of {game.slug} (overrides --tables-per-game).",
        )(command)
    return command


@click.command()
@click.option(
    "--tables-per-game",
    type=click.IntRange(0, 99),
    default=3,
    show_default=True,
    help="Tables of each game.",
)
@_tables_of_each_game
@click.option(
    "--hours",
    type=FiniteRange(min=0, min_open=True, max=24 * 365),
    default=8.0,
    show_default=True,
    help="Hours of play per table.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Random seed: the same seed gives the same events.",
)
@click.option(
    "--faults",
    "faults_text",
    default="default",
    show_default=True,
    help="Fault rates: 'default', 'none', or name:rate,... over the defaults; start "
    "with 'none,' to set only those named (none,house_way:0.01). See docs/events.md.",
)
@click.option(
    "--start",
    "start_text",
    default=None,
    help="UTC start of the night (ISO, e.g. 2025-01-10T23:00Z).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the messages as JSON lines to this file.",
)
@click.option(
    "--kafka",
    default=None,
    is_flag=False,
    flag_value="",
    help="Publish to Kafka; optional bootstrap servers (default: configuration).",
)
@click.option("--topic", default=None, help="Kafka topic (default: configuration).")
@click.option(
    "--partitions",
    type=click.IntRange(1, 1000),
    default=None,
    help="Partitions if the topic must be created (default: configuration).",
)
@click.option(
    "--truth",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the injected faults (fault, rule_id, table, round, "
    "seq, event_id) as JSON lines to this file; with --players also the players seated and "
    'their hidden-card decisions (lines with a "kind").',
)
@click.option(
    "--profile",
    "profile_refs",
    multiple=True,
    metavar="NAME[@VERSION]",
    help="Released rule profile a game's tables open with (the game is the profile's), e.g. "
    "tripoker/standard or tripoker/pe-2005@1; repeat for several games. Default: each game's "
    "Peruvian profile, latest version.",
)
@click.option(
    "--players",
    "players_text",
    default=None,
    metavar="NAME[@P]:SHARE,...",
    help="Player archetypes: each new player seated is NAME with probability SHARE, the rest "
    "typical (today's players): basic, exposed-optimal, hole-carder[@P] (sees the dealer's "
    "hidden cards with probability P a round, default 1), flash-partner, typical; e.g. "
    "hole-carder:0.02,basic:0.3. Players and hidden-card decisions go to --truth.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def simulate(
    tables_per_game: int,
    hours: float,
    seed: int,
    faults_text: str,
    start_text: str | None,
    out: Path | None,
    kafka: str | None,
    topic: str | None,
    partitions: int | None,
    truth: Path | None,
    profile_refs: tuple[str, ...],
    players_text: str | None,
    quiet: bool,
    **tables: int | None,
) -> None:
    """Simulate a casino night: tables of each game playing by the regulations, with faults.

    Events follow every procedure article (deck control, shuffle and cut, the Pai Gow 7x7 deal
    and dice, the Tripóker exposed card, the Hold'em alternating decks and progressive meter,
    payouts, table accounting), with dealer and device faults injected at the given rates and
    logged to --truth. Output: --out FILE (JSON lines) or --kafka. Messages are written as a
    device would send them, faults included (no validation). Prints a JSON summary.
    """
    from producers.simulator import DEFAULT_START, parse_faults, parse_players
    from producers.simulator import simulate as run

    if (out is None) == (kafka is None):
        raise click.UsageError("give exactly one of --out FILE or --kafka [BOOTSTRAP]")
    try:
        rates = parse_faults(faults_text)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--faults") from None
    try:
        players = None if players_text is None else parse_players(players_text)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--players") from None
    counts: dict[Game, int] = {}
    for game in Game:
        chosen = tables[game.value]
        counts[game] = tables_per_game if chosen is None else chosen
    if not any(counts.values()):
        raise click.UsageError("no tables to simulate")
    profiles = _profiles(profile_refs)
    from infra.config import get_settings

    with ExitStack() as stack:
        truth_file = stack.enter_context(truth.open("w", encoding="utf-8")) if truth else None
        injected = 0

        def on_fault(record: Any) -> None:
            nonlocal injected
            injected += 1
            if truth_file is not None:
                truth_file.write(record.to_json() + "\n")

        seated = hidden = 0

        def on_player(record: Any) -> None:
            nonlocal seated, hidden
            seated += record.kind == "player"
            hidden += record.kind == "hidden_knowledge"
            if truth_file is not None:
                truth_file.write(record.to_json() + "\n")

        simulation = run(
            tables=counts,
            hours=hours,
            seed=seed,
            faults=rates,
            casino_id=get_settings().casino_id,
            start=_start(start_text) or DEFAULT_START,
            on_fault=on_fault,
            profiles=profiles,
            players=players,
            on_player=on_player if players is not None else None,
        )
        began = time.perf_counter()
        if out is not None:
            sink: IO[bytes] = stack.enter_context(out.open("wb"))
            count = _drive(simulation, lambda key, value: sink.write(value + b"\n"), quiet)
        else:
            try:
                producer = stack.enter_context(_producer(kafka or "", topic, partitions))
            except Exception as error:  # the Kafka client's errors are many; all are fatal here
                raise click.ClickException(f"Kafka: {error}") from None
            count = _drive(simulation, producer.send_unchecked, quiet)
    seconds = time.perf_counter() - began
    summary: dict[str, Any] = {
        "messages": count,
        "tables": sum(counts.values()),
        "hours": hours,
        "seed": seed,
        "faults": injected,
        "seconds": round(seconds, 3),
        "messages_per_second": round(count / seconds) if seconds else None,
        "out": str(out) if out else None,
        "truth": str(truth) if truth else None,
    }
    if players is not None:
        summary["players"] = players.to_json()
        summary["players_seated"] = seated
        summary["hidden_card_decisions"] = hidden
    click.echo(json.dumps(summary))


def _drive(simulation: Any, send: Any, quiet: bool) -> int:
    count = 0
    if quiet:
        for key, value in simulation:
            send(key, value)
            count += 1
        return count
    steps = 1000
    with click.progressbar(length=steps, label="simulating", file=sys.stderr) as bar:
        done = 0
        for key, value in simulation:
            send(key, value)
            count += 1
            if count % 20_000 == 0:
                now = int(simulation.progress * steps)
                bar.update(now - done)
                done = now
        bar.update(steps - done)
    return count


def _lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as source:
        for line in source:
            line = line.rstrip(b"\r\n")
            if line:
                yield line


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--kafka", default="", help="Bootstrap servers (default: configuration).")
@click.option("--topic", default=None, help="Kafka topic (default: configuration).")
@click.option(
    "--partitions",
    type=click.IntRange(1, 1000),
    default=None,
    help="Partitions if the topic must be created (default: configuration).",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def publish(file: Path, kafka: str, topic: str | None, partitions: int | None, quiet: bool) -> None:
    """Replay a JSON-lines file of recorded messages into Kafka, byte for byte.

    Each line is sent as it is (invalid ones too, so a recorded fault replays as a fault), keyed
    by its table_id so each table's messages stay in order on one partition. Prints a JSON
    summary; exits 1 if any message is not delivered.
    """
    began = time.perf_counter()
    count = 0
    try:
        with _producer(kafka, topic, partitions) as producer:
            size = file.stat().st_size
            with click.progressbar(
                length=size, label="publishing", file=sys.stderr, hidden=quiet
            ) as bar:
                for line in _lines(file):
                    match = _TABLE_KEY.search(line)
                    producer.send_unchecked(match.group(1).decode() if match else None, line)
                    count += 1
                    bar.update(len(line) + 1)
    except click.ClickException:
        raise
    except Exception as error:  # delivery or broker failure: a runtime error, exit 1
        raise click.ClickException(f"Kafka: {error}") from None
    seconds = time.perf_counter() - began
    click.echo(
        json.dumps(
            {
                "published": count,
                "file": str(file),
                "seconds": round(seconds, 3),
                "messages_per_second": round(count / seconds) if seconds else None,
            }
        )
    )
