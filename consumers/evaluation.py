"""Evaluating recorded rounds with the games' own math (issue 18): the hold test's
expectations and the decisions' evidence, whose tables and models consumers/evidence.py
describes. This is the part that needs the rules engine (`games.registry`), so the dbt models
import it only when a round is left to evaluate.

- 'expected': every player position's house result as expected over the cards its
  players could not see, given the cards and decisions as played, under the round's own rule
  profile version (`GameSpec.expected`), with its variance and the variance of the round's
  total (positions of a round share the dealer's cards).
- 'informed': every play/call/fold decision beside the legitimate-optimal and the
  full-information choice, the EV won beyond legitimate play, and the null probability that a
  player who cannot see the dealer's hidden cards takes the full-information choice
  (`GameSpec.informed`).

Rounds are rebuilt from the events the lake stored up to each round's end, as the consumer
settled them (consumers/stored_rounds.py, as the what-if does); only settled rounds have
positions, so only they are evaluated. A round the game cannot evaluate (bad data the consumer
already reported) gives one row with `note` saying why and no numbers: its positions are left
out of the tests, counted, never guessed.

`croupier evidence` (`evaluate_pending`) does this beside the consumer, once per round, into
the lake's `position_expectations` and `decision_evidence`, and marks each round it has been
over in `evaluated_rounds`: a round of a game without the evaluation is marked with no rows,
so the models see at once that nothing is left to evaluate.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa

from consumers.schema import (
    ARROW_SCHEMAS,
    EVALUATED_ROUNDS,
    EVALUATION_TABLES,
    EVALUATION_VERSION,
    current_evaluation,
)
from consumers.stored_rounds import stored_rounds
from events.models import Game
from games.base import Informed, RoundEvents, RoundExpectation
from games.profiles import load_profile
from games.registry import GAMES
from rules.cards import CardError
from rules.profile import Profile
from rules.settlement import RoundError

# What evaluating one recorded round may raise on bad data; anything else is a bug and escapes.
_BAD_ROUND = (RoundError, CardError, ValueError, KeyError, IndexError, LookupError)


def games_with(evaluation: str) -> list[str]:
    """The games (their `Game` values) whose `GameSpec` has `evaluation` ('expected' or
    'informed'): only their rounds are evaluated."""
    return [game.value for game, spec in GAMES.items() if getattr(spec, evaluation) is not None]


def _games_sql(evaluation: str) -> str:
    return ", ".join(f"'{game}'" for game in games_with(evaluation)) or "NULL"


def evaluate_rounds(session: Any, round_ids: str, evaluation: str) -> pa.Table:
    """`evaluation_table` of the lake rounds whose ids `round_ids` (a SELECT) gives, in games
    with `evaluation` (the dbt models' part, on the build's session)."""
    return evaluation_table(
        session,
        f"SELECT r.* FROM lake.main.rounds r WHERE r.round_id IN ({round_ids}) "
        f"AND r.game IN ({_games_sql(evaluation)})",
        evaluation,
    )


class Step(NamedTuple):
    """One `evaluate_pending` step: rounds it went over; of those the ones it marked (the
    others another worker committed first); and of these the ones it evaluated (in games with
    the evaluation)."""

    picked: int
    marked: int
    evaluated: int


def evaluate_pending(con: Any, evaluation: str, *, rounds: int) -> Step:
    """One step of `croupier evidence` on a read-write connection to the lake (its catalog in
    use): up to `rounds` rounds with player positions that it has not been over yet at
    EVALUATION_VERSION (those it has never been over first, each part oldest first), those in
    games with `evaluation` evaluated (`evaluation_table`), committed with the
    `evaluated_rounds` marks of all in one transaction (`Step`; picked 0: none pending). Idempotent,
    so a caller may run it again after a commit conflict: rows of rounds another worker
    committed meanwhile are left out. A round gone over at another version keeps those rows
    and marks (builds read only this version's)."""
    ids = con.execute(
        f"SELECT round_id, any_value(game) AS game {_pending(evaluation)} GROUP BY round_id "
        f"ORDER BY round_id IN (SELECT round_id FROM {EVALUATED_ROUNDS} WHERE evaluation = ?), "
        "min(ended_at), round_id LIMIT ?",
        [evaluation, rounds],
    ).to_arrow_table()
    if not ids.num_rows:
        return Step(0, 0, 0)
    con.register("evidence_picked", ids)
    games = f"game IN ({_games_sql(evaluation)})"
    try:
        found = evaluation_table(
            con,
            f"SELECT r.* FROM rounds r JOIN evidence_picked USING (round_id) WHERE r.{games}",
            evaluation,
            lake="",
        )
        con.register("evidence_rows", found)
        fresh = (
            f"round_id NOT IN (SELECT round_id FROM {EVALUATED_ROUNDS} WHERE evaluation = ? "
            f"AND {current_evaluation()})"
        )
        table = EVALUATION_TABLES[evaluation]
        columns = ", ".join(ARROW_SCHEMAS[table].names)
        con.execute("BEGIN TRANSACTION")
        try:
            # Two inserts into one DuckLake table never conflict; altering the table too makes
            # two workers' commits conflict, so the one run again leaves out what the other did.
            con.execute(
                f"COMMENT ON TABLE {EVALUATED_ROUNDS} IS 'rounds croupier evidence evaluated'"
            )
            con.execute(
                f"INSERT INTO {table} ({columns}) SELECT {columns} FROM evidence_rows "
                f"WHERE {fresh}",
                [evaluation],
            )
            evaluated = con.execute(
                f"SELECT count(*) FROM evidence_picked WHERE {games} AND {fresh}", [evaluation]
            ).fetchone()
            marked = con.execute(
                f"INSERT INTO {EVALUATED_ROUNDS} "
                "(evaluation, round_id, evaluated_at, evaluation_version) "
                f"SELECT ?, round_id, now(), {EVALUATION_VERSION} FROM evidence_picked "
                f"WHERE {fresh}",
                [evaluation, evaluation],
            ).fetchone()
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a failed commit has ended it already
                con.execute("ROLLBACK")
            raise
    finally:
        for name in ("evidence_picked", "evidence_rows"):
            with contextlib.suppress(Exception):
                con.unregister(name)
    return Step(
        int(ids.num_rows), int(marked[0]) if marked else 0, int(evaluated[0]) if evaluated else 0
    )


def pending_rounds(con: Any, evaluation: str) -> int:
    """Rounds `evaluate_pending` has still to go over."""
    (count,) = con.execute(f"SELECT count(DISTINCT round_id) {_pending(evaluation)}").fetchone()
    return int(count)


def _pending(evaluation: str) -> str:
    """FROM and WHERE of the lake rounds with player positions not gone over for `evaluation`
    at EVALUATION_VERSION yet (as the dbt models pick them: fct_positions holds settled lines),
    in any game: one without the evaluation is marked with no rows."""
    if evaluation not in EVALUATION_TABLES:
        raise ValueError(f"no evaluation {evaluation!r}")
    return f"""
        FROM rounds
        WHERE round_id IN (SELECT round_id FROM settlements WHERE bettor = 'player')
          AND round_id NOT IN (
              SELECT round_id FROM {EVALUATED_ROUNDS}
              WHERE evaluation = '{evaluation}' AND {current_evaluation()})"""


@cache
def _profile(name: str, version: int) -> Profile:
    return load_profile(f"{name}@{version}")


def _evaluated(
    con: Any, picked: str, lake: str, evaluate: Callable[[Game], Any]
) -> Iterator[tuple[dict[str, Any], Any, str | None]]:
    """Each picked round with `evaluate(game)(kinds, profile, meter)`'s answer, or why none."""
    for meta, events in stored_rounds(con, picked, lake=lake):
        if meta["unreadable"]:
            yield meta, None, f"not evaluated: {meta['unreadable']}"[:500]
            continue
        try:
            game = Game(meta["game"])
            function = evaluate(game)
            if function is None:
                yield meta, None, f"{game.slug} has no such evaluation"
                continue
            profile = _profile(meta["profile"], int(meta["profile_version"]))
            answer = function(RoundEvents(events), profile, meta["meter_cents"])
        except _BAD_ROUND as error:
            yield meta, None, f"not evaluated: {error}"[:500]
        else:
            yield meta, answer, None


def _expectation_rows(answer: RoundExpectation, meta: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One row per position the game valued; a position whose every wager was returned (not in
    action: a play or call without its ante) is 0 whatever the cards, exactly, which the game,
    valuing the seats that play, does not list."""
    rows = {
        seat: (seen.mean_cents, seen.variance, seen.samples) for seat, seen in answer.seats.items()
    }
    for seat in meta["returned_seats"]:
        rows.setdefault(seat, (0.0, 0.0, None))
    for seat, (mean, variance, samples) in sorted(rows.items()):
        yield {
            "seat": seat,
            "expected_house_cents": mean,
            "expected_variance": variance,
            "samples": samples,
            "round_variance": answer.total_variance,
        }


def _evidence_rows(answer: dict[int, Informed], meta: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for seat, one in sorted(answer.items()):
        yield {
            "seat": seat,
            "played": one.played.value,
            "legitimate": one.legitimate.value,
            "full_information": one.full_information.value,
            "informative": one.informative,
            "gain_cents": one.gain_cents,
            "match_probability": one.match_probability,
        }


# evaluation -> its table's schema and rows of one round's answer
_TABLES: dict[str, tuple[pa.Schema, Callable[[Any, dict[str, Any]], Iterator[dict[str, Any]]]]] = {
    "expected": (ARROW_SCHEMAS[EVALUATION_TABLES["expected"]], _expectation_rows),
    "informed": (ARROW_SCHEMAS[EVALUATION_TABLES["informed"]], _evidence_rows),
}


def evaluation_table(
    con: Any, picked: str, evaluation: str, *, lake: str = "lake.main."
) -> pa.Table:
    """The rows of `evaluation` ('expected': the lake's `position_expectations`, 'informed':
    its `decision_evidence`) for the rounds `picked` (a SELECT of lake `rounds` rows): one per seat
    evaluated, or one with the `note` of a round the game could not evaluate; each of
    EVALUATION_VERSION."""
    schema, rows_of = _TABLES[evaluation]
    rows: dict[str, list[Any]] = {name: [] for name in schema.names}
    for meta, answer, note in _evaluated(
        con, picked, lake, lambda game: getattr(GAMES[game], evaluation)
    ):
        found: list[dict[str, Any]] = (
            [{"note": note}] if answer is None else list(rows_of(answer, meta))
        )
        for values in found:
            values.update(round_id=meta["round_id"], evaluation_version=EVALUATION_VERSION)
            for name in schema.names:
                rows[name].append(values.get(name))
    return pa.table(rows, schema=schema)
