"""Detection power and false alarms of the hole-carding test (issue 18), by simulation.

Simulated Tripóker (or, with `--game holdem`, Casino Hold'em) nights (the simulator's player
archetypes, `--players`): tables of
hole-carders who see the dealer's hidden cards every round (`hole-carder`) or a quarter of the
rounds (`hole-carder@0.25`), and tables of honest players (typical, basic, exposed-optimal:
each decides from their own cards and the exposed card only). Every decision is judged by the
game's own `GameSpec.informed` (as int_decision_evidence does) and each player's matches with
the full-information choice are tested after every round by the exact Poisson-binomial tail
(`consumers.evidence.poisson_binomial_sf`), as agg_player_decisions does.

A player is flagged at p <= 1e-4: what Benjamini-Hochberg at 1 % asks of one cheater among
100 players tested (0.01 / 100), a lone one being the hardest case. Printed: for each cheater
kind, the median (and 90th percentile) of the player's rounds until flagged, and the share
flagged within 100 rounds; for the honest players, the share ever flagged over their stay and
the share with p < 0.01 at the end (the test's own level: calibrated means at most 1 %).

Hold'em judges every decision by exact enumeration (~15 ms each, `games/holdem/strategy.py`),
so its runs are smaller by default.

Run: uv run python bench/bench_advantage_play.py [--quick] [--game tripoker|holdem] [--profile P]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from consumers.evidence import PoissonBinomial, poisson_binomial_sf
from events import Event, parse_event
from events.models import BetPlaced, Game, ProgressiveMeterReset
from games.base import RoundEvents
from games.profiles import load_profile
from games.registry import GAMES
from producers.simulator import parse_players, simulate

FLAG_P = 1e-4


def night(
    *, game: Game, tables: int, hours: float, seed: int, players: str, profile: str
) -> tuple[dict[str, list[tuple[bool, float]]], dict[str, str]]:
    """Each player's decisions in order, (matched the full-information choice, null
    probability), and each player's archetype, from one simulated night of `game`."""
    seated: dict[str, str] = {}

    def on_player(record: object) -> None:
        line = json.loads(record.to_json())  # type: ignore[attr-defined]
        if line["kind"] == "player":
            seated[line["player_ref"]] = line["archetype"] + (
                f"@{line['sees_hidden_probability']:g}"
                if "sees_hidden_probability" in line and line["sees_hidden_probability"] < 1
                else ""
            )

    sim = simulate(
        tables={g: tables if g is game else 0 for g in Game},
        hours=hours,
        seed=seed,
        faults={},
        profiles={game: profile},
        players=parse_players(players),
        on_player=on_player,
    )
    spec = GAMES[game]
    assert spec.informed is not None
    rules = load_profile(profile)
    rounds: dict[str, list[Event]] = defaultdict(list)
    refs: dict[tuple[str, int], str] = {}
    decisions: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    # Hold'em reads the progressive meter (a reset's value will do: `informed` leaves the
    # progressive out, the same whatever the decision)
    meters: dict[str, int] = {}
    for message in sim:
        event = parse_event(message.value)
        if isinstance(event, ProgressiveMeterReset):
            meters[event.table_id] = event.meter_cents
        if event.round_id is None:
            continue
        rounds[event.round_id].append(event)
        if isinstance(event, BetPlaced) and event.player_ref is not None:
            refs[(event.round_id, event.seat)] = event.player_ref
        if event.event_type == "round_ended":
            found = spec.informed(
                RoundEvents(rounds.pop(event.round_id)), rules, meters.get(event.table_id)
            )
            for seat, one in found.items():
                ref = refs.get((event.round_id, seat))
                if ref is not None and one.match_probability is not None:
                    decisions[ref].append(
                        (one.played is one.full_information, one.match_probability)
                    )
    return decisions, seated


def careers(stays: list[list[tuple[bool, float]]], length: int) -> list[list[tuple[bool, float]]]:
    """Players' stays joined, in order, into careers of at least `length` decisions: a player
    who comes back night after night. Decisions are independent from round to round, so a
    career is one long stay of the same kind of player."""
    joined: list[list[tuple[bool, float]]] = []
    current: list[tuple[bool, float]] = []
    for stay in stays:
        current += stay
        if len(current) >= length:
            joined.append(current[:length])
            current = []
    return joined


def rounds_until_flagged(decisions: list[tuple[bool, float]]) -> int | None:
    """The player's round (1-based) after which p <= FLAG_P first; None if never."""
    law = PoissonBinomial()
    matches = 0
    for n, (matched, probability) in enumerate(decisions, start=1):
        if 0 < probability < 1:
            law.add(probability)
            matches += matched
            if law.sf(matches) <= FLAG_P:
                return n
    return None


def final_p(decisions: list[tuple[bool, float]]) -> float:
    q = [p for _, p in decisions if 0 < p < 1]
    k = sum(m for m, p in decisions if 0 < p < 1)
    return poisson_binomial_sf(np.array(q), k) if q else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (CI)")
    parser.add_argument(
        "--game", choices=[g.slug for g in (Game.TRIPOKER, Game.HOLDEM)], default=Game.TRIPOKER.slug
    )
    parser.add_argument("--profile", default=None, help="default: tripoker/pe-2005, holdem/pe-2007")
    parser.add_argument("--seed", type=int, default=1818)
    args = parser.parse_args()
    game = Game.from_slug(args.game)
    profile = (
        args.profile or {Game.TRIPOKER: "tripoker/pe-2005", Game.HOLDEM: "holdem/pe-2007"}[game]
    )
    # each kind's players, the length of a career in rounds, and careers wanted (full, quick)
    wanted = {
        Game.TRIPOKER: {
            "hole-carder": (100, 10),
            "hole-carder@0.25": (100, 5),
            "honest": (1_000, 20),
        },
        Game.HOLDEM: {"hole-carder": (20, 4), "hole-carder@0.25": (10, 2), "honest": (60, 10)},
    }[game]
    # a night: tables of the game for 8 hours (Hold'em's are fewer: every decision costs more)
    tables = 10 if game is Game.TRIPOKER else (1 if args.quick else 3)
    plan = {
        kind: (mix, length, wanted[kind][args.quick])
        for kind, mix, length in (
            ("hole-carder", "hole-carder:1", 300),
            ("hole-carder@0.25", "hole-carder@0.25:1", 1_500),
            ("honest", "basic:0.3,exposed-optimal:0.3", 300),
        )
    }
    started = time.perf_counter()
    found: dict[str, list[list[tuple[bool, float]]]] = {}
    for offset, (kind, (mix, length, wanted)) in enumerate(plan.items()):
        stays: list[list[tuple[bool, float]]] = []
        night_no = 0
        while len(careers(stays, length)) < wanted:
            decisions, _ = night(
                game=game, tables=tables, hours=8.0, seed=args.seed + 1000 * offset + night_no,
                players=mix, profile=profile,
            )  # fmt: skip
            stays += list(decisions.values())
            night_no += 1
        found[kind] = careers(stays, length)[:wanted]
    print(
        f"{game.slug} under {profile}; simulated and judged in "
        f"{time.perf_counter() - started:.0f} s. Flagged at p <= {FLAG_P:g}. Careers: players' "
        "stays joined into one player coming back.\n"
    )
    print(f"{'players':<20}{'careers':>8}{'rounds':>8}{'median':>9}{'p90':>8}{'<=100':>8}")
    for kind in ("hole-carder", "hole-carder@0.25"):
        times = [rounds_until_flagged(d) for d in found[kind]]
        ordered = sorted(t if t is not None else 10**9 for t in times)
        median = ordered[len(ordered) // 2]
        p90 = ordered[int(0.9 * (len(ordered) - 1))]

        def show(x: int) -> str:
            return "never" if x >= 10**9 else f"{x}"

        within = sum(t is not None and t <= 100 for t in times) / len(times)
        print(
            f"{kind:<20}{len(times):>8}{len(found[kind][0]):>8}{show(median):>9}{show(p90):>8}"
            f"{within:>8.2f}"
        )
    honest = found["honest"]
    ever = sum(rounds_until_flagged(d) is not None for d in honest)
    level = sum(final_p(d) < 0.01 for d in honest) / len(honest)
    print(f"\nhonest (typical, basic, exposed-optimal): {len(honest)} careers of {len(honest[0])}")
    print(f"  ever flagged at p <= {FLAG_P:g}: {ever} ({ever / len(honest):.4f})")
    print(f"  p < 0.01 at the end: {level:.4f} (the test's level 0.01: at most that)")


if __name__ == "__main__":
    main()
