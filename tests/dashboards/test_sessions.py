"""The session cookie (issue 15, finding 3): signed, expiring, one-time handoff, ended for good
on logout. Pure code; the browser test signs in, reloads and logs out for real."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboards import acks, sessions

KEY = b"k" * 32


def test_a_signed_session_verifies_and_any_change_is_refused() -> None:
    session = sessions.new_session("ana", hours=12)
    cookie = sessions.sign(session, KEY)
    assert sessions.verify(cookie, KEY) == session
    version, body, mac = cookie.split(".")
    forged_body = sessions._b64(b'{"sid":"x","name":"root","exp":9999999999}')
    for forged in (
        f"{version}.{forged_body}.{mac}",  # another payload, the old signature
        f"{version}.{body}.{mac[:-2]}AA",
        f"v2.{body}.{mac}",
        cookie + ".x",
        "",
        "v1..",
        "v1.%%%.%%%",
    ):
        assert sessions.verify(forged, KEY) is None, forged
    assert sessions.verify(cookie, b"other-key" * 4) is None


def test_an_expired_session_is_refused() -> None:
    session = sessions.new_session("ana", hours=1)
    cookie = sessions.sign(session, KEY)
    assert sessions.verify(cookie, KEY, at=time.time() + 3599) is not None
    assert sessions.verify(cookie, KEY, at=time.time() + 3601) is None


def test_a_handoff_code_is_good_once() -> None:
    handoffs = sessions.Handoffs()
    session = sessions.new_session("ana", hours=1)
    code = handoffs.issue(session)
    assert handoffs.redeem("not-a-code") is None
    assert handoffs.redeem(code) == session
    assert handoffs.redeem(code) is None


def test_an_ended_session_stays_ended(tmp_path: Path) -> None:
    store = tmp_path / "audit.sqlite"
    session = sessions.new_session("ana", hours=1)
    assert not acks.session_ended(store, session.sid)
    acks.end_session(store, sid=session.sid, name=session.name)
    acks.end_session(store, sid=session.sid, name=session.name)  # twice is once
    assert acks.session_ended(store, session.sid)
    assert not acks.session_ended(store, sessions.new_session("ana", hours=1).sid)


def test_the_key_is_made_once_and_private(tmp_path: Path) -> None:
    path = tmp_path / "dashboards" / "session.key"
    key = sessions.load_key(path)
    assert len(key) == 32 and sessions.load_key(path) == key
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    path.write_bytes(b"short")
    with pytest.raises(ValueError, match="at least 32 bytes"):
        sessions.load_key(path)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_any_cookie_text_is_a_session_or_none_never_an_exception(text: str) -> None:
    """Input we did not design: whatever a browser sends as the cookie."""
    assert sessions.verify(text, KEY) is None
    body = sessions._b64(text.encode("utf-8", "surrogatepass"))
    assert sessions.verify(f"v1.{body}.{body}", KEY) is None
