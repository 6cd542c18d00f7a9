"""Subcommands of the `croupier` CLI, one module per area."""
