"""Every query the dashboards run, as typed functions over the marts (and, for a round's events,
the lake), with parameterized SQL only: user input reaches DuckDB as parameters, never as text.

One read-only DuckDB instance per published build of a marts store is kept (attaching DuckLake
costs ~0.3 s), the marts attached pinned at the snapshot that build published
(`<marts>/published.json`, infra/marts.py): the pages show the last successful build,
whole, never a build half done or one that failed. Each query runs on a fresh cursor of its own,
closed at once.

What a frame carries depends on who reads it (`viewer`): the measures the reader's role lacks
(dashboards/roles.toml; for surveillance, money) are taken out of every frame here, after the
shared cache and before any page sees it — columns and JSON fields ending in `_cents`, and the
amounts statistical alerts compare (their explanations then speak in standard deviations).
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import duckdb
import pandas as pd
import pyarrow as pa
import streamlit as st

from dashboards import acks, auth
from dashboards.rule_texts import text_of

# Results are cached this long; the cache key also holds the published marts snapshot (read from
# the small pointer file on each query), so a newly published build shows at once.
TTL_SECONDS = 60
MAX_SEARCH = 100  # longest round id or text a user may search for
CHART_POINTS = 400  # meter points per table drawn over any date range
Z_95 = 1.959963984540054  # two-sided 95 % normal quantile, as the marts use


Breakdown = Literal["all", "game", "table", "dealer", "shift", "spot", "day", "hour"]
# Group-by expressions (fixed text, never from input) by breakdown: on fct_rounds, and on
# fct_bets and fct_positions (a line is settled when its round ends: settled_at = ended_at).
_KEYS: dict[str, tuple[str, str]] = {
    "all": ("'all'", "'all'"),
    "game": ("game", "game"),
    "table": ("table_id", "table_id"),
    "dealer": ("dealer_id", "dealer_id"),
    "shift": ("shift_no", "shift_no"),
    "day": ("gaming_date", "gaming_date"),
    "hour": ("time_bucket(INTERVAL 1 HOUR, ended_at)", "time_bucket(INTERVAL 1 HOUR, settled_at)"),
}


class NoMarts(RuntimeError):
    """The marts store does not exist yet: `croupier build` (or `croupier demo`) makes it."""


@dataclass(frozen=True, kw_only=True)
class Store:
    """Where the dashboards read (marts, lake) and write (acknowledgements)."""

    marts: Path
    lake: Path | None
    acks: Path

    @property
    def catalog(self) -> Path:
        return self.marts / "catalog.sqlite"


def current_store() -> Store:
    """The configured stores: the lake of the croupier settings and the marts beside it
    (or `$CROUPIER_MARTS_PATH`)."""
    from infra import lake as lakes
    from infra.marts import default_marts_path

    lake = lakes.from_settings()
    return Store(
        marts=default_marts_path(lake),
        lake=lake.root if lake.exists else None,
        acks=acks.default_path(),
    )


@dataclass(frozen=True, kw_only=True)
class Filters:
    """What a page is filtered by; empty tuples mean everything."""

    start: date
    end: date
    games: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    dealers: tuple[str, ...] = ()
    shifts: tuple[int, ...] = ()


@dataclass(frozen=True, kw_only=True)
class FilterOptions:
    first_day: date
    last_day: date
    games: dict[str, str]  # game -> name
    tables: dict[str, str]  # table -> game
    dealers: tuple[str, ...]
    shifts: dict[int, str]  # shift_no -> name


@dataclass(frozen=True, kw_only=True)
class BuildInfo:
    """The build the pages show."""

    finished_at: datetime
    lake_snapshot_id: int
    marts_snapshot_id: int | None  # None: no build published, the latest snapshot is shown


@dataclass(frozen=True, kw_only=True)
class FloorView:
    day: date
    tables: pd.DataFrame
    rounds: int
    handle_cents: int
    house_result_cents: int
    open_alerts: int
    open_critical: int


@dataclass(frozen=True, kw_only=True)
class Round:
    """One round's record, its settlement lines, its violations and its events in order."""

    header: dict[str, Any]
    bets: pd.DataFrame
    violations: pd.DataFrame
    events: pd.DataFrame
    cards: pd.DataFrame
    rule_texts: dict[str, str] = field(default_factory=dict)


# --- connections and the cached query ----------------------------------------------------


@st.cache_resource(max_entries=4, show_spinner=False)
def _database(
    marts: str, lake: str | None, identity: tuple[int, int], snapshot: int | None
) -> duckdb.DuckDBPyConnection:
    """The read-only DuckDB instance of one marts store at one published snapshot (`identity`
    = the catalog's device and inode, so a store deleted and made again gets a new instance;
    `snapshot` None: no build published, the latest snapshot)."""
    from infra import lake as lakes
    from infra.marts import connect_marts

    con = connect_marts(
        Path(marts),
        lake=lakes.Lake(root=Path(lake)) if lake else None,
        snapshot=snapshot,
        latest=snapshot is None,
    )
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET parquet_metadata_cache = true")  # the same files, read by every page
    return con


# (device, inode, published snapshot or -1, catalog mtime when nothing is published else 0)
Version = tuple[int, int, int, int]


def _version(store: Store) -> Version:
    """What the marts show now: the published build's snapshot (a pointer file of ~300 bytes,
    read on every query), or for marts no build published, the catalog's modification time."""
    from infra.marts import published_build

    try:
        stat = store.catalog.stat()
    except FileNotFoundError:
        raise NoMarts(f"no marts at {store.marts}: run `croupier build`") from None
    published = published_build(store.marts)
    if published is not None:
        return stat.st_dev, stat.st_ino, published.marts_snapshot_id, 0
    wal = store.catalog.with_name("catalog.sqlite-wal")
    mtime = max(stat.st_mtime_ns, wal.stat().st_mtime_ns if wal.exists() else 0)
    return stat.st_dev, stat.st_ino, -1, mtime


@st.cache_data(ttl=TTL_SECONDS, max_entries=512, show_spinner=False)
def _cached_frame(
    marts: str, lake: str | None, version: Version, sql: str, params: tuple[Any, ...]
) -> pd.DataFrame:
    con = _database(marts, lake, version[:2], version[2] if version[2] >= 0 else None)
    cursor = con.cursor()
    try:
        cursor.execute("USE marts")
        values = [list(p) if isinstance(p, tuple) else p for p in params]
        return _to_pandas(cursor.execute(sql, values).to_arrow_table())
    finally:
        cursor.close()


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    """Arrow to pandas with integers kept integers when they hold nulls (money stays exact).
    (duckdb's own `.df()` calls a pandas API that warns under pandas 3.1.)"""
    for i, column in enumerate(table.schema):
        if pa.types.is_decimal(column.type):  # sums DuckDB widened: whole céntimos or fractions
            target = pa.int64() if column.type.scale == 0 else pa.float64()
            table = table.set_column(i, column.name, table.column(i).cast(target))
    return table.to_pandas(types_mapper=_NULLABLE_INTS.get)


_NULLABLE_INTS = {
    pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
    pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(),
}  # fmt: skip


def _frame(sql: str, params: Sequence[Any] = (), *, version: Version | None = None) -> pd.DataFrame:
    """The query's rows as the current viewer may see them (the cache holds them whole)."""
    store = current_store()
    lake = str(store.lake) if store.lake is not None else None
    if version is None:
        version = _version(store)
    return redact(_cached_frame(str(store.marts), lake, version, sql, tuple(params)), viewer())


# --- who reads ----------------------------------------------------------------------------

_VIEWING_AS: ContextVar[auth.Grant | None] = ContextVar("croupier_viewing_as", default=None)
# Statistical tests whose observed, expected and interval figures are counts (cards, dice,
# hits); any other test's (hold, dealer x player, and any test added later) may be money.
COUNTING_TESTS = frozenset(
    {"dice_positions", "dice_faces", "card_ranks", "first_card_rank", "jackpot_frequency"}
)
_MONEY_FIGURES = ["observed", "expected", "interval_low", "interval_high"]
_JSON_COLUMNS = ("evidence", "payload")


def viewer() -> auth.Grant:
    """What the reader may see: inside `viewing_as`, that grant; in a Streamlit session, the
    grant of its signed-in user, read at every query; otherwise nothing."""
    given = _VIEWING_AS.get()
    if given is not None:
        return given
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return auth.NOTHING
    user = auth.session_user(st.session_state)
    return auth.NOTHING if user is None else user.grant


@contextlib.contextmanager
def viewing_as(grant: auth.Grant) -> Iterator[None]:
    """Read as a role with `grant` (the CLI, tests and benchmarks: no Streamlit session)."""
    token = _VIEWING_AS.set(grant)
    try:
        yield
    finally:
        _VIEWING_AS.reset(token)


def _is_money(name: object) -> bool:
    return isinstance(name, str) and name.endswith("_cents")


def _without_money(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_money(v) for k, v in value.items() if not _is_money(k)}
    if isinstance(value, list):
        return [_without_money(v) for v in value]
    return value


def _json_without_money(text: Any) -> Any:
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return text
    try:
        body = json.loads(text)
    except (TypeError, ValueError):
        return "(withheld)"  # not JSON: nothing tells which part is money
    return json.dumps(_without_money(body), ensure_ascii=False, separators=(", ", ": "))


def redact(frame: pd.DataFrame, grant: auth.Grant) -> pd.DataFrame:
    """`frame` without the measures `grant` lacks: for a role without money, no `_cents`
    column, no `_cents` field in the JSON columns (evidence, payload) and no figure of a
    statistical alert that is not a count."""
    if grant.money:
        return frame
    shown = frame.drop(columns=[c for c in frame.columns if _is_money(c)])
    for column in _JSON_COLUMNS:
        if column in shown.columns:
            shown[column] = [_json_without_money(v) for v in shown[column]]
    if "test_name" in shown.columns and set(_MONEY_FIGURES) <= set(shown.columns):
        money_rows = ~shown["test_name"].isin(COUNTING_TESTS)
        shown[_MONEY_FIGURES] = shown[_MONEY_FIGURES].astype("float64")
        shown.loc[money_rows, _MONEY_FIGURES] = math.nan
    return shown


def _where(
    f: Filters, *, dims: Sequence[str] = ("game", "table_id", "dealer_id", "shift_no")
) -> tuple[str, list[Any]]:
    """`gaming_date BETWEEN ? AND ?` and one `IN` per non-empty filter on the given columns."""
    clauses: list[str] = ["gaming_date BETWEEN ? AND ?"]
    params: list[Any] = [f.start, f.end]
    values = {"game": f.games, "table_id": f.tables, "dealer_id": f.dealers, "shift_no": f.shifts}
    for column in dims:
        if values[column]:
            clauses.append(f"{column} IN (SELECT UNNEST(?))")
            params.append(tuple(values[column]))
    return " AND ".join(clauses), params


def _int(value: Any) -> int:
    return 0 if value is None or pd.isna(value) else int(value)


# --- shared -------------------------------------------------------------------------------


def filter_options() -> FilterOptions:
    days = _frame("SELECT min(gaming_date) AS first, max(gaming_date) AS last FROM fct_rounds")
    if days.empty or pd.isna(days.at[0, "last"]):
        raise NoMarts("the marts hold no rounds yet: run the consumer, then `croupier build`")
    games = _frame("SELECT game, game_name FROM dim_games ORDER BY game")
    tables = _frame("SELECT table_id, game FROM dim_tables ORDER BY table_id")
    dealers = _frame("SELECT dealer_id FROM dim_dealers ORDER BY dealer_id")
    shifts = _frame("SELECT shift_no, shift_name FROM dim_shifts ORDER BY shift_no")
    return FilterOptions(
        first_day=pd.Timestamp(days.at[0, "first"]).date(),
        last_day=pd.Timestamp(days.at[0, "last"]).date(),
        games=dict(zip(games["game"], games["game_name"], strict=True)),
        tables=dict(zip(tables["table_id"], tables["game"], strict=True)),
        dealers=tuple(dealers["dealer_id"]),
        shifts={
            int(n): str(s) for n, s in zip(shifts["shift_no"], shifts["shift_name"], strict=True)
        },
    )


def build_info() -> BuildInfo | None:
    """The build the pages show (the published one): when it finished and from which lake
    snapshot, read from `build_log` at the very snapshot the pages query."""
    version = _version(current_store())
    try:
        row = _frame(
            "SELECT finished_at, lake_snapshot_id FROM build_log ORDER BY finished_at DESC LIMIT 1",
            version=version,
        )
    except duckdb.CatalogException:  # marts built by `dbt build` directly keep no log
        return None
    if row.empty:
        return None
    return BuildInfo(
        finished_at=pd.Timestamp(row.at[0, "finished_at"]).to_pydatetime(),
        lake_snapshot_id=int(row.at[0, "lake_snapshot_id"]),
        marts_snapshot_id=version[2] if version[2] >= 0 else None,
    )


# --- floor --------------------------------------------------------------------------------


def floor(day: date) -> FloorView:
    """Every table open now or with play on `day`: game, dealer on duty, pace, handle, house
    result and alerts nobody acknowledged yet."""
    tables = _frame(
        """
        WITH day_rounds AS (
            SELECT table_id,
                   count(*) AS rounds,
                   sum(seconds_in_play) AS seconds_in_play,
                   sum(handle_cents)::BIGINT AS handle_cents,
                   sum(settled_house_result_cents)::BIGINT AS house_result_cents,
                   sum(theoretical_win_cents)::DOUBLE AS theoretical_win_cents,
                   arg_max(dealer_id, started_at) AS dealer_id,
                   max(coalesce(ended_at, started_at)) AS last_round_at
            FROM fct_rounds WHERE gaming_date = ? GROUP BY table_id
        ),
        sessions AS (
            SELECT table_id, arg_max(table_closed_at IS NULL, opened_at) AS is_open
            FROM fct_table_sessions GROUP BY table_id
        )
        SELECT t.table_id, t.game, coalesce(s.is_open, false) AS is_open, d.dealer_id,
               coalesce(d.rounds, 0) AS rounds,
               d.rounds / nullif(d.seconds_in_play / 3600.0, 0) AS rounds_per_hour,
               coalesce(d.handle_cents, 0) AS handle_cents,
               coalesce(d.house_result_cents, 0) AS house_result_cents,
               d.theoretical_win_cents, d.last_round_at
        FROM dim_tables AS t
        LEFT JOIN day_rounds AS d USING (table_id)
        LEFT JOIN sessions AS s USING (table_id)
        WHERE d.rounds IS NOT NULL OR s.is_open
        ORDER BY t.table_id
        """,
        [day],
    )
    violations = _frame(
        "SELECT table_id, violation_id AS alert_id, severity FROM fct_violations "
        "WHERE gaming_date = ?",
        [day],
    )
    statistical = _frame(
        "SELECT subject_id AS table_id, alert_id FROM fct_statistical_alerts "
        "WHERE subject_type = 'table' AND (gaming_date = ? OR gaming_date IS NULL)",
        [day],
    )
    store = current_store()
    open_violations = violations[
        ~violations["alert_id"].isin(acks.acknowledged(store.acks, acks.AlertKind.VIOLATION))
    ]
    open_statistical = statistical[
        ~statistical["alert_id"].isin(acks.acknowledged(store.acks, acks.AlertKind.STATISTICAL))
    ]
    counts = pd.concat([open_violations["table_id"], open_statistical["table_id"]]).value_counts()
    tables["open_alerts"] = tables["table_id"].map(counts).fillna(0).astype("int64")
    return FloorView(
        day=day,
        tables=tables,
        rounds=_int(tables["rounds"].sum()),
        handle_cents=_int(tables["handle_cents"].sum()),
        house_result_cents=_int(tables["house_result_cents"].sum()),
        open_alerts=len(open_violations) + len(open_statistical),
        open_critical=int((open_violations["severity"] == "critical").sum()),
    )


# --- revenue ------------------------------------------------------------------------------


def revenue(f: Filters, by: Breakdown) -> pd.DataFrame:
    """Revenue of the rounds matching `f`, one row per `by` group (`key`); see revenue_sets."""
    return revenue_sets(f, (by,))[by]


def revenue_sets(f: Filters, bys: Sequence[Breakdown]) -> dict[Breakdown, pd.DataFrame]:
    """Revenue of the rounds matching `f` by each breakdown in `bys`, one row per group
    (`key`): handle, house result, commission, payouts, caps, theoretical win (DEF-ACC2), hold,
    average bet, players, rounds, rounds per hour, and the 95 % band of the players' positions'
    house result around their theoretical win (the marts' method: Var = Σ wager² × the
    variance per unit of the position's profile and mix of wagers).

    The figures are agg_revenue's, for any combination of filters: money and rounds from
    fct_rounds (each round's lines summed), bet counts from fct_bets, players and the band
    from fct_positions, so the 7.5 million lines of a million rounds are read only for counts;
    every breakdown comes from one scan of each (GROUPING SETS).
    """
    found: dict[Breakdown, pd.DataFrame] = {}
    if "spot" in bys:
        found["spot"] = _revenue_by_spot(f)
    sets = [by for by in dict.fromkeys(bys) if by != "spot"]
    if not sets:
        return found
    where, params = _where(f)
    names = ", ".join(f"k{i}" for i in range(len(sets)))
    joined = " AND ".join(
        [
            "{t}.level = r.level",
            *(f"{{t}}.k{i} IS NOT DISTINCT FROM r.k{i}" for i in range(len(sets))),
        ]
    )
    frame = _frame(
        f"""
        WITH rounds AS (
            SELECT {names}, grouping({names}) AS level,
                   count(*) AS rounds,
                   sum(bet_lines)::BIGINT AS bet_lines,
                   sum(handle_cents)::BIGINT AS handle_cents,
                   sum(settled_house_result_cents)::BIGINT AS house_result_cents,
                   sum(commission_cents)::BIGINT AS commission_cents,
                   sum(payout_cents)::BIGINT AS payout_cents,
                   sum(capped_cents)::BIGINT AS capped_cents,
                   sum(theoretical_win_cents)::DOUBLE AS theoretical_win_cents,
                   sum(seconds_in_play) AS seconds_in_play
            FROM (
                SELECT {_keys(sets, 0)}, bet_lines, handle_cents, settled_house_result_cents,
                       commission_cents, payout_cents, capped_cents, theoretical_win_cents,
                       seconds_in_play
                FROM fct_rounds WHERE bet_lines > 0 AND {where}
            )
            GROUP BY {_grouping(sets)}
        ),
        lines AS (
            SELECT {names}, grouping({names}) AS level,
                   count(*) FILTER (WHERE wager_cents > 0) AS wagers,
                   count(*) FILTER (WHERE capped_cents > 0) AS capped_payouts
            FROM (SELECT {_keys(sets, 1)}, wager_cents, capped_cents FROM fct_bets WHERE {where})
            GROUP BY {_grouping(sets)}
        ),
        positions AS ({_positions(sets, where)})
        SELECT r.level, {", ".join(f"r.k{i}" for i in range(len(sets)))},
               r.bet_lines, l.wagers, r.rounds, p.players, r.handle_cents,
               r.house_result_cents, r.commission_cents, r.payout_cents, r.capped_cents,
               l.capped_payouts, r.theoretical_win_cents,
               r.seconds_in_play / 3600.0 AS hours_in_play,
               r.rounds / nullif(r.seconds_in_play / 3600.0, 0) AS rounds_per_hour,
               r.house_result_cents / nullif(r.handle_cents, 0) AS hold_pct,
               r.theoretical_win_cents / nullif(r.handle_cents, 0) AS theoretical_hold_pct,
               r.handle_cents / nullif(l.wagers, 0) AS average_bet_cents,
               {_BAND}
        FROM rounds AS r
        LEFT JOIN lines AS l ON {joined.format(t="l")}
        LEFT JOIN positions AS p ON {joined.format(t="p")}
        ORDER BY r.level, {names}
        """,
        [*params, *params, *params],
    )
    others = [f"k{i}" for i in range(len(sets))]
    for i, by in enumerate(sets):
        mine = frame[frame["level"] == _level(len(sets), i)]
        found[by] = (
            mine.drop(columns=["level", *(k for k in others if k != f"k{i}")])
            .rename(columns={f"k{i}": "key"})
            .reset_index(drop=True)
        )
    return found


def _keys(sets: Sequence[Breakdown], side: int) -> str:
    """`expr AS k0, expr AS k1, ...`: the breakdowns' keys on fct_rounds (0) or the lines (1)."""
    return ", ".join(f"{_KEYS[by][side]} AS k{i}" for i, by in enumerate(sets))


def _grouping(sets: Sequence[Breakdown]) -> str:
    return f"GROUPING SETS ({', '.join(f'(k{i})' for i in range(len(sets)))})"


def _level(count: int, i: int) -> int:
    """grouping(k0, ..., kn) of the set grouped by k_i alone: a bit set for every other key."""
    return ((1 << count) - 1) & ~(1 << (count - 1 - i))


def _positions(sets: Sequence[Breakdown], where: str) -> str:
    """Players and the hold band per group of positions (fct_positions leaves the house's own
    bet out): Var(house result) = Σ wager² × the variance per unit of the position's profile
    and mix of wagers (stat_profile_dispersion), as stat_hold_vs_theoretical computes it."""
    names = ", ".join(f"k{i}" for i in range(len(sets)))
    return f"""
            SELECT {names}, grouping({names}) AS level,
                   count(DISTINCT player_ref) FILTER (WHERE bettor = 'player') AS players,
                   sum(wager_cents) FILTER (WHERE wager_cents > 0)::BIGINT AS band_handle_cents,
                   sum(house_result_cents) FILTER (WHERE wager_cents > 0)::BIGINT
                       AS band_observed_cents,
                   sum(theoretical_win_cents) FILTER (WHERE wager_cents > 0)::DOUBLE
                       AS band_expected_cents,
                   sqrt(sum(wager_cents::DOUBLE * wager_cents * result_variance_per_unit)
                       FILTER (WHERE wager_cents > 0)) AS sd_cents
            FROM (
                SELECT {_keys(sets, 1)}, p.player_ref, p.bettor, p.wager_cents,
                       p.house_result_cents, p.theoretical_win_cents, d.result_variance_per_unit
                FROM fct_positions AS p
                LEFT JOIN stat_profile_dispersion AS d
                    USING (profile, profile_version, spot_mix)
                WHERE {where}
            )
            GROUP BY {_grouping(sets)}"""


_BAND = f"""p.band_observed_cents, p.band_expected_cents, p.sd_cents,
               p.band_expected_cents - {Z_95} * p.sd_cents AS band_low_cents,
               p.band_expected_cents + {Z_95} * p.sd_cents AS band_high_cents,
               (p.band_observed_cents - p.band_expected_cents) / nullif(p.sd_cents, 0) AS z"""


def _revenue_by_spot(f: Filters) -> pd.DataFrame:
    """Revenue per bet spot, from the lines themselves (rounds and hours per spot count each
    round once per spot played in it, as agg_revenue does). Positions span spots: no band."""
    where, params = _where(f)
    return _frame(
        f"""
        WITH lines AS (
            SELECT spot AS key, round_id, wager_cents, house_result_cents, commission_cents,
                   payout_cents, capped_cents, theoretical_win_cents, player_ref, bettor
            FROM fct_bets WHERE {where}
        ),
        play AS (
            SELECT l.key, sum(r.seconds_in_play) AS seconds_in_play
            FROM (SELECT DISTINCT key, round_id FROM lines) AS l
            -- the same filter on the rounds, so only their rounds are hashed
            JOIN (SELECT round_id, seconds_in_play FROM fct_rounds WHERE {where}) AS r
                USING (round_id)
            GROUP BY l.key
        )
        SELECT key,
               count(*) AS bet_lines,
               count(*) FILTER (WHERE wager_cents > 0) AS wagers,
               count(DISTINCT round_id) AS rounds,
               count(DISTINCT player_ref) FILTER (WHERE bettor = 'player') AS players,
               sum(wager_cents)::BIGINT AS handle_cents,
               sum(house_result_cents)::BIGINT AS house_result_cents,
               sum(commission_cents)::BIGINT AS commission_cents,
               sum(payout_cents)::BIGINT AS payout_cents,
               sum(capped_cents)::BIGINT AS capped_cents,
               count(*) FILTER (WHERE capped_cents > 0) AS capped_payouts,
               sum(theoretical_win_cents)::DOUBLE AS theoretical_win_cents,
               any_value(p.seconds_in_play) / 3600.0 AS hours_in_play,
               count(DISTINCT round_id) / nullif(any_value(p.seconds_in_play) / 3600.0, 0)
                   AS rounds_per_hour,
               sum(house_result_cents) / nullif(sum(wager_cents), 0) AS hold_pct,
               sum(theoretical_win_cents)::DOUBLE / nullif(sum(wager_cents), 0)
                   AS theoretical_hold_pct,
               sum(wager_cents) / nullif(count(*) FILTER (WHERE wager_cents > 0), 0)
                   AS average_bet_cents,
               NULL::BIGINT AS band_observed_cents, NULL::DOUBLE AS band_expected_cents,
               NULL::DOUBLE AS sd_cents, NULL::DOUBLE AS band_low_cents,
               NULL::DOUBLE AS band_high_cents, NULL::DOUBLE AS z
        FROM lines LEFT JOIN play AS p USING (key)
        GROUP BY key ORDER BY key
        """,
        [*params, *params],
    )


def table_accounting(f: Filters) -> pd.DataFrame:
    """Table accounting (DEF-ACC1) per table over the chip-tray sessions opened in the range:
    drop, fills, credits, win and hold % of the closed sessions, beside the settled result."""
    where, params = _where(f, dims=("game", "table_id"))
    return _frame(
        f"""
        SELECT table_id, game,
               count(*) AS sessions,
               count(*) FILTER (WHERE is_closed) AS closed_sessions,
               sum(opening_inventory_cents)::BIGINT AS opening_inventory_cents,
               sum(closing_inventory_cents) FILTER (WHERE is_closed)::BIGINT
                   AS closing_inventory_cents,
               sum(fills_cents)::BIGINT AS fills_cents,
               sum(credits_cents)::BIGINT AS credits_cents,
               sum(drop_cents)::BIGINT AS drop_cents,
               sum(drop_cents) FILTER (WHERE is_closed)::BIGINT AS closed_drop_cents,
               sum(win_cents) FILTER (WHERE is_closed)::BIGINT AS win_cents,
               sum(win_cents) FILTER (WHERE is_closed)
                   / nullif(sum(drop_cents) FILTER (WHERE is_closed), 0) AS hold_pct,
               sum(settled_house_result_cents)::BIGINT AS settled_house_result_cents,
               sum(win_minus_settled_cents) FILTER (WHERE is_closed)::BIGINT
                   AS win_minus_settled_cents
        FROM fct_table_sessions WHERE {where}
        GROUP BY table_id, game ORDER BY table_id
        """,
        params,
    )


@dataclass(frozen=True, kw_only=True)
class AccountingTotals:
    drop_cents: int
    win_cents: int  # closed sessions only
    hold_pct: float | None  # win / drop of the closed sessions


def accounting_totals(accounting: pd.DataFrame) -> AccountingTotals:
    closed_drop = _int(accounting["closed_drop_cents"].sum())
    win = _int(accounting["win_cents"].sum())
    return AccountingTotals(
        drop_cents=_int(accounting["drop_cents"].sum()),
        win_cents=win,
        hold_pct=win / closed_drop if closed_drop else None,
    )


# --- integrity ----------------------------------------------------------------------------

ViolationBreakdown = Literal["rule", "severity", "dealer", "table", "day"]
_VIOLATION_KEYS = {
    "rule": "rule_id",
    "severity": "severity",
    "dealer": "dealer_id",
    "table": "table_id",
    "day": "gaming_date",
}


def violations_by(
    f: Filters, by: ViolationBreakdown, severities: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Violations and rounds affected per rule, severity, dealer, table or day (agg_violations);
    by rule, each with its text from the spec."""
    where, params = _where(f)
    if severities:
        where += " AND severity IN (SELECT UNNEST(?))"
        params.append(severities)
    key = _VIOLATION_KEYS[by]
    frame = _frame(
        f"""
        SELECT {key} AS key, sum(violations)::BIGINT AS violations,
               sum(rounds_affected)::BIGINT AS rounds_affected,
               sum(violations) FILTER (WHERE severity = 'critical')::BIGINT AS critical
        FROM agg_violations WHERE {where}
        GROUP BY key ORDER BY violations DESC, key
        """,
        params,
    )
    frame["critical"] = frame["critical"].fillna(0).astype("int64")
    if by == "rule":
        frame["rule_text"] = [text_of(str(k)) for k in frame["key"]]
    return frame


def violations_detail(
    f: Filters, severities: tuple[str, ...] = (), *, limit: int = 500
) -> pd.DataFrame:
    """The latest violations matching `f`, each with its rule text and whether it was
    acknowledged."""
    where, params = _where(f)
    if severities:
        where += " AND severity IN (SELECT UNNEST(?))"
        params.append(severities)
    frame = _frame(
        f"""
        SELECT occurred_at, table_id, dealer_id, rule_id, severity, check_name, round_id,
               evidence, violation_id
        FROM fct_violations WHERE {where}
        ORDER BY occurred_at DESC, violation_id LIMIT ?
        """,
        [*params, limit],
    )
    frame.insert(4, "rule_text", [text_of(str(r)) for r in frame["rule_id"]])
    done = acks.acknowledged(current_store().acks, acks.AlertKind.VIOLATION)
    frame["acknowledged"] = frame["violation_id"].isin(done)
    return frame


@dataclass(frozen=True, kw_only=True)
class IntegritySummary:
    violations: int
    critical: int
    payout_accuracy: float | None
    house_way_compliance: float | None
    open_alerts: int


def integrity_summary(
    by_rule: pd.DataFrame,
    payouts: pd.DataFrame,
    way: pd.DataFrame,
    detail: pd.DataFrame,
    alerts: pd.DataFrame,
) -> IntegritySummary:
    recorded = _int(payouts["recorded_lines"].sum())
    hands = _int(way["hands_set"].sum())
    return IntegritySummary(
        violations=_int(by_rule["violations"].sum()),
        critical=_int(by_rule["critical"].sum()),
        payout_accuracy=_int(payouts["accurate_lines"].sum()) / recorded if recorded else None,
        house_way_compliance=1 - _int(way["house_way_violations"].sum()) / hands if hands else None,
        open_alerts=int((~detail["acknowledged"]).sum() + (~alerts["acknowledged"]).sum()),
    )


WITHHELD_NOTE = "written by a role that sees figures you do not"


def audit_trail() -> pd.DataFrame:
    """The acknowledgements, newest first. A note is free text: one written by a role with a
    measure the reader lacks (a manager's, for surveillance) may quote it, and is withheld."""
    trail = acks.audit_trail(current_store().acks)
    grant = viewer()
    readable = [
        role in set(auth.Role) and auth.GRANTS[auth.Role(role)].measures <= grant.measures
        for role in trail["role"]
    ]
    trail["note"] = trail["note"].where(readable, f"(withheld: {WITHHELD_NOTE})")
    return trail


def open_alert_choices(detail: pd.DataFrame, alerts: pd.DataFrame) -> dict[str, str]:
    """Alerts nobody acknowledged yet, as {choice key: label} for a picker."""
    choices: dict[str, str] = {}
    for a in alerts[~alerts["acknowledged"]].to_dict("records"):
        p_value = "" if pd.isna(a["p_value"]) else f" · p = {a['p_value']:.3g}"
        choices[f"{acks.AlertKind.STATISTICAL.value}:{a['alert_id']}"] = (
            f"statistical · {a['test_name']} · {a['subject_id']}{p_value}"
        )
    for v in detail[~detail["acknowledged"]].to_dict("records"):
        choices[f"{acks.AlertKind.VIOLATION.value}:{v['violation_id']}"] = (
            f"violation · {v['rule_id']} · {v['severity']} · {v['table_id']} · "
            f"{pd.Timestamp(v['occurred_at']):%Y-%m-%d %H:%M:%S}"
        )
    return choices


def alert_key(choice: str) -> acks.AlertKey:
    kind, _, alert_id = choice.partition(":")
    return acks.AlertKey(kind=acks.AlertKind(kind), alert_id=alert_id)


def _dealers_in(f: Filters) -> tuple[str, list[Any]]:
    """Dealer filter for marts keyed by dealer only: the chosen dealers, and those who dealt
    one of the chosen games or tables."""
    clauses: list[str] = []
    params: list[Any] = []
    if f.dealers:
        clauses.append("dealer_id IN (SELECT UNNEST(?))")
        params.append(f.dealers)
    if f.games:
        clauses.append(
            "dealer_id IN (SELECT dealer_id FROM dim_dealers WHERE list_has_any(games, ?))"
        )
        params.append(f.games)
    if f.tables:
        clauses.append(
            "dealer_id IN (SELECT dealer_id FROM dim_dealers WHERE list_has_any(tables, ?))"
        )
        params.append(f.tables)
    return "".join(f" AND {c}" for c in clauses), params


def payout_accuracy(f: Filters) -> pd.DataFrame:
    """Per dealer: recorded payouts equal to the rules' payout, money over- and underpaid, Pai
    Gow commission not taken (PGP-A17c, DEF-M2)."""
    extra, params = _dealers_in(f)
    return _frame(
        f"""
        SELECT dealer_id,
               sum(recorded_lines)::BIGINT AS recorded_lines,
               sum(accurate_lines)::BIGINT AS accurate_lines,
               sum(accurate_lines) / nullif(sum(recorded_lines), 0) AS payout_accuracy,
               sum(overpaid_lines)::BIGINT AS overpaid_lines,
               sum(overpaid_cents)::BIGINT AS overpaid_cents,
               sum(underpaid_lines)::BIGINT AS underpaid_lines,
               sum(underpaid_cents)::BIGINT AS underpaid_cents,
               sum(commission_short_lines)::BIGINT AS commission_short_lines,
               sum(commission_shortfall_cents)::BIGINT AS commission_shortfall_cents
        FROM agg_dealer_payouts WHERE gaming_date BETWEEN ? AND ?{extra}
        GROUP BY dealer_id ORDER BY payout_accuracy, dealer_id
        """,
        [f.start, f.end, *params],
    )


def house_way(f: Filters) -> pd.DataFrame:
    """Per dealer: Pai Gow hands set and the share set by the posted house way (PGP-A13c)."""
    extra, params = _dealers_in(f)
    return _frame(
        f"""
        SELECT dealer_id, sum(hands_set)::BIGINT AS hands_set,
               sum(house_way_violations)::BIGINT AS house_way_violations,
               1 - sum(house_way_violations) / nullif(sum(hands_set), 0) AS house_way_compliance
        FROM agg_dealer_house_way WHERE gaming_date BETWEEN ? AND ?{extra}
        GROUP BY dealer_id HAVING sum(hands_set) > 0
        ORDER BY house_way_compliance, dealer_id
        """,
        [f.start, f.end, *params],
    )


def statistical_alerts(f: Filters) -> pd.DataFrame:
    """Failed statistical tests of the range (and those over all history), each with what was
    tested, the statistic, p-value or z, threshold, a plain-language reading and whether it
    was acknowledged."""
    frame = _frame(
        """
        SELECT alert_id, test_name, subject_type, subject_id, gaming_date, shift_no,
               sample_size, statistic_name, statistic, degrees_of_freedom, z_score, p_value,
               threshold_rule, threshold, observed, expected, interval_low, interval_high
        FROM fct_statistical_alerts
        WHERE gaming_date BETWEEN ? AND ? OR gaming_date IS NULL
        ORDER BY p_value NULLS LAST, alert_id
        """,
        [f.start, f.end],
    )
    money = viewer().money
    frame["explanation"] = [explain(row, money=money) for row in frame.to_dict("records")]
    done = acks.acknowledged(current_store().acks, acks.AlertKind.STATISTICAL)
    frame["acknowledged"] = frame["alert_id"].isin(done)
    return frame


def _odds(p: float) -> str:
    if p < 1e-9:
        return "less than once in a billion times"
    return f"about 1 time in {round(1 / p):,}"


def _soles(cents: float) -> str:
    return f"S/ {cents / 100:,.2f}"


def _deviation(alert: dict[str, Any]) -> str:
    z = float(alert["z_score"])
    side = "above" if z > 0 else "below"
    return f"{abs(z):.2f} standard deviations {side} the theoretical win (z = {z:.2f})"


def explain(alert: dict[str, Any], *, money: bool) -> str:
    """What a failed statistical test means, in words a floor supervisor can act on; without
    `money`, amounts are told as standard deviations from the theoretical win."""
    test, subject = str(alert["test_name"]), str(alert["subject_id"])
    p = alert.get("p_value")
    p = None if p is None or (isinstance(p, float) and math.isnan(p)) else float(p)
    chance = f"A fair game gives a result this extreme {_odds(p)}." if p is not None else ""
    when = (
        "over all play recorded"
        if alert.get("gaming_date") is None or pd.isna(alert.get("gaming_date"))
        else f"on {pd.Timestamp(alert['gaming_date']).date()}"
        + ("" if pd.isna(alert.get("shift_no")) else f", shift {int(alert['shift_no'])}")
    )
    if test == "hold_vs_theoretical":
        side = "more" if float(alert["z_score"]) > 0 else "less"  # z: (observed - expected) / sd
        hint = (
            "short pays, commission over-collected or mis-recorded payouts"
            if side == "more"
            else "overpayments, collusion or advantage play"
        )
        if not money:
            return (
                f"{alert['subject_type'].capitalize()} {subject} {when}: the house's result was "
                f"{_deviation(alert)}, where 95 % of fair results are within 1.96, so the house "
                f"won {side} than chance explains. {chance} Check for {hint}."
            )
        return (
            f"{alert['subject_type'].capitalize()} {subject} {when}: the house kept "
            f"{_soles(alert['observed'])} where {_soles(alert['expected'])} was expected; 95 % of "
            f"fair results fall between {_soles(alert['interval_low'])} and "
            f"{_soles(alert['interval_high'])}, so the house won {side} than chance explains "
            f"(z = {alert['z_score']:.2f}). "
            f"{chance} Check for {hint}."
        )
    if test in ("dice_positions", "dice_faces"):
        what = "positions the dice chose" if test == "dice_positions" else "faces of the dice"
        return (
            f"At {subject} the {what} are uneven {when}: chi-square {alert['statistic']:.2f} "
            f"with {alert['degrees_of_freedom']} degrees of freedom over "
            f"{alert['sample_size']:,} observations (PGP-A11b). {chance} Inspect the dice and "
            "the cup, and who uncovers it (PGP-A11a, PGP-A11c)."
        )
    if test in ("card_ranks", "first_card_rank"):
        what = "card ranks" if test == "card_ranks" else "first card of each round"
        return (
            f"The {what} from {alert['subject_type']} {subject} are uneven {when}: chi-square "
            f"{alert['statistic']:.2f} over {alert['sample_size']:,} cards. {chance} Check the "
            "shuffler and the deck for missing, added or marked cards."
        )
    if test == "jackpot_frequency":
        return (
            f"The progressive at {subject} paid {alert['observed']:.0f} times {when} in "
            f"{alert['sample_size']:,} progressive wagers where {alert['expected']:.2f} were "
            f"expected (DEF-THP4). {chance} Check the recorded hits against the cards."
        )
    if test == "dealer_player_pair":
        result = (
            f"{_soles(alert['observed'])} against {_soles(alert['expected'])} expected over "
            f"{alert['sample_size']:,} positions (z = {alert['z_score']:.2f})"
            if money
            else f"{_deviation(alert)} over {alert['sample_size']:,} positions"
        )
        return (
            f"Pair {subject} {when}: the house result was {result}, below the threshold "
            f"corrected for the number of pairs tested. {chance} Review the rounds this dealer "
            "ran for this player."
        )
    threshold = f"{alert['threshold_rule']} {alert['threshold']}"
    return f"{test} on {subject} {when} failed ({threshold}). {chance}"


# --- dealers ------------------------------------------------------------------------------


def dealer_scorecards(f: Filters) -> pd.DataFrame:
    """Per dealer over the range: pace, error rate, payout accuracy, voids, house-way
    compliance and hold vs theoretical with its 95 % band and z."""
    extra, params = _dealers_in(f)
    where, hold_params = _where(f, dims=("game", "table_id", "dealer_id"))
    return _frame(
        f"""
        WITH card AS (
            SELECT dealer_id,
                   sum(rounds)::BIGINT AS rounds,
                   sum(hours_in_play) AS hours_in_play,
                   sum(dealer_violations)::BIGINT AS dealer_violations,
                   sum(critical_violations)::BIGINT AS critical_violations,
                   sum(recorded_lines)::BIGINT AS recorded_lines,
                   sum(accurate_lines)::BIGINT AS accurate_lines,
                   sum(overpaid_cents)::BIGINT AS overpaid_cents,
                   sum(underpaid_cents)::BIGINT AS underpaid_cents,
                   sum(commission_shortfall_cents)::BIGINT AS commission_shortfall_cents,
                   sum(voided_rounds)::BIGINT AS voided_rounds
            FROM dealer_scorecard WHERE gaming_date BETWEEN ? AND ?{extra}
            GROUP BY dealer_id
        ),
        way AS (
            SELECT dealer_id, sum(hands_set) AS hands_set,
                   sum(house_way_violations) AS house_way_violations
            FROM agg_dealer_house_way WHERE gaming_date BETWEEN ? AND ?
            GROUP BY dealer_id
        ),
        hold AS ({_positions(["dealer"], where)})
        SELECT c.dealer_id, c.rounds, c.hours_in_play,
               c.rounds / nullif(c.hours_in_play, 0) AS rounds_per_hour,
               c.dealer_violations, c.critical_violations,
               c.dealer_violations / nullif(c.rounds, 0) AS error_rate,
               c.recorded_lines, c.accurate_lines,
               c.accurate_lines / nullif(c.recorded_lines, 0) AS payout_accuracy,
               c.overpaid_cents, c.underpaid_cents, c.commission_shortfall_cents,
               c.voided_rounds, c.voided_rounds / nullif(c.rounds, 0) AS void_rate,
               w.hands_set AS pai_gow_hands_set,
               1 - w.house_way_violations / nullif(w.hands_set, 0) AS house_way_compliance,
               h.band_handle_cents AS handle_cents,
               h.band_observed_cents AS house_result_cents,
               h.band_expected_cents AS theoretical_win_cents,
               h.band_observed_cents / nullif(h.band_handle_cents, 0) AS hold_pct,
               h.band_expected_cents / nullif(h.band_handle_cents, 0) AS theoretical_hold_pct,
               (h.band_expected_cents - {Z_95} * h.sd_cents) / nullif(h.band_handle_cents, 0)
                   AS hold_band_low_pct,
               (h.band_expected_cents + {Z_95} * h.sd_cents) / nullif(h.band_handle_cents, 0)
                   AS hold_band_high_pct,
               (h.band_observed_cents - h.band_expected_cents) / nullif(h.sd_cents, 0) AS z
        FROM card AS c
        LEFT JOIN way AS w USING (dealer_id)
        LEFT JOIN hold AS h ON h.k0 = c.dealer_id
        ORDER BY error_rate DESC, c.dealer_id
        """,
        [f.start, f.end, *params, f.start, f.end, *hold_params],
    )


# --- progressive --------------------------------------------------------------------------


def progressive_tables(f: Filters) -> pd.DataFrame:
    """Per progressive table over the range: contributions, hits, resets and the meter
    (the liability) at the start, the end and its highest (DEF-THP4)."""
    where, params = _where(f, dims=("table_id",))
    return _frame(
        f"""
        SELECT table_id,
               sum(contributions)::BIGINT AS contributions,
               sum(contributions_cents)::BIGINT AS contributions_cents,
               sum(hits)::BIGINT AS hits,
               sum(hits_cents)::BIGINT AS hits_cents,
               sum(meter_hits)::BIGINT AS meter_hits,
               sum(paid_from_meter_cents)::BIGINT AS paid_from_meter_cents,
               sum(resets)::BIGINT AS resets,
               arg_min(opening_meter_cents, gaming_date) AS opening_meter_cents,
               arg_max(closing_meter_cents, gaming_date) AS liability_cents,
               max(highest_meter_cents) AS highest_meter_cents
        FROM agg_progressive_daily WHERE {where}
        GROUP BY table_id ORDER BY table_id
        """,
        params,
    )


def progressive_daily(f: Filters) -> pd.DataFrame:
    where, params = _where(f, dims=("table_id",))
    return _frame(
        f"""
        SELECT gaming_date, sum(contributions_cents)::BIGINT AS contributions_cents,
               sum(hits_cents)::BIGINT AS hits_cents,
               sum(closing_meter_cents)::BIGINT AS liability_cents
        FROM agg_progressive_daily WHERE {where}
        GROUP BY gaming_date ORDER BY gaming_date
        """,
        params,
    )


def meter_series(f: Filters) -> pd.DataFrame:
    """The meter of each table over time, its last value in each of ~CHART_POINTS buckets."""
    where, params = _where(f, dims=("table_id",))
    bucket = max(60, int((f.end - f.start + timedelta(days=1)).total_seconds() / CHART_POINTS))
    return _frame(
        f"""
        SELECT table_id, time_bucket(to_seconds(?), occurred_at) AS bucket_at,
               arg_max(meter_after_cents, lake_row_id) AS meter_cents
        FROM fct_progressive_ledger WHERE {where}
        GROUP BY ALL ORDER BY table_id, bucket_at
        """,
        [bucket, *params],
    )


def progressive_hits(f: Filters, *, limit: int = 500) -> pd.DataFrame:
    where, params = _where(f, dims=("table_id",))
    return _frame(
        f"""
        SELECT occurred_at, table_id, round_id, seat, hit_hand, amount_cents,
               meter_before_cents, meter_after_cents, rule_ids
        FROM fct_progressive_ledger WHERE kind = 'hit' AND {where}
        ORDER BY occurred_at DESC, round_id, entry_no LIMIT ?
        """,
        [*params, limit],
    )


# --- round explorer -----------------------------------------------------------------------


def clean_search(text: str) -> str | None:
    """The searched text trimmed, or None when empty or longer than MAX_SEARCH."""
    text = text.strip()
    return text if text and len(text) <= MAX_SEARCH else None


def rounds_near(table_id: str, at: datetime, *, minutes: int = 30, limit: int = 50) -> pd.DataFrame:
    """Rounds of a table that started within `minutes` of `at` (UTC), nearest first."""
    return _frame(
        """
        SELECT round_id, started_at, ended_at, status, dealer_id, handle_cents,
               settled_house_result_cents AS house_result_cents, violations
        FROM fct_rounds
        WHERE table_id = ? AND started_at BETWEEN ? AND ?
        ORDER BY abs(epoch(started_at) - epoch(?::TIMESTAMPTZ)), round_id LIMIT ?
        """,
        [table_id, at - timedelta(minutes=minutes), at + timedelta(minutes=minutes), at, limit],
    )


def round_detail(round_id: str) -> Round | None:
    """Everything a supervisor needs to settle a dispute about one round, or None."""
    header = _frame(
        """
        SELECT round_id, table_id, game, dealer_id, deck_id, shuffler, banker_position,
               profile, profile_version, status, status_reason, started_at, ended_at,
               gaming_date, shift_no, handle_cents, settled_house_result_cents,
               commission_cents, payout_cents, capped_cents, violations, players
        FROM fct_rounds WHERE round_id = ?
        """,
        [round_id],
    )
    if header.empty:
        return None
    row = header.iloc[0].to_dict()
    day = row["gaming_date"]
    bets = _frame(
        """
        SELECT seat, spot, bettor, player_ref, wager_cents, outcome, payout_cents,
               capped_cents, commission_cents, net_cents, house_result_cents,
               recorded_paid_cents, recorded_commission_cents, payout_difference_cents,
               rule_ids
        FROM fct_bets WHERE round_id = ? AND gaming_date = ?
        ORDER BY seat, spot, bettor
        """,
        [round_id, day],
    )
    violations = _frame(
        """
        SELECT occurred_at, seq, rule_id, severity, check_name, evidence
        FROM fct_violations WHERE round_id = ? AND gaming_date = ?
        ORDER BY seq, rule_id
        """,
        [round_id, day],
    )
    raw_events = _round_events(row)
    cited = sorted(
        {r for ids in bets["rule_ids"] for r in (ids if ids is not None else [])}
        | set(violations["rule_id"])
    )
    return Round(
        header=row,
        bets=bets,
        violations=violations,
        events=event_details(raw_events),
        cards=cards_of(raw_events),
        rule_texts={r: text_of(r) for r in cited},
    )


def _round_events(row: dict[str, Any]) -> pd.DataFrame:
    """The round's events in `seq` order, from the lake (the events are the truth)."""
    columns = ["seq", "occurred_at", "event_type", "source_device", "payload"]
    if current_store().lake is None:
        return pd.DataFrame(columns=columns)
    started = pd.Timestamp(row["started_at"])
    ended = pd.Timestamp(row["ended_at"]) if not pd.isna(row["ended_at"]) else started
    # The time window lets DuckLake skip every file of other days.
    return _frame(
        f"""
        SELECT {", ".join(columns)} FROM lake.main.events
        WHERE table_id = ? AND round_id = ? AND occurred_at BETWEEN ? AND ?
        ORDER BY seq
        """,
        [
            row["table_id"],
            row["round_id"],
            (started - pd.Timedelta(hours=1)).to_pydatetime(),
            (ended + pd.Timedelta(hours=1)).to_pydatetime(),
        ],
    )


_ENVELOPE = frozenset(
    {"event_id", "event_type", "schema_version", "casino_id", "table_id", "game", "round_id",
     "seq", "occurred_at", "source_device"}
)  # fmt: skip


def event_details(events: pd.DataFrame) -> pd.DataFrame:
    """The events with their payload reduced to what the envelope columns do not say."""
    details = []
    for payload in events["payload"]:
        body = {k: v for k, v in json.loads(payload).items() if k not in _ENVELOPE}
        details.append(json.dumps(body, ensure_ascii=False, separators=(", ", ": ")))
    shown = events.drop(columns=["payload"])
    shown["details"] = details
    shown["event_id"] = [json.loads(p).get("event_id") for p in events["payload"]]
    return shown


_CARD_EVENTS = ("cards_dealt", "community_dealt", "hand_set", "dealer_revealed")


def cards_of(events: pd.DataFrame) -> pd.DataFrame:
    """Who got which cards, from the card events' payloads, in dealing order."""
    rows = []
    for event in events.to_dict("records"):
        seq, kind = event["seq"], event["event_type"]
        if kind not in _CARD_EVENTS:
            continue
        body = json.loads(event["payload"])
        if kind == "hand_set":
            for hand in ("high", "low"):
                rows.append((seq, kind, f"seat {body.get('seat')} {hand} hand", body.get(hand)))
            continue
        who = body.get("recipient") or body.get("street") or kind
        if body.get("seat") is not None:
            who = f"{who} {body['seat']}"
        elif body.get("group") is not None:
            who = f"{who} {body['group']}"
        elif kind == "community_dealt" and body.get("street"):
            who = f"community ({body['street']})"
        rows.append((seq, kind, str(who), body.get("cards")))
    frame = pd.DataFrame(rows, columns=["seq", "event_type", "to", "cards"])
    frame["cards"] = [pretty_cards(c) for c in frame["cards"]]
    return frame


_SUITS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}


def pretty_cards(cards: Any) -> str:
    """['As', 'Td', 'Jk'] -> 'A♠ 10♦ Joker'."""
    if not isinstance(cards, list):
        return ""
    out = []
    for card in cards:
        text = str(card)
        if text == "Jk":
            out.append("Joker")
        elif len(text) == 2:
            rank = "10" if text[0] == "T" else text[0]
            out.append(rank + _SUITS.get(text[1], text[1]))
        else:
            out.append(text)
    return " ".join(out)
