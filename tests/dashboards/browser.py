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

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright
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
    PageSpec(slug="players", title="Players", charts=0),
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


# Counts the app's script runs where they cannot be missed, and says when the page shows them.
# The script-state attribute of the app's root is no count: React batches the state changes of
# the messages it has in hand into one render, so under load a whole run (running, its
# elements, finished, not running) can reach the page as one render that leaves the attribute
# "notRunning" as it was, and an observer of the attribute sees no run at all.
# So, in every document of a watched page, before the app's own scripts:
# - `finished` counts the server's ScriptFinished messages (field 6 of a ForwardMsg; one message
#   a WebSocket frame), but for a run cut short by a rerun (the next run finishes instead). The
#   listener is added after the app's, so the app has handled the message (its microtasks run
#   between two listeners) when it is counted.
# - `drawn` is `finished` as of React's last commit of the app's root that shows the app idle
#   (a commit that follows the app's handling of a message shows it), through the hook React
#   offers its DevTools. So a run is drawn only once a page's DOM shows its end.
# - `doc` names the document: a reload or a redirect starts a new one, with counts from 0.
_WATCH = """(() => {
  if (window.__croupier !== undefined) return;
  const w = window.__croupier = {
    doc: `${Date.now()}-${Math.random().toString(36).slice(2)}`,
    finished: 0, drawn: 0, commits: 0, attributeRuns: 0,
  };
  w.drawnSince = (mark) => (mark.doc === w.doc ? w.drawn > mark.drawn : w.drawn > 0);

  const varint = (bytes, at) => {
    let value = 0, scale = 1, byte;
    do { byte = bytes[at++]; value += (byte & 0x7f) * scale; scale *= 128; }
    while (byte & 0x80 && at < bytes.length);
    return [value, at];
  };
  // The ScriptFinished status a ForwardMsg carries, or -1 when it is another message.
  const finishedStatus = (bytes) => {
    let at = 0, key, value;
    while (at < bytes.length) {
      [key, at] = varint(bytes, at);
      const field = Math.floor(key / 8), wire = key % 8;
      if (wire === 0) { [value, at] = varint(bytes, at); if (field === 6) return value; }
      else if (wire === 2) { [value, at] = varint(bytes, at); at += value; }
      else if (wire === 1) at += 8;
      else if (wire === 5) at += 4;
      else return -1;
    }
    return -1;
  };
  const FINISHED_EARLY_FOR_RERUN = 2;
  const Native = window.WebSocket;
  let latest = null;  // the app listens to its newest socket only
  class Watched extends Native {
    constructor(...args) {
      super(...args);
      latest = this;
      this.__counting = false;
    }
    addEventListener(type, listener, options) {
      super.addEventListener(type, listener, options);
      if (type !== 'message' || this.__counting) return;
      this.__counting = true;
      super.addEventListener('message', (event) => {
        if (this !== latest || !(event.data instanceof ArrayBuffer)) return;
        const status = finishedStatus(new Uint8Array(event.data));
        if (status >= 0 && status !== FINISHED_EARLY_FOR_RERUN) w.finished += 1;
      });
    }
  }
  window.WebSocket = Watched;

  const appOf = (root) => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && root.containerInfo instanceof Node && root.containerInfo.contains(app)
      ? app : null;
  };
  // Evidence only: the count the attribute's changes give (the old, fallible way).
  const observe = (app) => {
    if (app.__croupierObserved) return;
    app.__croupierObserved = true;
    new MutationObserver((records) => {
      records.forEach((record, i) => {
        const next = i + 1 < records.length ? records[i + 1].oldValue
          : app.getAttribute('data-test-script-state');
        if (record.oldValue !== 'notRunning' && next === 'notRunning') w.attributeRuns += 1;
      });
    }).observe(app, {attributes: true, attributeOldValue: true,
                     attributeFilter: ['data-test-script-state']});
  };
  const noop = () => {};
  const hook = window.__REACT_DEVTOOLS_GLOBAL_HOOK__ || (window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
    renderers: new Map(), supportsFiber: true, isDisabled: false,
    inject(renderer) {
      const id = this.renderers.size + 1;
      this.renderers.set(id, renderer);
      return id;
    },
    onScheduleFiberRoot: noop, onCommitFiberRoot: noop, onPostCommitFiberRoot: noop,
    onCommitFiberUnmount: noop, checkDCE: noop,
  });
  const previous = hook.onCommitFiberRoot;
  hook.onCommitFiberRoot = function (rendererId, root, ...rest) {
    try {
      const app = appOf(root);
      if (app !== null) {
        w.commits += 1;
        observe(app);
        if (app.getAttribute('data-test-script-state') === 'notRunning') w.drawn = w.finished;
      }
    } catch (error) {
      console.error(`croupier run counter: ${error}`);
    }
    return previous.call(this, rendererId, root, ...rest);
  };
})();"""


@dataclass(frozen=True)
class Runs:
    """Where a page stood: its document, and the script runs that document has drawn."""

    doc: str
    drawn: int

    def arg(self) -> dict[str, str | int]:
        """As the argument of window.__croupier.drawnSince(mark), in a page's function."""
        return {"doc": self.doc, "drawn": self.drawn}


# Watched pages and contexts (the script is added once to each).
_WATCHED: weakref.WeakSet[Page | BrowserContext] = weakref.WeakSet()
# What each page's console said, kept from its first runs() call: evidence for a timeout.
_CONSOLE: weakref.WeakKeyDictionary[Page, list[str]] = weakref.WeakKeyDictionary()
EVIDENCE = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboards" / "timeouts"


def watch(target: Page | BrowserContext) -> None:
    """Count the app's script runs in every document `target` loads from now on (see _WATCH):
    call it before the page (or the context's pages) load the app."""
    if target not in _WATCHED:
        target.add_init_script(_WATCH)
        _WATCHED.add(target)


def runs(page: Page) -> Runs:
    """The runs the page's document has drawn so far, for wait_run (and, from the first call,
    the page's console is kept as evidence for a timeout)."""
    if page not in _CONSOLE:
        messages: list[str] = []
        _CONSOLE[page] = messages
        page.on(
            "console", lambda m: messages.append(f"{time.strftime('%H:%M:%S')} {m.type}: {m.text}")
        )
        page.on(
            "pageerror", lambda e: messages.append(f"{time.strftime('%H:%M:%S')} pageerror: {e}")
        )
    mark = page.evaluate("() => { const w = window.__croupier; return w && [w.doc, w.drawn]; }")
    if not mark:
        raise RuntimeError("the page loaded the app before watch(page): its runs are not counted")
    return Runs(doc=str(mark[0]), drawn=int(mark[1]))


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
                " const w = window.__croupier;"
                " return [a && a.getAttribute('data-test-script-state'), w && {doc: w.doc,"
                " finished: w.finished, drawn: w.drawn, commits: w.commits,"
                " attributeRuns: w.attributeRuns}]; }"
            )
            notes.append(f"script state: {state[0]}; runs counted: {state[1]}")
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


def wait_run(page: Page, before: Runs, charts: int = 0, *, timeout_ms: int = 60_000) -> None:
    """Wait until the page shows a script run that finished after `before` (a run of a new
    document, if it loaded one since), then for the charts to be drawn (Vega draws after the
    script ends)."""
    with evidence_on_timeout(page, f"a script run after {before}"):
        page.wait_for_function(
            "mark => window.__croupier !== undefined && window.__croupier.drawnSince(mark)",
            arg=before.arg(),
            timeout=timeout_ms,
        )
    wait_idle(page, timeout_ms=timeout_ms)
    if charts:
        with evidence_on_timeout(page, f"{charts} charts drawn"):
            page.locator(f"{CHARTS} canvas, {CHARTS} svg").nth(charts - 1).wait_for(
                timeout=timeout_ms
            )


def log_in(page: Page, url: str, who: tuple[str, str]) -> None:
    watch(page)
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
