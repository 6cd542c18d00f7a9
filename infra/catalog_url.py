"""A PostgreSQL catalog URL: checked, split from its password, and kept out of every text.

The password never enters SQL: `pass_password` hands it to libpq by PGPASSWORD, and `redact`
hides it (and any password of a catalog URL this process used) in messages.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit


def check_catalog_url(url: str) -> str:
    """`url` if it is a PostgreSQL URL (postgres://user@host[:port]/database, lower-case
    scheme, no password among its parameters), else ValueError (never showing a password)."""
    if not url.startswith(("postgres://", "postgresql://")):
        raise ValueError(  # the text is not shown: it may hold a password
            "not a PostgreSQL URL: postgres://user@host:port/database (lower-case scheme)"
        )
    shown = split_password(url)[0]  # no password, whatever it holds
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        raise ValueError(f"not a valid port in {shown!r}") from None
    if not parts.hostname or not parts.path.strip("/"):
        raise ValueError(f"a PostgreSQL URL needs a host and a database: {shown!r}")
    if any(key.lower() == "password" for key, _ in parse_qsl(parts.query)):
        raise ValueError(
            "a password among the URL's parameters: give it as postgres://user:password@... "
            "or in PGPASSWORD / ~/.pgpass"
        )
    return url


def split_password(url: str) -> tuple[str, str | None]:
    """The URL without its password, and the password (None when it has none); the host part
    is kept as written ([::1] included)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, hostport = parts.netloc.rsplit("@", 1)
    user, colon, password = userinfo.partition(":")
    if not colon:
        return url, None
    return urlunsplit(parts._replace(netloc=f"{user}@{hostport}")), unquote(password)


_SECRETS: set[str] = set()  # passwords of catalog URLs seen by this process, for `redact`


def redact(text: str) -> str:
    """`text` with the password of any PostgreSQL URL in it, and any password of a catalog
    URL this process has used (as written and as decoded), replaced by ***."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "***")
    return re.sub(r"(?i)(postgres(?:ql)?://[^:/@\s]*:)\S*@", r"\1***@", text)


def pass_password(url: str) -> str:
    """The URL without its password, which goes to libpq by PGPASSWORD instead: SQL text,
    DuckDB's error messages and its list of databases then never hold it. A server that does
    not answer is given up after PGCONNECT_TIMEOUT (10 s unless set)."""
    bare, password = split_password(url)
    if password is not None:
        _SECRETS.update({password, urlsplit(url).netloc.rsplit("@", 1)[0].partition(":")[2]})
        os.environ["PGPASSWORD"] = password
    os.environ.setdefault("PGCONNECT_TIMEOUT", "10")
    return bare
