"""No command destroys or mixes data it was not told to by name: the demo keeps to its own
folder, and a lake holds the one stream it was bound to (issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from consumers.sink import content_hashes
from infra import binding
from infra import lake as lakes
from tests.consumers.helpers import consumer_command, consumer_env, night, publish_raw

SMALL_DEMO = ("--tables", "1", "--hours", "0.5", "--no-build", "--json")


def croupier(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "croupier", *args], env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


def fingerprint(root: Path) -> tuple[int, dict[str, int], dict[str, str], list[object]]:
    """Snapshot id, row counts, content hashes and binding history of the lake at `root`."""
    con = lakes.connect(lakes.Lake(root=root), read_only=True)
    try:
        return (
            lakes.current_snapshot(con),
            lakes.table_counts(con),
            content_hashes(con),
            [(b["kind"], b["topic"], b["group_id"]) for b in binding.history(con)],
        )
    finally:
        con.close()


def recording(folder: Path, *, seed: int) -> Path:
    path = folder / f"night-{seed}.jsonl"
    path.write_text(
        "".join(m.value.decode() + "\n" for m in night(tables=1, hours=0.5, seed=seed).messages)
    )
    return path


def test_the_demo_never_touches_the_configured_lake(tmp_path: Path) -> None:
    env = {**os.environ, "CROUPIER_DATA_DIR": str(tmp_path / "var")}
    consumed = croupier("consume", "--file", str(recording(tmp_path, seed=5)), env=env)
    assert consumed.returncode == 0, consumed.stderr
    lake = tmp_path / "var" / "lake"
    before = fingerprint(lake)
    assert before[1]["main.events"] > 1000

    demo = croupier("demo", *SMALL_DEMO, env=env)
    assert demo.returncode == 0, demo.stderr
    assert fingerprint(lake) == before  # row counts, content hashes, snapshot: untouched
    demo_lake = tmp_path / "var" / "demo" / "lake"
    assert fingerprint(demo_lake)[3] == [("demo", None, None)]
    assert str(demo_lake) in demo.stdout  # it says where it wrote

    again = croupier("demo", *SMALL_DEMO, env=env)  # the demo replaces its own folder
    assert again.returncode == 0, again.stderr
    assert fingerprint(lake) == before

    # A folder that is not the demo's, or one holding the configured lake: refused, untouched.
    for folder in (tmp_path / "var", tmp_path / "notes"):
        folder.mkdir(exist_ok=True)
        (folder / "keep.txt").write_text("mine")
        refused = croupier("demo", *SMALL_DEMO, "--dir", str(folder), env=env)
        assert refused.returncode == 2, refused.stderr
        assert "error:" in refused.stderr and (folder / "keep.txt").read_text() == "mine"
    assert fingerprint(lake) == before


def test_a_demo_lake_is_not_consumed_into_from_a_recording(tmp_path: Path) -> None:
    env = {**os.environ, "CROUPIER_DATA_DIR": str(tmp_path / "var")}
    assert croupier("demo", *SMALL_DEMO, env=env).returncode == 0
    demo_lake = tmp_path / "var" / "demo" / "lake"
    before = fingerprint(demo_lake)
    refused = croupier("consume", "--file", str(recording(tmp_path, seed=6)),
                       "--lake", str(demo_lake), env=env)  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert "the demo's simulated night" in refused.stderr and "--adopt" in refused.stderr
    assert fingerprint(demo_lake) == before


@pytest.mark.kafka
def test_a_lake_bound_to_one_topic_refuses_another_until_adopted(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    first, second = topic_name, f"{topic_name}-other"
    publish_raw(kafka_bootstrap, first, night(tables=1, hours=0.5, seed=3).messages)
    publish_raw(kafka_bootstrap, second, night(tables=1, hours=0.5, seed=4).messages)
    lake, group = tmp_path / "lake", f"g-{uuid.uuid4().hex[:8]}"
    env = consumer_env(kafka_bootstrap)

    def consume(topic: str, *extra: str) -> subprocess.CompletedProcess[str]:
        command = consumer_command(lake, topic, group, "--stop-when-idle", "3", *extra)
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)

    done = consume(first)
    assert done.returncode == 0, done.stderr
    before = fingerprint(lake)
    assert [b[:2] for b in before[3]] == [("kafka", first)]
    con = lakes.connect(lakes.Lake(root=lake), read_only=True)
    try:
        bound = binding.current(con)
    finally:
        con.close()
    assert bound is not None and bound.cluster_id and bound.group_id == group

    refused = consume(second)
    assert refused.returncode == 2, refused.stderr
    assert repr(first) in refused.stderr and repr(second) in refused.stderr
    assert "Traceback" not in refused.stderr
    assert fingerprint(lake) == before  # nothing written, not even a snapshot

    # Recordings into a Kafka lake: refused too.
    path = recording(tmp_path, seed=8)
    by_file = subprocess.run(
        [sys.executable, "-m", "croupier", "consume", "--lake", str(lake), "--file", str(path)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert by_file.returncode == 2, by_file.stderr
    assert fingerprint(lake) == before

    adopted = consume(second, "--adopt")
    assert adopted.returncode == 0, adopted.stderr
    after = fingerprint(lake)
    assert [b[:2] for b in after[3]] == [("kafka", first), ("kafka", second)]
    assert after[1]["main.events"] > before[1]["main.events"]
    assert consume(second).returncode == 0  # bound to the second now: no flag needed
    assert consume(first).returncode == 2
