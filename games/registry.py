"""Every game the platform knows, registered once: the consumer, the simulator and the CLI read
this table (docs/adding-a-game.md)."""

from __future__ import annotations

from events.models import Game
from games import holdem, pai_gow, tripoker
from games.base import GameSpec

GAMES: dict[Game, GameSpec] = {
    spec.game: spec for spec in (pai_gow.SPEC, tripoker.SPEC, holdem.SPEC)
}
