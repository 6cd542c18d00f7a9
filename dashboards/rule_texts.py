"""The text of every rule ID, so a dashboard can show the article beside the ID it cites.

`rule_texts.json` (shipped in this package) is generated from the spec by
`uv run python -m dashboards.rule_texts --spec docs/spec --events docs/events.md`.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

DATA_FILE = Path(__file__).with_name("rule_texts.json")

# Every rule ID the platform cites: articles (PGP-A15a), common rules (ALL-3), defaults
# (DEF-TCP3, DEF-M2) and event-stream faults (EVT-GAP). Families (PGP-A10, DEF-TCP) too.
RULE_ID = re.compile(r"\b(?:(?:PGP|TCP|THP)-A\d+[a-z]?|ALL-\d+|DEF-[A-Z]+\d*|EVT-[A-Z]+)\b")
_BULLET = re.compile(r"^- \*\*(?P<id>[A-Z]+-[A-Z0-9]+[a-z]?)\*\*\s*(?P<text>.*)$")
# Short IDs inside a bullet: "**A2f** chips registered" continues PGP-A2e's bullet.
_INLINE = re.compile(r"\*\*(A\d+[a-z]?)\*\*")
_ROW = re.compile(r"^\|\s*(?P<id>[A-Z]+-[A-Z0-9]+[a-z]?)\s*\|(?P<rest>.*)\|\s*$")
_EVT = re.compile(r"`(EVT-[A-Z]+)`")


@dataclass(frozen=True, kw_only=True)
class RuleText:
    """What a rule says and where it is written (file and section)."""

    text: str
    source: str


def _clean(text: str) -> str:
    text = text.replace("**", "").replace("`", "")
    return re.sub(r"\s+", " ", text).strip().rstrip(";").strip()


def _split_inline(rule_id: str, text: str) -> dict[str, str]:
    """'discard rack. **A2f** chips ...' -> {PGP-A2e: 'discard rack.', PGP-A2f: 'chips ...'}."""
    prefix = rule_id.split("-", 1)[0]
    parts = _INLINE.split(text)
    found = {rule_id: parts[0]}
    for short, body in zip(parts[1::2], parts[2::2], strict=True):
        found[f"{prefix}-{short}"] = body
    return {key: _clean(value) for key, value in found.items()}


def parse_markdown(markdown: str, *, file_name: str) -> dict[str, RuleText]:
    """Rule texts from the spec's markdown: `- **ID** text` bullets (with indented continuation
    lines and inline short IDs) and `| ID | combination | notes |` table rows."""
    rules: dict[str, RuleText] = {}
    section = subsection = ""
    current: tuple[str, list[str]] | None = None

    def source() -> str:
        return " > ".join(part for part in (file_name, section, subsection) if part)

    def flush() -> None:
        nonlocal current
        if current is not None:
            rule_id, lines = current
            for key, text in _split_inline(rule_id, " ".join(lines)).items():
                if text.endswith(":"):  # the rule goes on in a table below it
                    text += f" (the table in {file_name})"
                rules[key] = RuleText(text=text, source=source())
        current = None

    for line in markdown.splitlines():
        if current is not None and line.startswith("  ") and line.strip():
            current[1].append(line.strip())
            continue
        flush()
        if line.startswith("## "):
            section, subsection = _clean(line[3:]), ""
        elif line.startswith("### "):
            subsection = _clean(line[4:])
        elif match := _BULLET.match(line):
            current = (match["id"], [match["text"]])
        elif match := _ROW.match(line):
            cells = [_clean(cell) for cell in match["rest"].split("|")]
            text = " - ".join(cell for cell in cells if cell)
            rules[match["id"]] = RuleText(text=text, source=source())
    flush()
    return rules


def parse_delivery_faults(markdown: str, *, file_name: str) -> dict[str, RuleText]:
    """EVT-* texts from the 'Delivery faults' table of docs/events.md: | case | recognised by |
    what the platform does (naming `EVT-...`) |."""
    rules: dict[str, RuleText] = {}
    for line in markdown.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not (match := _EVT.search(cells[2])):
            continue
        case, recognised, action = (_clean(cell) for cell in cells)
        rules[match[1]] = RuleText(
            text=f"Delivery fault, {case}: {recognised}. {action}",
            source=f"{file_name} > Delivery faults",
        )
    return rules


def add_families(rules: dict[str, RuleText]) -> dict[str, RuleText]:
    """Give an article or a family its parts' texts: PGP-A10 from PGP-A10a..g, DEF-TCP from
    DEF-TCP1..6, when the spec has no line of its own for it."""
    families: dict[str, list[str]] = {}
    for rule_id in sorted(rules, key=_natural):
        if match := re.fullmatch(r"((?:PGP|TCP|THP)-A\d+)[a-z]|(DEF-[A-Z]+)\d+", rule_id):
            families.setdefault(match[1] or match[2], []).append(rule_id)
    combined = dict(rules)
    for family, parts in families.items():
        if family not in combined:
            combined[family] = RuleText(
                text=" | ".join(f"{part}: {rules[part].text}" for part in parts),
                source=rules[parts[0]].source,
            )
    return combined


def _natural(rule_id: str) -> list[int | str]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", rule_id)]


def generate(spec_dir: Path, events_doc: Path) -> dict[str, RuleText]:
    rules: dict[str, RuleText] = {}
    for name in ("regulations.md", "defaults.md"):
        rules.update(parse_markdown((spec_dir / name).read_text(), file_name=name))
    rules.update(parse_delivery_faults(events_doc.read_text(), file_name=events_doc.name))
    combined = add_families(rules)
    return {key: combined[key] for key in sorted(combined, key=_natural)}


@lru_cache(maxsize=1)
def load() -> dict[str, RuleText]:
    """The shipped rule texts, by rule ID."""
    raw = json.loads(DATA_FILE.read_text())
    return {key: RuleText(**value) for key, value in raw.items()}


def text_of(rule_id: str) -> str:
    """The rule's text, or a plain statement that the spec has none (never an exception)."""
    found = load().get(rule_id)
    return found.text if found is not None else "(no text in the spec for this rule ID)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spec", type=Path, default=Path("docs/spec"))
    parser.add_argument("--events", type=Path, default=Path("docs/events.md"))
    parser.add_argument("--out", type=Path, default=DATA_FILE)
    args = parser.parse_args()
    rules = generate(args.spec, args.events)
    payload = {key: asdict(value) for key, value in rules.items()}
    args.out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(rules)} rule texts written to {args.out}")


if __name__ == "__main__":
    main()
