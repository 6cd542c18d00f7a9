"""Every page rendered by Streamlit's AppTest on a demo night, for each role: nothing but the
login before logging in, the roles' pages only, numbers equal to the marts', filters that
change them, and hostile input that changes nothing."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from datetime import time as clock
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.testing.v1 import AppTest, local_script_runner

from dashboards import acks, auth, data, rule_texts, ui
from tests.dashboards.browser import MANAGER, SURVEILLANCE

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboards" / "streamlit_app.py"
TITLES = {
    "floor": "Floor",
    "revenue": "Revenue",
    "integrity": "Integrity",
    "dealers": "Dealers",
    "players": "Players",
    "progressive": "Progressive jackpot",
    "round_explorer": "Round explorer",
    "sign_ins": "Refused sign-ins",
}
CHARTS = {"floor": 1, "revenue": 2, "integrity": 3, "dealers": 2, "progressive": 2}


def _money(cents: int) -> str:
    """Independent of ui.money: céntimos to the S/ text the pages show."""
    sign = "-" if cents < 0 else ""
    return f"{sign}S/ {abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def _started() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    return at


def _logged_in(who: tuple[str, str]) -> AppTest:
    at = _started()
    at.text_input(key="login_name").input(who[0])
    at.text_input(key="login_password").input(who[1])
    next(b for b in at.button if b.label == "Log in").click()
    at.run()
    assert not at.exception
    if auth.SESSION_KEY in at.session_state:  # signed in: a browser would now load the app
        at.run()  # with its session cookie; AppTest runs no script, so run it again here
        assert not at.exception
    return at


def _visit(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    return at


def _titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _nothing_wrong(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _unreachable(at: AppTest, page: str) -> bool:
    """AppTest refuses to switch to a page the router did not register for this session."""
    try:
        at.switch_page(f"app_pages/{page}.py")
    except ValueError as exc:
        return "Could not find a navigation page" in str(exc)
    return False


def test_before_login_only_the_login_page_exists(dashboard_env: Path) -> None:
    at = _started()
    _nothing_wrong(at)
    assert _titles(at) == ["Croupier"]
    assert not at.metric and not at.dataframe
    assert all(_unreachable(at, page) for page in TITLES)


def test_wrong_password_is_refused_and_shows_nothing(dashboard_env: Path) -> None:
    at = _logged_in(("ana", "not-her-password"))
    assert [e.value for e in at.error] == ["Wrong user name or password."]
    assert _titles(at) == ["Croupier"] and not at.metric
    # The refusal is in the managers' log of refused sign-ins, without the password.
    at = _visit(_logged_in(MANAGER), "sign_ins")
    _nothing_wrong(at)
    log = at.dataframe[-1].value
    assert "ana" in set(log["account"]) and "wrong password" in set(log["reason"])
    assert "not-her-password" not in log.to_csv()


@pytest.mark.parametrize(
    ("who", "page"),
    [(MANAGER, page) for page in TITLES]
    + [(SURVEILLANCE, page) for page in ("integrity", "dealers", "players", "round_explorer")],
)
def test_every_page_renders_for_each_role_that_may_see_it(
    dashboard_env: Path, who: tuple[str, str], page: str
) -> None:
    at = _visit(_logged_in(who), page)
    _nothing_wrong(at)
    assert _titles(at) == [TITLES[page]]
    assert len(at.get("vega_lite_chart")) == CHARTS.get(page, 0)


def test_surveillance_cannot_reach_revenue_floor_or_progressive(dashboard_env: Path) -> None:
    at = _logged_in(SURVEILLANCE)
    assert _titles(at) == ["Integrity"]  # the first page this role may see
    assert [p for p in TITLES if not _unreachable(at, p)] == [
        "integrity", "dealers", "players", "round_explorer"
    ]  # fmt: skip


@pytest.mark.parametrize("page", ["revenue", "floor", "progressive", "sign_ins"])
def test_a_manager_page_run_directly_refuses_a_surveillance_session(
    dashboard_env: Path, page: str
) -> None:
    at = AppTest.from_file(str(ROOT / "dashboards" / "app_pages" / f"{page}.py"))
    at.session_state[auth.SESSION_KEY] = auth.User(
        name="sam", role=auth.Role.SURVEILLANCE, logged_in_at=time.time()
    )
    at.run()
    assert [w.value for w in at.warning] == [
        "This page is not available to you. Log in with an account that may see it."
    ]
    assert not at.metric and not at.dataframe and not at.get("vega_lite_chart")


def test_revenue_numbers_equal_the_revenue_mart(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection
) -> None:
    at = _visit(_logged_in(MANAGER), "revenue")
    row = marts.execute(
        "SELECT sum(handle_cents), sum(house_result_cents), sum(commission_cents), "
        "round(sum(theoretical_win_cents)), sum(rounds), sum(players) "
        "FROM marts.main.agg_revenue WHERE period = 'day' AND dimension = 'casino'"
    ).fetchone()
    assert row is not None
    handle, house, commission, theoretical, rounds, players = (int(x) for x in row)
    shown = _metrics(at)
    assert shown["Handle"] == _money(handle)
    assert shown["House result"] == _money(house)
    assert shown["Commission"] == _money(commission)
    assert shown["Theoretical win"] == _money(theoretical)
    assert shown["Rounds"] == f"{rounds:,}"
    assert shown["Players"] == f"{players:,}"  # one casino day: distinct players of that day
    by_game = next(df.value for df in at.dataframe if "game" in df.value.columns)
    marts_games = dict(
        marts.execute(
            "SELECT dimension_value, handle_cents FROM marts.main.agg_revenue "
            "WHERE period = 'day' AND dimension = 'game'"
        ).fetchall()
    )
    shown_games = {
        g: round(s * 100) for g, s in zip(by_game["game"], by_game["handle_cents"], strict=True)
    }
    assert shown_games == marts_games


def test_revenue_filters_change_the_numbers_to_the_filtered_ones(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection
) -> None:
    at = _visit(_logged_in(MANAGER), "revenue")
    everything = _metrics(at)["Handle"]
    at.multiselect(key="revenue_games").select("holdem")
    at.run()
    _nothing_wrong(at)
    holdem = marts.execute(
        "SELECT sum(handle_cents) FROM marts.main.agg_revenue "
        "WHERE period = 'day' AND dimension = 'game' AND dimension_value = 'holdem'"
    ).fetchone()
    assert holdem is not None
    assert _metrics(at)["Handle"] == _money(int(holdem[0])) != everything
    dealer, handle = marts.execute(
        "SELECT dealer_id, sum(wager_cents) FROM marts.main.fct_bets WHERE game = 'holdem' "
        "GROUP BY 1 ORDER BY 1 LIMIT 1"
    ).fetchone() or ("", 0)
    at.multiselect(key="revenue_dealers").select(dealer)
    at.run()
    _nothing_wrong(at)
    assert _metrics(at)["Handle"] == _money(int(handle))
    played = {
        s for (s,) in marts.execute("SELECT DISTINCT shift_no FROM marts.main.fct_bets").fetchall()
    }
    idle = min({1, 2, 3} - played)  # the demo plays three hours: some shift saw no play
    at.multiselect(key="revenue_shifts").select(idle)
    at.run()
    _nothing_wrong(at)
    assert [i.value for i in at.info] == ["No settled bets match these filters."]
    assert not at.metric


HOSTILE = [
    "'; DROP TABLE fct_rounds; --",
    "' OR '1'='1",
    "PG-01-R00001' UNION SELECT * FROM fct_bets --",
    "<script>alert(1)</script>",
    "![x](http://127.0.0.1:1/leak.png)",
]


@pytest.mark.parametrize("typed", HOSTILE)
def test_hostile_round_search_finds_nothing_and_harms_nothing(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection, typed: str
) -> None:
    before = marts.execute("SELECT count(*) FROM marts.main.fct_rounds").fetchone()
    at = _visit(_logged_in(SURVEILLANCE), "round_explorer")
    at.text_input(key="find_round_id").input(typed)
    at.run()
    _nothing_wrong(at)
    assert [i.value for i in at.info] == ["No round with this id:"]
    assert [c.value for c in at.code] == [typed]  # shown as text, never as markdown
    assert marts.execute("SELECT count(*) FROM marts.main.fct_rounds").fetchone() == before


@pytest.mark.parametrize("typed", HOSTILE)
def test_a_crafted_filter_value_is_dropped_before_any_query(
    dashboard_env: Path, typed: str
) -> None:
    at = _visit(_logged_in(MANAGER), "revenue")
    everything = _metrics(at)["Handle"]
    at.multiselect(key="revenue_games").set_value([typed])  # not an option: as a crafted client
    at.run()
    _nothing_wrong(at)
    assert at.multiselect(key="revenue_games").value == []
    assert _metrics(at)["Handle"] == everything


def test_overlong_round_search_is_cut_to_its_limit_by_the_server(dashboard_env: Path) -> None:
    at = _visit(_logged_in(SURVEILLANCE), "round_explorer")
    at.text_input(key="find_round_id").set_value("R" * 5_000)  # as a crafted client would
    at.run()
    _nothing_wrong(at)
    assert [i.value for i in at.info] == ["No round with this id:"]
    assert [c.value for c in at.code] == ["R" * 100]


def test_round_found_by_table_and_time_shows_cards_settlement_and_events(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection
) -> None:
    row = marts.execute(
        "SELECT table_id, round_id, started_at FROM marts.main.fct_rounds "
        "WHERE game = 'tripoker' ORDER BY started_at LIMIT 1 OFFSET 10"
    ).fetchone()
    assert row is not None
    table_id, round_id, started_at = row
    at = _visit(_logged_in(SURVEILLANCE), "round_explorer")
    at.button_group(key="find_by").set_value("By table and time")
    at.run()
    at.selectbox(key="find_table").select(table_id)
    at.date_input(key="find_day").set_value(started_at.date())
    at.time_input(key="find_time").set_value(clock(started_at.hour, started_at.minute))
    at.run()
    _nothing_wrong(at)
    assert at.selectbox(key="find_near").value == round_id  # started in that minute
    assert at.subheader[0].value.replace("\\", "") == f"{round_id} · tripoker at {table_id}"
    assert "nan" not in at.caption[-1].value.split()  # no missing value printed as NaN
    shown = {s.value for s in at.subheader}
    assert {"Cards", "Settlement", "Rules cited", "Events, in sequence order"} <= shown
    rules = next(df.value for df in at.dataframe if list(df.value.columns) == ["rule_id", "text"])
    assert "TCP-A11c" in set(rules["rule_id"])  # the dealer reveals and compares


def _latest_violation(marts: duckdb.DuckDBPyConnection) -> str:
    row = marts.execute(
        "SELECT violation_id FROM marts.main.fct_violations ORDER BY occurred_at DESC LIMIT 1"
    ).fetchone()
    assert row is not None
    return str(row[0])


def test_acknowledging_an_alert_names_the_user_in_the_audit_trail(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection
) -> None:
    at = _visit(_logged_in(SURVEILLANCE), "integrity")
    violation = _latest_violation(marts)
    open_before = len(at.multiselect(key="ack_alerts").options)
    at.multiselect(key="ack_alerts").select(f"violation:{violation}")
    note = "Video checked; '; DROP TABLE ack_log; -- <b>not bold</b>"
    at.text_area(key="ack_note").input(note)
    next(b for b in at.button if b.label == "Acknowledge").click()
    at.run()
    _nothing_wrong(at)
    assert [s.value for s in at.success][-1] == "1 alert(s) acknowledged by sam."
    assert len(at.multiselect(key="ack_alerts").options) == open_before - 1
    trail = next(df.value for df in at.dataframe if "acknowledged_by" in df.value.columns)
    assert list(trail["acknowledged_by"]) == ["sam"]
    assert list(trail["alert_id"]) == [violation]
    assert list(trail["note"]) == [note]


def test_acknowledging_without_a_note_is_refused(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection
) -> None:
    at = _visit(_logged_in(MANAGER), "integrity")
    at.multiselect(key="ack_alerts").select(f"violation:{_latest_violation(marts)}")
    next(b for b in at.button if b.label == "Acknowledge").click()
    at.run()
    assert [w.value for w in at.warning] == ["Write a note: what was checked and what was decided."]


def test_log_out_goes_back_to_the_login(dashboard_env: Path) -> None:
    at = _logged_in(MANAGER)
    assert _titles(at) == ["Floor"]
    user = at.session_state[auth.SESSION_KEY]
    next(b for b in at.button if b.label == "Log out").click()
    at.run()  # the browser is sent to the logout route, which clears the cookie
    _nothing_wrong(at)
    assert not at.metric and _titles(at) == []
    assert acks.session_ended(acks.default_path(), user.sid)  # the cookie is dead already
    at.run()
    assert _titles(at) == ["Croupier"] and not at.metric


def test_sso_is_offered_only_when_an_identity_provider_is_configured(dashboard_env: Path) -> None:
    plain = _started()
    assert [b.label for b in plain.button] == ["Log in"]
    configured = AppTest.from_file(str(APP), default_timeout=120)
    configured.secrets["auth"] = {
        "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
        "cookie_secret": "a-long-random-secret",
        "client_id": "croupier",
        "client_secret": "secret",
        "server_metadata_url": "http://127.0.0.1:1/.well-known/openid-configuration",
    }
    configured.run()
    assert [b.label for b in configured.button] == ["Log in", "Log in with single sign-on"]


@pytest.mark.parametrize(
    "text",
    ["![x](http://127.0.0.1:1/leak.png)", "[click](javascript:alert(1))", ":material/home:",
     "<img src=x onerror=alert(1)>", "$x^2$", "**bold** _it_ `code` # title", "PG-01-R00010"],
)  # fmt: skip
def test_data_shown_in_markdown_is_escaped(text: str) -> None:
    escaped = ui.plain(text)
    assert re.sub(r"\\(.)", r"\1", escaped) == text  # nothing lost
    specials = re.compile(r"[!-/:-@\[-`{-~]")
    for i, char in enumerate(escaped):
        if specials.match(char) and char != "\\":
            assert escaped[i - 1] == "\\", (text, escaped, i)


def test_a_changed_role_applies_at_the_next_run_and_a_removed_user_is_out(
    dashboard_env: Path,
) -> None:
    at = _logged_in(MANAGER)
    assert _titles(at) == ["Floor"]
    users = Path(os.environ[auth.USERS_ENV])
    original = users.read_text()
    users.write_text(original.replace('role = "manager"', 'role = "surveillance"'))
    at.run()
    _nothing_wrong(at)
    assert [p for p in TITLES if not _unreachable(at, p)] == [
        "integrity", "dealers", "players", "round_explorer"
    ]  # fmt: skip
    users.write_text(original.replace("[users.ana]", "[users.someone_else]"))
    at.run()
    assert _titles(at) == ["Croupier"] and not at.metric


# --- what each role sees: no money figure reaches surveillance --------------------------------

MONEY_FLOOR = 100_000  # céntimos: amounts from S/ 1,000.00, unlike any count or rate shown


def _shown(at: AppTest) -> tuple[str, list[pd.DataFrame]]:
    """Everything the app sent to the browser: the text of every element (markdown, metrics,
    captions, column labels, chart specs) and every table and chart's data, decoded."""
    texts: list[str] = []
    frames: list[pd.DataFrame] = []

    def walk(message: Any) -> None:
        for field, value in message.ListFields():
            for item in value if field.is_repeated else [value]:
                if isinstance(item, str):
                    texts.append(item)
                elif isinstance(item, bytes):
                    with contextlib.suppress(pa.ArrowInvalid):
                        frames.append(pa.ipc.open_stream(item).read_all().to_pandas())
                elif hasattr(item, "ListFields"):
                    walk(item)

    for node in at._tree:
        if getattr(node, "proto", None) is not None:
            walk(node.proto)
    texts += [" ".join(map(str, frame.columns)) + "\n" + frame.to_csv() for frame in frames]
    return "\n".join(texts), frames


def _known_amounts(marts: duckdb.DuckDBPyConnection) -> set[int]:
    """Amounts of the demo lake a page could show, in céntimos (absolute, from MONEY_FLOOR):
    each bet's, each round's, the sums per dealer, table, game and day, and the amounts the
    statistical alerts compare."""
    rows = marts.execute(
        f"""
        WITH bets AS (FROM marts.main.fct_bets), v AS (
            SELECT unnest([wager_cents, payout_cents, house_result_cents, net_cents]) AS c
            FROM bets
            UNION ALL SELECT unnest([handle_cents, settled_house_result_cents])
            FROM marts.main.fct_rounds
            UNION ALL SELECT unnest([sum(wager_cents), sum(house_result_cents),
                                     sum(theoretical_win_cents)::BIGINT])
            FROM bets GROUP BY GROUPING SETS ((dealer_id), (table_id), (game), (gaming_date),
                                              (dealer_id, gaming_date), ())
            UNION ALL SELECT unnest([observed, expected, interval_low, interval_high])::BIGINT
            FROM marts.main.fct_statistical_alerts
            WHERE test_name IN ('hold_vs_theoretical', 'dealer_player_pair')
        )
        SELECT DISTINCT abs(c) FROM v WHERE abs(c) >= {MONEY_FLOOR}
        """
    ).fetchall()
    return {int(c) for (c,) in rows}


def _money_seen(at: AppTest, amounts: set[int]) -> list[str]:
    """Every money figure in what `at` rendered: the S/ sign, a money column, one of the
    lake's amounts as the pages print it (1,234.56) or as a table holds it (12.3456e2 or
    123456), a `_cents` field in a JSON cell."""
    text, frames = _shown(at)
    # The regulation's own words are no figure of the lake ("a fixed S/ 5 wager", DEF-THP4).
    for rule in sorted(rule_texts.load().values(), key=lambda r: -len(r.text)):
        text = text.replace(rule.text, "")
    found = [f"text: {m.group(0)!r}" for m in re.finditer(r".{0,40}S/.{0,20}", text)]
    found += [f"printed amount {a}" for a in amounts if f"{a // 100:,}.{a % 100:02d}" in text]
    found += [f"`_cents` in text: {m.group(0)!r}" for m in re.finditer(r"\w+_cents", text)]
    for frame in frames:
        for column in frame.columns:
            values = pd.to_numeric(frame[column], errors="coerce").dropna()
            hits = {round(abs(v) * 100) for v in values} | {round(abs(v)) for v in values}
            found += [f"column {column!r} holds amount {a}" for a in sorted(hits & amounts)]
    return found


def _every_page_of(who: tuple[str, str], round_id: str) -> Iterator[tuple[str, AppTest]]:
    at = _logged_in(who)
    grant = auth.GRANTS[auth.session_user(at.session_state).role]  # type: ignore[union-attr]
    for page in sorted(grant.pages):
        _visit(at, page)
        _nothing_wrong(at)
        if page == "round_explorer":
            at.text_input(key="find_round_id").input(round_id)
            at.run()
            _nothing_wrong(at)
            assert {"Settlement", "Violations"} <= {s.value for s in at.subheader}
        yield page, at


def test_no_money_figure_of_the_lake_reaches_surveillance_on_any_page(
    dashboard_env: Path, marts: duckdb.DuckDBPyConnection
) -> None:
    """Every page each role may see, rendered whole (a round opened in the explorer: one whose
    violations carry amounts in their evidence) and scanned for money: surveillance sees none,
    a manager sees it (so the scan finds what it looks for)."""
    amounts = _known_amounts(marts)
    row = marts.execute(
        "SELECT round_id FROM marts.main.fct_violations WHERE evidence::VARCHAR LIKE '%_cents%' "
        "ORDER BY round_id LIMIT 1"
    ).fetchone()
    assert row is not None and len(amounts) > 20
    for page, at in _every_page_of(SURVEILLANCE, str(row[0])):
        assert _money_seen(at, amounts) == [], page
    manager = {page: _money_seen(at, amounts) for page, at in _every_page_of(MANAGER, str(row[0]))}
    print(f"\n{len(amounts)} amounts of the lake looked for; money figures a manager sees per "
          f"page: { {page: len(seen) for page, seen in manager.items()} }")  # fmt: skip
    assert all(manager[page] for page in ("floor", "revenue", "integrity", "dealers")), manager
    assert any("S/" in seen for seen in manager["round_explorer"])


def _money_metrics(at: AppTest) -> list[str]:
    return [f"{m.label}: {m.value}" for m in at.metric if "S/" in m.value]


def _refresh_fragments(at: AppTest) -> None:
    """Run only the page's fragments, as `st.fragment(run_every=...)` does in the browser (the
    router and the page's top do not run)."""
    fragments = list(at._fragment_storage._fragments)  # type: ignore[attr-defined]
    assert fragments, "the page has a fragment"
    plain = local_script_runner.RerunData

    def fragments_only(**kwargs: Any) -> RerunData:
        return plain(**kwargs, fragment_id_queue=list(fragments), is_auto_rerun=True)

    local_script_runner.RerunData = fragments_only  # type: ignore[misc]
    try:
        at.run()
    finally:
        local_script_runner.RerunData = plain  # type: ignore[misc]


def test_the_floor_refresh_stops_at_once_for_a_user_demoted_or_logged_out(
    dashboard_env: Path, tmp_path: Path
) -> None:
    """Floor redraws itself every 30 s without the router: that rerun checks the user too."""
    users = tmp_path / "users.toml"
    base = users.read_text()
    at = _visit(_logged_in(MANAGER), "floor")
    assert _money_metrics(at)
    _refresh_fragments(at)
    assert _money_metrics(at)  # the refresh itself works for a manager
    users.write_text(base.replace('role = "manager"', 'role = "surveillance"'))
    _refresh_fragments(at)
    _nothing_wrong(at)
    assert _money_metrics(at) == []
    assert [w.value for w in at.warning] == [
        "This page is not available to you. Log in with an account that may see it."
    ]
    # Logged out in another tab: the same.
    users.write_text(base)
    at = _visit(_logged_in(MANAGER), "floor")
    user = auth.session_user(at.session_state)
    assert user is not None and user.sid is not None
    acks.end_session(acks.default_path(), sid=user.sid, name=user.name)
    _refresh_fragments(at)
    assert _money_metrics(at) == []


SSO_SECRETS = {
    "auth": {
        "redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "c" * 32,
        "client_id": "croupier", "client_secret": "secret",
        "server_metadata_url": "https://idp.example/.well-known/openid-configuration",
    }
}  # fmt: skip


def test_a_single_sign_on_user_gets_the_role_the_users_file_gives_now(
    dashboard_env: Path, tmp_path: Path
) -> None:
    users = tmp_path / "users.toml"
    base = users.read_text()
    users.write_text(base + '\n[sso]\n"boss@casino.pe" = "manager"\n')
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.secrets = SSO_SECRETS
    at.user = {"email": "boss@casino.pe", "is_logged_in": True}  # type: ignore[assignment]
    at.run()
    _visit(at, "floor")
    _nothing_wrong(at)
    assert _money_metrics(at)
    users.write_text(base + '\n[sso]\n"boss@casino.pe" = "surveillance"\n')
    at.run()
    _nothing_wrong(at)
    assert _titles(at) == ["Integrity"] and _money_metrics(at) == []
    users.write_text(base)  # the address no longer given a role
    at.run()
    assert _titles(at) == ["Croupier"]  # the sign-in page
    users.write_text(base + '\n[sso]\n"boss@casino.pe" = "manager"\n')
    at.user = {"is_logged_in": False}  # type: ignore[assignment]  # logged out at the provider
    at.run()
    assert _titles(at) == ["Croupier"]


def test_a_managers_note_is_withheld_from_surveillance(dashboard_env: Path) -> None:
    """A note is free text that may quote what its writer saw: a manager's is not shown to
    surveillance; surveillance's own notes are, to everyone."""
    boss = _visit(_logged_in(MANAGER), "integrity")
    choices = boss.multiselect(key="ack_alerts").options
    for who, note, choice in ((boss, "house kept S/ 8,918.50, tapes checked", choices[0]),):
        who.multiselect(key="ack_alerts").set_value([choice])
        who.text_area(key="ack_note").input(note)
        next(b for b in who.button if b.label == "Acknowledge").click()
        who.run()
    sam = _visit(_logged_in(SURVEILLANCE), "integrity")
    sam.multiselect(key="ack_alerts").set_value([sam.multiselect(key="ack_alerts").options[0]])
    sam.text_area(key="ack_note").input("dice cup replaced")
    next(b for b in sam.button if b.label == "Acknowledge").click()
    sam.run()
    _nothing_wrong(sam)
    trail = sam.dataframe[-1].value
    assert list(trail["note"]) == ["dice cup replaced", f"(withheld: {data.WITHHELD_NOTE})"]
    assert "S/" not in _shown(sam)[0]
    boss.run()
    assert {"dice cup replaced", "house kept S/ 8,918.50, tapes checked"} <= set(
        boss.dataframe[-1].value["note"]
    )


def test_a_download_address_cannot_be_computed_from_its_content(dashboard_env: Path) -> None:
    """Streamlit serves a CSV at a hash of its bytes and name to anyone who asks; surveillance
    knows every cell of a manager's table but the money, so the address must hold a secret."""
    from streamlit.runtime.memory_media_file_storage import _calculate_file_id

    label = "Download payout accuracy (CSV)"
    addresses = []
    for _ in range(2):
        at = _visit(_logged_in(MANAGER), "integrity")
        button = next(b for b in at.get("download_button") if b.proto.label == label)
        addresses.append(button.proto.url)
    assert addresses[0] != addresses[1]  # the same bytes, another session: another address
    with data.viewing_as(auth.GRANTS[auth.Role.MANAGER]):
        options = data.filter_options()
        first = options.last_day - pd.Timedelta(days=ui.DEFAULT_DAYS - 1)
        start = max(options.first_day, first)
        frame = data.payout_accuracy(data.Filters(start=start, end=options.last_day))
    body = frame.to_csv(index=False).encode()
    guessed = _calculate_file_id(body, "text/csv", "payout_accuracy.csv")
    assert all(guessed not in address for address in addresses)
