"""The hold test's expectations and the decisions' evidence (issue 18) in the marts, and the
hole-carding test over them.

Two tables, each built by a dbt Python model (dbt_project/models/intermediate/
int_position_expectations.py, int_decision_evidence.py, `model` here) over the rounds of the
positions it has not seen yet (incremental), and the hole-carding test's numbers per player
(`decision_tests`, the model agg_player_decisions). Evaluating a round is the build's slow part
(Hold'em's exact call, ~15 ms a decision; consumers/evaluation.py), so `croupier evidence`
does it beside the consumer, once per round, into the lake's `position_expectations` and
`decision_evidence` (marked in `evaluated_rounds`); the models read those rows and evaluate
only the rounds it has not been over, with the same function, so the marts are the same either
way, and a full refresh reads them too (a full build of 102,663 rounds took 343 s evaluating
them, 30 s reading them).
A round is evaluated once per EVALUATION_VERSION (consumers/schema.py), on the lake as first
seen (as the models' append always did): the models read only the stored rows and marks of the
current version, and the worker goes over a round marked at another version again. After a
fix to the games' math (the version raised), a full refresh once the worker has caught up
brings every round's rows to the new version. A build with `--re-evaluate` (a full refresh, to
repair a stored row) trusts no stored row and evaluates every round from the events again.

This module does not import the rules engine: a build whose rounds the worker has all been over
never loads it (about a second of every incremental build).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from consumers.increments import source_version
from consumers.schema import (
    EVALUATED_ROUNDS,
    EVALUATION_TABLES,
    TABLES,
    current_evaluation,
)
from infra.marts import BUILT_SNAPSHOT, LAKE_SNAPSHOT, RE_EVALUATE


def model(dbt: Any, session: Any, positions: Any, evaluation: str, mark: int) -> Any:
    """The dbt Python model of `evaluation` ('expected': int_position_expectations, 'informed':
    int_decision_evidence) over `positions` (fct_positions), incremental: the rounds of
    positions newer than the model's `lake_row_id` watermark (`mark`), each row carrying its
    round's watermark. The rows of rounds `croupier evidence` has been over are read from the
    lake and the other rounds evaluated here, by the same function; a build that re-evaluates
    (`croupier build --full-refresh --re-evaluate`) evaluates every round from the events
    again, trusting no stored row. (dbt
    reads a Python model's `ref`/`source` calls from its own file, so the models make them and
    hand over the relation.)"""
    _new_rounds(positions, mark)
    table = EVALUATION_TABLES[evaluation]
    columns = [c for c in TABLES[table] if c.name != "evaluation_version"]  # all the current one
    # relations, not Arrow tables, until a round is evaluated: building an Arrow table imports
    # pandas (~0.6 s)
    rows = session.sql(
        "SELECT " + ", ".join(f"NULL::{c.sql} AS {c.name}" for c in columns) + " LIMIT 0"
    )
    left = "SELECT round_id FROM evidence_new_rounds"
    if os.environ.get(RE_EVALUATE) != "1" and _lake_has(session, table, EVALUATED_ROUNDS):
        names = ", ".join(c.name for c in columns)
        rows = rows.union(
            session.sql(
                f"SELECT {names} FROM {_stored(table, mark)} "
                f"JOIN evidence_new_rounds USING (round_id) WHERE {_current(session, table)}"
            )
        )
        left += (
            f" WHERE round_id NOT IN (SELECT round_id FROM {_stored(EVALUATED_ROUNDS, mark)} "
            f"WHERE evaluation = '{evaluation}' AND {_current(session, EVALUATED_ROUNDS)})"
        )
    if session.sql(f"SELECT count(*) FROM ({left})").fetchone()[0]:
        from consumers.evaluation import evaluate_rounds  # the rules engine, only when needed

        found = evaluate_rounds(session, left, evaluation).select([c.name for c in columns])
        # one Arrow table: a join pushes a filter DuckDB cannot push into an Arrow scan under a
        # union ("Pushdown Filter Type BLOOM_FILTER is not currently supported")
        rows = session.from_arrow(
            pa.concat_tables([rows.to_arrow_table().cast(found.schema), found])
        )
    return rows.join(session.view("evidence_new_rounds"), "round_id")


def _stored(table: str, mark: int) -> str:
    """The rows of `croupier evidence`'s lake `table` a build with watermark `mark` may need:
    in an incremental build on a lake that only grew since the last whole build
    (CROUPIER_LAKE_BUILT_SNAPSHOT, infra/marts.py), those inserted since, read through the
    change feed (their files alone, not all rows: 0.1 s less per table at a million rounds);
    else all of them. A round settled since that build is evaluated after its settlement, so
    its rows are among those inserted since; a round whose rows are older is evaluated here
    again by the same function (slower, the same rows). The dbt macro `lake_rows`
    (dbt_project/macros/incremental.sql) reads the SQL models' lake rows the same way: change
    the two together."""
    since, until = os.environ.get(BUILT_SNAPSHOT, ""), os.environ.get(LAKE_SNAPSHOT, "")
    if mark < 0 or not since or not until or int(since) >= int(until):
        return f"lake.main.{table}"
    return f"ducklake_table_insertions('lake', 'main', '{table}', {int(since) + 1}, {int(until)})"


def _current(session: Any, table: str) -> str:
    """SQL true for a row of the lake's `table` written at EVALUATION_VERSION (in a lake no
    writer has opened since versions were kept, every row is version 1)."""
    column = "evaluation_version"
    return current_evaluation(
        column if column in session.table(f"lake.main.{table}").columns else "NULL"
    )


def _lake_has(session: Any, *tables: str) -> bool:
    """Whether the lake the build reads has these tables (a lake made before they existed and
    never written since has not)."""
    for table in tables:
        try:  # binding one is cheaper than listing every catalog's tables (~130 ms)
            session.table(f"lake.main.{table}")
        except duckdb.CatalogException:
            return False
    return True


def _new_rounds(positions: Any, mark: int) -> None:
    """Register the view `evidence_new_rounds` (round_id, lake_row_id): the rounds with player
    positions newer than `mark` (the model's watermark of fct_positions' `lake_row_id`), which
    the models join back for their watermark. Any game: only the rounds of games with the
    evaluation have rows."""
    positions.filter(f"lake_row_id > {int(mark)} AND bettor = 'player'").aggregate(
        "round_id, max(lake_row_id) AS lake_row_id", "round_id"
    ).create_view("evidence_new_rounds", replace=True)


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
    """P(K >= k) for K the successes of trials with these probabilities (`PoissonBinomial`),
    from their law (`poisson_binomial_law`)."""
    q = np.asarray(probabilities, dtype=float)
    if k <= 0:
        return 1.0
    if k > len(q):
        return 0.0
    return upper_tail(poisson_binomial_law(q), k)


Law = tuple[int, npt.NDArray[np.float64]]  # (lowest power kept, coefficients from there)


def poisson_binomial_law(probabilities: npt.ArrayLike) -> Law:
    """The law of the successes of trials with these probabilities: the product of the trials'
    polynomials (1 - p) + p x, multiplied pairwise in a balanced tree: the same sums of
    products as adding the trials one at a time, in a few hundred numpy calls instead of one
    per trial (4x faster on a player's lifetime of decisions, where the sum is quadratic).
    Long products drop their end coefficients below `NEGLIGIBLE` (`_trimmed`): a player's
    lifetime law has mass only within a few dozen standard deviations of its mean, so the
    widest products shrink several-fold (the 727 tests of a build retesting 270 players of
    ~12,000 decisions each: 12.4 s -> 3.1 s), and no p-value moves by more than 1e-290 (on
    those players, none above 1e-280 by more than an ulp)."""
    q = np.asarray(probabilities, dtype=float)
    level = np.stack([1 - q, q], axis=1)  # one polynomial per row, lowest power first
    if not len(level):
        return 0, np.ones(1)
    while len(level) > 1 and level.shape[1] <= 64:
        if len(level) % 2:  # times the polynomial 1
            level = np.vstack([level, np.eye(1, level.shape[1])])
        left, right, width = level[0::2], level[1::2], level.shape[1]
        # short: every pair at once, one coefficient of `left` at a time
        level = np.zeros((len(left), 2 * width - 1))
        for j in range(width):
            level[:, j : j + width] += left[:, j : j + 1] * right
    # long: each polynomial as (its lowest power, its coefficients from there), trimmed
    polys = [_trimmed(0, row) for row in level]
    while len(polys) > 1:
        paired = [combined(a, b) for a, b in zip(polys[0::2], polys[1::2], strict=False)]
        polys = paired + polys[len(paired) * 2 :]
    return polys[0]


def combined(a: Law, b: Law) -> Law:
    """The law of the sum of two independent counts with laws `a` and `b`, trimmed."""
    return _trimmed(a[0] + b[0], np.convolve(a[1], b[1]))


def upper_tail(law: Law, k: int) -> float:
    """P(K >= k) for K of law `law`."""
    lowest, coefficients = law
    if k <= 0:
        return 1.0
    return float(min(1.0, coefficients[max(0, k - lowest) :].sum()))


# Coefficients of a long product below this are dropped from its ends: each is less than that
# much probability, and a whole law's worth of them (n log n at most) less than 1e-290.
NEGLIGIBLE = 1e-300


def _trimmed(lowest: int, coefficients: npt.NDArray[np.float64]) -> tuple[int, Any]:
    """The polynomial `coefficients` (its first one of power `lowest`) without the runs of
    coefficients below NEGLIGIBLE at either end. A law of under ~1,400 trials has none: short
    ones are left as they are, and so is one with nothing to keep (NaN probabilities: the
    answer is the untrimmed one)."""
    if len(coefficients) < 1024:
        return lowest, coefficients
    kept = np.flatnonzero(coefficients >= NEGLIGIBLE)
    if not len(kept):
        return lowest, coefficients
    return lowest + int(kept[0]), coefficients[kept[0] : kept[-1] + 1]


# agg_player_decisions' columns, in order
_DECISION_TEST_COLUMNS = [
    "subject_key", "subject_type", "player_ref", "dealer_id", "game", "decisions",
    "informative_decisions", "informative_taken", "legitimate_agreements", "gain_cents",
    "first_day", "last_day", "lake_row_id", "code_version", "tested_decisions", "matches",
    "expected_matches", "match_sd", "p_value", "null_law_from", "null_law",
]  # fmt: skip
# What a subject's previous row held, as decision_tests reads it back.
_EARLIER = ("old_from", "old_law", "old_tested", "old_expected", "old_sd")
# Summed from the previous row and the new decisions'.
_ADDED = (
    "decisions", "informative_decisions", "informative_taken", "legitimate_agreements",
    "gain_cents", "matches",
)  # fmt: skip


def decision_tests(
    session: Any, decisions: Any, *, since: int = -1, previous: Any | None = None
) -> Any:
    """The dbt Python model agg_player_decisions over `decisions` (fct_decisions): for
    each player (and game), and each dealer x player pair, the hole-carding test over their
    decisions, with the evidence a surveillance officer reads (informative decisions, how often
    the full-information choice was taken there, the EV won beyond legitimate play, agreement
    with the legitimate strategy). The statistic is the count of decisions that matched the
    full-information choice, over decisions whose null probability is strictly between 0 and
    1; its p-value is the exact Poisson-binomial upper tail of their law, which each row keeps
    (`null_law_from`, `null_law`: `poisson_binomial_law`, float64 little-endian).

    Incremental: only the decisions whose `lake_row_id` is above `since` are read, and a
    subject's new row adds them to its row in `previous` (the model's table as the last build
    left it; None or `since` < 0: every decision, no previous row): the counts add up, and the
    stored law times the new decisions' law is the law of them all, so a build reads and
    convolves only what is new however long a player's history. The rows replace the old ones
    by `subject_key`, and each row's `lake_row_id` (its newest decision's) is the model's
    watermark. Each row keeps the version of this module that computed it (`code_version`):
    the model tests every subject again, from every decision, when this code changed."""
    decisions.create_view("decision_tests_decisions", replace=True)
    if previous is not None and since >= 0:  # each subject's row from the last build
        previous.create_view("decision_tests_previous", replace=True)
        joined = "LEFT JOIN decision_tests_previous o USING (subject_key)"
        added = ", ".join(f"n.{c} + coalesce(o.{c}, 0) AS {c}" for c in _ADDED)
        days = (
            "least(n.first_day, o.first_day) AS first_day, "
            "greatest(n.last_day, o.last_day) AS last_day"
        )
        earlier = [
            "o.null_law_from", "o.null_law", "coalesce(o.tested_decisions, 0)",
            "coalesce(o.expected_matches, 0)", "coalesce(o.match_sd, 0)",
        ]  # fmt: skip
    else:
        joined, added = "", ", ".join(f"n.{c}" for c in _ADDED)
        days = "n.first_day, n.last_day"
        earlier = ["NULL::INTEGER", "NULL::BLOB", "0", "0::DOUBLE", "0::DOUBLE"]
    earlier_row = ", ".join(f"{v} AS {name}" for v, name in zip(earlier, _EARLIER, strict=True))
    # Kept in DuckDB, typed by the query even when no player has a decision (an empty Pai
    # Gow-only lake), and only the null probabilities and laws read out.
    session.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE decision_tests_grouped AS
        SELECT row_number() OVER () AS k, n.subject_key, n.subject_type, n.player_ref,
            n.dealer_id, n.game, {added}, {days},
            n.lake_row_id, '{source_version(__name__)}' AS code_version, n.null_p, {earlier_row}
        FROM (SELECT
            to_json([subject_type, game, dealer_id, player_ref])::VARCHAR AS subject_key,
            *
        FROM (SELECT
            CASE WHEN grouping(dealer_id) = 0 THEN 'dealer_player' ELSE 'player' END
                AS subject_type,
            player_ref, dealer_id, game,
            count(*) AS decisions,
            count(*) FILTER (WHERE informative) AS informative_decisions,
            count(*) FILTER (WHERE informative AND took_full_information)
                AS informative_taken,
            count(*) FILTER (WHERE played = legitimate) AS legitimate_agreements,
            sum(gain_cents::DECIMAL(38, 9))::DOUBLE AS gain_cents,  -- exact: any build, same sum
            min(gaming_date) AS first_day,
            max(gaming_date) AS last_day,
            max(lake_row_id) AS lake_row_id,
            list(match_probability ORDER BY round_id)
                FILTER (WHERE match_probability > 0 AND match_probability < 1) AS null_p,
            count(*) FILTER (WHERE match_probability > 0 AND match_probability < 1
                             AND took_full_information) AS matches
        FROM decision_tests_decisions
        WHERE player_ref IS NOT NULL AND lake_row_id > {int(since)}
        GROUP BY GROUPING SETS ((player_ref, game), (player_ref, dealer_id, game)))) n
        {joined}
        """
    )
    tested, expected, sd, p_value, law_from, law = [], [], [], [], [], []
    for null_p, matches, old_from, old_law, old_tested, old_expected, old_sd in session.execute(
        f"SELECT null_p, matches, {', '.join(_EARLIER)} FROM decision_tests_grouped ORDER BY k"
    ).fetchall():
        q = np.asarray(null_p or [], dtype=float)
        together = poisson_binomial_law(q)
        if old_law is not None:
            together = combined((old_from, np.frombuffer(old_law, dtype="<f8")), together)
        count = old_tested + len(q)
        tested.append(count)
        expected.append(float(old_expected + q.sum()))
        sd.append(float(np.sqrt(old_sd**2 + (q * (1 - q)).sum())))
        p_value.append(upper_tail(together, matches) if count else None)
        law_from.append(together[0])
        law.append(together[1].astype("<f8").tobytes())
    columns: dict[str, tuple[list[Any], str]] = {
        "tested_decisions": (tested, "BIGINT"), "expected_matches": (expected, "DOUBLE"),
        "match_sd": (sd, "DOUBLE"), "p_value": (p_value, "DOUBLE"),
        "null_law_from": (law_from, "INTEGER"), "null_law": (law, "BLOB"),
    }  # fmt: skip
    # As parameters, which import pandas (~0.3 s, once a process: the builder's dbt process
    # lives for many builds); written into the SQL as literals, the laws (~20 MB at a million
    # rounds) took 0.6 s of every build to parse.
    # A table of their own first: joined as a subquery of unnests, they took 0.3 s more.
    unnested = ", ".join(f"unnest(?::{kind}[]) AS {name}" for name, (_, kind) in columns.items())
    session.execute(
        "CREATE OR REPLACE TEMP TABLE decision_tests_computed AS "
        f"SELECT unnest(range(1, {len(tested) + 1})) AS k, {unnested}",
        [values for values, _ in columns.values()],
    )
    result = f"decision_tests_{uuid.uuid4().hex}"  # each call's own: a caller may keep two
    session.execute(
        f"CREATE TEMP TABLE {result} AS SELECT {', '.join(_DECISION_TEST_COLUMNS)} "
        "FROM decision_tests_grouped JOIN decision_tests_computed USING (k)"
    )
    return session.table(result)
