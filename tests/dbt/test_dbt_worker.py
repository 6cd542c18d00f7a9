"""The dbt process a builder keeps between builds (infra/dbt_worker.py): it parses the project
once and hands each build a copy of that parse's nodes, so a chain of builds in one process makes
the marts a new process per build makes; a dbt process that dies between builds is replaced, and
one that dies in a build fails it with a clear error; a change to what the parse depends on
starts another; and no dbt process outlives a killed builder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest

from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import BuildError, BuildResult, build_marts
from tests.consumers.helpers import gone
from tests.dbt.conftest import settle_night
from tests.dbt.test_build_scope import assert_equal_to_a_full_build, cloned_nights


def test_one_dbt_process_builds_what_a_new_process_per_build_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone, night, lake = cloned_nights(tmp_path, seed=11, count=1)
    marts = tmp_path / "marts"
    with DbtWorker() as dbt:
        build_marts(lake, marts, quiet=True, dbt=dbt)
        first = dbt.pid
        assert first is not None
        # between builds it holds no file of the lake or the marts store open (its DuckDB is
        # closed with the command; dbt's own log, under the marts' _dbt folder, stays open)
        log = marts.resolve() / "_dbt" / "logs"
        assert [f for f in held_open(first, lake.root, marts) if not f.startswith(f"{log}/")] == []
        # new rows, then none, each build from a thread of its own that then ends (as a
        # server's would): each build compiles its own SQL (the ephemeral staging models' CTEs
        # read the rows since this build's last one), not the last build's, in one process
        for count in (1, 1, 0):
            if count:
                add_nights(clone, night, lake, count)
            built: list[BuildResult] = []
            thread = threading.Thread(target=build, args=(lake, marts, dbt, built))
            thread.start()
            thread.join()
            assert len(built) == 1 and not built[0].full_refresh
            assert dbt.pid == first  # one process, one parse

        # another lake into another store, in the same process: it reads which lake and which
        # store only while it builds
        other = settle_night(tmp_path / "other", tables=1, hours=0.5, seed=12)
        build_marts(other, tmp_path / "other-marts", quiet=True, dbt=dbt)
        assert dbt.pid == first

        # the process dies between builds (an operator's kill, the OOM killer): the next build
        # starts another
        os.kill(first, signal.SIGKILL)
        add_nights(clone, night, lake, 1)
        build(lake, marts, dbt)
        second = dbt.pid
        assert second not in (None, first)

        # it dies in the middle of a build: that build fails and says so, and the next one
        # starts another process
        add_nights(clone, night, lake, 1)
        killer = threading.Thread(target=kill_once_building, args=(marts, second))
        killer.start()
        with pytest.raises(BuildError, match=r"the dbt process died \(exit -9\)"):
            build(lake, marts, dbt)
        killer.join()
        assert dbt.pid is None
        build(lake, marts, dbt)
        third = dbt.pid
        assert third not in (None, first, second)

        # what dbt may read while it parses changed (here the environment): a new parse
        monkeypatch.setenv("CROUPIER_SOMETHING_NEW", "1")
        build(lake, marts, dbt)
        assert dbt.pid not in (None, first, second, third)

    # each against a build in a new process
    assert_equal_to_a_full_build(marts, lake, tmp_path / "full", None)
    assert_equal_to_a_full_build(tmp_path / "other-marts", other, tmp_path / "other-full", None)


def held_open(pid: int, *folders: Path) -> list[str]:
    """The files under `folders` that process `pid` has open."""
    roots = tuple(f"{folder.resolve()}/" for folder in folders)
    held = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith(roots):
            held.append(target)
    return held


def build(
    lake: lakes.Lake, marts: Path, dbt: DbtWorker, into: list[BuildResult] | None = None
) -> None:
    """An incremental build in `dbt`'s process (its result appended to `into`)."""
    result = build_marts(lake, marts, quiet=True, dbt=dbt)
    if into is not None:
        into.append(result)


def kill_once_building(marts: Path, pid: int) -> None:
    """SIGKILL `pid` once the build it runs has started its first node (dbt's log says so): a
    fixed delay let a build that had become faster end first."""
    deadline = time.monotonic() + 60
    with (marts / "_dbt" / "logs" / "dbt.log").open("rb") as log:
        log.seek(0, os.SEEK_END)  # this build's lines only, read as they come
        written = b""
        while b" START " not in written:
            assert time.monotonic() < deadline, "the build started no node"
            time.sleep(0.01)
            written = written[-16:] + log.read()
    os.kill(pid, signal.SIGKILL)


def add_nights(clone: ModuleType, night: lakes.Lake, lake: lakes.Lake, count: int) -> None:
    """`count` more clones of `night` into `lake`, each a casino day after the last."""
    first = int(clone.count_rounds(lake) // clone.count_rounds(night))
    clone.clone_nights(night, lake, first=first, count=count, evidence=False)


def test_no_dbt_process_outlives_a_killed_builder(tmp_path: Path) -> None:
    lake = settle_night(tmp_path / "night", tables=1, hours=0.5, seed=12)
    croupier = Path(sys.executable).with_name("croupier")
    builder = subprocess.Popen(
        [str(croupier), "build", "--lake", str(lake.root), "--marts", str(tmp_path / "marts")],
        stdout=subprocess.DEVNULL,
    )
    try:
        children = Path(f"/proc/{builder.pid}/task/{builder.pid}/children")
        deadline = time.monotonic() + 60
        while not (dbt := children.read_text().split()):
            assert builder.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(3.0)  # dbt is importing, parsing or building: a full build takes longer
        assert builder.poll() is None, "the build ended before it was killed"
        os.kill(builder.pid, signal.SIGKILL)  # the builder alone, not its process group
    finally:
        builder.kill()
        builder.wait()
    child = int(dbt[0])
    deadline = time.monotonic() + 5
    while not gone(child):
        assert time.monotonic() < deadline, "the dbt process went on after its builder died"
        time.sleep(0.05)
    assert not (tmp_path / "marts" / "published.json").exists()


def test_a_build_past_its_timeout_is_killed_and_fails_unpublished(tmp_path: Path) -> None:
    # A hung dbt (a lock never released, a query that never ends) would hold a running builder
    # for ever. A build takes seconds (dbt starts, then runs every model and test), so a
    # timeout of 1 s, or of 0.2 s with dbt already started, is one it runs past, as a hung
    # build would: it is killed, fails with a clear error, publishes nothing, and the next
    # build runs in a new dbt process.
    lake = settle_night(tmp_path / "night", tables=1, hours=0.5, seed=14)
    marts = tmp_path / "marts"
    command = [sys.executable, "-m", "croupier", "build", "--lake", str(lake.root),
               "--marts", str(marts), "--quiet"]  # fmt: skip
    once = subprocess.run([*command, "--timeout", "1"], capture_output=True, text=True)
    assert once.returncode == 1, once.stderr
    assert "error: dbt build failed: dbt ran longer than 1 s: killed" in once.stderr
    assert not (marts / "published.json").exists()

    with DbtWorker() as dbt:
        build_marts(lake, marts, quiet=True, dbt=dbt)
        published = (marts / "published.json").read_bytes()
        hung = dbt.pid
        assert hung is not None
        with pytest.raises(BuildError, match=r"dbt ran longer than 0.2 s: killed"):
            build_marts(lake, marts, quiet=True, dbt=dbt, timeout=0.2)
        assert dbt.pid is None and gone(hung)
        assert (marts / "published.json").read_bytes() == published
        build_marts(lake, marts, quiet=True, dbt=dbt, timeout=600)
        assert dbt.pid not in (None, hung)
    assert (marts / "published.json").read_bytes() != published
