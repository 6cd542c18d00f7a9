"""`croupier evidence`: the hold test's expectations and the decisions' evidence, evaluated
into the lake beside the consumer, so `croupier build` only reads them (consumers/evaluation.py)."""

from __future__ import annotations

import sys
import threading
import time
from functools import partial
from pathlib import Path

import click

from croupier.commands import FiniteRange
from croupier.commands.lake import existing_lake, lake_option


@click.command()
@lake_option
@click.option(
    "--batch",
    type=click.IntRange(min=1, max=100_000),
    default=50,
    show_default=True,
    help="Rounds evaluated and committed together (a Hold'em batch of 50 takes a few "
    "seconds: a stop waits for it).",
)
@click.option(
    "--every",
    type=FiniteRange(min=0.5, max=86_400),
    default=None,
    metavar="SECONDS",
    help="Keep going: look for new rounds every SECONDS until stopped (SIGTERM/SIGINT stop "
    "after the batch in hand is committed).",
)
@click.option("--quiet", is_flag=True, help="No progress bar; only the summary line.")
def evidence(lake_path: Path | None, batch: int, every: float | None, quiet: bool) -> None:
    """Evaluate every settled round the marts' hold and hole-carding tests need, into the lake.

    Each round's house result as expected from the cards and decisions as played (the hold
    test) and each play/call/fold decision beside the legitimate and the full-information
    choice (the hole-carding test; Hold'em's exact call costs about 15 ms a decision) are
    evaluated once and committed into the lake's position_expectations and decision_evidence
    tables, with the round marked in evaluated_rounds. `croupier build` reads what is there
    and evaluates only the rounds not reached yet, so running this beside the consumer keeps
    that work off the build: the marts are the same either way.

    Each row and mark carries the version of the evaluation that wrote it. After an upgrade
    that changed the games' math (a new version), this goes over every round again, those it
    has never been over first, and builds read only rows of the new version: run
    `croupier build --full-refresh` once nothing is pending to bring every round to it.

    Safe beside consumers, builds, readers and other `croupier evidence` processes: each batch
    is one transaction; a batch that meets another's commit is run again leaving out what the
    other wrote; a process killed mid-batch loses nothing.

    Exit codes: 0 done (or stopped), 1 failed (the lake's catalog or storage), 2 bad usage.
    """
    import duckdb

    from consumers.evaluation import evaluate_pending, pending_rounds
    from consumers.schema import EVALUATION_TABLES
    from consumers.sink import LakeSink, retry_when_locked
    from infra import lake as lakes
    from infra.signals import stop_on_signals

    store = existing_lake(lake_path)
    stop = threading.Event()
    with stop_on_signals(lambda *_: stop.set()):
        try:
            sink = LakeSink(store)
        except (lakes.LakeError, duckdb.Error) as exc:
            raise click.ClickException(f"the lake: {exc}") from None
        con = sink.con
        done = dict.fromkeys(EVALUATION_TABLES, 0)
        started, reported = time.monotonic(), 0
        steps = {e: partial(evaluate_pending, con, e, rounds=batch) for e in EVALUATION_TABLES}
        try:
            while not stop.is_set():
                total = sum(
                    retry_when_locked(partial(pending_rounds, con, e)) for e in EVALUATION_TABLES
                )
                with click.progressbar(
                    length=total,
                    label="evaluating rounds",
                    file=sys.stderr,
                    hidden=quiet or every is not None or not total,
                ) as bar:
                    # the evaluations take turns, batch by batch, so neither waits on the other
                    working = list(EVALUATION_TABLES)
                    while working and not stop.is_set():
                        evaluation = working.pop(0)
                        step = sink.write(steps[evaluation], conflicts=True)
                        if step.picked:
                            working.append(evaluation)
                        done[evaluation] += step.evaluated
                        bar.update(step.picked)
                if every is None:
                    break
                if sum(done.values()) > reported:  # one line per pass that found work
                    reported = sum(done.values())
                    click.echo(f"evaluated {reported:,} rounds so far", err=True)
                stop.wait(every)
        except duckdb.Error as exc:
            raise click.ClickException(f"the lake: {exc}") from None
        finally:
            sink.close()
        click.echo(
            f"evaluated {done['expected']:,} rounds' expectations and {done['informed']:,} rounds' "
            f"decisions in {time.monotonic() - started:.1f} s into {store.where}"
        )
