"""The DuckLake store: offline extensions, one writer and concurrent readers, the CLI."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from croupier.cli import main
from infra import lake as lakes

BATCH_ROWS = 1_000
BATCHES = 40

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from infra import lake as lakes
    con = lakes.connect(lakes.Lake(root=Path(sys.argv[1])), create=True)
    con.execute("CREATE TABLE IF NOT EXISTS t (batch INTEGER, i INTEGER)")
    print("ready", flush=True)
    for b in range(int(sys.argv[2])):
        con.execute("BEGIN")
        # Two statements per transaction: a reader must never see the first without the second.
        con.execute("INSERT INTO t SELECT ?, range FROM range(?)", [b, {half}])
        con.execute("INSERT INTO t SELECT ?, range FROM range(?, ?)", [b, {half}, {rows}])
        con.execute("COMMIT")
        time.sleep(0.02)
    print("done", flush=True)
    """
).format(half=BATCH_ROWS // 2, rows=BATCH_ROWS)

READER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from infra import lake as lakes
    root = Path(sys.argv[1])
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        con = lakes.connect(lakes.Lake(root=root), read_only=True)
        try:
            rows, batches, complete = con.execute(
                "SELECT count(*), count(DISTINCT batch), "
                "count(*) FILTER (WHERE batch IN (SELECT batch FROM t GROUP BY batch "
                "HAVING count(*) = {rows})) FROM t"
            ).fetchone()
        finally:
            con.close()
        seen.append([rows, batches, complete])
        if batches == int(sys.argv[2]):
            break
    print(json.dumps(seen))
    """
).format(rows=BATCH_ROWS)


def test_ducklake_writer_and_readonly_reader_run_concurrently(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(BATCHES)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    reader = subprocess.run(
        [sys.executable, "-c", READER, str(root), str(BATCHES)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    _out, err = writer.communicate(timeout=180)
    assert writer.returncode == 0, err
    assert reader.returncode == 0, reader.stderr
    observations = json.loads(reader.stdout)
    # Every observation is a committed snapshot: whole batches only, and counts only grow.
    for rows, batches, complete in observations:
        assert rows == complete == batches * BATCH_ROWS
    assert [o[1] for o in observations] == sorted(o[1] for o in observations)
    assert len({o[1] for o in observations}) > 3, "the reader should overlap the writer"
    assert observations[-1][1] == BATCHES


def test_lake_init_works_without_network(tmp_path: Path) -> None:
    """A fresh HOME has no DuckDB extensions; init in a namespace with no network must work."""
    if shutil.which("unshare") is None:
        raise AssertionError("util-linux `unshare` is needed to cut the network for this test")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "CROUPIER_DATA_DIR": str(tmp_path / "var")}
    croupier = [sys.executable, "-m", "croupier"]
    init = subprocess.run(
        ["unshare", "-n", *croupier, "lake", "init"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert init.returncode == 0, init.stderr
    assert (tmp_path / "var" / "lake" / "catalog.sqlite").is_file()
    assert list(home.glob(".duckdb/extensions/*/*/ducklake.duckdb_extension"))
    info = subprocess.run(
        ["unshare", "-n", *croupier, "lake", "info", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert info.returncode == 0, info.stderr
    tables = json.loads(info.stdout)["tables"]
    assert {"main.events", "main.settlements", "main.consumer_offsets"} <= set(tables)
    identity = tables.pop("main.lake_identity")
    assert identity == 1 and set(tables.values()) == {0}  # a new lake: its id, and no rows


def test_lake_info_and_sql_cli_report_tables(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    con = lakes.connect(lakes.Lake(root=root), create=True)
    con.execute("CREATE TABLE rounds AS SELECT range AS round_no FROM range(7)")
    con.close()
    runner = CliRunner()
    info = runner.invoke(main, ["lake", "info", "--lake", str(root), "--json"])
    assert info.exit_code == 0, info.output
    report = json.loads(info.output)
    assert report["tables"] == {"main.rounds": 7}
    assert report["snapshot_id"] >= 1  # CREATE TABLE AS is one snapshot
    query = runner.invoke(
        main,
        [
            "sql",
            "--lake",
            str(root),
            "--format",
            "json",
            "-c",
            "SELECT sum(round_no) s FROM rounds",
        ],
    )
    assert query.exit_code == 0, query.output
    assert json.loads(query.output) == {"s": 21}
    # The lake is attached read-only for analysts.
    write = runner.invoke(main, ["sql", "--lake", str(root), "-c", "DELETE FROM rounds"])
    assert write.exit_code == 2  # refused before it runs
    assert "read-only" in write.output.lower()


def test_lake_info_on_missing_lake_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["lake", "info", "--lake", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert "croupier lake init" in result.output


def test_lake_init_puts_the_catalog_in_wal_mode_so_readers_never_block_the_writer(
    tmp_path: Path,
) -> None:
    result = CliRunner().invoke(main, ["lake", "init", "--lake", str(tmp_path / "lake")])
    assert result.exit_code == 0, result.output
    con = sqlite3.connect(tmp_path / "lake" / "catalog.sqlite")
    try:
        assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        con.close()


LOCK_HOLDER = textwrap.dedent(
    """
    import sqlite3, sys
    con = sqlite3.connect(sys.argv[1], isolation_level=None)
    con.execute("PRAGMA locking_mode=EXCLUSIVE")  # in WAL mode too: every other reader waits
    con.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    sys.stdin.readline()
    con.execute("COMMIT")
    con.close()
    """
)


def test_a_live_reader_meets_a_locked_catalog_and_reads_again_a_moment_later(
    tmp_path: Path,
) -> None:
    # DuckDB's sqlite extension waits on a lock in SQLite's busy handler, which in its build
    # sleeps a whole second per wait: 1 of every ~3 ten-second runs of the freshness probe had
    # a p99 over a second. A live reader fails at once on the lock and reads again.
    lake = lakes.Lake(root=tmp_path / "lake")
    con = lakes.connect(lake, create=True)
    con.execute("CREATE TABLE t AS SELECT range AS i FROM range(3)")
    con.close()
    reader = lakes.connect(lake, read_only=True, live=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(lake.catalog)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "locked"
        calls, release_at = 0, 0

        def count() -> list[tuple[int]]:
            nonlocal calls
            calls += 1
            if calls == release_at:  # the reader met the lock twice, at once each time
                holder.stdin.write("\n")
                holder.stdin.flush()
            return reader.execute("SELECT count(*) FROM t").fetchall()

        with pytest.raises(duckdb.Error, match="database is locked"):
            lakes.read_live(count, for_s=0.2)  # held all along: the lock's own error
        calls, release_at = 0, 3
        assert lakes.read_live(count) == [(3,)]
        assert calls >= 3  # a reader waiting inside SQLite would have been called once
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        reader.close()
    # Any other error is the caller's at once.
    missing = lakes.connect(lake, read_only=True, live=True)
    calls = 0

    def unknown_table() -> object:
        nonlocal calls
        calls += 1
        return missing.execute("SELECT * FROM no_such_table").fetchall()

    try:
        with pytest.raises(duckdb.CatalogException):
            lakes.read_live(unknown_table)
    finally:
        missing.close()
    assert calls == 1


def test_a_live_attach_is_a_readers_and_only_a_sqlite_catalog_turns_the_wait_off() -> None:
    on_sqlite = lakes.Lake(root=Path("lake"))
    assert "META_BUSY_TIMEOUT 0" in on_sqlite.attach_sql(read_only=True, live=True)
    assert "META_BUSY_TIMEOUT" not in on_sqlite.attach_sql(read_only=True)
    # the writer's own options are the writer's alone
    assert "DATA_INLINING_ROW_LIMIT 0" in on_sqlite.attach_sql()
    assert "DATA_INLINING" not in on_sqlite.attach_sql(read_only=True, live=True)
    with pytest.raises(ValueError, match="read_only"):
        on_sqlite.attach_sql(live=True)
    on_postgres = lakes.Lake(root=Path("lake"), catalog_url="postgres://croupier@localhost/lake")
    assert "META_BUSY_TIMEOUT" not in on_postgres.attach_sql(read_only=True, live=True)
