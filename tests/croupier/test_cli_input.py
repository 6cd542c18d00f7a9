"""What the CLI does with numbers that are not numbers, a Ctrl-C inside a query, and a lake
folder it cannot make: a one-line error and a meaningful exit code, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import click
import duckdb
import pytest
from click.testing import CliRunner

from croupier import cli


@pytest.mark.parametrize(
    "args",
    [
        ["evidence", "--every", "nan"],
        ["build", "--every", "nan"],
        ["simulate", "--hours", "nan", "--out", "never.jsonl"],
        ["kafka", "start", "--timeout", "nan"],
        ["postgres", "start", "--timeout", "NaN"],
        ["odds", "--game", "pai-gow", "--precision", "nan"],
        ["demo", "--hours", "nan"],
        ["consume", "--stop-when-idle", "nan"],
        ["consume", "--metrics-every", "nan"],
        ["replay", "--lake", "never", "--idle", "nan"],
    ],
    ids=lambda args: " ".join(arg for arg in args if arg.startswith("--") or arg.isalpha()),
)
def test_nan_is_bad_usage_wherever_a_number_of_seconds_or_hours_is_asked(
    args: list[str], tmp_path: Path
) -> None:
    result = CliRunner().invoke(cli.main, args, env={"CROUPIER_DATA_DIR": str(tmp_path)})
    assert result.exit_code == 2, result.output
    assert "is not a finite number" in result.output
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


@click.command()
def _interrupted_query() -> None:
    """A DuckDB query that the user interrupts with Ctrl-C (SIGINT to this process)."""
    con = duckdb.connect()
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    con.execute("SELECT count(*) FROM range(100000000000) a, range(10) b").fetchall()


# DuckDB 1.5 then hung closing the connection (CI sat here 30 minutes): the thread method
# ends the worker, where the signal method waits for a close that never returns
@pytest.mark.timeout(120, method="thread")
def test_ctrl_c_inside_a_duckdb_query_is_aborted_like_anywhere_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(cli.COMMANDS, "slow", f"{__name__}:_interrupted_query")
    result = CliRunner().invoke(cli.main, ["slow"])
    assert result.exit_code == 1, result.output
    assert "Aborted!" in result.output
    assert not isinstance(result.exception, RuntimeError)


def test_a_lake_folder_that_cannot_be_made_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    env = {
        **os.environ,
        "CROUPIER_DATA_DIR": str(tmp_path),
        "CROUPIER_LAKE_PATH": str(blocker / "lake"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "croupier", "lake", "init"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "cannot make the lake's folders" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("after_s", [4.0, 8.0])
def test_ctrl_c_inside_croupier_sql_aborts_and_the_process_ends(
    after_s: float, tmp_path: Path
) -> None:
    # `croupier sql` closes its own connection on the way out: DuckDB 1.5 then waited forever
    # for the interrupted query (nothing printed, the process alive; 1 run in 3 here)
    env = {**os.environ, "CROUPIER_DATA_DIR": str(tmp_path)}
    croupier = [sys.executable, "-m", "croupier"]
    init = [*croupier, "lake", "init"]
    subprocess.run(init, env=env, check=True, capture_output=True, timeout=120)
    endless = "SELECT count(*) FROM range(100000000000) a, range(10) b"
    query = subprocess.Popen(
        [*croupier, "sql", "-c", endless], env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        time.sleep(after_s)  # mostly inside the query by then; sooner, a Ctrl-C aborts the same
        query.send_signal(signal.SIGINT)
        output, _ = query.communicate(timeout=60)
    finally:
        query.kill()
    assert query.returncode == 1, output
    assert "Aborted!" in output
    assert "Traceback" not in output
