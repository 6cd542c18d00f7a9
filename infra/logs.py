"""Log lines for operators: readable text by default, one JSON object per line when asked.

    2026-12-01T12:00:00.250Z INFO croupier.consumer assigned partitions={"0": 6473, "1": -2}
    {"at": "2026-12-01T12:00:00.250Z", "level": "INFO", "logger": "croupier.consumer",
     "msg": "assigned", "partitions": {"0": 6473, "1": -2}}          (on one line)

Structured values travel with the record, not inside its message: `log.info("metrics",
extra=fields(metrics={...}))`. JSON lines carry them as keys of their own (numbers stay numbers,
objects stay objects); text lines append them as `key=value` with the value in JSON. Times are
UTC, ISO-8601, to the millisecond.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, TextIO

FORMATS = ("text", "json")
ENV_VAR = "CROUPIER_LOG_FORMAT"
_BASE_KEYS = ("at", "level", "logger", "msg")


def fields(**values: Any) -> dict[str, Any]:
    """`extra=` for a log call: structured values shown beside the message."""
    return {"fields": values}


def _utc(record: logging.LogRecord) -> str:
    seconds = int(record.created)
    millis = min(999, int((record.created - seconds) * 1000))
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    values = getattr(record, "fields", None)
    return values if isinstance(values, dict) else {}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: at, level, logger, msg, then the record's fields (and `exc`
    with the traceback when there is one)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "at": _utc(record),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in _fields(record).items():
            out.setdefault(key, value)  # never hides one of the four base keys
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        # default=str: a value json cannot encode (a path, a datetime) is shown, never fatal.
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    """`<UTC time> <LEVEL> <logger> <message> key=value ...`, then the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_utc(record)} {record.levelname} {record.name} {record.getMessage()}"
        extras = " ".join(
            f"{key}={json.dumps(value, default=str)}" for key, value in _fields(record).items()
        )
        if extras:
            line = f"{line} {extras}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        if record.stack_info:
            line = f"{line}\n{self.formatStack(record.stack_info)}"
        return line


def configure(
    log_format: str = "text", *, verbose: bool = False, stream: TextIO | None = None
) -> None:
    """The process's logging: one handler on the root logger, on stderr, in `log_format`."""
    if log_format not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {log_format!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, handlers=[handler], force=True
    )
