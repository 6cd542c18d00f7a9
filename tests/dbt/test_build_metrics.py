"""`croupier build --every --metrics-port`: what the running builder says over HTTP equals what it
did. Real builds of a settled night, the real server, a build broken on purpose."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from consumers.metrics import scrape
from croupier.cli import main
from croupier.commands.build import BuildHealth
from infra.marts import default_marts_path, published_build
from tests.consumers.helpers import free_port, get
from tests.dbt.conftest import settle_night
from tests.dbt.test_invariants_catch_breaks import append_breaks


def _samples(base: str) -> dict[str, float]:
    _, text = get(f"{base}/metrics")
    return {
        name + json.dumps(labels, sort_keys=True) if labels else name: value
        for name, labels, value in scrape(text)
    }


def _until(condition: Any, process: subprocess.Popen[str], seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.5)


def test_the_builders_metrics_equal_its_builds_and_health_turns_on_a_failed_build(
    tmp_path: Path,
) -> None:
    lake = settle_night(tmp_path, tables=1, hours=0.5, seed=5)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    builder = subprocess.Popen(
        [sys.executable, "-m", "croupier", "build", "--lake", str(lake.root), "--quiet",
         "--every", "1", "--metrics-port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        passed = '{"result": "passed"}'
        _until(lambda: _samples(base).get(f"croupier_build_builds_total{passed}", 0) >= 2, builder)
        status, body = get(f"{base}/healthz")
        assert status == 200 and json.loads(body)["status"] == "ok", body
        samples = _samples(base)
        published = published_build(default_marts_path(lake))
        assert published is not None
        assert samples["croupier_build_published_lake_snapshot"] == published.lake_snapshot_id
        assert samples['croupier_build_builds_total{"result": "failed"}'] == 0
        assert (
            samples["croupier_build_seconds_count"]
            == samples[f"croupier_build_builds_total{passed}"]
        )

        # Rows that break the marts' invariants: the next build fails, the health says why,
        # and the published snapshot stays the last passing build's.
        append_breaks(lake)
        _until(lambda: get(f"{base}/healthz")[0] == 503, builder)
        body = json.loads(get(f"{base}/healthz")[1])
        assert body["reason"].startswith("the last build failed: dbt build failed"), body
        samples = _samples(base)
        assert samples['croupier_build_builds_total{"result": "failed"}'] >= 1
        after = published_build(default_marts_path(lake))
        assert after is not None and after.lake_snapshot_id == published.lake_snapshot_id
        assert samples["croupier_build_published_lake_snapshot"] == published.lake_snapshot_id
    finally:
        builder.send_signal(signal.SIGTERM)
        builder.communicate(timeout=60)


def test_build_health_goes_stale_only_past_its_allowance() -> None:
    now = [0.0]
    health = BuildHealth(every=10, clock=lambda: now[0])
    now[0] = 30.0  # a slow first build is not a failure ...
    assert health.check()[0]
    now[0] = 31.0  # ... until three intervals have gone by with none passed
    ok, body = health.check()
    assert not ok and body["reason"].startswith("the first build has not passed in 31 s")
    health.passed(seconds=50.0)  # the longest build seen widens the allowance
    now[0] = 31.0 + 30 + 50
    assert health.check()[0]
    now[0] += 1
    ok, body = health.check()
    assert not ok and body["reason"].startswith("no build has passed for 81 s")
    health.failed(RuntimeError("dbt build failed (exit 1)\nsee the log"), seconds=1.0)
    ok, body = health.check()
    assert not ok and body["reason"] == "the last build failed: dbt build failed (exit 1)"
    health.passed(seconds=1.0)
    assert health.check()[0]


def test_metrics_port_needs_every_and_a_free_port(tmp_path: Path) -> None:
    runner = CliRunner()
    once = runner.invoke(main, ["build", "--lake", str(tmp_path), "--metrics-port", "0"])
    assert once.exit_code == 2 and "add --every" in once.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        lake = settle_night(tmp_path, tables=1, hours=0.1, seed=3)
        port = str(taken.getsockname()[1])
        result = runner.invoke(
            main, ["build", "--lake", str(lake.root), "--every", "5", "--metrics-port", port]
        )
    assert result.exit_code == 2 and "already in use" in result.output, result.output
