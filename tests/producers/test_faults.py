"""With each fault on, exactly the intended rule is broken, at exactly the logged events; with
faults off, none is."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from events import Game
from producers.simulator import FAULTS, Check, Fault, FaultRecord, parse_faults, simulate
from tests.producers.oracle import all_findings, split_tables

# Rates high enough to inject each fault several times in a short night.
RATES = {
    Fault.DECK_COUNT: 0.5,
    Fault.UNINSPECTED_DECK: 0.5,
    Fault.PAYMENT_ORDER: 0.5,  # needs three seats paid winnings in one round
    Fault.SEQ_GAP: 0.004,
    Fault.DUPLICATE_EVENT: 0.004,
    Fault.OUT_OF_ORDER: 0.004,
    Fault.MALFORMED: 0.004,
}


def night(fault: Fault, rate: float, hours: float = 4.0) -> tuple[list, list[FaultRecord]]:
    truth: list[FaultRecord] = []
    games = {game: 2 for game in FAULTS[fault].rule_ids}
    messages = list(
        simulate(tables=games, hours=hours, seed=5, faults={fault: rate}, on_fault=truth.append)
    )
    return messages, truth


@pytest.mark.parametrize(
    "fault", [f for f in Fault if FAULTS[f].check in (Check.PROCEDURE, Check.STREAM)]
)
def test_each_fault_breaks_exactly_its_rule_at_the_logged_events(fault: Fault) -> None:
    messages, truth = night(fault, RATES.get(fault, 0.1))
    assert len(truth) >= 3, "the fault was hardly injected: raise its rate in the test"
    assert {r.fault for r in truth} == {fault}
    expected = Counter((r.rule_id, r.event_id) for r in truth)
    assert all_findings(split_tables(messages)) == expected
    rules = {r.rule_id for r in truth}
    assert rules <= {*FAULTS[fault].rule_ids.values(), *FAULTS[fault].companion_rule_ids.values()}


def test_malformed_messages_are_exactly_the_logged_ones_and_nothing_else_breaks() -> None:
    messages, truth = night(Fault.MALFORMED, RATES[Fault.MALFORMED])
    tables = split_tables(messages)
    assert len(truth) >= 3
    assert {t: s.invalid for t, s in tables.items() if s.invalid} == Counter(
        r.table_id for r in truth
    )
    assert all(r.rule_id == "EVT-INVALID" and r.seq is None for r in truth)
    assert not all_findings(tables)


def test_faults_off_break_no_rule() -> None:
    truth: list[FaultRecord] = []
    messages = list(simulate(tables=2, hours=6, seed=21, faults={}, on_fault=truth.append))
    tables = split_tables(messages)
    assert not truth
    assert not all_findings(tables)
    assert all(s.invalid == 0 for s in tables.values())


def _chi_square_of_faces(biased_rate: float) -> float:
    faces: Counter[int] = Counter()
    for message in simulate(
        tables={Game.PAI_GOW: 1}, hours=24, seed=3, faults={Fault.BIASED_DICE: biased_rate}
    ):
        if b'"event_type":"dice_rolled"' in message.value and b'"valid":true' in message.value:
            start = message.value.index(b'"dice":[') + 8
            faces.update(int(d) for d in message.value[start : start + 5].split(b","))
    total = sum(faces.values())
    return sum((faces[f] - total / 6) ** 2 / (total / 6) for f in range(1, 7))


def test_biased_dice_fail_the_goodness_of_fit_and_fair_dice_pass_it() -> None:
    critical = 20.515  # chi-square, 5 degrees of freedom, p = 0.001
    assert _chi_square_of_faces(1.0) > critical
    assert _chi_square_of_faces(0.0) < critical


def test_parse_faults_reads_rates_over_the_defaults_and_names_bad_items() -> None:
    assert set(parse_faults("none").values()) == {0.0}
    only = parse_faults("none, house_way:0.01")
    assert only[Fault.HOUSE_WAY] == 0.01 and sum(only.values()) == 0.01
    assert parse_faults("default") == {f: s.default_rate for f, s in FAULTS.items()}
    rates = parse_faults("house_way:0.5, malformed:0")
    assert rates[Fault.HOUSE_WAY] == 0.5 and rates[Fault.MALFORMED] == 0.0
    assert rates[Fault.SEQ_GAP] == FAULTS[Fault.SEQ_GAP].default_rate
    for bad, words in [
        ("bogus:0.1", "unknown fault 'bogus'"),
        ("house_way", "expected name:rate"),
        ("house_way:lots", "not a number"),
        ("house_way:2", "between 0 and 1"),
    ]:
        with pytest.raises(ValueError, match=words):
            parse_faults(bad)


def test_every_fault_names_a_rule_for_each_game_it_can_happen_in() -> None:
    for fault, spec in FAULTS.items():
        assert spec.rule_ids, fault
        for rule in (*spec.rule_ids.values(), *spec.companion_rule_ids.values()):
            assert rule.split("-")[0] in {"PGP", "TCP", "THP", "ALL", "DEF", "EVT"}, rule
        assert 0 < spec.default_rate < 1


def test_a_wrong_deal_changes_only_the_places_of_the_faulted_rounds_cards() -> None:
    """The deal_order fault draws from its own generator and keeps the hands: a night with it
    is the night without it but for the `deal_order` of the faulted rounds' cards_dealt."""
    truth: list[FaultRecord] = []
    tables = {Game.TRIPOKER: 2}
    clean = list(simulate(tables=tables, hours=3, seed=9, faults={}))
    wrong = list(
        simulate(
            tables=tables, hours=3, seed=9, faults={Fault.DEAL_ORDER: 0.2}, on_fault=truth.append
        )
    )
    faulted = {r.round_id for r in truth}
    assert len(faulted) >= 10 and {r.rule_id for r in truth} == {"TCP-A10a"}
    assert len(clean) == len(wrong)
    pairs = zip(clean, wrong, strict=True)
    changed = [(json.loads(a.value), json.loads(b.value)) for a, b in pairs if a != b]
    assert changed
    for before, after in changed:
        assert after["event_type"] == "cards_dealt" and after["round_id"] in faulted
        assert {**before, "deal_order": None} == {**after, "deal_order": None}
