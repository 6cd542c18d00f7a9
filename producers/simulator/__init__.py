"""The table simulator: N tables of each game for H hours, deterministic for a seed, with faults.

`simulate()` yields Kafka messages (key = table_id, value = event JSON) in per-table seq order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime

from events import Game
from games.simulation.faults import (
    FAULTS,
    Check,
    Fault,
    FaultRecord,
    default_rates,
    parse_faults,
)
from games.simulation.players import PlayerMix, PlayerRecord, parse_players
from games.simulation.stream import Message
from games.simulation.table import TableSim

DEFAULT_START = datetime(2025, 1, 10, 23, 0, tzinfo=UTC)  # 18:00 in Lima

__all__ = [
    "DEFAULT_START",
    "FAULTS",
    "Check",
    "Fault",
    "FaultRecord",
    "Message",
    "PlayerMix",
    "PlayerRecord",
    "Simulation",
    "default_rates",
    "parse_faults",
    "parse_players",
    "simulate",
    "table_classes",
]


def table_classes() -> dict[Game, type[TableSim]]:
    from games.registry import GAMES

    return {game: spec.simulator for game, spec in GAMES.items()}


class Simulation:
    """Iterate it for the messages of every table, each table's in seq order, tables interleaved
    by their clocks; `progress` says how much of the simulated time is done (0..1)."""

    def __init__(
        self,
        *,
        tables: Mapping[Game, int] | int = 3,
        hours: float = 8.0,
        seed: int = 0,
        faults: Mapping[Fault, float] | None = None,
        casino_id: str = "casino-lima-01",
        start: datetime = DEFAULT_START,
        on_fault: Callable[[FaultRecord], None] | None = None,
        profiles: Mapping[Game, str] | None = None,
        players: PlayerMix | None = None,
        on_player: Callable[[PlayerRecord], None] | None = None,
        first_table: int = 1,
    ) -> None:
        if start.tzinfo is None:
            raise ValueError("start must be a timezone-aware datetime")
        if hours <= 0:
            raise ValueError(f"hours must be positive, got {hours}")
        counts = dict.fromkeys(Game, tables) if isinstance(tables, int) else dict(tables)
        if any(n < 0 for n in counts.values()):
            raise ValueError("table counts cannot be negative")
        rates = default_rates() if faults is None else dict(faults)
        self.start_ms = int(start.timestamp() * 1000)
        self.end_ms = self.start_ms + int(hours * 3_600_000)
        classes = table_classes()
        self.tables: list[TableSim] = [
            classes[game](
                number=number,
                casino_id=casino_id,
                seed=seed,
                rates=rates,
                on_fault=on_fault,
                start_ms=self.start_ms,
                end_ms=self.end_ms,
                profile=(profiles or {}).get(game),
                players=players,
                on_player=on_player,
            )
            for game in Game
            for number in range(first_table, first_table + counts.get(game, 0))
        ]
        self._clock_ms = self.start_ms
        self._started = False

    @property
    def progress(self) -> float:
        span = self.end_ms - self.start_ms
        return min(1.0, (self._clock_ms - self.start_ms) / span)

    def __iter__(self) -> Iterator[Message]:
        if self._started:
            raise RuntimeError("a Simulation runs once: call simulate() again for another pass")
        self._started = True
        runs = [(t.clock_ms, i, t.batches(), t) for i, t in enumerate(self.tables)]
        heapq.heapify(runs)
        while runs:
            _, order, batches, table = runs[0]
            batch = next(batches, None)
            if batch is None:
                heapq.heappop(runs)
                continue
            yield from batch
            self._clock_ms = runs[0][0]
            heapq.heapreplace(runs, (table.clock_ms, order, batches, table))
        self._clock_ms = self.end_ms


def simulate(
    *,
    tables: Mapping[Game, int] | int = 3,
    hours: float = 8.0,
    seed: int = 0,
    faults: Mapping[Fault, float] | None = None,
    casino_id: str = "casino-lima-01",
    start: datetime = DEFAULT_START,
    on_fault: Callable[[FaultRecord], None] | None = None,
    profiles: Mapping[Game, str] | None = None,
    players: PlayerMix | None = None,
    on_player: Callable[[PlayerRecord], None] | None = None,
    first_table: int = 1,
) -> Simulation:
    """A casino night: `tables` of each game (an int: that many of every game) for `hours`.

    The same arguments always give the same messages. `faults`: rate per fault (None: the
    defaults; a fault left out: 0). `on_fault` receives each injected fault as it is emitted.
    `profiles`: the released profile (NAME or NAME@VERSION) a game's tables open with, where
    not the game's default. `players`: the archetypes of the players seated (None: all
    typical, the night as always); `on_player` receives each player seated, each flashing dealer
    and each decision taken with the dealer's hidden cards in view (`PlayerRecord`).
    `first_table`: the number of each game's first table (its id `TP-01`...): nights simulated
    into one lake with tables of their own never share a round id or a table's sequence.
    """
    return Simulation(
        tables=tables,
        hours=hours,
        seed=seed,
        faults=faults,
        casino_id=casino_id,
        start=start,
        on_fault=on_fault,
        profiles=profiles,
        players=players,
        on_player=on_player,
        first_table=first_table,
    )
