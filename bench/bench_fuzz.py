"""The consumer's mutation fuzzer, long: mutated simulated nights through the processor until at
least `--events` events were fed (1,000,000 by default), counting crashes (expected 0).

Run: uv run python bench/bench_fuzz.py [--quick] [--events N] [--seed S]. One process, one core.
Each stream is a clean seeded night (faults off; 1 to 3 tables of each game, 0.5 to 2 hours,
eight nights) with ONE mutation, a tenth of the streams 2 to 4 (tests/consumers/fuzz.py: cards,
seq, duplicates, ids, amounts, seats, types, times, keys, bytes ...), fed in random batches
through a fresh `Processor` as the pipeline does (states serialised after each batch, rows
converted to Arrow, a fifth of the streams restarted from what was committed), then judged
against the clean night: no uncaught exception, every untouched round settled exactly as in
the clean night, the lake's uniqueness keys intact. Prints the mutations applied, streams,
events, crashes with the first distinct signatures, errors the processor contained (EVT-ENGINE:
the engine raised on an input it should have judged), other failures, and events per second.
Exit status: 1 if any crash, 2 if no crash but contained errors or other failures, else 0.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parents[1]))

from tests.consumers import fuzz

SHOW = 10  # distinct signatures printed per category


def line(label: str, value: str) -> None:
    print(f"{label:<62} {value}", flush=True)


def _problem_signature(problem: str) -> str:
    first = problem.splitlines()[0]
    first = re.sub(r"\([^()]*\)", "(...)", first)
    first = re.sub(r"b'.*", "<payload>", first)
    return re.sub(r"\d+", "N", first)[:160]


def show(found: dict[str, list[fuzz.Case]]) -> None:
    """The most frequent signatures: how often, by which mutation kinds, one stream to replay."""
    for sig, cases in sorted(found.items(), key=lambda kv: -len(kv[1]))[:SHOW]:
        kinds = Counter(k for c in cases for k in dict.fromkeys(c.mutation.kind.split("+")))
        first = cases[0]
        print(f"  {len(cases)}x {sig}")
        print(f"     kinds: {', '.join(f'{k} {n}' for k, n in kinds.most_common(6))}")
        print(f"     e.g. {first.mutation.detail[:160]}")
        print(f"     again: {first.command}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (CI), under a minute")
    parser.add_argument("--events", type=int, help="events to feed (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=0, help="fuzz seed (default 0)")
    parser.add_argument("--restart-rate", type=float, default=0.2)
    parser.add_argument(
        "--multi-rate", type=float, default=0.1, help="streams with 2-4 mutations (default 0.1)"
    )
    args = parser.parse_args()
    target = args.events or (150_000 if args.quick else 1_000_000)
    nights = fuzz.NIGHTS if args.quick else fuzz.BENCH_NIGHTS

    begun = time.perf_counter()
    for spec in nights:
        fuzz.truth_of(fuzz.load_night(*spec))  # simulate and settle the clean nights first
    setup = time.perf_counter() - begun
    line("clean nights (seed, tables of each game, hours)", f"{len(nights):>12}  ({setup:.1f} s)")
    line("  ", "  ".join(f"{n}/{t}/{h:g}h" for n, t, h in nights))
    line("fuzz seed", f"{args.seed:>12}")

    kinds: Counter[str] = Counter()
    crashes: dict[str, list[fuzz.Case]] = defaultdict(list)
    contained: dict[str, list[fuzz.Case]] = defaultdict(list)
    failures: dict[str, list[fuzz.Case]] = defaultdict(list)
    streams = events = restarts = 0
    begun = time.perf_counter()
    while events < target:
        case = fuzz.run_case(
            args.seed,
            streams,
            nights=nights,
            restart_rate=args.restart_rate,
            multi_rate=args.multi_rate,
        )
        streams += 1
        events += case.events
        restarts += case.result.restarted_at is not None
        kinds.update(case.mutation.kind.split("+"))
        if case.result.crash is not None:
            crashes[case.result.crash.signature].append(case)
            continue
        for error in case.result.contained:
            contained[error.signature].append(case)
        for problem in case.problems:
            if not problem.startswith("CONTAINED "):
                failures[_problem_signature(problem)].append(case)
    seconds = time.perf_counter() - begun

    line("streams", f"{streams:>12,}")
    line(
        "mutations applied",
        f"{sum(kinds.values()):>12,}  ({args.multi_rate:.0%} of the streams with 2-4)",
    )
    line("mutation kinds", f"{len(kinds):>12}  (min {min(kinds.values())} streams each)")
    line("events fed", f"{events:>12,}")
    line("streams restarted from serialised state", f"{restarts:>12,}")
    n_crash = sum(len(v) for v in crashes.values())
    line("crashes found (expected 0)", f"{n_crash:>12,}  ({len(crashes)} distinct)")
    show(crashes)
    n_contained = len({c.index for cases in contained.values() for c in cases})
    line("streams with contained engine errors (EVT-ENGINE)", f"{n_contained:>12,}  "
         f"({len(contained)} distinct)")  # fmt: skip
    show(contained)
    failed_streams = len({c.index for cases in failures.values() for c in cases})
    line("other failures (untouched rounds changed, lake keys)", f"{failed_streams:>12,}  "
         f"({len(failures)} distinct)")  # fmt: skip
    show(failures)
    line("seconds", f"{seconds:>12.1f}")
    line("events per second (mutate, process, serialise, judge)", f"{events / seconds:>12,.0f}")
    if crashes:
        return 1
    return 2 if failures or contained else 0


if __name__ == "__main__":
    sys.exit(main())
