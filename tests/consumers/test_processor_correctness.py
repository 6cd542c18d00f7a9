"""The processor + sink on a simulated night with faults: the violations are exactly the faults
the simulator injected (none missed, none invented) and every payout the dealer recorded
matches the rules engine's except the injected payment faults."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from consumers.pipeline import Pipeline, RawMessage
from consumers.sink import LakeSink
from infra import lake as lakes
from producers.simulator import Check, Fault
from tests.consumers.helpers import expected_violations, found_violations, night, open_lake

# Rates high enough that every fault shows several times in a short night.
FAULTS = (
    "deck_count:0.2,missing_cut:0.02,duplicate_card:0.01,serpentine:0.02,leftover_cards:0.02,"
    "bet_after_close:0.02,unbet_group_seen:0.02,house_way:0.03,overpayment:0.02,underpayment:0.02,"
    "commission_not_taken:0.02,exposed_card:0.02,deal_order:0.02,same_deck:0.02,biased_dice:0.5,"
    "seq_gap:0.002,duplicate_event:0.002,out_of_order:0.002,malformed:0.002,"
    "uninspected_deck:0.5,deck_change_uninspected:0.01,seat_without_bet:0.02,"
    "paid_before_shown:0.02,payment_order:0.2"  # three seats paid winnings: rarer
)


def run(messages: list[RawMessage], root: Path, batch: int) -> None:
    sink = LakeSink(lakes.Lake(root=root))
    pipeline = Pipeline(sink)
    for start in range(0, len(messages), batch):
        pipeline.handle(messages[start : start + batch])
    pipeline.close()
    sink.close()


@pytest.fixture(scope="module")
def settled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    data = night(tables=2, hours=12, seed=11, faults=FAULTS)
    raw = [
        RawMessage(value=m.value, key=m.key.encode(), topic="t", partition=0, offset=i)
        for i, m in enumerate(data.messages)
    ]
    root = tmp_path_factory.mktemp("lake")
    run(raw, root, batch=3_000)
    return root, data


def test_every_injected_fault_is_found_and_nothing_else(settled: tuple[Path, object]) -> None:
    root, data = settled
    con = open_lake(root)
    expected = expected_violations(data.truth)  # type: ignore[attr-defined]
    found = found_violations(con)
    # Every kind of per-round fault happened, so the comparison is not vacuous.
    kinds = {f.fault for f in data.truth}  # type: ignore[attr-defined]
    assert kinds >= {f for f in Fault if f is not Fault.BIASED_DICE}
    assert found - expected == Counter(), "violations the simulator did not inject"
    assert expected - found == Counter(), "injected faults the consumer missed"
    malformed = sum(1 for f in data.truth if f.check is Check.DEAD_LETTER)  # type: ignore[attr-defined]
    (dead,) = con.execute("SELECT count(*) FROM dead_letters").fetchone()
    assert dead == malformed


def test_recorded_payouts_match_the_rules_except_injected_payment_faults(
    settled: tuple[Path, object],
) -> None:
    root, data = settled
    con = open_lake(root)
    payment = {Fault.OVERPAYMENT, Fault.UNDERPAYMENT, Fault.COMMISSION_NOT_TAKEN}
    faulted = Counter(
        (f.table_id, f.round_id, f.seat)
        for f in data.truth  # type: ignore[attr-defined]
        if f.fault in payment
    )
    differing = Counter(
        (t, r, s)
        for t, r, s in con.execute(
            "SELECT table_id, round_id, seat FROM settlements "
            "WHERE payout_difference_cents IS DISTINCT FROM 0 AND recorded_paid_cents IS NOT NULL"
        ).fetchall()
    )
    assert differing == faulted
    # Every settled bet was compared with a dealer record.
    (unrecorded,) = con.execute(
        "SELECT count(*) FROM settlements s JOIN rounds r USING (round_id) "
        "WHERE r.status = 'settled' AND s.recorded_paid_cents IS NULL AND s.outcome <> 'returned'"
    ).fetchone()
    assert unrecorded == 0


def test_money_is_conserved_and_every_settlement_names_its_rules(
    settled: tuple[Path, object],
) -> None:
    root, _ = settled
    con = open_lake(root)
    rounds_total, lines_total = con.execute(
        "SELECT (SELECT sum(house_result_cents) FROM rounds), "
        "(SELECT sum(house_result_cents) FROM settlements)"
    ).fetchone()
    assert rounds_total == lines_total
    (house_vs_players,) = con.execute(
        "SELECT sum(house_result_cents) + sum(net_cents) FROM settlements WHERE bettor = 'player'"
    ).fetchone()
    assert house_vs_players == 0  # no player-banked rounds in the simulator
    (nameless,) = con.execute(
        "SELECT count(*) FROM settlements WHERE rule_ids IS NULL OR len(rule_ids) = 0 "
        "OR profile IS NULL"
    ).fetchone()
    assert nameless == 0
    (bad_violation,) = con.execute(
        "SELECT count(*) FROM violations WHERE rule_id IS NULL OR evidence IS NULL"
    ).fetchone()
    assert bad_violation == 0


def test_batching_does_not_change_the_result(settled: tuple[Path, object], tmp_path: Path) -> None:
    """Rows are a function of the messages, however they are cut into batches."""
    from consumers.sink import content_hashes

    root, data = settled
    raw = [
        RawMessage(value=m.value, key=m.key.encode(), topic="t", partition=0, offset=i)
        for i, m in enumerate(data.messages)  # type: ignore[attr-defined]
    ]
    other = tmp_path / "lake"
    run(raw, other, batch=997)
    assert content_hashes(open_lake(other)) == content_hashes(open_lake(root))


def test_a_gap_before_a_void_does_not_lose_the_count_that_follows_it() -> None:
    """A seq skipped inside a voided round delays the round's finish until the next round
    starts, while the count and wash that follow the void (PGP-A7c) arrive in between: the
    count must still satisfy the void, so the gap is the only finding."""
    from consumers.processor import Processor
    from events import Game, dump_event, parse_event
    from producers.simulator import simulate

    events = [
        parse_event(m.value)
        for m in simulate(tables={Game.PAI_GOW: 6}, hours=12, seed=8, faults={})
    ]
    void = next(e for e in events if e.event_type == "round_voided")
    table = [e for e in events if e.table_id == void.table_id]
    skipped = [e.model_copy(update={"seq": e.seq + 1}) if e.seq >= void.seq else e for e in table]
    assert [e.event_type for e in skipped if e.seq > void.seq + 1][:2] == [
        "deck_counted",
        "deck_washed",
    ]
    rows = Processor().process(
        [RawMessage(dump_event(e), e.table_id.encode(), "t", 0, i) for i, e in enumerate(skipped)]
    )
    assert [(v["rule_id"], v["round_id"]) for v in rows.rows.get("violations", [])] == [
        ("EVT-GAP", void.round_id)
    ]
