"""`croupier house-way`, `settle` and `odds`: the rules engine on the command line.

JSON on stdout; bad input exits 2 with a one-line error on stderr (click's usage errors).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from croupier.commands import FiniteRange
from events.models import Game
from games.profiles import load_profile, parse_profile
from games.registry import GAMES
from rules.cards import CardError, cards_str, parse_cards
from rules.profile import (
    BUILTIN_HOUSE_WAYS,
    Profile,
    ProfileError,
    load_house_way,
    profile_names,
    read_text,
)
from rules.settlement import RoundError, RoundSettlement


def resolve_profile(value: str) -> Profile:
    """A released profile, ``NAME`` (its latest version) or ``NAME@VERSION``, or the path of a
    casino's own profile file (TOML)."""
    try:
        path = Path(value)
        if not path.is_file() and value.partition("@")[0] in profile_names():
            return load_profile(value)
        if not path.is_file():
            raise click.BadParameter(
                f"{value!r} is neither a released profile ({', '.join(profile_names())}, "
                "optionally @VERSION) nor a profile file",
                param_hint="--profile",
            )
        return parse_profile(read_text(path, str(path)), source=str(path))
    except ProfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--profile") from None


# ---------------------------------------------------------------------------------------------
# house-way


@click.command("house-way")
@click.option(
    "--way",
    type=click.Choice(BUILTIN_HOUSE_WAYS),
    default="foxwoods",
    show_default=True,
    help="The posted house way (DEF-PGP1).",
)
@click.argument("cards", nargs=-1, required=True)
def house_way(way: str, cards: tuple[str, ...]) -> None:
    """Set seven Pai Gow cards by the house way (PGP-A13c).

    CARDS: seven cards such as `As Kd Qh Jc 9s 2c Jk` (ranks 2-9 T J Q K A, suits c d h s, the
    joker Jk), as separate arguments or one quoted string. Prints
    `{"high": [...5 cards], "low": [...2 cards]}`.
    """
    from games.pai_gow.rules import house_way as set_hands

    try:
        hand = parse_cards(" ".join(cards), allow_joker=True)
    except CardError as exc:
        raise click.BadParameter(str(exc), param_hint="CARDS") from None
    if len(hand) != 7:
        raise click.BadParameter(f"expected 7 cards, got {len(hand)}", param_hint="CARDS")
    result = set_hands(hand, load_house_way(way))
    click.echo(json.dumps({"high": cards_str(result.high), "low": cards_str(result.low)}))


# ---------------------------------------------------------------------------------------------
# settle: round records in, settlements out


class _Table:
    """Settles one table's rounds in order, carrying the progressive meter between rounds."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.meter: int | None = None  # the profile's seed until a round reports its meter

    def settle(self, record: dict[str, Any]) -> RoundSettlement:
        profile = self.profile
        game = record.get("game", profile.game.slug)
        if game != profile.game.slug:
            raise ValueError(f"a {game!r} round cannot be settled under {profile.name}")
        result = GAMES[profile.game].settle_record(record, profile, self.meter)
        if result.meter_after_cents is not None:
            self.meter = result.meter_after_cents
        return result


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"field '{where}': {error['msg']}"


@click.command()
@click.option(
    "--profile",
    "profile_name",
    default=None,
    help="Rule profile: a built-in name (pai-gow/pe-1999, tripoker/pe-2005, tripoker/standard, "
    "holdem/pe-2007) or the path of a profile TOML file. Default: the game's Peruvian profile, "
    "from the first round's `game` field.",
)
def settle(profile_name: str | None) -> None:
    """Settle one table's rounds: round records as JSON lines on stdin, one JSON line per bet out.

    \b
    Each input line is one round. Cards are strings (`As`, `Td`, `Jk`), money integer céntimos.
      Pai Gow (PGP-A13..17, DEF-PGP2/4):
        {"game": "pai-gow", "round_id": "r1", "dealer_cards": [7 cards],
         "banker_seat": null, "house_wager_cents": 0,
         "seats": [{"seat": 1..6, "wager_cents": 1000, "cards": [7 dealt cards],
                    "high": [5 cards], "low": [2 cards], "surrendered": false}]}
        (no high/low: no hands set, a surrender; banker_seat: the player-banker, whose
         wager_cents is the bank; house_wager_cents: the house's bet against that banker)
      Tripóker (TCP-A9..11, DEF-TCP):
        {"game": "tripoker", "round_id": "t1", "dealer_cards": [3 cards],
         "seats": [{"seat": 1..7, "ante_cents": 1000, "pair_plus_cents": 500,
                    "cards": [3 cards], "decision": "play" | "fold" | null}]}
      Hold'em (DEF-THP1..6):
        {"game": "holdem", "round_id": "h1", "dealer_hole": [2 cards],
         "board": [flop, turn, river], "meter_cents": 2000000,
         "seats": [{"seat": 1..7, "ante_cents": 1000, "progressive_cents": 500,
                    "hole": [2 cards], "decision": "call" | "fold"}]}
        (meter_cents may be left out: the meter carries over from the previous round, starting
         at the profile's seed)

    \b
    Output, one line per bet: round_id, seat, spot, bettor, wager_cents, outcome, payout_cents
    (winnings on top of the returned stake), commission_cents, net_cents (the bettor's money
    change), house_result_cents, capped_cents, uncapped_payout_cents, profile, profile_version,
    rule_ids. A bad line stops the run with exit code 2 and names the line.
    """
    table: _Table | None = None
    out = sys.stdout
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("expected a JSON object")
            if table is None:
                if profile_name is None:
                    game = Game.from_slug(str(record.get("game", "")))
                    profile_name = GAMES[game].default_profile
                table = _Table(resolve_profile(profile_name))
            result = table.settle(record)
        except ValidationError as exc:
            raise click.UsageError(f"line {number}: {_first_error(exc)}") from None
        except (ValueError, CardError, RoundError) as exc:
            raise click.UsageError(f"line {number}: {exc}") from None
        for settlement in result.settlements:
            out.write(json.dumps(settlement.to_record(), ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------
# odds


@click.command()
@click.option(
    "--game",
    type=click.Choice([g.slug for g in Game]),
    default=None,
    help="The game (default: the profile's).",
)
@click.option(
    "--profile",
    "profile_name",
    default=None,
    help="A released profile (NAME or NAME@VERSION) or a profile TOML file (default: the "
    "game's Peruvian one).",
)
@click.option(
    "--precision",
    type=FiniteRange(min=0.01, max=10),
    default=None,
    help="Simulate until the 95 % interval of the house edge is at most this many percentage "
    "points either side.  [default: 0.1]",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=100),
    default=None,
    help="Simulate exactly this many samples instead (a Pai Gow deal, a Hold'em player hand).",
)
@click.option("--seed", type=int, default=2024, show_default=True, help="Simulation seed.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def odds(
    game: str | None,
    profile_name: str | None,
    precision: float | None,
    rounds: int | None,
    seed: int,
    quiet: bool,
) -> None:
    """Game math of a rule profile as JSON: the house edge of every wager and the hit
    frequencies of each paytable line; a wager with a negative house edge is flagged.

    \b
    Tripóker is exact (every player hand against every dealer hand and exposed card, the
    player's optimal strategy). Pai Gow and the Hold'em base game are simulated, settled as the
    settlement engine settles, with the randomness seeded (--seed, printed): by default until the
    95 % interval of the edge is at most ±0.1 point (--precision), or for --rounds samples; the
    interval, the samples and the unit of each edge are printed, the progress on stderr. The
    Hold'em progressive is exact.
      Pai Gow: edge per unit wagered; a sample is one deal of seven hands set by the house way,
      each against each other as the dealer's (42 pairs). Default run: 40,000 deals (the least,
      two batches), ±0.02 point, about 5 s here.
      Hold'em: edge per ante (the call's money in the result), near-optimal calls; a sample is a
      player hand. ±0.1 point: about 1.8 million hands, about 4.5 minutes here (2-core shared
      machine); --precision 0.25 about 50 s (see docs/odds.md).

    \b
    A published figure is quoted beside ours only when the profile's rules are exactly the ones
    it was published for (games/published_odds.toml, each with its source); otherwise the report
    says that none is known for these rules. Exit code 2 on bad options or a bad profile.
    """
    import time

    import numpy as np

    from games.odds import game_math

    if game is None and profile_name is None:
        raise click.UsageError("give --game or --profile")
    if rounds is not None and precision is not None:
        raise click.UsageError("give --rounds or --precision, not both")
    profile = resolve_profile(profile_name or GAMES[Game.from_slug(game or "")].default_profile)
    if game is not None and profile.game.slug != game:
        raise click.BadParameter(
            f"{profile.name} is a {profile.game.slug} profile, not {game}", param_hint="--game"
        )
    steps = 1000
    with contextlib.ExitStack() as stack:
        bars: list[Any] = []  # opened by the first progress report: exact games print none

        def progress(fraction: float) -> None:
            if not bars:
                bars.append(
                    stack.enter_context(
                        click.progressbar(
                            length=steps,
                            label=f"simulating {profile.name}",
                            file=io.StringIO() if quiet else sys.stderr,
                        )
                    )
                )
            bar = bars[0]
            bar.update(max(0, int(fraction * steps) - bar.pos))

        started = time.monotonic()
        report = game_math(
            profile,
            rng=np.random.default_rng(seed),
            rounds=rounds,
            precision=None if precision is None else precision / 100,
            progress=progress,
        )
    simulated = any("ci95" in wager for wager in report["wagers"].values())
    if simulated:  # the seed reproduces it
        report["seed"] = seed
        if not quiet:
            click.echo(f"simulated in {time.monotonic() - started:.1f} s", err=True)
    click.echo(json.dumps(report, indent=2, ensure_ascii=False))
