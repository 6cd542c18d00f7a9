"""The traceability matrix: each rule ID of the spec, how the code answers it, the tests proving it.

The classes are derived from the source (`ast` and `tokenize`, never imports of the game code),
except *outside software* and the acknowledged *open* IDs, which are data
(`docs/spec/traceability.toml`: an ID and a one-line reason each). How each class is found is
`RULES_OF_DERIVATION` below; `croupier trace` writes it at the head of `docs/traceability.md`.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from dashboards.rule_texts import parse_markdown

ROOT = Path(__file__).resolve().parents[1]
SPEC_FILES = ("regulations.md", "defaults.md")
DATA_FILE = Path("docs/spec/traceability.toml")
OUTPUT = Path("docs/traceability.md")

# Settlement paths: a string constant equal to an ID here is written into a settlement's
# `rule_ids` (or, for `void_rules`, into the lines of a voided round's returned bets).
SETTLEMENT_MODULES = ("rules/settlement.py", "games/*/rules.py")
# The hand evaluators and the money arithmetic every settlement calls: a docstring here cites
# the rule the function implements; an article cited without a letter (TCP-A4) means all of it.
EVALUATOR_MODULES = ("rules/rankings/*.py", "rules/money.py")
PROFILE_MODULES = "games/*/profile.py"
GAME_SPECS = "games/*/__init__.py"
# The marts: table accounting from the settlements and the tray events (DEF-ACC).
DBT_MODELS = "dbt_project/models/marts/revenue"
# Procedure checks: an ID given as a Finding's rule ID here is raised as a violation.
CHECK_MODULES = (
    "rules/procedure.py",
    "games/*/checks.py",
    "games/*/round.py",
    "consumers/*.py",
)
TESTS = "tests"
# Tests that handle rule IDs as text (the matrix's own, the dashboards' rule texts), never as
# the behaviour the rule states: their mentions are not citations.
IDS_AS_TEXT = ("tests/croupier/test_traceability.py", "tests/dashboards/test_rule_texts.py")

RULES_OF_DERIVATION = """\
How each class is derived from the code (`croupier/traceability.py`, by `ast` and `tokenize`):

- **settled**: the ID is (a) a string constant in a settlement module (`rules/settlement.py`,
  `games/*/rules.py`: the `rule_ids` a settlement records; not a part of an f-string such as an
  error message) or in a game's `void_rules` (`games/*/__init__.py`: the rule IDs a voided
  round's returned bets record); or (b) cited in a docstring or comment of the hand evaluators
  or the money arithmetic every settlement calls (`rules/rankings/*.py`, `rules/money.py`; an
  article cited without a letter, e.g. `TCP-A4`, covers all its lettered rules); or (c) cited
  in the comment of a rule-profile field (`games/<game>/profile.py`) that the game's settlement
  (`games/<game>/rules.py`) reads as `.field`: a number the regulation or a default sets is
  data, and the settlement uses it; or (d) cited in a comment of a revenue mart
  (`dbt_project/models/marts/revenue/*.sql`), which computes table accounting from the
  settlements (DEF-ACC).
- **checked**: the ID is given as the rule ID of a procedure finding: the second argument of
  `finding_at(...)` or `Finding(rule_id=...)` in `rules/procedure.py`, `games/*/checks.py`,
  `games/*/round.py`, `consumers/*.py`; or the article a game's `TableRules` names for a
  procedure the shared checks run (`games/*/__init__.py`), or the default cited in a comment on
  that line. A docstring of a check is not a check. An ID both settled and checked is listed
  as settled, with both places.
- **outside software**: listed in `docs/spec/traceability.toml` `[outside]` with a one-line reason
  (equipment, or a procedure at the table that no event records). An ID the code settles or
  checks must not be listed there.
- **open**: neither; each must be listed in `docs/spec/traceability.toml` `[open]` with a reason
  and `checkable` (could software check it); an ID neither derived nor listed is unclassified.
- **tests**: a test function (`tests/**/test_*.py`) cites an ID when the ID appears in its
  source (decorators, name, docstring, body, comments) or in a module-level constant the
  function names; `test_pgp_a15b_...`, `test_all3_...`, `test_def_tcp3_...` cite by name;
  `PGP-A15a-c`, `PGP-A8a/b`, `PGP-A7a, A7b`, `DEF-TCP1..6` cite each ID they name; an article
  without a letter (`PGP-A15`) does not cite its lettered rules. Tests that handle IDs as text
  (`tests/croupier/test_traceability.py`, `tests/dashboards/test_rule_texts.py`) cite nothing.
"""


class Class(StrEnum):
    SETTLED = "settled"
    CHECKED = "checked"
    OUTSIDE = "outside software"
    OPEN = "open"


# ---------------------------------------------------------------------------------------------
# Citations: what a piece of text cites


_PREFIX = r"(?:(?:PGP|TCP|THP)-A|ALL-|DEF-[A-Z]+)"
# A full ID, then any continuation: a letter range (A15a-c), a range (DEF-TCP1..6, THP-A2b..d),
# a slash (PGP-A8a/b, PGP-A3/A4) or short IDs after a comma or "and" (PGP-A7a, A7b).
_CITATION = re.compile(
    rf"\b(?P<prefix>{_PREFIX})(?P<num>\d+)(?P<letter>[a-z])?"
    r"(?P<rest>(?:(?:-|\.\.)(?:A?\d+)?[a-z]?\b|/A?\d*[a-z]?\b|(?:,\s*|\s+and\s+)A\d+[a-z]?\b)*)"
)
_CONTINUATION = re.compile(
    r"(?P<sep>-|\.\.|/|,\s*|\s+and\s+)(?P<a>A)?(?P<num>\d+)?(?P<letter>[a-z])?"
)
# A test's name: test_pgp_a15b_... cites PGP-A15b, test_all3_... ALL-3, test_def_tcp3_... DEF-TCP3.
_NAME_CITATION = re.compile(
    r"(?:^|_)(?:(?P<game>pgp|tcp|thp)_a(?P<num>\d+)(?P<letter>[a-z])?|all_?(?P<all>\d+)"
    r"|def_(?P<def>[a-z]+\d+))(?=_|$)"
)


def _letters(first: str, last: str) -> list[str]:
    return [chr(c) for c in range(ord(first), ord(last) + 1)]


def citations(text: str) -> set[str]:
    """The IDs a text cites, as written (an article or family stays itself: `TCP-A4`).

    >>> sorted(citations("fouls (PGP-A15a-c), decks (PGP-A8a/b), wash (PGP-A7a, A7b)"))
    ['PGP-A15a', 'PGP-A15b', 'PGP-A15c', 'PGP-A7a', 'PGP-A7b', 'PGP-A8a', 'PGP-A8b']
    >>> sorted(citations("DEF-TCP1..3 and THP-A2b..c; PGP-A3/A4"))
    ['DEF-TCP1', 'DEF-TCP2', 'DEF-TCP3', 'PGP-A3', 'PGP-A4', 'THP-A2b', 'THP-A2c']
    """
    found: set[str] = set()
    for match in _CITATION.finditer(text):
        prefix, num, letter = match["prefix"], match["num"], match["letter"] or ""
        found.add(f"{prefix}{num}{letter}")
        for part in _CONTINUATION.finditer(match["rest"]):
            sep, nxt, nletter = part["sep"].strip(), part["num"], part["letter"] or ""
            if sep in ("-", "..") and nxt is None and letter and nletter:  # A15a-c, A2b..d
                found.update(f"{prefix}{num}{x}" for x in _letters(letter, nletter)[1:])
            elif sep == ".." and nxt is not None and not letter and not nletter:  # DEF-TCP1..6
                found.update(f"{prefix}{n}" for n in range(int(num) + 1, int(nxt) + 1))
            elif sep == "/" and nxt is None and nletter:  # A8a/b
                found.add(f"{prefix}{num}{nletter}")
            elif nxt is not None and (part["a"] or not prefix.endswith("-A")):  # A3/A4, A7a, A7b
                num, letter = nxt, nletter
                found.add(f"{prefix}{num}{letter}")
    return found


def name_citations(name: str) -> set[str]:
    """`test_pgp_a15b_low_above_high` cites PGP-A15b."""
    found: set[str] = set()
    for m in _NAME_CITATION.finditer(name):
        if m["game"]:
            found.add(f"{m['game'].upper()}-A{m['num']}{m['letter'] or ''}")
        elif m["all"]:
            found.add(f"ALL-{m['all']}")
        else:
            found.add(f"DEF-{m['def'].upper()}")
    return found


def leaves_of(cited: Iterable[str], leaves: Iterable[str], *, families: bool) -> set[str]:
    """The spec's IDs among `cited`; with `families`, an article cited without its letter
    (TCP-A4) stands for every lettered rule of it (TCP-A4a..e)."""
    known = set(leaves)
    found = {c for c in cited if c in known}
    if families:
        for c in cited:
            if c not in known:
                found |= {leaf for leaf in known if re.fullmatch(re.escape(c) + "[a-z]", leaf)}
    return found


# ---------------------------------------------------------------------------------------------
# The code


@dataclass(frozen=True, kw_only=True)
class Source:
    path: str  # relative to the root
    tree: ast.Module
    text: str


def _sources(root: Path, patterns: Iterable[str]) -> Iterator[Source]:
    seen: set[Path] = set()
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            text = path.read_text(encoding="utf-8")
            yield Source(path=path.relative_to(root).as_posix(), tree=ast.parse(text), text=text)


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _scope(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> str:
    """The innermost function or class holding `node`, or the module constant it is assigned to."""
    current: ast.AST | None = node
    while current is not None:
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return current.name
        parent = parents.get(current)
        if isinstance(parent, ast.Module) and isinstance(current, ast.Assign | ast.AnnAssign):
            targets = current.targets if isinstance(current, ast.Assign) else [current.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            return names[0] if names else "<module>"
        current = parent
    return "<module>"


def _plain_strings(tree: ast.AST) -> Iterator[ast.Constant]:
    """String constants that are values, not docstrings nor parts of f-strings."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip |= {id(v) for v in node.values}
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skip.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node


def _docstrings(tree: ast.AST) -> Iterator[tuple[str, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield (getattr(node, "name", "<module>"), doc)


def _scopes_by_line(tree: ast.Module) -> dict[int, str]:
    """Line -> the innermost function or class holding it."""
    found: dict[int, str] = {}
    defs = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    for node in sorted(defs, key=lambda n: n.lineno):  # inner definitions come later: they win
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            found[line] = node.name
    return found


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _comments_by_line(text: str) -> dict[int, str]:
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string
    return found


Places = dict[str, set[str]]  # rule ID -> "path:scope" places


def _add(places: Places, rule_id: str, where: str) -> None:
    places.setdefault(rule_id, set()).add(where)


def settlement_places(root: Path, leaves: set[str]) -> Places:
    places: Places = {}
    for src in _sources(root, SETTLEMENT_MODULES):
        parents = _parents(src.tree)
        for node in _plain_strings(src.tree):
            if node.value in leaves:
                _add(places, str(node.value), f"{src.path}:{_scope(node, parents)}")
    for src in _sources(root, [GAME_SPECS]):
        for call in (n for n in ast.walk(src.tree) if isinstance(n, ast.Call)):
            for kw in call.keywords:
                if kw.arg == "void_rules":
                    for node in _plain_strings(kw.value):
                        if node.value in leaves:
                            _add(places, str(node.value), f"{src.path}:void_rules")
    for src in _sources(root, EVALUATOR_MODULES):
        texts = list(_docstrings(src.tree))
        scopes = _scopes_by_line(src.tree)
        texts += [
            (scopes.get(line, "<module>"), c) for line, c in _comments_by_line(src.text).items()
        ]
        for scope, text in texts:
            for rule_id in leaves_of(citations(text), leaves, families=True):
                _add(places, rule_id, f"{src.path}:{scope}")
    for path in sorted((root / DBT_MODELS).rglob("*.sql")):
        sql_comments = "\n".join(
            line for line in path.read_text(encoding="utf-8").splitlines() if "--" in line
        )
        for rule_id in leaves_of(citations(sql_comments), leaves, families=False):
            _add(places, rule_id, path.relative_to(root).as_posix())
    for src in _sources(root, [PROFILE_MODULES]):
        rules_path = root / Path(src.path).with_name("rules.py")
        if not rules_path.is_file():
            continue
        read = {
            n.attr
            for n in ast.walk(ast.parse(rules_path.read_text()))
            if isinstance(n, ast.Attribute)
        }
        comments = _comments_by_line(src.text)
        for cls in (n for n in ast.walk(src.tree) if isinstance(n, ast.ClassDef)):
            for stmt in cls.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                name = stmt.target.id
                comment = comments.get(stmt.lineno, "")
                if name in read:
                    for rule_id in leaves_of(citations(comment), leaves, families=False):
                        rel = rules_path.relative_to(root).as_posix()
                        _add(places, rule_id, f"{src.path}:{cls.name}.{name} (read by {rel})")
    return places


def check_places(root: Path, leaves: set[str]) -> Places:
    places: Places = {}
    for src in _sources(root, CHECK_MODULES):
        parents = _parents(src.tree)
        for call in (n for n in ast.walk(src.tree) if isinstance(n, ast.Call)):
            name = _call_name(call)
            args: list[ast.expr] = []
            if name == "finding_at" and len(call.args) >= 2:
                args.append(call.args[1])
            args += [
                kw.value
                for kw in call.keywords
                if kw.arg == "rule_id" and name in ("finding_at", "Finding")
            ]
            for arg in args:
                if isinstance(arg, ast.Constant) and arg.value in leaves:
                    _add(places, str(arg.value), f"{src.path}:{_scope(call, parents)}")
    for src in _sources(root, [GAME_SPECS]):
        for call in (n for n in ast.walk(src.tree) if isinstance(n, ast.Call)):
            if _call_name(call) != "TableRules":
                continue
            comments = _comments_by_line(src.text)
            for kw in call.keywords:
                if isinstance(kw.value, ast.Constant) and kw.value.value in leaves:
                    where = f"{src.path}:TableRules.{kw.arg}"
                    _add(places, str(kw.value.value), where)
                    # The default that states the same procedure, cited beside the article.
                    cited = citations(comments.get(kw.value.lineno, ""))
                    for rule_id in leaves_of(cited, leaves, families=False):
                        _add(places, rule_id, where)
    return places


# ---------------------------------------------------------------------------------------------
# The tests


def tests_citing(root: Path, leaves: set[str]) -> dict[str, set[str]]:
    """Rule ID -> the `path::test` (or `path::Class::test`) functions citing it."""
    found: dict[str, set[str]] = {}
    for src in _sources(root, [f"{TESTS}/**/test_*.py"]):
        if src.path in IDS_AS_TEXT:
            continue
        lines = src.text.splitlines()
        constants: dict[str, set[str]] = {}
        for stmt in src.tree.body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                segment = "\n".join(lines[stmt.lineno - 1 : stmt.end_lineno])
                for target in targets:
                    if isinstance(target, ast.Name):
                        constants[target.id] = citations(segment)
        for test, qual in _tests_of(src.tree):
            first = min([test.lineno, *(d.lineno for d in test.decorator_list)])
            segment = "\n".join(lines[first - 1 : test.end_lineno])
            cited = citations(segment) | name_citations(test.name)
            for node in ast.walk(test):
                if isinstance(node, ast.Name) and node.id in constants:
                    cited |= constants[node.id]
            for rule_id in leaves_of(cited, leaves, families=False):
                found.setdefault(rule_id, set()).add(f"{src.path}::{qual}")
    return found


def _tests_of(
    tree: ast.Module,
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name.startswith(
            "test"
        ):
            yield stmt, stmt.name
        elif isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
            for inner in stmt.body:
                if isinstance(
                    inner, ast.FunctionDef | ast.AsyncFunctionDef
                ) and inner.name.startswith("test"):
                    yield inner, f"{stmt.name}::{inner.name}"


# ---------------------------------------------------------------------------------------------
# The matrix


@dataclass(frozen=True, kw_only=True)
class Row:
    rule_id: str
    title: str
    cls: Class
    where: tuple[str, ...]
    tests: tuple[str, ...]
    reason: str = ""  # outside / open: why
    checkable: bool | None = None  # open: could software check it


@dataclass(frozen=True, kw_only=True)
class Matrix:
    rows: tuple[Row, ...]
    problems: tuple[str, ...] = field(default=())  # what the test fails on

    def count(self, cls: Class) -> int:
        return sum(1 for row in self.rows if row.cls is cls)


def spec_rules(root: Path) -> dict[str, str]:
    """Every rule ID of the regulations and the defaults, in spec order, with its text."""
    rules: dict[str, str] = {}
    for name in SPEC_FILES:
        path = root / "docs" / "spec" / name
        for rule_id, text in parse_markdown(path.read_text(), file_name=name).items():
            rules[rule_id] = text.text
    return rules


def _title(text: str, limit: int = 70) -> str:
    text = text.replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def build(root: Path = ROOT) -> Matrix:
    rules = spec_rules(root)
    leaves = set(rules)
    settled = settlement_places(root, leaves)
    checked = check_places(root, leaves)
    tests = tests_citing(root, leaves)
    data = tomllib.loads((root / DATA_FILE).read_text(encoding="utf-8"))
    outside: dict[str, dict[str, str]] = data.get("outside", {})
    open_: dict[str, dict[str, object]] = data.get("open", {})
    problems: list[str] = []
    for rule_id in sorted({*outside, *open_} - leaves):
        problems.append(f"{rule_id}: in {DATA_FILE} but not a rule ID of the spec")
    for rule_id in sorted(set(outside) & set(open_)):
        problems.append(f"{rule_id}: both outside software and open in {DATA_FILE}")
    rows: list[Row] = []
    for rule_id, text in rules.items():
        where = tuple(sorted(settled.get(rule_id, set()) | checked.get(rule_id, set())))
        cited_by = tuple(sorted(tests.get(rule_id, set())))
        reason, checkable = "", None
        if rule_id in settled:
            cls = Class.SETTLED
        elif rule_id in checked:
            cls = Class.CHECKED
        elif rule_id in outside:
            cls, reason = Class.OUTSIDE, str(outside[rule_id].get("reason", ""))
        else:
            cls = Class.OPEN
            entry = open_.get(rule_id)
            if entry is None:
                problems.append(
                    f"{rule_id}: unclassified (no code settles or checks it, and "
                    f"{DATA_FILE} does not list it as outside software or open)"
                )
            else:
                reason = str(entry.get("reason", ""))
                value = entry.get("checkable")
                checkable = value if isinstance(value, bool) else None
                if checkable is None:
                    problems.append(f"{rule_id}: open, not marked checkable = true/false")
        if cls in (Class.SETTLED, Class.CHECKED) and not cited_by:
            problems.append(f"{rule_id}: {cls.value} ({', '.join(where)}) but no test cites it")
        if cls in (Class.SETTLED, Class.CHECKED) and rule_id in outside:
            problems.append(f"{rule_id}: listed as outside software, yet the code {cls.value} it")
        if cls in (Class.OUTSIDE, Class.OPEN) and not reason:
            problems.append(f"{rule_id}: {cls.value} without a reason")
        rows.append(
            Row(
                rule_id=rule_id,
                title=_title(text),
                cls=cls,
                where=where,
                tests=cited_by,
                reason=reason,
                checkable=checkable,
            )
        )
    return Matrix(rows=tuple(rows), problems=tuple(problems))


def render(matrix: Matrix) -> str:
    rows = matrix.rows
    open_rows = [r for r in rows if r.cls is Class.OPEN]
    could = [r.rule_id for r in open_rows if r.checkable]
    lines = [
        "# Traceability: every rule ID, how the code answers it, the tests that prove it",
        "",
        "Generated by `croupier trace` from the code and `docs/spec/` (do not edit by hand;",
        "`croupier trace --check` fails when this file is out of date).",
        "",
        RULES_OF_DERIVATION,
        "## Summary",
        "",
        "| class | IDs |",
        "|---|---|",
        *(f"| {cls.value} | {matrix.count(cls)} |" for cls in Class),
        f"| **total** | {len(rows)} |",
        "",
        f"Open IDs that software could check: {len(could)}"
        + (f" ({', '.join(could)})." if could else "."),
        f"Settled or checked IDs without a test: "
        f"{sum(1 for r in rows if r.cls in (Class.SETTLED, Class.CHECKED) and not r.tests)}.",
        "",
        "## The matrix",
        "",
        "| ID | rule | class | where in the code / why | tests |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        if row.cls in (Class.SETTLED, Class.CHECKED):
            where = "<br>".join(f"`{w}`" for w in row.where)
        else:
            where = row.reason.replace("|", "/")
            if row.cls is Class.OPEN:
                note = "software could check it" if row.checkable else "not checkable by software"
                where = f"{where} ({note})"
        tests = "<br>".join(f"`{t}`" for t in row.tests) or "—"
        lines.append(f"| {row.rule_id} | {row.title} | {row.cls.value} | {where} | {tests} |")
    return "\n".join(lines) + "\n"


def spec_copies_differ(root: Path, shared: Path) -> list[str]:
    """The spec files of `docs/spec/` that differ from the team's shared copies in `shared`, or
    that `shared` lacks (a wrong folder must not pass as "identical")."""
    return [
        name
        for name in SPEC_FILES
        if not (shared / name).is_file()
        or (shared / name).read_bytes() != (root / "docs" / "spec" / name).read_bytes()
    ]
