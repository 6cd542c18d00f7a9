"""The hold test's expectations and the decisions' evidence (issue 18), from the lake's events.

Two tables (`evaluation_table`), each built by a dbt Python model (dbt_project/models/
intermediate/int_position_expectations.py, int_decision_evidence.py) over the rounds of the
positions it has not seen yet (incremental), and the hole-carding test's numbers per player
(`decision_tests`, the model agg_player_decisions). Evaluating is the build's slow part
(Hold'em's exact call, ~15 ms a decision), so `croupier evidence` (`evaluate_pending`) does it
beside the consumer, once per round, into the lake's `position_expectations` and
`decision_evidence` (marked in `evaluated_rounds`); the models read those rows and evaluate
only the rounds it has not reached, with the same function, so the marts are the same either
way. A round is evaluated once, on the lake as first seen (as the models' append always did);
a full refresh trusts no stored row and evaluates every round from the events again.

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
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, NamedTuple

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from consumers.increments import source_version
from consumers.schema import ARROW_SCHEMAS
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

# The lake tables `croupier evidence` fills (consumers/schema.py), one per evaluation, and the
# rounds each has evaluated (a round may give no rows: a Hold'em round without the dealer's cards).
TABLE_OF = {"expected": "position_expectations", "informed": "decision_evidence"}
EVALUATED = "evaluated_rounds"
EXPECTATION_SCHEMA = ARROW_SCHEMAS[TABLE_OF["expected"]]
EVIDENCE_SCHEMA = ARROW_SCHEMAS[TABLE_OF["informed"]]


def _games_with(evaluation: str) -> list[str]:
    """The games (their `Game` values) whose `GameSpec` has `evaluation` ('expected' or
    'informed'): the dbt models pick only their rounds."""
    return [game.value for game, spec in GAMES.items() if getattr(spec, evaluation) is not None]


def model(dbt: Any, session: Any, positions: Any, evaluation: str, mark: int) -> Any:
    """The dbt Python model of `evaluation` ('expected': int_position_expectations, 'informed':
    int_decision_evidence) over `positions` (fct_positions), incremental: the rounds of
    positions newer than the model's `lake_row_id` watermark (`mark`), each row carrying its
    round's watermark. In an incremental build, rounds `croupier evidence` has evaluated are
    read from the lake and the others evaluated here, by the same function; a full refresh
    evaluates every round from the events again, trusting no stored row. (dbt reads a Python
    model's `ref`/`source` calls from its own file, so the models make them and hand over the
    relation.)"""
    picked = _new_rounds(positions, mark, evaluation)
    schema = _TABLES[evaluation][0]
    table = TABLE_OF[evaluation]
    stored = pa.table({name: [] for name in schema.names}, schema=schema)
    if dbt.is_incremental and _lake_has(session, table, EVALUATED):
        stored = (
            session.sql(
                f"SELECT {', '.join(schema.names)} FROM lake.main.{table} "
                "JOIN evidence_new_rounds USING (round_id)"
            )
            .to_arrow_table()
            .cast(schema)
        )
        picked += (
            f" WHERE r.round_id NOT IN (SELECT round_id FROM lake.main.{EVALUATED} "
            f"WHERE evaluation = '{evaluation}')"
        )
    rows = pa.concat_tables([stored, evaluation_table(session, picked, evaluation)])
    return session.from_arrow(rows).join(session.view("evidence_new_rounds"), "round_id")


def _lake_has(session: Any, *tables: str) -> bool:
    """Whether the lake the build reads has these tables (a lake made before they existed and
    never written since has not)."""
    names = ", ".join(f"'{t}'" for t in tables)
    (found,) = session.sql(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'lake' "
        f"AND schema_name = 'main' AND table_name IN ({names})"
    ).fetchone()
    return bool(found == len(tables))


def _new_rounds(positions: Any, mark: int, evaluation: str) -> str:
    """The SELECT of lake rounds (as `stored_rounds` takes) whose player positions are newer
    than `mark` (the model's watermark of fct_positions' `lake_row_id`) in games with
    `evaluation`; registers the view `evidence_new_rounds` (round_id, lake_row_id) the models
    join back for their watermark."""
    games = _games_sql(evaluation)
    positions.filter(
        f"lake_row_id > {int(mark)} AND bettor = 'player' AND game IN ({games})"
    ).aggregate("round_id, max(lake_row_id) AS lake_row_id", "round_id").create_view(
        "evidence_new_rounds", replace=True
    )
    return "SELECT r.* FROM lake.main.rounds r JOIN evidence_new_rounds n USING (round_id)"


def _games_sql(evaluation: str) -> str:
    return ", ".join(f"'{game}'" for game in _games_with(evaluation)) or "NULL"


class Step(NamedTuple):
    """One `evaluate_pending` step: rounds it evaluated, and of those the ones it marked (the
    others another worker committed first)."""

    picked: int
    marked: int


def evaluate_pending(con: Any, evaluation: str, *, rounds: int) -> Step:
    """One step of `croupier evidence` on a read-write connection to the lake (its catalog in
    use): up to `rounds` rounds with player positions in games with `evaluation` that it has not
    evaluated yet, oldest first, evaluated (`evaluation_table`) and committed with their
    `evaluated_rounds` marks in one transaction (`Step`; picked 0: none pending). Idempotent,
    so a caller may run it again after a commit conflict: rows of rounds another worker
    committed meanwhile are left out."""
    ids = con.execute(
        f"SELECT round_id {_pending(evaluation)} GROUP BY round_id "
        "ORDER BY min(ended_at), round_id LIMIT ?",
        [rounds],
    ).to_arrow_table()
    if not ids.num_rows:
        return Step(0, 0)
    con.register("evidence_picked", ids)
    try:
        found = evaluation_table(
            con, "SELECT r.* FROM rounds r JOIN evidence_picked USING (round_id)", evaluation,
            lake="",
        )  # fmt: skip
        con.register("evidence_rows", found)
        fresh = f"round_id NOT IN (SELECT round_id FROM {EVALUATED} WHERE evaluation = ?)"
        con.execute("BEGIN TRANSACTION")
        try:
            # Two inserts into one DuckLake table never conflict; altering the table too makes
            # two workers' commits conflict, so the one run again leaves out what the other did.
            con.execute(f"COMMENT ON TABLE {EVALUATED} IS 'rounds croupier evidence evaluated'")
            con.execute(
                f"INSERT INTO {TABLE_OF[evaluation]} SELECT * FROM evidence_rows WHERE {fresh}",
                [evaluation],
            )
            marked = con.execute(
                f"INSERT INTO {EVALUATED} SELECT ?, round_id, now() FROM evidence_picked "
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
    return Step(int(ids.num_rows), int(marked[0]) if marked else 0)


def pending_rounds(con: Any, evaluation: str) -> int:
    """Rounds `evaluate_pending` has still to evaluate."""
    (count,) = con.execute(f"SELECT count(DISTINCT round_id) {_pending(evaluation)}").fetchone()
    return int(count)


def _pending(evaluation: str) -> str:
    """FROM and WHERE of the lake rounds with player positions in games with `evaluation` not
    evaluated yet (as the dbt models pick them: fct_positions holds settled lines)."""
    if evaluation not in TABLE_OF:
        raise ValueError(f"no evaluation {evaluation!r}")
    return f"""
        FROM rounds
        WHERE game IN ({_games_sql(evaluation)})
          AND round_id IN (SELECT round_id FROM settlements WHERE bettor = 'player')
          AND round_id NOT IN (
              SELECT round_id FROM {EVALUATED} WHERE evaluation = '{evaluation}')"""


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


def _expectation_rows(answer: RoundExpectation) -> Iterator[dict[str, Any]]:
    for seat, seen in sorted(answer.seats.items()):
        yield {
            "seat": seat,
            "expected_house_cents": seen.mean_cents,
            "expected_variance": seen.variance,
            "samples": seen.samples,
            "round_variance": answer.total_variance,
        }


def _evidence_rows(answer: dict[int, Informed]) -> Iterator[dict[str, Any]]:
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
_TABLES: dict[str, tuple[pa.Schema, Callable[[Any], Iterator[dict[str, Any]]]]] = {
    "expected": (EXPECTATION_SCHEMA, _expectation_rows),
    "informed": (EVIDENCE_SCHEMA, _evidence_rows),
}


def evaluation_table(
    con: Any, picked: str, evaluation: str, *, lake: str = "lake.main."
) -> pa.Table:
    """The rows of `evaluation` ('expected': `EXPECTATION_SCHEMA`, 'informed':
    `EVIDENCE_SCHEMA`) for the rounds `picked` (a SELECT of lake `rounds` rows): one per seat
    evaluated, or one with the `note` of a round the game could not evaluate."""
    schema, rows_of = _TABLES[evaluation]
    rows: dict[str, list[Any]] = {name: [] for name in schema.names}
    for meta, answer, note in _evaluated(
        con, picked, lake, lambda game: getattr(GAMES[game], evaluation)
    ):
        found = [{"note": note}] if answer is None else list(rows_of(answer))
        for values in found:
            values["round_id"] = meta["round_id"]
            for name in schema.names:
                rows[name].append(values.get(name))
    return pa.table(rows, schema=schema)


class PoissonBinomial:
    """The number of successes of independent trials, each with its own success probability
    (a Poisson-binomial law), exactly: its distribution built one trial at a time (`add`).
    The hole-carding test's null: a player who cannot see the dealer's hidden cards matches
    the full-information choice on each decision with that decision's known probability,
    however they decide."""

    def __init__(self) -> None:
        self.distribution = np.ones(1)

    def add(self, p: float) -> None:
        grown = np.zeros(len(self.distribution) + 1)
        grown[:-1] = self.distribution * (1 - p)
        grown[1:] += self.distribution * p
        self.distribution = grown

    def sf(self, k: int) -> float:
        """P(K >= k)."""
        return 1.0 if k <= 0 else float(min(1.0, self.distribution[k:].sum()))


def poisson_binomial_sf(probabilities: npt.ArrayLike, k: int) -> float:
    """P(K >= k) for K the successes of trials with these probabilities (`PoissonBinomial`).
    The law is the product of the trials' polynomials (1 - p) + p x, multiplied here pairwise
    in a balanced tree: the same sums of products as adding the trials one at a time, in a few
    hundred numpy calls instead of one per trial (4x faster on a player's lifetime of
    decisions, where the sum is quadratic)."""
    q = np.asarray(probabilities, dtype=float)
    if k <= 0:
        return 1.0
    if k > len(q):
        return 0.0
    level = np.stack([1 - q, q], axis=1)  # one polynomial per row, lowest power first
    while len(level) > 1:
        if len(level) % 2:  # times the polynomial 1
            level = np.vstack([level, np.eye(1, level.shape[1])])
        left, right, width = level[0::2], level[1::2], level.shape[1]
        if width <= 64:  # short: every pair at once, one coefficient of `left` at a time
            level = np.zeros((len(left), 2 * width - 1))
            for j in range(width):
                level[:, j : j + width] += left[:, j : j + 1] * right
        else:
            level = np.array([np.convolve(a, b) for a, b in zip(left, right, strict=True)])
    return float(min(1.0, level[0, k:].sum()))


# agg_player_decisions' columns, in order
_DECISION_TEST_COLUMNS = [
    "subject_key", "subject_type", "player_ref", "dealer_id", "game", "decisions",
    "informative_decisions", "informative_taken", "legitimate_agreements", "gain_cents",
    "first_day", "last_day", "lake_row_id", "code_version", "tested_decisions", "matches",
    "expected_matches", "match_sd", "p_value",
]  # fmt: skip


def decision_tests(session: Any, decisions: Any, *, since: int = -1) -> Any:
    """The dbt Python model agg_player_decisions over `decisions` (fct_decisions): for
    each player (and game), and each dealer x player pair, the hole-carding test over their
    decisions, with the evidence a surveillance officer reads (informative decisions, how often
    the full-information choice was taken there, the EV won beyond legitimate play, agreement
    with the legitimate strategy). The statistic is the count of decisions that matched the
    full-information choice, over decisions whose null probability is strictly between 0 and
    1; its p-value is the exact Poisson-binomial upper tail (`poisson_binomial_sf`).

    Only the players (and games) with a decision whose `lake_row_id` is above `since` are
    tested, over all their decisions: their rows replace the old ones by `subject_key`, and
    each row's `lake_row_id` (its newest decision's) is the model's watermark. Each row keeps
    the version of this module that computed it (`code_version`): the model tests every player
    again when this code changed."""
    decisions.create_view("decision_tests_decisions", replace=True)
    # typed by the query even when no player has a decision (an empty Pai Gow-only lake)
    grouped = session.sql(
        f"""
        SELECT
            to_json([subject_type, game, dealer_id, player_ref])::VARCHAR AS subject_key,
            subject_type, player_ref, dealer_id, game, decisions, informative_decisions,
            informative_taken, legitimate_agreements, gain_cents, first_day, last_day,
            lake_row_id, '{source_version(__name__)}' AS code_version, null_p, matches
        FROM (SELECT
            CASE WHEN grouping(dealer_id) = 0 THEN 'dealer_player' ELSE 'player' END
                AS subject_type,
            player_ref, dealer_id, game,
            count(*) AS decisions,
            count(*) FILTER (WHERE informative) AS informative_decisions,
            count(*) FILTER (WHERE informative AND took_full_information)
                AS informative_taken,
            count(*) FILTER (WHERE played = legitimate) AS legitimate_agreements,
            sum(gain_cents) AS gain_cents,
            min(gaming_date) AS first_day,
            max(gaming_date) AS last_day,
            max(lake_row_id) AS lake_row_id,
            list(match_probability ORDER BY round_id)
                FILTER (WHERE match_probability > 0 AND match_probability < 1) AS null_p,
            count(*) FILTER (WHERE match_probability > 0 AND match_probability < 1
                             AND took_full_information) AS matches
        FROM decision_tests_decisions
        JOIN (SELECT DISTINCT player_ref, game FROM decision_tests_decisions
              WHERE player_ref IS NOT NULL AND lake_row_id > {int(since)}) USING (player_ref, game)
        GROUP BY GROUPING SETS ((player_ref, game), (player_ref, dealer_id, game)))
        """
    ).to_arrow_table()
    tested, expected, sd, p_value = [], [], [], []
    for null_p, matches in zip(
        grouped.column("null_p").to_pylist(), grouped.column("matches").to_pylist(), strict=True
    ):
        q = np.asarray(null_p or [], dtype=float)
        tested.append(len(q))
        expected.append(float(q.sum()))
        sd.append(float(np.sqrt((q * (1 - q)).sum())))
        p_value.append(poisson_binomial_sf(q, matches) if len(q) else None)
    table = grouped.drop_columns(["null_p"])
    for name, values, kind in (
        ("tested_decisions", tested, pa.int64()),
        ("expected_matches", expected, pa.float64()),
        ("match_sd", sd, pa.float64()),
        ("p_value", p_value, pa.float64()),
    ):
        table = table.append_column(name, pa.array(values, type=kind))
    return session.from_arrow(table.select(_DECISION_TEST_COLUMNS))
