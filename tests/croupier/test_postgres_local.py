"""`croupier postgres start|stop|status`: a real PostgreSQL server from the machine's binaries,
loopback only, password required, data kept across restarts; DuckLake's catalog on it."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from infra import lake as lakes
from infra import postgres_local
from infra.kafka_local import free_port


def croupier(home: Path, port: int, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CROUPIER_DATA_DIR": str(home),
        "CROUPIER_LOCAL_POSTGRES_PORT": str(port),
    }
    return subprocess.run(
        [sys.executable, "-m", "croupier", "postgres", *args],
        capture_output=True, text=True, env=env, timeout=180,
    )  # fmt: skip


def session(dsn: str) -> duckdb.DuckDBPyConnection:
    """DuckDB with the server attached as `pg` through the pinned postgres extension."""
    lakes.install_extensions()
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    con.execute("LOAD postgres_scanner")
    con.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
    return con


def ask(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[object, ...]]:
    return con.execute("SELECT * FROM postgres_query('pg', ?)", [sql]).fetchall()


@pytest.fixture
def home() -> Iterator[Path]:
    """A data folder the server's user can walk into (as root the server runs as `postgres`,
    and pytest's own temporary folders are root's alone)."""
    with tempfile.TemporaryDirectory(prefix="croupier-var-") as folder:
        Path(folder).chmod(0o755)
        yield Path(folder)
        postgres_local.stop(postgres_local.LocalPostgres(home=Path(folder) / "postgres"))


def test_start_status_stop_keep_data_and_ask_for_the_password(home: Path) -> None:
    port = free_port()
    server = postgres_local.LocalPostgres(home=home / "postgres", port=port)
    assert croupier(home, port, "status").returncode == 1  # nothing yet: exit 1, "stopped"

    started = croupier(home, port, "start")
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == f"postgres://croupier@127.0.0.1:{port}/lake"
    assert server.password() not in started.stdout + started.stderr  # never printed
    assert stat.S_IMODE(server.password_file.stat().st_mode) == 0o600
    status = croupier(home, port, "status")
    assert status.returncode == 0 and "answers=yes" in status.stdout, status.stdout

    con = session(server.dsn())
    try:
        assert ask(con, "SELECT current_setting('listen_addresses')") == [("127.0.0.1",)]
        # every rule asks for the password: no trust, no peer
        methods = {m for (m,) in ask(con, "SELECT auth_method FROM pg_hba_file_rules")}
        assert methods == {"scram-sha-256"}, methods
        assert ask(con, "SELECT current_setting('TimeZone')") == [("UTC",)]
        con.execute("CREATE TABLE pg.public.kept AS SELECT 42 AS answer")
    finally:
        con.close()
    wrong = server.dsn().replace(f":{server.password()}@", ":not-the-password@")
    with pytest.raises(duckdb.Error, match="password authentication failed"):
        session(wrong)

    again = croupier(home, port, "start")  # already running: nothing to do, exit 0
    assert again.returncode == 0 and "already running" in again.stderr

    stopped = croupier(home, port, "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert postgres_local.running_pid(server) is None
    assert croupier(home, port, "status").returncode == 1
    assert croupier(home, port, "stop").stdout.strip() == "No local PostgreSQL server was running."

    password = server.password()
    assert croupier(home, port, "start").returncode == 0  # the same cluster, data kept
    assert server.password() == password
    con = session(server.dsn())
    try:
        assert con.execute("SELECT answer FROM pg.public.kept").fetchall() == [(42,)]
    finally:
        con.close()


# Only as root does the server run as another user (`postgres`), whose access to the data
# folder is what this checks; as any other user the server runs as that user, who owns it.
@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the server as another user")
def test_as_root_a_folder_the_server_user_cannot_enter_is_a_clear_error(home: Path) -> None:
    private = home / "private"
    private.mkdir(mode=0o700)
    result = croupier(private / "var", free_port(), "start")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"may not enter {private}" in result.stderr


def test_a_relative_data_folder_works_and_a_lost_password_is_a_clear_error(home: Path) -> None:
    port = free_port()
    env = {**os.environ, "CROUPIER_DATA_DIR": "var", "CROUPIER_LOCAL_POSTGRES_PORT": str(port)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "croupier", "postgres", *args],
            capture_output=True, text=True, env=env, timeout=180, cwd=home,
        )  # fmt: skip

    server = postgres_local.LocalPostgres(home=home / "var" / "postgres", port=port)
    try:
        started = run("start")
        assert started.returncode == 0, started.stderr
        assert run("status").returncode == 0
        assert run("stop").returncode == 0
        server.password_file.unlink()
        lost = run("start")
        assert lost.returncode == 1 and "lost its password file" in lost.stderr, lost.stderr
        assert postgres_local.running_pid(server) is None  # not left running, unusable
    finally:
        postgres_local.stop(server)


def test_two_first_starts_at_once_take_turns_and_one_server_runs(home: Path) -> None:
    port = free_port()
    env = {**os.environ, "CROUPIER_DATA_DIR": str(home), "CROUPIER_LOCAL_POSTGRES_PORT": str(port)}
    command, pipe = [sys.executable, "-m", "croupier", "postgres", "start"], subprocess.PIPE
    both = [
        subprocess.Popen(command, env=env, stdout=pipe, stderr=pipe, text=True) for _ in range(2)
    ]
    results = [p.communicate(timeout=180) for p in both]
    assert [p.returncode for p in both] == [0, 0], results
    server = postgres_local.LocalPostgres(home=home / "postgres", port=port)
    assert postgres_local.running_pid(server) is not None and postgres_local.answers(server)


def test_a_taken_port_is_a_clear_error(home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = croupier(home, port, "start")
    assert result.returncode == 1
    assert f"port {port} on 127.0.0.1 is taken" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "port", "message"),
    [
        (("--timeout", "nan"), "55433", "'nan' is not a finite number"),
        (("--timeout", "inf"), "55433", "is not in the range 0<x<=86400"),
        (("--timeout", "-1"), "55433", "is not in the range 0<x<=86400"),
        (("--timeout", "0"), "55433", "is not in the range 0<x<=86400"),
        ((), "99999", "less than or equal to 65535"),
        ((), "0", "greater than or equal to 1"),
    ],
)
def test_a_bad_timeout_or_port_is_bad_usage_and_starts_nothing(
    home: Path, args: tuple[str, ...], port: str, message: str
) -> None:
    env = {**os.environ, "CROUPIER_DATA_DIR": str(home), "CROUPIER_LOCAL_POSTGRES_PORT": port}
    result = subprocess.run(
        [sys.executable, "-m", "croupier", "postgres", "start", *args],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not (home / "postgres").exists()


def test_a_file_in_the_servers_place_or_a_quote_in_its_path_is_a_clear_error(
    home: Path,
) -> None:
    port = free_port()
    (home / "postgres").write_text("not a folder")
    start, status, stop = (croupier(home, port, verb) for verb in ("start", "status", "stop"))
    assert start.returncode == 1 and "PostgreSQL cannot start" in start.stderr, start.stderr
    assert status.returncode == 1 and status.stdout.strip() == "stopped", status.stderr
    assert stop.returncode == 0, stop.stderr
    (home / "postgres").unlink()
    (home / "postgres" / "data").parent.mkdir()
    (home / "postgres" / "data").write_text("not a folder")
    start = croupier(home, port, "start")
    assert start.returncode == 1 and "PostgreSQL cannot start" in start.stderr, start.stderr
    quoted = home / "it's"  # pg_ctl's shell command line cannot carry it
    start = croupier(quoted, port, "start")
    assert start.returncode == 1 and "characters ' break" in start.stderr, start.stderr
    assert not quoted.exists()
    for result in (start, status, stop):
        assert "Traceback" not in result.stderr


def test_a_lake_catalog_on_the_server_is_shared_by_a_writer_and_a_reader(tmp_path: Path) -> None:
    with postgres_local.private() as server:
        data = tmp_path / "data"
        data.mkdir()
        lakes.install_extensions()
        attach = f"ATTACH 'ducklake:postgres:{server.dsn()}' AS lake (DATA_PATH '{data}/'"
        writer = lakes.open_session([attach + ")"], use="lake")
        try:
            writer.execute("CREATE TABLE events AS SELECT range AS n FROM range(1000)")
            writer.execute("INSERT INTO events SELECT 1000")
            reader = lakes.open_session([attach + ", READ_ONLY)"], use="lake")
            try:
                assert reader.execute("SELECT count(*), sum(n) FROM events").fetchone() == (
                    1001,
                    sum(range(1001)),
                )
                with pytest.raises(duckdb.Error, match="read-only"):
                    reader.execute("INSERT INTO events SELECT 1")
            finally:
                reader.close()
        finally:
            writer.close()
