"""Many consumer processes, one lake with its catalog on a real PostgreSQL server (issue 19).

Three members of one consumer group read a six-partition topic into one PostgreSQL-catalog lake
while `croupier build` and a reader loop run against it; one member is SIGKILLed twice, another
leaves mid-run. The lake must end exactly as one consumer alone makes it on the embedded SQLite
catalog: same rows, same Kafka positions, nothing lost, nothing doubled.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.consumers.helpers import (
    consumer_command,
    consumer_env,
    derived_hashes,
    lake_progress,
    night,
    open_lake,
    publish_raw,
)

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).parents[2]


def _wait_for_progress(lake: Path, topic: str, catalog: str, at_least: int, limit_s: float) -> int:
    deadline = time.monotonic() + limit_s
    progress = lake_progress(lake, topic, catalog)
    while progress < at_least and time.monotonic() < deadline:
        time.sleep(0.2)
        progress = lake_progress(lake, topic, catalog)
    return progress


class _Readers(threading.Thread):
    """Counts the lake's events again and again while it is written: a reader must never fail,
    nor see a count go back."""

    def __init__(self, lake: Path, catalog: str) -> None:
        super().__init__(daemon=True)
        self.lake, self.catalog = lake, catalog
        self.stop = threading.Event()
        self.counts: list[int] = []
        self.errors: list[str] = []

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                con = open_lake(self.lake, self.catalog)
                try:
                    row = con.execute("SELECT count(*) FROM events").fetchone()
                    con.execute("SELECT game, sum(house_result_cents) FROM settlements GROUP BY 1")
                finally:
                    con.close()
                self.counts.append(int(row[0]) if row else 0)
            except Exception as exc:  # every failure is the test's finding
                self.errors.append(repr(exc))
            time.sleep(0.3)


def test_three_consumers_into_a_postgres_lake_equal_one_consumer_into_sqlite(
    kafka_bootstrap: str, topic_name: str, postgres_database: str, tmp_path: Path
) -> None:
    messages = night(tables=6, hours=3, seed=19).messages
    publish_raw(kafka_bootstrap, topic_name, messages, partitions=6)
    lake, group = tmp_path / "shared", f"g-{uuid.uuid4().hex[:8]}"
    env = consumer_env(kafka_bootstrap) | {"CROUPIER_LAKE_CATALOG": postgres_database}

    def member(*extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            consumer_command(lake, topic_name, group, "--batch-size", "500", *extra),
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip

    # No `lake init`: the three race to create the catalog, as services started together do.
    killed, leaving, staying = member(), member(), member("--stop-when-idle", "8")
    readers = _Readers(lake, postgres_database)
    builds: list[subprocess.CompletedProcess[str]] = []
    build_env = env | {
        "CROUPIER_LAKE_PATH": str(lake),
        "CROUPIER_MARTS_PATH": str(tmp_path / "marts"),
        "CROUPIER_DATA_DIR": str(tmp_path / "var"),
    }
    total = len(messages)
    try:
        assert _wait_for_progress(lake, topic_name, postgres_database, 1, 180) > 0
        readers.start()

        def build() -> None:
            command = [sys.executable, "-m", "croupier", "build"]
            done = subprocess.run(
                command, env=build_env, capture_output=True, text=True, timeout=900, cwd=ROOT
            )
            builds.append(done)

        builder = threading.Thread(target=build, daemon=True)
        builder.start()
        for share in (5, 4):  # SIGKILL at two moments, restarting the member each time
            at = _wait_for_progress(lake, topic_name, postgres_database, total // share, 300)
            assert total // share <= at < total, "the kill must land mid-run"
            killed.send_signal(signal.SIGKILL)
            killed.wait()
            killed = member()
        at = _wait_for_progress(lake, topic_name, postgres_database, total // 3, 300)
        assert at < total, "the member must leave mid-run"
        leaving.send_signal(signal.SIGTERM)  # leaves the group: its partitions move over
        _, err_leaving = leaving.communicate(timeout=120)
        assert leaving.returncode == 0, err_leaving[-3000:]
        assert "revoked" in err_leaving
        _wait_for_progress(lake, topic_name, postgres_database, total, 600)
        killed.send_signal(signal.SIGTERM)
        _, err_killed = killed.communicate(timeout=120)
        assert killed.returncode == 0, err_killed[-3000:]
        _, err_staying = staying.communicate(timeout=600)
        assert staying.returncode == 0, err_staying[-3000:]
        builder.join(timeout=900)
    finally:
        readers.stop.set()
        for process in (killed, leaving, staying):
            if process.poll() is None:
                process.kill()
                process.wait()
    readers.join(timeout=60)
    assert not readers.errors, readers.errors[:3]
    assert len(readers.counts) >= 3 and readers.counts == sorted(readers.counts)
    assert builds and builds[0].returncode == 0, builds[0].stdout[-3000:] + builds[0].stderr[-3000:]
    assert lake_progress(lake, topic_name, postgres_database) == total

    # The same topic, one consumer, the embedded SQLite catalog.
    single = tmp_path / "single"
    alone = subprocess.run(
        consumer_command(single, topic_name, f"g-{uuid.uuid4().hex[:8]}", "--stop-when-idle", "4"),
        env={k: v for k, v in env.items() if k != "CROUPIER_LAKE_CATALOG"},
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip
    assert alone.returncode == 0, alone.stderr[-3000:]
    assert derived_hashes(lake, postgres_database, positions=True) == derived_hashes(
        single, positions=True
    )
    assert (single / "catalog.sqlite").is_file() and not (lake / "catalog.sqlite").exists()

    # `croupier status` reads the shared lake's positions from its PostgreSQL catalog.
    status = subprocess.run(
        [sys.executable, "-m", "croupier", "status", "--json", "--lake", str(lake),
         "--topic", topic_name],
        env=env, capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert status.returncode == 0, status.stderr[-3000:]
    report = json.loads(status.stdout)
    assert len(report["partitions"]) == 6
    assert all(row["lag"] == 0 for row in report["partitions"].values()), report["partitions"]
    assert sum(row["lake_offset"] for row in report["partitions"].values()) == total
