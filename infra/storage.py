"""Where a lake's Parquet files live: a folder (local or shared), or an S3-compatible bucket.

A bucket is named by URL (`s3://bucket/prefix/`) and reached through DuckDB's `httpfs`
extension (from its pinned wheel). Credentials never enter our settings or SQL text we log:
DuckDB reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION from
the environment itself; a server other than AWS (MinIO, Ceph, moto) is AWS_ENDPOINT_URL, as
in the AWS tools, and is then addressed path-style (`http://host:port/bucket/key`).
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

import duckdb

REMOTE_SCHEMES = ("s3://",)
# What a bucket URL and an endpoint may hold: the names S3 allows, nothing SQL or a shell would
# read otherwise (they go into DuckDB statements and dbt's environment).
_S3_URL = re.compile(r"s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/[A-Za-z0-9._\-=/]*)?")
_HOST_PORT = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.\-]+)(:[0-9]{1,5})?")


def is_remote(location: str) -> bool:
    return location.startswith(REMOTE_SCHEMES)


def check_data_location(location: str) -> str:
    """`location` if it is a folder path or an s3:// URL with a bucket, else ValueError."""
    if "://" not in location:
        return location
    if not is_remote(location):
        raise ValueError(f"lake_data: a folder or s3://bucket/prefix/, not {location!r}")
    segments = location.removeprefix("s3://").rstrip("/").split("/")
    if (
        not _S3_URL.fullmatch(location)
        or len(segments) < 2
        or any(part in ("", ".", "..") for part in segments)
    ):
        shown = "" if "@" in location else f", not {location!r}"  # it may hold a secret
        raise ValueError(
            "lake_data: s3://bucket/prefix/ (a bucket name, then a prefix of its own: letters, "
            "digits and . _ - = between single slashes, no '.' or '..' part, no credentials, "
            f"query or quotes){shown}"
        )
    return location.rstrip("/") + "/"


def endpoint_settings(environ: dict[str, str] | None = None) -> dict[str, str | bool]:
    """DuckDB's S3 settings for AWS_ENDPOINT_URL (empty for AWS itself). ValueError for an
    endpoint that is not http(s)://host[:port]."""
    url = (environ if environ is not None else os.environ).get("AWS_ENDPOINT_URL", "").strip()
    if not url:
        return {}
    parts = urlsplit(url)
    if (
        parts.scheme not in ("http", "https")
        or not _HOST_PORT.fullmatch(parts.netloc)
        or parts.path.strip("/")
        or parts.query
    ):
        raise ValueError(f"AWS_ENDPOINT_URL: http(s)://host[:port], not {url!r}")
    return {
        "s3_endpoint": parts.netloc,
        "s3_use_ssl": parts.scheme == "https",
        "s3_url_style": "path",
    }


def configure(con: duckdb.DuckDBPyConnection) -> None:
    """Load httpfs into `con` and point it at AWS_ENDPOINT_URL when one is set."""
    con.execute("LOAD httpfs")
    for name, value in endpoint_settings().items():
        con.execute(f"SET GLOBAL {name} = ?", [value])
