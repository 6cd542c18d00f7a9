"""The games: one folder each (rules and house way, procedure checks, the round's adapter from
events, the table simulator), registered once in `games.registry`; shared simulation machinery in
`games.simulation`, the game math of every profile in `games.odds`. Adding a game:
docs/adding-a-game.md."""
