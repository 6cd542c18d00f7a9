"""Read-only SQL sessions that a user's SQL cannot turn into a writer.

Attaching the lake READ_ONLY is not enough on its own: SQL can detach it and attach the same
catalog again read-write, copy query results to any file, load extensions, or call DuckLake's
maintenance functions, which delete data files from disk before they find the catalog
read-only (measured: `ducklake_cleanup_old_files` on a read-only attach removed the files
before failing). A locked session therefore has three walls:

1. DuckDB's own: no file access outside the attached stores' data folders
   (`allowed_directories` + `enable_external_access = false`: no COPY TO, no reading other
   files, no INSTALL/LOAD), and the configuration locked so that SQL cannot undo it;
2. statements: only queries (`SELECT`, `FROM`, `WITH`, `SHOW`, `DESCRIBE`, `SUMMARIZE`,
   `VALUES`, the PRAGMAs DuckDB turns into one, such as `PRAGMA database_list`) and
   `EXPLAIN [ANALYZE]` of one; no ATTACH, DETACH, USE, SET, CALL, other PRAGMAs, COPY,
   EXPORT, CREATE, INSERT, UPDATE, DELETE, PREPARE or transactions;
3. functions: a query may not call a function that writes, attaches or runs SQL it was given
   as text (which would hide the first two from this check): DuckLake's maintenance and
   commit functions, the SQLite scanner's attach and query, `query`, checkpoints,
   `json_execute_serialized_sql`, `getenv`; nor read files or URLs by name (`read_*`,
   `*_scan`, `glob`, `FROM 'a/file'`: the lake's tables are read through the lake, and
   `allowed_directories` compares an s3:// URL as text, `..` and all), nor read the
   configuration, which holds the S3 credentials (`current_setting`, `duckdb_settings`).

The checks read DuckDB's own parse tree (`extract_statements`, `json_serialize_sql`), not the
text, so comments, case and quoting cannot hide a statement or a function call; and the
statements run are the very ones checked, none of them unless all pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

import duckdb

# DuckLake table functions that only read the catalog.
_DUCKLAKE_READERS = frozenset(
    {
        "ducklake_current_snapshot",
        "ducklake_last_committed_snapshot",
        "ducklake_list_files",
        "ducklake_options",
        "ducklake_scan",
        "ducklake_settings",
        "ducklake_snapshots",
        "ducklake_table_changes",
        "ducklake_table_deletions",
        "ducklake_table_info",
        "ducklake_table_insertions",
    }
)
_REFUSED_FUNCTIONS = frozenset(
    {
        "query",
        "json_execute_serialized_sql",
        "getenv",
        "checkpoint",
        "force_checkpoint",
        # the configuration holds the S3 credentials httpfs read from the environment
        "current_setting",
        "duckdb_settings",
        "duckdb_secrets",
        "which_secret",
        "glob",
    }
)
_REFUSED_PREFIXES = ("sqlite_", "postgres_", "mysql_")
# Functions that read a file or URL they are given: the lake's tables are read through the
# lake. (DuckDB's `allowed_directories` keeps local paths inside the lake's folder, `..` and
# all, but compares an s3:// URL as text, and `s3://lake/prefix/../../other/key` reached
# another bucket; a computed URL cannot be judged from the text.)
_FILE_READERS = re.compile(r"(read_|parquet_|sniff_|iceberg_|delta_).*|.*_scan", re.IGNORECASE)
_EXPLAIN = re.compile(r"^\s*EXPLAIN(\s+ANALY[SZ]E)?\b", re.IGNORECASE)


class Refused(Exception):
    """A statement a read-only session does not run; the message says why."""


def lock(con: duckdb.DuckDBPyConnection, readable: Sequence[str]) -> None:
    """Lock `con` (its stores already attached): files only under `readable` (the attached
    stores' data locations: folders or bucket prefixes, each ending in `/`), no external
    access, configuration frozen."""
    con.execute("SET allowed_directories = ?", [list(readable)])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def checked(con: duckdb.DuckDBPyConnection, sql: str) -> list[duckdb.Statement]:
    """The statements of `sql`, to be run as they are, once every one of them is a query that
    calls no function that could write; else `Refused` (and none runs). A parse error is
    raised as DuckDB's own error."""
    statements = con.extract_statements(sql)
    for statement in statements:
        kind = statement.type
        if kind not in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN):
            name = getattr(kind, "name", str(kind))
            raise Refused(
                f"{name} is not allowed: this session is read-only and runs queries only "
                "(SELECT, FROM, WITH, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN, PRAGMAs that read)"
            )
        text = statement.query
        if kind == duckdb.StatementType.EXPLAIN:
            text = _EXPLAIN.sub("", text, count=1)
        rows = con.execute("SELECT json_serialize_sql(?)", [text]).fetchall()
        tree = json.loads(str(rows[0][0]))
        if tree.get("error"):
            raise Refused(
                "only queries are allowed in this read-only session "
                f"({tree.get('error_message', 'not a query')})"
            )
        for function in _function_names(tree):
            if _refused(function):
                raise Refused(
                    f"{function}() is not allowed in this read-only session: it can write, "
                    "attach, run other SQL, read files or show the configuration"
                )
        for path in _paths_read(tree):
            raise Refused(
                f"reading {path!r} is not allowed: this session reads the lake's tables only"
            )
    return statements


def _refused(function: str) -> bool:
    name = function.lower()
    if name.startswith("ducklake_"):
        return name not in _DUCKLAKE_READERS
    return (
        name in _REFUSED_FUNCTIONS
        or name.startswith(_REFUSED_PREFIXES)
        or _FILE_READERS.fullmatch(name) is not None
    )


def _nodes(node: object) -> Iterator[dict[str, object]]:
    """Every object of a parse tree (`json_serialize_sql`), depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def _function_names(tree: object) -> Iterator[str]:
    for node in _nodes(tree):
        name = node.get("function_name")
        if isinstance(name, str):
            yield name


def _paths_read(tree: object) -> Iterator[str]:
    """Table names that are file paths or URLs (`FROM 'file.csv'`, a replacement scan)."""
    for node in _nodes(tree):
        name = node.get("table_name")
        if node.get("type") == "BASE_TABLE" and isinstance(name, str) and "/" in name:
            yield name
