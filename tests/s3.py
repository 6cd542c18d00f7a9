"""An S3-compatible server for tests (moto's, over real HTTP on loopback) and its credentials."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3

from infra.kafka_local import free_port

KEY, SECRET = "croupier-test-key", "croupier-test-secret"


@contextmanager
def server(log: Path) -> Iterator[str]:
    """moto_server on a free loopback port; yields its URL (AWS_ENDPOINT_URL)."""
    port = free_port()
    program = Path(sys.executable).with_name("moto_server")
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(program), "-H", "127.0.0.1", "-p", str(port)],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(url, timeout=2).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"moto_server did not start (see {log})") from None
                    time.sleep(0.2)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def environment(endpoint: str) -> dict[str, str]:
    """The AWS variables a process needs to reach the test server."""
    return {
        "AWS_ACCESS_KEY_ID": KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }


def client(endpoint: str) -> Any:
    return boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
        region_name="us-east-1",
    )  # fmt: skip


def objects(endpoint: str, bucket: str) -> list[str]:
    pages = client(endpoint).get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]
