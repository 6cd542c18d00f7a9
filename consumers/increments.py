"""The watermark of the dbt Python models (dbt_project/models/**/*.py), light to import: a build
that brings a model nothing new skips it without loading the games, numpy or pyarrow."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any


def source_version(module: str) -> str:
    """A hash of `module`'s source file, read without importing it: a model stores it beside
    the rows the module computed, and computes again the rows another version made."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"no source for {module}")
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()[:16]


def watermark(dbt: Any, session: Any) -> int:
    """The largest `lake_row_id` in the model's own table: -1 in a full build."""
    if not dbt.is_incremental:
        return -1
    (mark,) = session.sql(f"SELECT coalesce(max(lake_row_id), -1) FROM {dbt.this}").fetchone()
    return int(mark)


def unchanged(dbt: Any, session: Any, upstream: Any, mark: int) -> Any | None:
    """In an incremental build where `upstream` (a relation with `lake_row_id`) has no row above
    `mark`, the model's `watermark`: an empty relation shaped like the model's table, for the
    model to return (it appends or replaces nothing). Otherwise None: the model has work to do."""
    if mark < 0 or upstream.filter(f"lake_row_id > {mark}").limit(1).fetchone() is not None:
        return None
    return session.sql(f"SELECT * FROM {dbt.this} LIMIT 0")
