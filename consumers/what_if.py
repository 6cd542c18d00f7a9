"""What-if re-settlement: the lake's recorded rounds settled again under another rule profile.

Read-only. Each settled round of the profile's game is rebuilt from the events the lake stored
(cards and decisions as played) and settled with the same engine the consumer uses
(`GameSpec.settle`, games/registry.py), under the alternative profile; the result is compared
with the settlements the lake recorded, per game, table and UTC day of the round's start.
Nothing is written to the lake: it is attached READ_ONLY, pinned at one snapshot, and locked
(infra/readonly.py) so the session cannot read or write any other file.

The progressive meter (Hold'em): every round is re-settled against the meter the lake recorded
before it (its first jackpot-ledger entry's `meter_before_cents`, else the table's last recorded
meter); the re-settled contributions and hits are never carried into the next round nor
written anywhere, so the recorded meter is not disturbed.

Decisions (Tripóker play/fold, Hold'em call/fold) stay as played by default: the difference is
then the cost of the paytables and forfeit rules with the players' decisions fixed. With
`decisions="strategy"` (Tripóker only) each ante player's play/fold is decided again by the
target profile's strategy: queen-6-4 or better without an exposed dealer card, and with one
(TCP-A10b) the play that returns more than folding given that card (exactly, over the 1,128
dealer hands left).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal

from consumers.stored_rounds import stored_rounds
from events.models import Game
from games.base import Decider, RoundEvents
from games.registry import GAMES
from infra import lake as lakes
from infra import readonly
from rules.cards import CardError
from rules.profile import Profile
from rules.settlement import RoundError, RoundSettlement

DecisionMode = Literal["as-played", "strategy"]
DECISION_MODES: tuple[DecisionMode, ...] = ("as-played", "strategy")


class WhatIfError(ValueError):
    """Bad input: a profile of another game, a bad range, a strategy the game has not."""


class NothingToCompare(LookupError):
    """No settled round of the game in the range (and table)."""


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Which recorded rounds to re-settle: the game, UTC days `start` <= day < `end`, a table."""

    game: Game
    start: date | None = None
    end: date | None = None  # exclusive
    table_id: str | None = None


@dataclass(kw_only=True)
class Cell:
    """One game × table × UTC day: the recorded and the re-settled figures, integer céntimos."""

    game: str
    table_id: str
    day: date
    rounds: int = 0
    recorded_profiles: set[str] = field(default_factory=set)
    handle_cents: int = 0
    house_result_cents: int = 0
    whatif_handle_cents: int = 0
    whatif_house_result_cents: int = 0
    decisions_changed: int = 0

    @property
    def difference_cents(self) -> int:
        """Re-settled minus recorded house result: what the house gains (+) or loses (-)."""
        return self.whatif_house_result_cents - self.house_result_cents


@dataclass(frozen=True, kw_only=True, slots=True)
class RoundCompared:
    """One round: what the lake recorded and what the target profile settles it to."""

    round_id: str
    table_id: str
    started_at: datetime
    ended_at: datetime | None
    recorded_profile: str  # "name@vN"
    handle_cents: int
    house_result_cents: int
    whatif_handle_cents: int
    whatif_house_result_cents: int
    decisions_changed: int


@dataclass(frozen=True, kw_only=True)
class Comparison:
    profile: str  # the target, "name@vN"
    decisions: DecisionMode
    selection: Selection
    lake_snapshot_id: int
    cells: tuple[Cell, ...]
    not_resettled: int  # rounds the target profile could not settle (bad data)
    rounds: tuple[RoundCompared, ...] = ()

    def total(self) -> Cell:
        total = Cell(game=self.selection.game.value, table_id="all", day=date.min)
        for c in self.cells:
            total.rounds += c.rounds
            total.recorded_profiles |= c.recorded_profiles
            total.handle_cents += c.handle_cents
            total.house_result_cents += c.house_result_cents
            total.whatif_handle_cents += c.whatif_handle_cents
            total.whatif_house_result_cents += c.whatif_house_result_cents
            total.decisions_changed += c.decisions_changed
        return total


def profile_ref(profile: Profile) -> str:
    return f"{profile.name}@v{profile.version}"


def check(profile: Profile, game: Game | None, decisions: DecisionMode) -> Game:
    """The game to re-settle (the profile's); `WhatIfError` when `game` or `decisions` do not
    fit the profile."""
    if game is not None and game is not profile.game:
        raise WhatIfError(
            f"{profile.name} is a {profile.game.slug} profile: it cannot settle {game.slug} "
            f"rounds (leave out --game, or give a {game.slug} profile)"
        )
    if decisions == "strategy":
        _redecide(profile)  # refuses a game or profile without a strategy
    return profile.game


def _redecide(profile: Profile) -> Decider:
    """The game's re-decider for `--decisions strategy` (`GameSpec.redecide`)."""
    redecide = GAMES[profile.game].redecide
    if redecide is None:
        raise WhatIfError("--decisions strategy is implemented for Tripóker profiles only")
    try:
        return redecide(profile)
    except ValueError as exc:
        raise WhatIfError(str(exc)) from None


def compare(
    store: lakes.Lake,
    profile: Profile,
    selection: Selection,
    *,
    decisions: DecisionMode = "as-played",
    on_progress: Callable[[int, int], None] | None = None,
) -> Comparison:
    """Re-settle the selected rounds of `store` under `profile`, per game, table and UTC day.

    Raises `lakes.LakeError` (no lake), `WhatIfError` (the profile is of another game),
    `NothingToCompare` (no settled round selected). `on_progress(done, total)` is called as
    rounds are re-settled."""
    check(profile, selection.game, decisions)
    spec = GAMES[selection.game]
    con = _open(store)
    try:
        snapshot = lakes.current_snapshot(con)
        where, params = _where(selection)
        count_row = con.execute(f"SELECT count(*) FROM rounds r WHERE {where}", params).fetchall()
        total = int(count_row[0][0]) if count_row else 0
        if total == 0:
            raise NothingToCompare(_nothing(selection))
        cells: dict[tuple[str, date], Cell] = {}
        compared: list[RoundCompared] = []
        failed = 0
        decide = _redecide(profile) if decisions == "strategy" else None
        for done, (meta, events) in enumerate(
            stored_rounds(con, f"SELECT * FROM rounds r WHERE {where}", params), start=1
        ):
            kinds = RoundEvents(events)
            changed = 0
            try:
                if meta["unreadable"]:  # a stored event the contract refuses: not re-settled
                    raise ValueError(meta["unreadable"])
                if decide is not None:
                    kinds, changed = decide(kinds)
                settled = spec.settle(kinds, profile, meta["meter_cents"])
            except (RoundError, CardError, ValueError, KeyError, IndexError):
                failed += 1  # bad data the consumer's checks reported; never settled on
            else:
                key = (meta["table_id"], meta["day"])
                cell = cells.get(key)
                if cell is None:
                    cell = cells[key] = Cell(
                        game=selection.game.value, table_id=meta["table_id"], day=meta["day"]
                    )
                one = RoundCompared(
                    round_id=meta["round_id"],
                    table_id=meta["table_id"],
                    started_at=meta["started_at"],
                    ended_at=meta["ended_at"],
                    recorded_profile=f"{meta['profile']}@v{meta['profile_version']}",
                    handle_cents=meta["handle_cents"],
                    house_result_cents=meta["house_result_cents"],
                    whatif_handle_cents=_handle(settled),
                    whatif_house_result_cents=settled.house_result_cents,
                    decisions_changed=changed,
                )
                compared.append(one)
                cell.rounds += 1
                cell.recorded_profiles.add(one.recorded_profile)
                cell.handle_cents += one.handle_cents
                cell.house_result_cents += one.house_result_cents
                cell.whatif_handle_cents += one.whatif_handle_cents
                cell.whatif_house_result_cents += one.whatif_house_result_cents
                cell.decisions_changed += changed
            if on_progress is not None:
                on_progress(done, total)
    finally:
        con.close()
    return Comparison(
        profile=profile_ref(profile),
        decisions=decisions,
        selection=selection,
        lake_snapshot_id=snapshot,
        cells=tuple(sorted(cells.values(), key=lambda c: (c.day, c.table_id))),
        not_resettled=failed,
        rounds=tuple(compared),
    )


def _nothing(selection: Selection) -> str:
    bounds = []
    if selection.start is not None:
        bounds.append(f"from {selection.start}")
    if selection.end is not None:
        bounds.append(f"before {selection.end}")
    if selection.table_id is not None:
        bounds.append(f"at table {selection.table_id}")
    where = f" {' '.join(bounds)}" if bounds else ""
    return f"no settled {selection.game.slug} round in the lake{where}"


def _open(store: lakes.Lake) -> Any:
    """The lake READ_ONLY, pinned at its current snapshot, locked to its own files."""
    if not store.exists:
        raise lakes.LakeError(
            f"no lake at {store.root}: run `croupier demo` or `croupier lake init`"
        )
    probe = lakes.connect(store, read_only=True)
    try:
        snapshot = lakes.current_snapshot(probe)
    finally:
        probe.close()
    con = lakes.open_session(
        [store.attach_sql(read_only=True, snapshot=snapshot)], use=lakes.LAKE_ALIAS
    )
    readonly.lock(con, [store.data_location])
    missing = {"rounds", "settlements", "events", "jackpot_ledger"} - {
        name for (name,) in con.execute("SHOW TABLES").fetchall()
    }
    if missing:
        con.close()
        raise lakes.LakeError(
            f"{store.root} is not a settlement lake (no {', '.join(sorted(missing))} table): "
            "give the lake the consumer writes, not the marts store"
        )
    return con


def _where(selection: Selection) -> tuple[str, list[Any]]:
    clauses = ["r.status = 'settled'", "r.game = ?"]
    params: list[Any] = [selection.game.value]
    if selection.start is not None:
        clauses.append("r.started_at >= ?")
        params.append(datetime.combine(selection.start, time(0), tzinfo=UTC))
    if selection.end is not None:
        clauses.append("r.started_at < ?")
        params.append(datetime.combine(selection.end, time(0), tzinfo=UTC))
    if selection.table_id is not None:
        clauses.append("r.table_id = ?")
        params.append(selection.table_id)
    return " AND ".join(clauses), params


def _handle(settled: RoundSettlement) -> int:
    return sum(line.wager_cents for line in settled.settlements)


def day_range(start: date | None, end: date | None) -> tuple[date | None, date | None]:
    """`--from`/`--to` (both inclusive) as the half-open range the selection takes."""
    if start is not None and end is not None and end < start:
        raise WhatIfError(f"--to {end} is before --from {start}")
    if end is None or end == date.max:  # through the last day there is: no upper bound
        return start, None
    return start, end + timedelta(days=1)


COLUMNS = (
    "game",
    "table_id",
    "day",
    "rounds",
    "recorded_profiles",
    "whatif_profile",
    "decisions",
    "handle_cents",
    "house_result_cents",
    "hold_pct",
    "whatif_handle_cents",
    "whatif_house_result_cents",
    "whatif_hold_pct",
    "difference_cents",
    "decisions_changed",
)


def rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per game × table × day (COLUMNS), money in céntimos, hold as a fraction."""
    out = []
    for c in comparison.cells:
        out.append(
            {
                "game": c.game,
                "table_id": c.table_id,
                "day": c.day,
                "rounds": c.rounds,
                "recorded_profiles": ", ".join(sorted(c.recorded_profiles)),
                "whatif_profile": comparison.profile,
                "decisions": comparison.decisions,
                "handle_cents": c.handle_cents,
                "house_result_cents": c.house_result_cents,
                "hold_pct": _hold(c.house_result_cents, c.handle_cents),
                "whatif_handle_cents": c.whatif_handle_cents,
                "whatif_house_result_cents": c.whatif_house_result_cents,
                "whatif_hold_pct": _hold(c.whatif_house_result_cents, c.whatif_handle_cents),
                "difference_cents": c.difference_cents,
                "decisions_changed": c.decisions_changed,
            }
        )
    return out


def _hold(house: int, handle: int) -> float | None:
    return house / handle if handle else None
