"""Every rule ID the platform cites has its text from the spec, parsed the way the spec is
written (bullets, inline short IDs, table rows, delivery faults)."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path

from dashboards import rule_texts

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "spec"  # copies of the shared spec (docs/spec/README.md)


def _ids_in(folder: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / folder).rglob("*"):
        if path.suffix in {".py", ".toml", ".json"}:
            found |= set(rule_texts.RULE_ID.findall(path.read_text()))
    return found


def test_every_rule_id_in_rules_and_consumers_has_a_text() -> None:
    cited = _ids_in("rules") | _ids_in("consumers")
    assert {"PGP-A15a", "DEF-M2", "EVT-GAP", "THP-A2c"} <= cited  # the scan sees them
    texts = rule_texts.load()
    missing = sorted(rule_id for rule_id in cited if not texts.get(rule_id, None))
    assert missing == []
    assert all(texts[rule_id].text.strip() for rule_id in cited)


def test_every_rule_the_marts_can_cite_has_a_text() -> None:
    with (ROOT / "dbt_project" / "seeds" / "rules.csv").open() as handle:
        seeded = {row["rule_id"] for row in csv.DictReader(handle)}
    assert sorted(seeded - set(rule_texts.load())) == []


def test_shipped_texts_are_the_spec_regenerated() -> None:
    regenerated = rule_texts.generate(SPEC, ROOT / "docs" / "events.md")
    shipped = json.loads(rule_texts.DATA_FILE.read_text())
    assert {k: asdict(v) for k, v in regenerated.items()} == shipped


def test_pgp_a17c_text_is_the_article() -> None:
    assert rule_texts.text_of("PGP-A17c") == (
        "a winning bet is paid even money minus 5 % commission to the operator."
    )


SAMPLE = """\
## 1. Pai Gow Poker (PGP)
### Equipment (Art. 2)
- **PGP-A2e** discard rack. **A2f** chips registered
  with the regulator. **A2g** drop box.
### Hand ranking (Art. 4)
| ID | combination | notes |
|---|---|---|
| PGP-A4a | five aces | four aces + **joker** |
| PGP-A4h | three of a kind | |
- **PGP-A4l** the high hand holds the higher combination;
"""


def test_bullets_inline_short_ids_continuations_and_table_rows_are_parsed() -> None:
    parsed = rule_texts.parse_markdown(SAMPLE, file_name="regulations.md")
    assert {k: v.text for k, v in parsed.items()} == {
        "PGP-A2e": "discard rack.",
        "PGP-A2f": "chips registered with the regulator.",
        "PGP-A2g": "drop box.",
        "PGP-A4a": "five aces - four aces + joker",
        "PGP-A4h": "three of a kind",
        "PGP-A4l": "the high hand holds the higher combination",
    }
    assert parsed["PGP-A4a"].source == (
        "regulations.md > 1. Pai Gow Poker (PGP) > Hand ranking (Art. 4)"
    )


def test_an_article_without_its_own_line_gets_its_parts_texts() -> None:
    parsed = rule_texts.add_families(rule_texts.parse_markdown(SAMPLE, file_name="regulations.md"))
    assert parsed["PGP-A2"].text == (
        "PGP-A2e: discard rack. | PGP-A2f: chips registered with the regulator. | "
        "PGP-A2g: drop box."
    )


def test_evt_gap_text_comes_from_the_delivery_faults_table() -> None:
    table = (
        "| case | recognised by | what the platform does |\n|---|---|---|\n"
        "| **gap** | a `seq` never received | violation `EVT-GAP` on the open round |\n"
    )
    parsed = rule_texts.parse_delivery_faults(table, file_name="events.md")
    assert parsed["EVT-GAP"].text == (
        "Delivery fault, gap: a seq never received. violation EVT-GAP on the open round"
    )


def test_unknown_rule_id_says_so_instead_of_failing() -> None:
    assert rule_texts.text_of("XYZ-A99") == "(no text in the spec for this rule ID)"
