"""A big lake from real data, fast: one casino night settled by the consumer's own pipeline,
cloned night after night with SQL (ids suffixed, times shifted by whole days).

Every clone is the same real night, so each keeps every invariant the marts test (settlement
per bet, meter continuity from each night's opening reset, table accounting). Payload JSON is
copied as is: the marts read ids and times from the envelope columns, never from the payload.
"""

from __future__ import annotations

from pathlib import Path

from consumers.schema import TABLES, create_tables
from infra import lake as lakes

SEQ_STRIDE = 100_000_000  # seq numbers of night k start at k * SEQ_STRIDE
OFFSET_STRIDE = 100_000_000
NIGHTS_PER_INSERT = 8  # one insert (one transaction, a few Parquet files) per 8 nights

# How a column of night k differs from the source night (k = 0 is the source itself).
_SHIFTED = {
    "event_id": "{c} || '.' || k",
    "violation_id": "{c} || '.' || k",
    "round_id": "{c} || '.N' || k",
    "seq": "{c} + k * " + str(SEQ_STRIDE),
    "source_offset": "{c} + k * " + str(OFFSET_STRIDE),
    "occurred_at": "{c} + to_days(k::INTEGER)",
    "started_at": "{c} + to_days(k::INTEGER)",
    "ended_at": "{c} + to_days(k::INTEGER)",
    "settled_at": "{c} + to_days(k::INTEGER)",
}
CLONED = (
    "events", "dead_letters", "rounds", "settlements", "violations", "jackpot_ledger",
    "skipped_events",
)  # fmt: skip
# What `croupier evidence` wrote for the night: cloned too when the worker is to have kept up.
EVIDENCE = ("evaluated_rounds", "position_expectations", "decision_evidence")


def source_night(folder: Path, *, tables: int, hours: float, seed: int = 2025) -> lakes.Lake:
    """The night at `folder/lake`, simulated and settled once by `croupier demo`'s pipeline."""
    from croupier.commands.demo import run_in_process

    night = lakes.Lake(root=folder / "lake")
    done = folder / "complete"
    if not done.is_file():
        if night.root.exists():
            import shutil

            shutil.rmtree(night.root)
        run_in_process(night, tables=tables, hours=hours, seed=seed, faults="default",
                       progress=False)  # fmt: skip
        done.write_text("ok\n")
    return night


def clone_nights(
    source: lakes.Lake, target: lakes.Lake, *, first: int, count: int, evidence: bool = True
) -> None:
    """Append nights first .. first + count - 1 of `source` to `target` (created if needed);
    `evidence`: with the rows `croupier evidence` wrote for the source night (as if the worker
    had kept up with the consumer), else without (the build evaluates those rounds itself)."""
    con = lakes.connect(target, create=True)
    try:
        # one thread, as the consumer's sink: DuckLake numbers the rows of a parallel insert in
        # the order its threads finish their files, and the marts order a table's events by row
        # id (the order the lake received them), so a night cloned in parallel could land
        # behind the next one and break the meter test
        con.execute("SET threads = 1")
        create_tables(con)
        con.execute(source.attach_sql(alias="src", read_only=True))
        for start in range(first, first + count, NIGHTS_PER_INSERT):
            stop = min(start + NIGHTS_PER_INSERT, first + count)
            con.execute("BEGIN TRANSACTION")
            for table in CLONED + (EVIDENCE if evidence else ()):
                columns = [c.name for c in TABLES[table]]
                # a night cached by an older version lacks the columns added since: null
                present = {
                    name for (name,) in con.execute(
                        "SELECT column_name FROM duckdb_columns() "
                        "WHERE database_name = 'src' AND table_name = ?",
                        [table],
                    ).fetchall()
                }  # fmt: skip
                if not present:
                    continue  # a table the night's version did not have yet
                select = ", ".join(
                    _SHIFTED[c].format(c=c) if c in _SHIFTED else c if c in present else "NULL"
                    for c in columns
                )
                con.execute(
                    f"INSERT INTO lake.main.{table} ({', '.join(columns)}) "
                    f"SELECT {select} FROM src.main.{table} AS t, range({start}, {stop}) AS n(k) "
                    f"ORDER BY k, t.rowid"  # each night in the order the consumer wrote it
                )
            con.execute("COMMIT")
    finally:
        con.close()  # a transaction left open by an error is rolled back: the error is the one seen


def count_rounds(lake: lakes.Lake) -> int:
    con = lakes.connect(lake, read_only=True)
    try:
        row = con.execute("SELECT count(*) FROM rounds").fetchone()
    finally:
        con.close()
    return int(row[0]) if row else 0
