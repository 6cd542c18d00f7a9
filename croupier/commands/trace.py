"""`croupier trace`: the traceability matrix, every rule ID of the spec against the code and the
tests that cite it, written to docs/traceability.md (see croupier/traceability.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 when the file is out of date or the matrix has a problem "
    "(an unclassified ID, a settled or checked ID no test cites).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write it (default: docs/traceability.md in the checkout).",
)
@click.option(
    "--shared-spec",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The team's shared spec folder: with --check, docs/spec/*.md must be identical to it.",
)
def trace(check: bool, out: Path | None, shared_spec: Path | None) -> None:
    """Classify every rule ID of docs/spec/regulations.md and defaults.md as settled, checked,
    outside software or open, from the code; list the tests citing each; write the matrix.

    Exit codes: 0 up to date (or written), 1 out of date or a problem found (--check).
    """
    from croupier import traceability as tr

    matrix = tr.build(tr.ROOT)
    text = tr.render(matrix)
    target = out or tr.ROOT / tr.OUTPUT
    counts = ", ".join(f"{cls.value} {matrix.count(cls)}" for cls in tr.Class)
    for problem in matrix.problems:
        click.echo(f"problem: {problem}", err=True)
    if check:
        failed = bool(matrix.problems)
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current != text:
            click.echo(f"{target} is out of date: run `croupier trace`", err=True)
            failed = True
        if shared_spec is not None:
            for name in tr.spec_copies_differ(tr.ROOT, shared_spec):
                click.echo(f"docs/spec/{name} differs from {shared_spec / name} (or it is "
                           "missing)", err=True)  # fmt: skip
                failed = True
        click.echo(f"{len(matrix.rows)} rule IDs: {counts}")
        sys.exit(1 if failed else 0)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(f"{len(matrix.rows)} rule IDs ({counts}) written to {target}")
