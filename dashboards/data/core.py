"""The dashboards' one door to the marts: the store and its connection, the cached query
(`_frame`, the one way a frame is read, through `redact`), `viewer`/`viewing_as`, `Filters` and
the filter helpers. The page areas' queries (dashboards/data/*.py) read through it; the package
re-exports every public name.

One read-only DuckDB instance per published build of a marts store is kept (attaching DuckLake
costs ~0.3 s), the marts attached pinned at the snapshot that build published
(`<marts>/published.json`, infra/marts.py): the pages show the last successful build,
whole, never a build half done or one that failed. Each query runs on a fresh cursor of its own,
closed at once; parameterized SQL only: user input reaches DuckDB as parameters, never as text.

What a frame carries depends on who reads it (`viewer`): the measures the reader's role lacks
(dashboards/roles.toml; for surveillance, money) are taken out of every frame here, after the
shared cache and before any page sees it — columns and JSON fields ending in `_cents`, and the
amounts statistical alerts compare (their explanations then speak in standard deviations).
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pandas as pd
import pyarrow as pa
import streamlit as st

from dashboards import acks, auth

if TYPE_CHECKING:
    from infra.lake import Lake

# Results are cached this long; the cache key also holds the published marts snapshot (read from
# the small pointer file on each query), so a newly published build shows at once.
TTL_SECONDS = 60
# The live panels read the lake itself (its latest snapshot) with a cache of their own, this short:
# a violation committed now shows within LIVE_TTL_SECONDS + a refresh, whatever the build cadence.
LIVE_TTL_SECONDS = 2
LIVE_SNAPSHOT_TTL_SECONDS = 1  # the lake's latest snapshot id: one catalog read, shared
MAX_SEARCH = 100  # longest round id or text a user may search for
CHART_POINTS = 400  # meter points per table drawn over any date range
Z_95 = 1.959963984540054  # two-sided 95 % normal quantile, as the marts use


class NoMarts(RuntimeError):
    """The marts store does not exist yet: `croupier build` (or `croupier demo`) makes it."""


class LakeAway(RuntimeError):
    """The lake cannot be read now (no lake configured, its folder gone, its catalog's server
    away); the message says so in a few words, without paths or passwords."""


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
        lake=lake.root if _lake_found(lake) else None,
        acks=acks.default_path(),
    )


# On PostgreSQL, whether the lake is there is a connection to its catalog's server (~0.2 s, or
# PGCONNECT_TIMEOUT when the server does not answer) and every query asks (10-20 a page run):
# the answer is kept this long (seconds; found, away). A SQLite catalog is a file, asked each time.
LAKE_PRESENCE_TTL = (5.0, 30.0)
_lake_presence: dict[tuple[str, str], tuple[float, bool]] = {}


def _lake_found(lake: Lake) -> bool:
    """Whether `lake` exists; False when its catalog's server is away."""
    from infra import lake as lakes

    if lake.catalog_url is None:
        return lake.exists
    key = (str(lake.root), lake.catalog_url)
    seen = _lake_presence.get(key)
    if seen is not None and time.monotonic() < seen[0]:
        return seen[1]
    try:
        found = lake.exists
    except lakes.LakeError:  # the catalog's server is away: the pages read the marts alone
        found = False
    _lake_presence[key] = (time.monotonic() + LAKE_PRESENCE_TTL[0 if found else 1], found)
    return found


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
        lake=lakes.from_settings(Path(lake)) if lake else None,
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


# --- the lake, read live ------------------------------------------------------------------


@st.cache_resource(max_entries=2, show_spinner=False)
def _lake_database(lake: str, identity: tuple[int, int]) -> duckdb.DuckDBPyConnection:
    """A read-only DuckDB instance with the lake alone attached (not pinned: each query, a
    transaction of its own, reads the lake's latest snapshot). `identity`: the catalog's device
    and inode, so a lake deleted and made again gets a new instance ((0, 0) on PostgreSQL)."""
    from infra import lake as lakes

    con = lakes.connect(lakes.from_settings(Path(lake)), read_only=True, live=True)
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET parquet_metadata_cache = true")
    return con


def _live_lake() -> tuple[str, tuple[int, int]]:
    """The lake to read live and its identity, or LakeAway."""
    from infra import lake as lakes

    store = current_store()
    if store.lake is None:
        raise LakeAway("the lake cannot be reached (no lake here, or its catalog's server is away)")
    lake = lakes.from_settings(store.lake)
    if lake.on_postgres:
        return str(store.lake), (0, 0)
    try:
        stat = lake.catalog.stat()
    except OSError:
        raise LakeAway("the lake's catalog is gone") from None
    return str(store.lake), (stat.st_dev, stat.st_ino)


def _lake_read(lake: str, identity: tuple[int, int], sql: str, params: tuple[Any, ...]) -> pa.Table:
    """One read-only query on the lake's latest snapshot, on a fresh cursor (run again while
    the SQLite catalog is locked: `lakes.read_live`); a failure (the catalog's server away, a
    file gone) drops the instance and is LakeAway."""
    from infra import lake as lakes

    try:
        cursor = _lake_database(lake, identity).cursor()
    except Exception as exc:  # attaching failed: lakes.LakeError, duckdb.Error, OSError
        raise LakeAway(f"the lake cannot be opened ({type(exc).__name__})") from None
    try:
        values = [list(p) if isinstance(p, tuple) else p for p in params]
        return lakes.read_live(lambda: cursor.execute(sql, values).to_arrow_table())
    except duckdb.InvalidInputException:
        raise  # a question the lake cannot answer (a snapshot it no longer keeps): the caller's
    except (duckdb.Error, OSError) as exc:
        _lake_database.clear()  # the next read attaches again (the server may be back)
        raise LakeAway(f"the lake cannot be read ({type(exc).__name__})") from None
    finally:
        cursor.close()


@st.cache_data(ttl=LIVE_SNAPSHOT_TTL_SECONDS, max_entries=8, show_spinner=False)
def _cached_lake_snapshot(lake: str, identity: tuple[int, int]) -> int:
    table = _lake_read(lake, identity, "SELECT id FROM lake.current_snapshot()", ())
    return int(table.column(0)[0].as_py()) if table.num_rows else 0


@st.cache_data(ttl=LIVE_TTL_SECONDS, max_entries=256, show_spinner=False)
def _cached_lake_frame(
    lake: str, identity: tuple[int, int], sql: str, params: tuple[Any, ...]
) -> pd.DataFrame:
    return _to_pandas(_lake_read(lake, identity, sql, params))


def lake_snapshot() -> int:
    """The lake's latest snapshot id (cached LIVE_SNAPSHOT_TTL_SECONDS), or LakeAway."""
    try:
        return _cached_lake_snapshot(*_live_lake())
    except duckdb.Error as exc:
        raise LakeAway(f"the lake cannot be read ({type(exc).__name__})") from None


def _lake_frame(sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
    """A query on the lake's latest snapshot as the current viewer may see it (cached
    LIVE_TTL_SECONDS, apart from the marts' cache), or LakeAway. Put the snapshot ids it reads
    in `params`: the cache key then changes with every commit."""
    return redact(_cached_lake_frame(*_live_lake(), sql, tuple(params)), viewer())


# --- who reads ----------------------------------------------------------------------------

_VIEWING_AS: ContextVar[auth.Grant | None] = ContextVar("croupier_viewing_as", default=None)
# Statistical tests whose observed, expected and interval figures are counts (cards, dice,
# hits); any other test's (hold, dealer x player, and any test added later) may be money.
COUNTING_TESTS = frozenset(
    {
        "dice_positions",
        "dice_faces",
        "card_ranks",
        "first_card_rank",
        "jackpot_frequency",
        "player_decisions",
        "dealer_player_decisions",
    }
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
