"""The games: one folder each (rules and house way, procedure checks, the round's adapter from
events, the table simulator, the game math), registered once in `games.registry`; shared
simulation machinery in `games.simulation`, the game math of any profile by `games.odds`. Adding a
game: docs/adding-a-game.md."""
