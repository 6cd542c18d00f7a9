"""`python -m croupier` runs the CLI."""

from croupier.cli import main

main()
