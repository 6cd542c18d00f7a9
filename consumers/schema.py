"""The derived tables the consumer writes to the lake: the system of record for analytics.

One definition serves the sink (Arrow schemas for inserts), `croupier lake init` (DDL) and the
dbt sources; column names follow the shared vocabulary (`*_cents`, `*_at`, `table_id`, `round_id`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa


@dataclass(frozen=True, kw_only=True)
class Column:
    name: str
    sql: str
    arrow: pa.DataType
    doc: str


def _c(name: str, sql: str, doc: str) -> Column:
    arrow = {
        "VARCHAR": pa.string(),
        "BIGINT": pa.int64(),
        "INTEGER": pa.int32(),
        "BOOLEAN": pa.bool_(),
        "DOUBLE": pa.float64(),
        "BLOB": pa.binary(),
        "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
        "VARCHAR[]": pa.list_(pa.string()),
    }[sql]
    return Column(name=name, sql=sql, arrow=arrow, doc=doc)


_ENVELOPE = [
    _c("casino_id", "VARCHAR", "Casino the table belongs to."),
    _c("table_id", "VARCHAR", "Table id (the Kafka key)."),
    _c("game", "VARCHAR", "pai_gow | tripoker | holdem."),
]

# The version of the evaluations `croupier evidence` stores (consumers/evaluation.py): raise it
# with any change that changes an evaluated row (the games' math, how a round is evaluated,
# what a column means). Each stored row and mark carries the version that wrote it; a build
# trusts only rows of this version, and the worker goes over the rounds of another again (the
# rounds it has never been over first). Rows written before versions were kept are version 1.
#   2: a Hold'em round without the dealer's 2 hole cards has a note, not nothing (its decisions
#      left the coverage test no way to tell them from lost rows)
#   3: a round is evaluated on the events the consumer applied to it (not those it skipped:
#      a later night's round of the same id, a late event), in the order the lake received
#      them (a numbering restarted mid-round left the round without its start)
EVALUATION_VERSION = 3
# Last in its tables: a lake made before it gains it at the end (`create_tables`).
_VERSION = _c(
    "evaluation_version", "INTEGER",
    "EVALUATION_VERSION of the code that wrote the row (null: 1, written before versions).",
)  # fmt: skip


def current_evaluation(version: str = "evaluation_version") -> str:
    """SQL true for a stored evaluation row or mark of EVALUATION_VERSION, its version read
    from the SQL expression `version` (NULL for a table without the column: version 1)."""
    return f"coalesce({version}, 1) = {EVALUATION_VERSION}"


TABLES: dict[str, list[Column]] = {
    "events": [
        _c("event_id", "VARCHAR", "UUID of the event; a repeat is dropped."),
        _c("event_type", "VARCHAR", "Catalogue name, snake_case past tense."),
        _c("schema_version", "INTEGER", "Version as sent (older ones are upcast when read)."),
        *_ENVELOPE,
        _c("round_id", "VARCHAR", "Round id; null for table-level events."),
        _c("seq", "BIGINT", "Producer sequence number per table."),
        _c("occurred_at", "TIMESTAMPTZ", "When it happened at the table (UTC)."),
        _c("source_device", "VARCHAR", "Device that reported it."),
        _c("payload", "VARCHAR", "The whole event as canonical JSON."),
        _c("source_partition", "INTEGER", "Kafka partition it was read from (null in-process)."),
        _c("source_offset", "BIGINT", "Kafka offset it was read from (null in-process)."),
    ],
    "dead_letters": [
        _c("source_topic", "VARCHAR", "Topic the message came from."),
        _c("source_partition", "INTEGER", "Partition."),
        _c("source_offset", "BIGINT", "Offset."),
        _c("message_key", "BLOB", "Raw key bytes."),
        _c("raw", "BLOB", "Raw value bytes, as received (truncated above 1 MiB)."),
        _c("raw_size", "BIGINT", "Size of the value in bytes."),
        _c("reason", "VARCHAR", "Short reason code: undecodable, invalid_json, schema, ..."),
        _c("detail", "VARCHAR", "What exactly was wrong (field, message)."),
    ],
    "rounds": [
        _c("round_id", "VARCHAR", "Round id."),
        *_ENVELOPE,
        _c("dealer_id", "VARCHAR", "Dealer who ran the round."),
        _c("deck_id", "VARCHAR", "Deck used."),
        _c("banker_position", "INTEGER", "Pai Gow banker position (0 = dealer)."),
        _c("profile", "VARCHAR", "Rule profile the round was settled under."),
        _c("profile_version", "INTEGER", "Rule profile version."),
        _c(
            "profile_hash",
            "VARCHAR",
            "sha256 of the profile file the round was settled under (null: not settled).",
        ),
        _c("started_at", "TIMESTAMPTZ", "round_started."),
        _c("ended_at", "TIMESTAMPTZ", "round_ended or round_voided."),
        _c(
            "status",
            "VARCHAR",
            "settled | voided | unsettled (bad data, see violations) | unprocessable (EVT-ENGINE).",
        ),
        _c("status_reason", "VARCHAR", "Void reason or why the round could not be settled."),
        _c("bets", "INTEGER", "Number of bets placed."),
        _c("wager_cents", "BIGINT", "Sum of wagers placed."),
        _c("house_result_cents", "BIGINT", "House result of the round's settlements."),
        _c("violations", "INTEGER", "Violations raised in this round."),
    ],
    "settlements": [
        _c("round_id", "VARCHAR", "Round id."),
        *_ENVELOPE,
        _c("dealer_id", "VARCHAR", "Dealer who ran the round."),
        _c("seat", "INTEGER", "Seat (0 = the dealer's position)."),
        _c("spot", "VARCHAR", "Bet spot."),
        _c("bettor", "VARCHAR", "player | banker | house."),
        _c("player_ref", "VARCHAR", "Pseudonymous player reference."),
        _c("wager_cents", "BIGINT", "Stake."),
        _c("outcome", "VARCHAR", "win | lose | push | fold | surrender | foul | returned."),
        _c("payout_cents", "BIGINT", "Winnings paid on top of the stake, after any cap."),
        _c("capped_cents", "BIGINT", "Withheld by the payout cap (THP-A2c)."),
        _c("uncapped_payout_cents", "BIGINT", "Payout before the cap."),
        _c("commission_cents", "BIGINT", "Commission taken (PGP-A17c)."),
        _c("net_cents", "BIGINT", "Bettor's money change."),
        _c("house_result_cents", "BIGINT", "House's money change from this line."),
        _c("recorded_paid_cents", "BIGINT", "Winnings the dealer recorded paying (null: none)."),
        _c("recorded_commission_cents", "BIGINT", "Commission the dealer recorded taking."),
        _c("payout_difference_cents", "BIGINT", "Recorded minus computed (paid - commission)."),
        _c("profile", "VARCHAR", "Rule profile."),
        _c("profile_version", "INTEGER", "Rule profile version."),
        _c("rule_ids", "VARCHAR[]", "Rule IDs that decided this settlement."),
        _c("settled_at", "TIMESTAMPTZ", "When the round ended."),
    ],
    "violations": [
        _c("violation_id", "VARCHAR", "Deterministic id (hash of rule, table, event)."),
        _c("rule_id", "VARCHAR", "Rule broken, as in the spec (PGP-A10d, ...)."),
        _c("check_name", "VARCHAR", "Name of the check that found it."),
        _c("severity", "VARCHAR", "critical | major | minor."),
        *_ENVELOPE,
        _c("round_id", "VARCHAR", "Round (null for table-level breaches)."),
        _c("dealer_id", "VARCHAR", "Dealer on duty."),
        _c("seq", "BIGINT", "Sequence number of the event that showed it."),
        _c("event_id", "VARCHAR", "Event that showed it."),
        _c("occurred_at", "TIMESTAMPTZ", "When."),
        _c("evidence", "VARCHAR", "JSON: what was expected and what was seen."),
    ],
    # A round's events the consumer stored without applying to it; the marts leave them out
    # of the round, as the settlement did (dbt_project/macros/event_fields.sql).
    "skipped_events": [
        _c("event_id", "VARCHAR", "The event stored, never applied."),
        _c("table_id", "VARCHAR", "Its table."),
        _c("round_id", "VARCHAR", "The round it names."),
        _c(
            "reason",
            "VARCHAR",
            "round_replayed (a start of a round played before: EVT-DUP) | round_skipped (the "
            "rest of such a round, or of an unprocessable one: EVT-ENGINE) | outside_round (its "
            "round is not the table's open one: EVT-ORDER) | late (it came after its round "
            "closed) | decision_repeated (a seat's second decision in a round; the first "
            "stands).",
        ),
    ],
    "jackpot_ledger": [
        _c("round_id", "VARCHAR", "Round."),
        *_ENVELOPE,
        _c("entry_no", "INTEGER", "Order within the round."),
        _c("seat", "INTEGER", "Seat (null for resets)."),
        _c("kind", "VARCHAR", "contribution | hit | reset."),
        _c("amount_cents", "BIGINT", "Amount of the movement."),
        _c("meter_before_cents", "BIGINT", "Meter before."),
        _c("meter_after_cents", "BIGINT", "Meter after."),
        _c("rule_ids", "VARCHAR[]", "Rule IDs."),
        _c("occurred_at", "TIMESTAMPTZ", "When."),
    ],
    # The hold test's expectations and the decisions' evidence (consumers/evaluation.py), written
    # by `croupier evidence` off the build's path; the dbt models evaluate only the rounds it
    # has not reached yet.
    "evaluated_rounds": [
        _c("evaluation", "VARCHAR", "expected | informed: which evaluation."),
        _c("round_id", "VARCHAR", "Round gone over (its rows, if any, are in the tables below)."),
        _c("evaluated_at", "TIMESTAMPTZ", "When."),
        _VERSION,
    ],
    "position_expectations": [
        _c("round_id", "VARCHAR", "Round."),
        _c("seat", "INTEGER", "Seat (null: the round could not be evaluated, see note)."),
        _c("expected_house_cents", "DOUBLE", "House result expected given cards and decisions."),
        _c("expected_variance", "DOUBLE", "Its variance (the estimate's error included)."),
        _c("samples", "INTEGER", "Completions sampled (null: exact)."),
        _c("round_variance", "DOUBLE", "Variance of the round's total house result."),
        _c("note", "VARCHAR", "Why the round could not be evaluated (null: it was)."),
        _VERSION,
    ],
    "decision_evidence": [
        _c("round_id", "VARCHAR", "Round."),
        _c("seat", "INTEGER", "Seat (null: the round could not be evaluated, see note)."),
        _c("played", "VARCHAR", "Decision taken: play | call | fold."),
        _c("legitimate", "VARCHAR", "Best decision on what the player could see."),
        _c("full_information", "VARCHAR", "Best decision knowing the dealer's hidden cards."),
        _c("informative", "BOOLEAN", "The two best decisions differ."),
        _c("gain_cents", "DOUBLE", "EV won beyond legitimate play (full information)."),
        _c("match_probability", "DOUBLE", "Null probability of taking the full-information one."),
        _c("note", "VARCHAR", "Why the round could not be evaluated (null: it was)."),
        _VERSION,
    ],
    "consumer_offsets": [
        _c("source_topic", "VARCHAR", "Topic."),
        _c("source_partition", "INTEGER", "Partition."),
        _c("next_offset", "BIGINT", "First offset not yet in the lake."),
    ],
    "table_state": [
        _c("table_id", "VARCHAR", "Table."),
        _c("state", "VARCHAR", "The processor's state of this table, as JSON."),
    ],
    "lake_identity": [
        _c("lake_id", "VARCHAR", "Random id given to the lake when it was created."),
        _c("created_at", "TIMESTAMPTZ", "When the lake was created."),
    ],
    "stream_binding": [
        _c("bound_at", "TIMESTAMPTZ", "When this binding was recorded (the newest one holds)."),
        _c("kind", "VARCHAR", "kafka | file | demo | replay: what fills the lake."),
        _c("cluster_id", "VARCHAR", "Kafka cluster id (null for files and the demo)."),
        _c("topic", "VARCHAR", "Kafka topic (null for files and the demo)."),
        _c("group_id", "VARCHAR", "Kafka consumer group (null for files and the demo)."),
        _c("adopted", "BOOLEAN", "Bound over an earlier binding by `--adopt`."),
        _c("host", "VARCHAR", "Machine that recorded it."),
    ],
}

# `croupier evidence`'s tables above (consumers/evaluation.py): one per evaluation, and the
# rounds each has been over (a round may give no rows: a Hold'em round without the dealer's
# cards, or a round of a game without the evaluation).
EVALUATION_TABLES = {"expected": "position_expectations", "informed": "decision_evidence"}
EVALUATED_ROUNDS = "evaluated_rounds"

ARROW_SCHEMAS: dict[str, pa.Schema] = {
    name: pa.schema([pa.field(c.name, c.arrow) for c in columns])
    for name, columns in TABLES.items()
}


def ddl(name: str) -> str:
    columns = ",\n  ".join(f"{c.name} {c.sql}" for c in TABLES[name])
    return f"CREATE TABLE IF NOT EXISTS {name} (\n  {columns}\n)"


def create_tables(con: object) -> None:
    """Create every derived table that is missing (idempotent)."""
    from infra.binding import ensure_identity

    for name in TABLES:
        con.execute(ddl(name))  # type: ignore[attr-defined]
    # A lake made before a column was added gains it (null in the rows written before).
    present = set(
        con.execute(  # type: ignore[attr-defined]
            "SELECT table_name, column_name FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = current_schema()"
        ).fetchall()
    )
    for name, columns in TABLES.items():
        for c in columns:
            if (name, c.name) not in present:
                con.execute(  # type: ignore[attr-defined]
                    f"ALTER TABLE {name} ADD COLUMN IF NOT EXISTS {c.name} {c.sql}"
                )
    ensure_identity(con)  # type: ignore[arg-type]
