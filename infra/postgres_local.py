"""A local PostgreSQL server for the lake's shared catalog, run from the machine's server binaries.

No Docker: the server binaries of Debian's `postgresql` package (`initdb`, `pg_ctl`, `psql`;
`./run` installs the package where they are missing). The cluster, its log and a generated
password live under one folder (`<data_dir>/postgres`); the server listens on 127.0.0.1 only
and every connection, local socket included, authenticates with that password (SCRAM).
Used by `croupier postgres` and the tests.

PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` system user
(the server runs as it) while the password file stays the invoking user's (0600).
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from infra.kafka_local import free_port, port_in_use

# characters of a path that pg_ctl's shell command line cannot carry
_SHELL_QUOTES = "'\"`$\\"


class PostgresLocalError(RuntimeError):
    """A local server could not be prepared, started or stopped; the message says why."""


@dataclass(frozen=True, kw_only=True)
class LocalPostgres:
    """One local cluster: where it lives and where it listens."""

    home: Path
    port: int = 55432
    user: str = "croupier"
    database: str = "lake"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def log_file(self) -> Path:
        return self.home / "server.log"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    def password(self) -> str:
        try:
            return self.password_file.read_text().strip()
        except FileNotFoundError:
            raise PostgresLocalError(
                f"no password at {self.password_file}: run `croupier postgres start` first"
            ) from None

    def dsn(self, *, database: str | None = None) -> str:
        """The server's URL with its password (postgres://user:password@127.0.0.1:port/db)."""
        return (
            f"postgres://{self.user}:{quote(self.password(), safe='')}@127.0.0.1:{self.port}"
            f"/{database or self.database}"
        )


def binaries() -> Path:
    """The folder of the server binaries: the newest /usr/lib/postgresql/<major>/bin, else the
    folder `pg_ctl` is found in on PATH."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if found:
        return found[-1].parent
    on_path = shutil.which("pg_ctl")
    if on_path is not None:
        return Path(on_path).resolve().parent
    raise PostgresLocalError(
        "the PostgreSQL server binaries were not found (pg_ctl): install Debian's "
        "`postgresql` package (`./run test` does so when run as root)"
    )


def _server_user() -> pwd.struct_passwd | None:
    """The system user the server runs as when we are root (None: as ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresLocalError(
            "PostgreSQL refuses to run as root and there is no `postgres` system user "
            "(Debian's postgresql package creates it)"
        ) from None


def _run(
    server: LocalPostgres, tool: str, *args: str, timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    """A server binary as the server's user, with the cluster's password in its environment."""
    owner = _server_user()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC"}
    if server.password_file.is_file():
        env["PGPASSWORD"] = server.password()
    try:
        return subprocess.run(
            [str(binaries() / tool), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            cwd=server.home,
            stdin=subprocess.DEVNULL,
            user=owner.pw_uid if owner else None,
            group=owner.pw_gid if owner else None,
            extra_groups=[] if owner else None,
        )
    except subprocess.TimeoutExpired as exc:
        raise PostgresLocalError(f"{tool} did not finish within {timeout:.0f} s") from exc


def _blocking_folder(path: Path, owner: pwd.struct_passwd) -> Path | None:
    """The first folder on the way to `path` that `owner` may not walk into, if any."""
    for folder in [*reversed(path.resolve().parents), path.resolve()]:
        mode = folder.stat()
        if mode.st_uid == owner.pw_uid:
            allowed = mode.st_mode & stat.S_IXUSR
        elif mode.st_gid == owner.pw_gid:
            allowed = mode.st_mode & stat.S_IXGRP
        else:
            allowed = mode.st_mode & stat.S_IXOTH
        if not allowed:
            return folder
    return None


def _initdb(server: LocalPostgres) -> None:
    """A new cluster whose superuser is `server.user` with a generated password."""
    owner = _server_user()
    server.home.mkdir(parents=True, exist_ok=True)
    blocking = None if owner is None else _blocking_folder(server.home, owner)
    if blocking is not None:
        raise PostgresLocalError(
            f"the server runs as the `postgres` system user (never as root), which may not "
            f"enter {blocking}: choose a data folder it can reach (CROUPIER_DATA_DIR)"
        )
    server.data_dir.mkdir(mode=0o700, exist_ok=True)
    password = secrets.token_urlsafe(24)
    # initdb reads the password from a file the server's user can read, removed right after
    with tempfile.NamedTemporaryFile("w", dir=server.home, delete=False) as pwfile:
        pwfile.write(password + "\n")
    try:
        if owner is not None:
            os.chown(server.data_dir, owner.pw_uid, owner.pw_gid)
            os.chown(pwfile.name, owner.pw_uid, owner.pw_gid)
        result = _run(
            server, "initdb", "-D", str(server.data_dir), "-U", server.user,
            "-A", "scram-sha-256", f"--pwfile={pwfile.name}", "-E", "UTF8", "--locale=C",
            "--no-instructions",
        )  # fmt: skip
    finally:
        Path(pwfile.name).unlink(missing_ok=True)
    if result.returncode != 0:
        raise PostgresLocalError("initdb failed:\n" + (result.stdout + result.stderr)[-2000:])
    # 0600 from its first byte: never readable by others, even for an instant
    fd = os.open(server.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(password + "\n")


def initialised(server: LocalPostgres) -> bool:
    return (server.data_dir / "PG_VERSION").is_file()


def running_pid(server: LocalPostgres) -> int | None:
    """The postmaster's pid when this cluster's server runs (its postmaster.pid names a live
    `postgres` process), else None."""
    try:
        pid = int((server.data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):  # none, unreadable, or not a file at all
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    if cmdline and cmdline[0].endswith(b"postgres") and str(server.data_dir).encode() in cmdline:
        return pid
    return None


def answers(server: LocalPostgres) -> bool:
    """True when the server accepts the cluster's user and password over TCP and answers."""
    if not server.password_file.is_file():
        return False
    result = _run(
        server, "psql", "-h", "127.0.0.1", "-p", str(server.port), "-U", server.user,
        "-d", "postgres", "-tAc", "SELECT 1", timeout=10,
    )  # fmt: skip
    return result.returncode == 0 and result.stdout.strip() == "1"


def create_database(server: LocalPostgres, name: str) -> str:
    """Database `name` on the running server (made unless it exists); its URL with password."""
    if not name.replace("_", "").isalnum():
        raise PostgresLocalError(f"database names here are letters, digits and _: {name!r}")
    found = _run(
        server, "psql", "-h", "127.0.0.1", "-p", str(server.port), "-U", server.user,
        "-d", "postgres", "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{name}'",
    )  # fmt: skip
    if found.returncode != 0:
        raise PostgresLocalError("the server does not answer:\n" + found.stderr[-2000:])
    if found.stdout.strip() != "1":
        made = _run(
            server, "createdb", "-h", "127.0.0.1", "-p", str(server.port), "-U", server.user,
            name,
        )  # fmt: skip
        if made.returncode != 0:
            raise PostgresLocalError("createdb failed:\n" + made.stderr[-2000:])
    return server.dsn(database=name)


def start(server: LocalPostgres, *, timeout: float = 60.0) -> tuple[int, bool]:
    """Start the server (a new cluster the first time) unless it already runs, with its
    database; return (pid, started_now). Two starts at once (two shells, services started
    together) take turns: the second finds the server the first started."""
    unsafe = sorted(set(str(server.home)) & set(_SHELL_QUOTES))
    if unsafe:
        # pg_ctl starts the server through /bin/sh, quoting its paths in the shell's way
        raise PostgresLocalError(
            f"PostgreSQL cannot run from {server.home}: pg_ctl passes the path through the "
            f"shell, which the characters {' '.join(unsafe)} break. Choose a data_dir "
            "(CROUPIER_DATA_DIR) without them"
        )
    try:
        server.home.mkdir(parents=True, exist_ok=True)
        with (server.home / ".start.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released by the kernel if this process dies
            try:
                return _start(server, timeout=timeout)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    except OSError as exc:  # its folders are not what they should be (a file, no access)
        raise PostgresLocalError(f"PostgreSQL cannot start in {server.home}: {exc}") from None


def _start(server: LocalPostgres, *, timeout: float) -> tuple[int, bool]:
    pid = running_pid(server)
    if pid is not None:
        return pid, False
    if port_in_use(server.port):
        raise PostgresLocalError(
            f"port {server.port} on 127.0.0.1 is taken by another program; stop it, or choose "
            "another port (CROUPIER_LOCAL_POSTGRES_PORT)"
        )
    if not initialised(server):
        if server.data_dir.is_dir() and any(server.data_dir.iterdir()):
            raise PostgresLocalError(
                f"{server.data_dir} holds a cluster that was never completed (its first start "
                "was interrupted): remove that folder and start again"
            )
        _initdb(server)
    elif not server.password_file.is_file():
        raise PostgresLocalError(
            f"the cluster in {server.data_dir} has lost its password file "
            f"({server.password_file}): no client could connect. Restore the file, or remove "
            f"{server.home} (its data too) and start again"
        )
    # TCP on loopback only, no Unix socket (every client here uses TCP; a socket path is
    # limited to 107 bytes and would need quoting)
    options = (
        f"-p {int(server.port)} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
        "-c timezone=UTC -c max_connections=200"
    )
    owner = _server_user()
    if owner is not None and not server.log_file.exists():
        server.log_file.touch()
        os.chown(server.log_file, owner.pw_uid, owner.pw_gid)
    result = _run(
        server, "pg_ctl", "-D", str(server.data_dir), "-o", options, "-l", str(server.log_file),
        "-w", "-t", str(math.ceil(timeout)), "start", timeout=timeout + 10,
    )  # fmt: skip
    if result.returncode != 0:
        tail = server.log_file.read_text(errors="replace").splitlines()[-20:]
        late = ""
        if running_pid(server) is not None:  # it came up after the wait: not left behind
            stop(server)
            late = f"It did not answer within {timeout:g} s and was stopped: give it longer "
            late += "(--timeout).\n"
        raise PostgresLocalError(
            "PostgreSQL did not start:\n" + late + result.stderr[-1000:] + "\n".join(tail)
        )
    try:
        create_database(server, server.database)
    except PostgresLocalError:
        stop(server)
        raise
    pid = running_pid(server)
    if pid is None:
        raise PostgresLocalError(f"PostgreSQL started but is not running; see {server.log_file}")
    return pid, True


def stop(server: LocalPostgres, *, timeout: float = 60.0) -> bool:
    """Stop this cluster's server (fast shutdown: sessions end, nothing committed is lost);
    return False when none was running."""
    if running_pid(server) is None:
        return False
    result = _run(
        server, "pg_ctl", "-D", str(server.data_dir), "-m", "fast", "-w", "-t",
        str(int(timeout)), "stop", timeout=timeout + 10,
    )  # fmt: skip
    if result.returncode != 0 and running_pid(server) is not None:
        raise PostgresLocalError("pg_ctl stop failed:\n" + result.stderr[-2000:])
    return True


@contextlib.contextmanager
def private() -> Iterator[LocalPostgres]:
    """A server on a free port in a temporary folder for the duration (tests, benchmarks)."""
    with tempfile.TemporaryDirectory(prefix="croupier-postgres-") as home:
        Path(home).chmod(0o755)  # the server's user walks into it
        server = LocalPostgres(home=Path(home), port=free_port())
        start(server)
        try:
            yield server
        finally:
            stop(server)


def from_settings() -> LocalPostgres:
    """The local server that the configuration describes."""
    from infra.config import get_settings

    settings = get_settings()
    # absolute: the server's tools run in that folder
    return LocalPostgres(home=settings.postgres_dir.resolve(), port=settings.local_postgres_port)
