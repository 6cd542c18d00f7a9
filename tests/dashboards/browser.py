"""Drive the real dashboards in Chromium: serve them with `croupier dashboard` on a free
loopback port, log in, open pages from the sidebar, wait until drawn, take full-page shots.

Used by the browser test, bench/bench_dashboards.py and, to refresh the README's pictures:
uv run python -m tests.dashboards.browser --lake L --marts M --out docs/screenshots
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from dashboards import auth

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
]  # fmt: skip
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
CHARTS = '[data-testid="stVegaLiteChart"]'
MANAGER, SURVEILLANCE = ("ana", "ana-password-1"), ("sam", "sam-password-1")


@dataclass(frozen=True, kw_only=True)
class PageSpec:
    slug: str
    title: str
    charts: int  # charts the page draws on the demo data


PAGES = [
    PageSpec(slug="floor", title="Floor", charts=1),
    PageSpec(slug="revenue", title="Revenue", charts=2),
    PageSpec(slug="integrity", title="Integrity", charts=3),
    PageSpec(slug="dealers", title="Dealers", charts=2),
    PageSpec(slug="progressive", title="Progressive", charts=2),
    PageSpec(slug="round_explorer", title="Round explorer", charts=0),
    PageSpec(slug="sign_ins", title="Sign-ins", charts=0),
]
# A manager lands on the Floor, and clicking the page one is on runs nothing: visit it last.
VISITS = [*PAGES[1:], PAGES[0]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_users(path: Path) -> Path:
    """A users file with one manager and one surveillance user of known passwords."""
    lines = []
    for (name, password), role in ((MANAGER, "manager"), (SURVEILLANCE, "surveillance")):
        lines += [f"[users.{name}]", f'role = "{role}"',
                  f'password_hash = "{auth.hash_password(password)}"', ""]  # fmt: skip
    path.write_text("\n".join(lines))
    return path


@contextmanager
def serve(
    lake: Path, marts: Path, state: Path, *, timeout: float = 60, behind_proxy: bool = False
) -> Iterator[str]:
    """`croupier dashboard` on a free loopback port; yields its URL, stops it afterwards.
    `behind_proxy`: loopback is a trusted reverse proxy (sign-ins are throttled by the
    X-Forwarded-For address, which a test's browser context can then set)."""
    state.mkdir(parents=True, exist_ok=True)
    users = write_users(state / "users.toml")
    port = free_port()
    env = {**os.environ, "CROUPIER_DATA_DIR": str(state)}
    if behind_proxy:
        env["CROUPIER_DASHBOARD_TRUSTED_PROXIES"] = '["127.0.0.1"]'
    for name in ("CROUPIER_LAKE_PATH", "CROUPIER_MARTS_PATH", auth.USERS_ENV):
        env.pop(name, None)
    log = (state / "server.log").open("w")
    command = [sys.executable, "-m", "croupier", "dashboard", "--lake", str(lake),
               "--marts", str(marts), "--users", str(users), "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"the dashboard exited: {(state / 'server.log').read_text()}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"no dashboard at {url} after {timeout} s")
            time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


# Counts the app's finished script runs: a MutationObserver on the script-state attribute of
# the app's root, so a rerun that starts and ends between two looks is still seen.
_COUNT_RUNS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (app.__runs === undefined) {
    app.__runs = 0;
    new MutationObserver((records) => {
      records.forEach((record, i) => {
        const next = i + 1 < records.length ? records[i + 1].oldValue
          : app.getAttribute('data-test-script-state');
        if (record.oldValue !== 'notRunning' && next === 'notRunning') app.__runs += 1;
      });
    }).observe(app, {attributes: true, attributeOldValue: true,
                     attributeFilter: ['data-test-script-state']});
  }
  return app.__runs;
}"""


# What each page's console said, kept from its first runs() call: evidence for a timeout.
_CONSOLE: weakref.WeakKeyDictionary[Page, list[str]] = weakref.WeakKeyDictionary()
EVIDENCE = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboards" / "timeouts"


def runs(page: Page) -> int:
    """Script runs the app finished so far (starts counting, and keeping the page's console
    messages, on the first call)."""
    if page not in _CONSOLE:
        messages: list[str] = []
        _CONSOLE[page] = messages
        page.on(
            "console", lambda m: messages.append(f"{time.strftime('%H:%M:%S')} {m.type}: {m.text}")
        )
        page.on(
            "pageerror", lambda e: messages.append(f"{time.strftime('%H:%M:%S')} pageerror: {e}")
        )
    return int(page.evaluate(_COUNT_RUNS))


@contextmanager
def evidence_on_timeout(page: Page, waiting_for: str) -> Iterator[None]:
    """A Playwright timeout inside becomes an AssertionError naming a screenshot and the
    page's console log, both saved under test-artifacts/dashboards/timeouts/."""
    try:
        yield
    except PlaywrightTimeoutError as exc:
        EVIDENCE.mkdir(parents=True, exist_ok=True)
        stem = EVIDENCE / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{id(page) % 10_000}"
        notes = [f"waiting for: {waiting_for}", f"url: {page.url}"]
        try:
            state = page.evaluate(
                "() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
                " return a ? [a.getAttribute('data-test-script-state'), a.__runs] : null; }"
            )
            notes.append(f"script state, runs counted: {state}")
            page.screenshot(path=str(stem.with_suffix(".png")), full_page=True)
        except Exception as shot:  # the page may be gone; keep what there is
            notes.append(f"no screenshot: {shot}")
        notes += ["console:", *_CONSOLE.get(page, ["(not watched)"])]
        stem.with_suffix(".log").write_text("\n".join(notes) + "\n")
        raise AssertionError(
            f"timed out waiting for {waiting_for}; screenshot {stem}.png, console {stem}.log"
        ) from exc


def wait_idle(page: Page, *, timeout_ms: int = 60_000) -> None:
    """Wait until no script run is going on."""
    with evidence_on_timeout(page, "the app to be idle"):
        page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
            timeout=timeout_ms
        )


def wait_run(page: Page, before: int, charts: int = 0, *, timeout_ms: int = 60_000) -> None:
    """Wait for a script run to finish after `before` runs, then for the charts to be drawn
    (Vega draws after the script ends)."""
    with evidence_on_timeout(page, f"a script run after run {before}"):
        page.wait_for_function(
            "n => document.querySelector('[data-testid=\"stApp\"]').__runs > n",
            arg=before,
            timeout=timeout_ms,
        )
    wait_idle(page, timeout_ms=timeout_ms)
    if charts:
        with evidence_on_timeout(page, f"{charts} charts drawn"):
            page.locator(f"{CHARTS} canvas, {CHARTS} svg").nth(charts - 1).wait_for(
                timeout=timeout_ms
            )


def log_in(page: Page, url: str, who: tuple[str, str]) -> None:
    page.goto(url)
    page.get_by_role("textbox", name="User name").fill(who[0])
    page.get_by_role("textbox", name="Password").fill(who[1])
    page.get_by_role("button", name="Log in").click()
    # The sign-in loads the app anew, through the session route, with its cookie.
    with evidence_on_timeout(page, "the sidebar after signing in"):
        page.wait_for_url(url.rstrip("/") + "/", timeout=60_000)
        page.wait_for_load_state("load")
        page.locator('[data-testid="stSidebarNav"]').wait_for()
    wait_idle(page)


def open_page(page: Page, spec: PageSpec) -> float:
    """Click the page in the sidebar; seconds until it is drawn."""
    before = runs(page)
    started = time.perf_counter()
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=spec.title).click()
    wait_run(page, before, spec.charts)
    page.get_by_role("heading", name=spec.title).first.wait_for()
    return time.perf_counter() - started


def nav_titles(page: Page) -> list[str]:
    links = page.locator('[data-testid="stSidebarNav"] a')
    # a link's text is its icon's name, then its title
    return [links.nth(i).inner_text().strip().splitlines()[-1] for i in range(links.count())]


def search_round(page: Page, round_id: str) -> float:
    """Type a round id in the Round explorer; seconds until its events are shown."""
    box = page.get_by_role("textbox", name="Round id")
    box.fill(round_id)
    before = runs(page)
    started = time.perf_counter()
    box.press("Enter")
    wait_run(page, before)
    page.get_by_text("Events, in sequence order").wait_for()
    return time.perf_counter() - started


def pick(page: Page, label: str, option: str, charts: int) -> float:
    """Choose `option` in a sidebar multiselect; seconds until the page is redrawn."""
    page.locator('[data-testid="stSidebar"]').get_by_role("combobox", name=label).click()
    before = runs(page)
    started = time.perf_counter()
    page.get_by_role("option", name=option, exact=True).click()
    wait_run(page, before, charts)
    elapsed = time.perf_counter() - started
    page.keyboard.press("Escape")
    return elapsed


def full_page_shot(page: Page, path: Path, *, width: int = 1400) -> None:
    """A screenshot of the whole page: Streamlit scrolls inside its main block, so the window
    is made as tall as that block first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(max(int(height), 900), 12_000)})
    page.wait_for_timeout(800)  # charts re-lay out to the new size
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": width, "height": 900})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lake", type=Path, required=True)
    parser.add_argument("--marts", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--round", default=None, help="round shown in the Round explorer")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as state,
        serve(args.lake, args.marts, Path(state)) as url,
        sync_playwright() as playwright,
    ):
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        log_in(page, url, MANAGER)
        for spec in VISITS:
            open_page(page, spec)
            if spec.slug == "round_explorer" and args.round:
                search_round(page, args.round)
            full_page_shot(page, args.out / f"{spec.slug}.png")
            print(args.out / f"{spec.slug}.png")
        browser.close()


if __name__ == "__main__":
    main()
