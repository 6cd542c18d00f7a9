"""Nothing but the sign-in page is served before a sign-in (issue 15, finding 5): the real
`croupier dashboard` server, asked over HTTP for every endpoint Streamlit has."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboards.gate import is_open
from tests.dashboards.browser import serve

CLOSED = [
    "/_stcore/metrics",  # the finding: session counts and page names to anyone
    "/_stcore/script-health-check",
    "/_stcore/agent/openapi.json",
    "/_stcore/agent/interact",
    "/_stcore/agent/mcp",
    "/_stcore/upload_file/session/file",
    "/_stcore/bidi-components/x/index.js",
    "/component/x/index.html",
    "/_stcore//metrics",
    "//_stcore/metrics",
    "/_stcore/metrics/",
    "/%5Fstcore/metrics",
    "/_stcore/health/../metrics",
    "/_stcore/a-future-endpoint",
]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    state = tmp_path_factory.mktemp("gate")
    lake = state / "no-lake"
    with serve(lake, lake.parent / "no-marts", state) as address:
        yield address


def status(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


@pytest.mark.parametrize("path", CLOSED)
def test_streamlits_other_endpoints_answer_404_before_a_sign_in(url: str, path: str) -> None:
    assert status(url + path)[0] == 404


def test_the_health_check_and_the_sign_in_page_stay_reachable(url: str) -> None:
    assert status(url + "/_stcore/health") == (200, b"ok")
    assert status(url + "/_stcore/host-config")[0] == 200
    code, page = status(url + "/")
    assert code == 200 and b"<html" in page.lower()


@pytest.mark.parametrize(
    ("path", "open_"),
    [("/", True), ("/revenue", True), ("/static/js/main.js", True), ("/media/abc.csv", True),
     ("/_stcore/health", True), ("/_stcore/stream", True), ("/_stcore/host-config", True),
     ("/_stcore/metrics", False), ("_stcore/metrics", False), ("/_stcore", False),
     ("///_stcore///metrics", False), ("/component", False), ("/component/a", False)],
)  # fmt: skip
def test_the_gate_opens_only_what_the_sign_in_page_needs(path: str, open_: bool) -> None:
    assert is_open(path) is open_


def test_docs_name_what_stays_reachable() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "/_stcore/health" in readme and "/_stcore/metrics" in readme


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_any_path_is_judged_and_core_paths_stay_closed(path: str) -> None:
    """Input we did not design: whatever path a client asks for."""
    assert isinstance(is_open(path), bool)
    assert is_open("/_stcore/metrics/" + path) is False
    assert is_open("/_croupier/x" + path) is False
