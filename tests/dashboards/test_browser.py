"""The dashboards in a real browser: `croupier dashboard` serving on a free loopback port and
Debian's Chromium driven by Playwright. Log in, draw every page with its charts, find no error
element; full-page screenshots are kept in test-artifacts/dashboards/."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from dashboards import auth, sessions
from tests.dashboards.browser import (
    CHARTS,
    ERRORS,
    MANAGER,
    PAGES,
    SURVEILLANCE,
    VISITS,
    evidence_on_timeout,
    full_page_shot,
    launch,
    log_in,
    nav_titles,
    open_page,
    pick,
    runs,
    search_round,
    serve,
    wait_idle,
    wait_run,
    watch,
)
from tests.dashboards.conftest import DemoStores

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboards"


@pytest.fixture(scope="module")
def url(demo_stores: DemoStores, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    state = tmp_path_factory.mktemp("browser-state")
    with serve(demo_stores.lake, demo_stores.marts, state, behind_proxy=True) as address:
        yield address


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    tab = browser.new_page(viewport={"width": 1400, "height": 900})
    yield tab
    tab.close()


def test_manager_sees_every_page_drawn_without_an_error(
    url: str, page: Page, marts: duckdb.DuckDBPyConnection
) -> None:
    log_in(page, url, MANAGER)
    assert nav_titles(page) == [spec.title for spec in PAGES]
    row = marts.execute(
        "SELECT round_id FROM marts.main.fct_rounds WHERE game = 'pai_gow' AND violations > 0 "
        "ORDER BY round_id LIMIT 1"
    ).fetchone()
    assert row is not None
    for spec in VISITS:
        open_page(page, spec)
        if spec.slug == "round_explorer":
            search_round(page, str(row[0]))
            assert page.get_by_text("Rules cited").count() == 1
        full_page_shot(page, ARTIFACTS / f"{spec.slug}.png")
        assert page.locator(ERRORS).count() == 0, spec.slug
        assert page.locator(CHARTS).count() == spec.charts, spec.slug
        assert page.locator('[data-testid="stException"]').count() == 0


def test_surveillance_sees_integrity_dealers_players_and_round_explorer_only(
    url: str, page: Page
) -> None:
    log_in(page, url, SURVEILLANCE)
    assert nav_titles(page) == ["Integrity", "Dealers", "Players", "Round explorer"]
    assert page.get_by_role("heading", name="Integrity").count() == 1


def test_a_page_address_before_login_shows_only_the_login(url: str, page: Page) -> None:
    page.goto(f"{url}/revenue")
    page.get_by_role("textbox", name="User name").wait_for()
    wait_idle(page)
    assert page.get_by_text("Page not found").count() == 1
    assert page.locator('[data-testid="stMetric"]').count() == 0
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0


def test_a_revenue_filter_redraws_the_numbers(url: str, page: Page) -> None:
    log_in(page, url, MANAGER)
    revenue = next(spec for spec in PAGES if spec.slug == "revenue")
    open_page(page, revenue)
    handle = page.locator('[data-testid="stMetric"]').first
    before = handle.inner_text()
    pick(page, "Game", "Tripóker (Three Card Poker)", revenue.charts)
    assert handle.inner_text() != before
    assert page.locator(ERRORS).count() == 0


def sign_in(page: Page, name: str, password: str) -> str:
    """Submit the login form once; the refusal shown, or '' when signed in."""
    before = runs(page)
    page.get_by_role("textbox", name="User name").fill(name)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    # A refusal is a run of the login page; a sign-in loads the app anew (its session cookie).
    nav, refusal = '[data-testid="stSidebarNav"]', '[data-testid="stAlertContentError"]'
    with evidence_on_timeout(page, f"a refusal or the sidebar after {before}"):
        page.wait_for_function(
            "([mark, nav, refusal]) => document.querySelector(nav) !== null"
            " || (window.__croupier.drawnSince(mark) && document.querySelector(refusal) !== null)",
            arg=[before.arg(), nav, refusal],
            timeout=60_000,
        )
    wait_idle(page)
    if page.locator(nav).count():
        return ""
    return page.locator(refusal).inner_text()


def test_a_stranger_who_knows_a_user_name_cannot_lock_that_user_out(
    url: str, browser: Browser
) -> None:
    """Issue 15, finding 2: after 5 wrong passwords from anywhere the account was locked for
    60 s, the right password refused. Now the stranger's address waits longer and longer while
    the user, from another address, waits at most auth.USER_MAX_WAIT_S."""
    attacker = browser.new_context(extra_http_headers={"X-Forwarded-For": "203.0.113.7"})
    manager = browser.new_context(extra_http_headers={"X-Forwarded-For": "198.51.100.9"})
    try:
        tab = attacker.new_page()
        watch(tab)
        tab.goto(url)
        wait_idle(tab)
        refusals = [sign_in(tab, MANAGER[0], f"guess-{i}") for i in range(auth.FREE_FAILURES + 4)]
        assert refusals[0] == "Wrong user name or password."
        assert any("try again in" in r for r in refusals), refusals

        own = manager.new_page()
        watch(own)
        own.goto(url)
        wait_idle(own)
        started = time.monotonic()
        refusal = sign_in(own, *MANAGER)
        if refusal:  # at most the short per-account wait
            wait = int(refusal.split("try again in ")[1].split(" s")[0])
            assert wait <= auth.USER_MAX_WAIT_S, refusal
            own.wait_for_timeout((wait + 0.5) * 1000)
            refusal = sign_in(own, *MANAGER)
        assert refusal == "", refusal
        assert time.monotonic() - started < auth.USER_MAX_WAIT_S + 30
        # The attacker's address still waits, and the manager sees every refused attempt.
        # (The time the manager took may have let its current wait pass: after one more
        # failure it waits at least 4 s, longer than the next attempt takes.)
        again = [sign_in(tab, MANAGER[0], "guess-again") for _ in range(2)]
        assert any("try again in" in r for r in again), again
        open_page(own, next(spec for spec in PAGES if spec.slug == "sign_ins"))
        shown = own.locator('[data-testid="stMain"]').inner_text()
        assert "203.0.113.7" in shown
        assert "guess-" not in shown  # passwords are never logged
    finally:
        attacker.close()
        manager.close()


def test_a_timeout_leaves_a_screenshot_and_the_pages_console(url: str, page: Page) -> None:
    """The harness's rare timeout (a sidebar click whose run never came) leaves evidence."""
    log_in(page, url, SURVEILLANCE)
    before = runs(page)  # the console is kept from here on
    page.evaluate("() => console.log('croupier-evidence-probe')")
    # A run a million ahead never comes. (Waiting for just the next one did not always time
    # out: the landing page's live fragment reruns every few seconds.)
    never = replace(before, drawn=before.drawn + 1_000_000)
    with pytest.raises(AssertionError, match="screenshot") as failure:
        wait_run(page, never, timeout_ms=500)
    shot, log = str(failure.value).split("screenshot ")[1].split(", console ")
    assert Path(shot).stat().st_size > 0
    text = Path(log).read_text()
    assert "croupier-evidence-probe" in text and "script state" in text


def test_a_session_survives_a_reload_and_ends_on_logout(url: str, browser: Browser) -> None:
    """Issue 15, finding 3: a reload used to sign the user out (the session lived only in the
    websocket). Now an HttpOnly cookie carries it, and logging out kills that cookie for good."""
    context = browser.new_context()
    try:
        page = context.new_page()
        log_in(page, url, MANAGER)
        cookie = next(c for c in context.cookies() if c["name"] == sessions.COOKIE)
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
        assert page.evaluate("() => document.cookie").find(sessions.COOKIE) == -1
        page.reload()
        page.locator('[data-testid="stSidebarNav"]').wait_for()
        wait_idle(page)
        assert nav_titles(page) == [spec.title for spec in PAGES]

        page.get_by_role("button", name="Log out").click()
        page.get_by_role("textbox", name="User name").wait_for()
        assert not [c for c in context.cookies() if c["name"] == sessions.COOKIE]
        page.reload()
        page.get_by_role("textbox", name="User name").wait_for()
        wait_idle(page)
        assert page.locator('[data-testid="stSidebarNav"]').count() == 0
    finally:
        context.close()
    # A copy of the cookie taken before the logout opens nothing.
    thief = browser.new_context()
    try:
        thief.add_cookies([cookie])
        page = thief.new_page()
        page.goto(url)
        page.get_by_role("textbox", name="User name").wait_for()
        wait_idle(page)
        assert page.locator('[data-testid="stSidebarNav"]').count() == 0
    finally:
        thief.close()
