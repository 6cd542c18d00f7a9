"""What a hostile or broken table device sends, through the consumer's pipeline into a real lake:
each finding of issue 13 as a named regression test. A clean simulated night is settled once;
each test changes a few of its messages and asserts that every round it did not touch settles
exactly as in the clean night, and that the touched ones are reported, never raised."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest

from consumers.pipeline import Pipeline, RawMessage, StreamPolicy
from consumers.sink import LakeSink
from events import dump_event, occurred_at_ms, parse_event
from events.models import Game
from games import registry
from games.base import RoundEvents, started
from infra import lake as lakes
from infra.dbt_worker import DbtWorker
from infra.marts import build_marts, connect_marts
from producers.simulator import Message
from tests.consumers.helpers import night, open_lake

Event = dict[str, Any]
CLEAN = night(tables=1, hours=2, seed=21, faults="none")
ROUND_COLUMNS = "round_id, table_id, status, bets, wager_cents, house_result_cents"
SETTLEMENT_COLUMNS = "round_id, seat, spot, outcome, payout_cents, commission_cents, net_cents"
ENVELOPE = ("event_id", "schema_version", "casino_id", "table_id", "game", "round_id", "seq",
            "occurred_at", "source_device")  # fmt: skip


def decode(messages: list[Message]) -> list[Event]:
    return [json.loads(m.value) for m in messages]


def encode(events: list[Event]) -> list[Message]:
    return [Message(e["table_id"], json.dumps(e, separators=(",", ":")).encode()) for e in events]


def settle(
    root: Path,
    messages: list[Message] | list[RawMessage],
    *,
    batch: int = 1_500,
    policy: StreamPolicy | None = None,
) -> duckdb.DuckDBPyConnection:
    """Messages through the consumer's pipeline into a lake at `root`; a read-only connection."""
    raw = [
        m
        if isinstance(m, RawMessage)
        else RawMessage(m.value, m.key.encode(), "table-events", 0, i)
        for i, m in enumerate(messages)
    ]
    sink = LakeSink(lakes.Lake(root=root))
    pipeline = Pipeline(sink, policy=policy)
    for start in range(0, len(raw), batch):
        pipeline.handle(raw[start : start + batch])
    pipeline.close()
    sink.close()
    return open_lake(root)


def table(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    return sorted(con.execute(sql).fetchall(), key=repr)


def by_round(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[Any, ...]]:
    """Each round's row and its settlements, keyed by round_id."""
    rounds = {r[0]: r for r in table(con, f"SELECT {ROUND_COLUMNS} FROM rounds")}
    lines: dict[str, list[tuple[Any, ...]]] = {}
    for line in table(con, f"SELECT {SETTLEMENT_COLUMNS} FROM settlements"):
        lines.setdefault(line[0], []).append(line)
    return {rid: (row, tuple(lines.get(rid, []))) for rid, row in rounds.items()}


def violations(con: duckdb.DuckDBPyConnection, rule_id: str | None = None) -> Counter[str]:
    rows = con.execute("SELECT rule_id, check_name FROM violations").fetchall()
    return Counter(f"{r}/{c}" for r, c in rows if rule_id is None or r == rule_id)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, ...]]:
    con = settle(tmp_path_factory.mktemp("clean"), CLEAN.messages)
    assert violations(con) == Counter()  # a clean night: the comparisons below start from zero
    return by_round(con)


def assert_untouched_equal(
    clean: dict[str, tuple[Any, ...]], got: dict[str, tuple[Any, ...]], touched: set[str]
) -> None:
    """Every round outside `touched` is in the lake exactly as in the clean night."""
    differ = sorted(rid for rid in clean if rid not in touched and got.get(rid) != clean[rid])
    assert differ == [], f"rounds changed that no mutation touched: {differ[:5]}"


def find(events: list[Event], test: Callable[[Event], bool], nth: int = 0) -> int:
    return [i for i, e in enumerate(events) if test(e)][nth]


# -- finding 1: one message must never stop every table ----------------------------------------


def test_dealer_hand_or_group_with_a_repeated_card_is_a_violation_not_a_crash(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    events = decode(CLEAN.messages)
    dealer_set = find(events, lambda e: e["event_type"] == "hand_set" and e["seat"] == 0, 5)
    events[dealer_set]["high"][1] = events[dealer_set]["high"][0]
    group_round = events[find(events, lambda e: e["event_type"] == "hand_set", 40)]["round_id"]
    for e in events:
        if e["round_id"] == group_round and e["event_type"] == "cards_dealt":
            e["cards"][1] = e["cards"][0]  # every group, the dealer's among them
    touched = {events[dealer_set]["round_id"], group_round}
    con = settle(tmp_path, encode(events))
    assert violations(con, "EVT-ENGINE") == Counter()  # the checks see it: nothing to contain
    critical = {
        r
        for (r,) in con.execute(
            "SELECT DISTINCT round_id FROM violations WHERE severity = 'critical'"
        ).fetchall()
    }
    assert touched <= critical
    assert_untouched_equal(clean, by_round(con), touched)


def test_three_of_a_card_in_one_deal_are_violations_with_ids_of_their_own(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    """Three jokers in one Pai Gow group, three of a card in a Tripóker hand: each repeat is a
    violation of its own (ALL-3), with its position; two once got the same violation_id, which
    broke the marts' unique test on every later build."""
    events = decode(CLEAN.messages)
    group = find(events, lambda e: e["event_type"] == "cards_dealt" and e["game"] == "pai_gow", 10)
    events[group]["cards"][:3] = ["Jk", "Jk", "Jk"]
    hand = find(
        events,
        lambda e: (
            e["event_type"] == "cards_dealt" and e["game"] == "tripoker" and len(e["cards"]) == 3
        ),
        7,
    )
    events[hand]["cards"][1:3] = [events[hand]["cards"][0]] * 2
    con = settle(tmp_path, encode(events))
    (rows, ids) = con.execute(
        "SELECT count(*), count(DISTINCT violation_id) FROM violations"
    ).fetchone() or (0, 0)
    assert rows == ids
    for event in (events[group], events[hand]):
        positions = sorted(
            json.loads(e)["position"]
            for (e,) in con.execute(
                "SELECT evidence FROM violations WHERE event_id = ? AND check_name = "
                "'duplicate_card'",
                [event["event_id"]],
            ).fetchall()
        )
        assert positions == [1, 2]  # the second and third copies
    assert violations(con, "EVT-ENGINE") == Counter()
    touched = {events[group]["round_id"], events[hand]["round_id"]}
    assert_untouched_equal(clean, by_round(con), touched)


@pytest.mark.parametrize("removed", [("ante",), ("ante", "progressive")])
def test_a_holdem_seat_that_plays_without_an_ante_is_a_violation_naming_its_money(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]], removed: tuple[str, ...]
) -> None:
    """DEF-THP1: a seat plays by its ante. Its hole cards and its call (40.00 in the call box)
    with no ante were settled as nothing and reported nowhere. Now they are reported, the
    call and a progressive returned (DEF-THP1), and the dealer's record of those lines held to
    them: a call or progressive the dealer paid or collected is a payment finding, and so is
    the money the dealer recorded on the bets never sent (held to nothing)."""
    events = decode(CLEAN.messages)
    decided = find(
        events,
        lambda e: e["event_type"] == "player_decided" and e["game"] == "holdem"
        and e["decision"] == "call",
        5,
    )  # fmt: skip
    round_id, seat = events[decided]["round_id"], events[decided]["seat"]
    call, table_id = events[decided]["amount_cents"], events[decided]["table_id"]
    bets = {
        i
        for i, e in enumerate(events)
        if e["round_id"] == round_id and e["event_type"] == "bet_placed" and e["seat"] == seat
        and e["spot"] in removed
    }  # fmt: skip
    progressive = sum(
        e["amount_cents"]
        for i, e in enumerate(events)
        if e["round_id"] == round_id and e["event_type"] == "bet_placed"
        and e["seat"] == seat and e["spot"] == "progressive" and i not in bets
    )  # fmt: skip
    events = [e for i, e in enumerate(events) if i not in bets]
    table_events = [e for e in events if e["table_id"] == table_id]
    for n, e in enumerate(table_events, start=1):
        e["seq"] = n  # no gap: the device never sent those bets
    returned = {"call": call} | ({"progressive": progressive} if progressive else {})
    payments = Counter(
        "DEF-THP2/overpayment" if net > 0 else "DEF-THP2/underpayment"
        for e in events
        if e["round_id"] == round_id and e["event_type"] == "payout_recorded"
        and e["seat"] == seat and (e["spot"] in returned or e["spot"] in removed)
        and (net := e["paid_cents"] - e["commission_cents"] - e["collected_cents"])
    )  # fmt: skip
    con = settle(tmp_path, encode(events))
    assert violations(con) == Counter({"DEF-THP1/play_without_ante": 1}) + payments
    assert table(
        con,
        f"SELECT spot, wager_cents, outcome, net_cents, rule_ids FROM settlements "
        f"WHERE round_id = '{round_id}' AND seat = {seat}",
    ) == sorted(
        ((spot, amount, "returned", 0, ["DEF-THP1"]) for spot, amount in returned.items()), key=repr
    )
    ((evidence,),) = con.execute(
        "SELECT evidence FROM violations WHERE check_name = 'play_without_ante' AND round_id = ?",
        [round_id],
    ).fetchall()
    assert json.loads(evidence) == {
        "seat": seat,
        "decision": "call",
        "call_cents": call,
        "progressive_cents": progressive,
    }
    assert_untouched_equal(clean, by_round(con), {round_id})


def test_a_round_voided_after_a_decision_returns_the_play_or_call_too(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]], dbt: DbtWorker
) -> None:
    """ALL-5: a void returns every wager on the table. A dealing error after the players
    decided (the Hold'em turn, the Tripóker dealer's hand) voids a round whose play or call
    (player_decided's amount) is on the table beside the ante: it was not returned, only the
    bets placed were, so that money had no settlement line at all. The marts' build, whose
    settlement-per-bet test reads the wagers from the events, passes on it."""
    events = decode(CLEAN.messages)
    wagers: dict[str, Counter[tuple[int, str]]] = {}
    for game, spot in (("tripoker", "play"), ("holdem", "call")):
        decided = find(
            events,
            lambda e, g=game: e["event_type"] == "player_decided" and e["game"] == g
            and e["amount_cents"] > 0,
            3,
        )  # fmt: skip
        round_id, table_id = events[decided]["round_id"], events[decided]["table_id"]
        in_round = [i for i, e in enumerate(events) if e["round_id"] == round_id]
        decisions = [i for i in in_round if events[i]["event_type"] == "player_decided"]
        void = next(i for i in in_round if i > max(decisions))  # the dealing error
        events[void] = {k: events[void][k] for k in ENVELOPE} | {
            "event_type": "round_voided", "reason": "misdeal"
        }  # fmt: skip
        events = [e for i, e in enumerate(events) if i <= void or e["round_id"] != round_id]
        for n, e in enumerate((e for e in events if e["table_id"] == table_id), start=1):
            e["seq"] = n  # no gap: the device voided the round and sent nothing more of it
        placed: Counter[tuple[int, str]] = Counter()
        for e in events:
            if e["round_id"] == round_id and e["event_type"] == "bet_placed":
                placed[(e["seat"], e["spot"])] += e["amount_cents"]
            elif e["round_id"] == round_id and e["event_type"] == "player_decided":
                placed[(e["seat"], spot)] += e["amount_cents"]
        wagers[round_id] = +placed  # a fold wagers nothing
        assert (events[decided]["seat"], spot) in wagers[round_id]
    con = settle(tmp_path / "lake", encode(events))
    for round_id, placed in wagers.items():
        (status,) = con.execute(
            "SELECT status FROM rounds WHERE round_id = ?", [round_id]
        ).fetchone() or (None,)
        lines = con.execute(
            "SELECT seat, spot, wager_cents, outcome, payout_cents, net_cents, "
            "house_result_cents, rule_ids FROM settlements WHERE round_id = ?",
            [round_id],
        ).fetchall()
        assert status == "voided"
        assert sorted((seat, s, w) for seat, s, w, *_ in lines) == sorted(
            (*k, w) for k, w in placed.items()
        )
        assert {(*line[3:7], tuple(line[7])) for line in lines} == {
            ("returned", 0, 0, 0, ("ALL-5",))
        }
    assert_untouched_equal(clean, by_round(con), set(wagers))
    con.close()
    build_marts(lakes.Lake(root=tmp_path / "lake"), tmp_path / "marts", quiet=True, dbt=dbt)


def test_a_wager_the_rules_do_not_settle_is_returned_and_another_amount_settled_as_recorded(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]], dbt: DbtWorker
) -> None:
    """Every wager the events name has its settlement line, whatever the device sent. One lost
    message was enough to break that: a Tripóker ante that arrives after its round closed is
    late (not applied), so the seat's play, with no ante (DEF-TCP2: the play bet is the
    ante's), was in no line and reported by nothing; a Hold'em call of another amount than
    2 × ante (DEF-THP1) was settled as the article's amount, unreported, and a fold recording
    an amount left it in no line. The marts' settlement-per-bet test failed on every build
    after either. Now the play is returned (DEF-TCP2) and reported, and held to the dealer's
    record (paid as a win: an overpayment), the seat's pair plus settled (the whole round was
    left unsettled when the seat had one), the call settled on the céntimos recorded and
    reported, the fold's amount returned (DEF-THP1)."""
    events = decode(CLEAN.messages)
    with_pair_plus = {
        (e["round_id"], e["seat"])
        for e in events
        if e["event_type"] == "bet_placed" and e["spot"] == "pair_plus"
    }
    play = find(
        events,
        lambda e: e["event_type"] == "player_decided" and e["game"] == "tripoker"
        and e["decision"] == "play" and (e["round_id"], e["seat"]) in with_pair_plus,
        2,
    )  # fmt: skip
    played = events[play]  # kept by reference: the indices move below
    tp_round, tp_seat = played["round_id"], played["seat"]
    ante = find(
        events,
        lambda e: e["round_id"] == tp_round and e["event_type"] == "bet_placed"
        and e["seat"] == tp_seat and e["spot"] == "ante",
    )  # fmt: skip
    ended = find(events, lambda e: e["round_id"] == tp_round and e["event_type"] == "round_ended")
    late = events.pop(ante)
    events.insert(ended, late)  # right after round_ended (the pop moved it one up): late
    paid = find(
        events,
        lambda e: e["round_id"] == tp_round and e["event_type"] == "payout_recorded"
        and e["seat"] == tp_seat and e["spot"] == "play",
    )  # fmt: skip
    events[paid] |= {"paid_cents": played["amount_cents"], "collected_cents": 0}
    call = find(
        events,
        lambda e: e["event_type"] == "player_decided" and e["game"] == "holdem"
        and e["decision"] == "call",
        6,
    )  # fmt: skip
    events[call]["amount_cents"] += 100
    fold = find(
        events,
        lambda e: e["event_type"] == "player_decided" and e["game"] == "holdem"
        and e["decision"] == "fold" and e["round_id"] != events[call]["round_id"],
        4,
    )  # fmt: skip
    events[fold]["amount_cents"] = 700
    touched = {tp_round, events[call]["round_id"], events[fold]["round_id"]}
    con = settle(tmp_path / "lake", encode(events))
    assert violations(con, "DEF-TCP2") == Counter({"DEF-TCP2/play_without_ante": 1})
    assert con.execute(
        "SELECT rule_id, check_name, evidence->>'seat', evidence->>'spot' FROM violations "
        "WHERE round_id = ? AND check_name LIKE '%payment'",
        [tp_round],
    ).fetchall() == [("DEF-TCP3", "overpayment", str(tp_seat), "play")]
    (status,) = con.execute("SELECT status FROM rounds WHERE round_id = ?", [tp_round]).fetchone()
    assert status == "settled"
    assert violations(con, "DEF-THP1") == Counter({"DEF-THP1/decision_amount": 2})
    assert violations(con, "EVT-ENGINE") == Counter()
    (skipped,) = con.execute("SELECT event_id FROM skipped_events WHERE reason = 'late'").fetchone()
    assert skipped == late["event_id"]

    def line(decided: Event, spot: str) -> tuple[Any, ...]:
        return (
            con.execute(
                "SELECT wager_cents, outcome, net_cents, house_result_cents, rule_ids "
                "FROM settlements WHERE round_id = ? AND seat = ? AND spot = ?",
                [decided["round_id"], decided["seat"], spot],
            ).fetchone()
            or ()
        )

    assert line(played, "play") == (
        played["amount_cents"],
        "returned",
        0,
        0,
        ["DEF-TCP2"],
    )
    assert line(events[fold], "call") == (700, "returned", 0, 0, ["DEF-THP1"])
    called = line(events[call], "call")
    assert called[0] == events[call]["amount_cents"] and called[1] != "returned"
    assert abs(called[2]) in (0, called[0])  # 1:1 or a push on what is in the box
    for round_id in touched:  # every wager applied has its line, for the amount wagered
        placed: Counter[tuple[int, str]] = Counter()
        for e in events:
            if e["round_id"] != round_id or e["event_id"] == skipped:
                continue
            if e["event_type"] == "bet_placed":
                placed[(e["seat"], e["spot"])] += e["amount_cents"]
            elif e["event_type"] == "player_decided":
                placed[(e["seat"], "play" if e["game"] == "tripoker" else "call")] += e[
                    "amount_cents"
                ]
        lines: Counter[tuple[int, str]] = Counter()
        for seat, spot, wager in con.execute(
            "SELECT seat, spot, wager_cents FROM settlements "
            "WHERE round_id = ? AND bettor = 'player'",
            [round_id],
        ).fetchall():
            lines[(seat, spot)] += wager
        assert +lines == +placed, round_id
    assert_untouched_equal(clean, by_round(con), touched)
    con.close()
    build_marts(lakes.Lake(root=tmp_path / "lake"), tmp_path / "marts", quiet=True, dbt=dbt)


def test_a_seat_decides_once_and_a_pai_gow_decision_wagers_nothing(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]], dbt: DbtWorker
) -> None:
    """A second decision for a seat (a resend under a new id, a change of mind) counted in the
    marts as a second play or call that no line held, and the settlement per bet failed on
    every build; a Pai Gow decision with an amount was read as a Hold'em call. Now the first
    decision stands: the second is stored, skipped (`decision_repeated`), reported under the
    game's decision article (DEF-THP1, TCP-A11a); and a Pai Gow amount is reported (PGP-A16a)
    and no wager."""
    events = decode(CLEAN.messages)
    call = find(
        events,
        lambda e: e["event_type"] == "player_decided" and e["game"] == "holdem"
        and e["decision"] == "call",
        3,
    )  # fmt: skip
    play = find(
        events,
        lambda e: e["event_type"] == "player_decided" and e["game"] == "tripoker"
        and e["decision"] == "play",
        3,
    )  # fmt: skip
    bet = find(events, lambda e: e["event_type"] == "bet_placed" and e["game"] == "pai_gow", 3)
    resent = events[call] | {"event_id": str(uuid.UUID(int=1))}
    changed = events[play] | {"event_id": str(uuid.UUID(int=2)), "decision": "fold",
                              "amount_cents": 0}  # fmt: skip
    pai_gow = {k: events[bet][k] for k in ENVELOPE} | {
        "event_id": str(uuid.UUID(int=3)), "event_type": "player_decided",
        "seat": events[bet]["seat"], "decision": "play", "amount_cents": 2_000,
    }  # fmt: skip
    for at, event in sorted(((call, resent), (play, changed), (bet, pai_gow)), reverse=True):
        events.insert(at + 1, event)
    for table_id in {e["table_id"] for e in events}:
        for n, e in enumerate((e for e in events if e["table_id"] == table_id), start=1):
            e["seq"] = n  # no gap: the device sent them
    touched = {resent["round_id"], changed["round_id"], pai_gow["round_id"]}
    con = settle(tmp_path / "lake", encode(events))
    assert violations(con) == Counter(
        {
            "DEF-THP1/decision_repeated": 1,
            "TCP-A11a/decision_repeated": 1,
            "PGP-A16a/decision_amount": 1,
        }
    )
    assert table(con, "SELECT event_id, reason FROM skipped_events") == sorted(
        [(resent["event_id"], "decision_repeated"), (changed["event_id"], "decision_repeated")]
    )
    got = by_round(con)
    # the resent call and the change of mind change nothing: the rounds settle as the clean
    # night's; the Pai Gow amount is no wager
    assert {rid: got[rid] for rid in touched} == {rid: clean[rid] for rid in touched}
    assert_untouched_equal(clean, got, touched)
    con.close()
    build_marts(lakes.Lake(root=tmp_path / "lake"), tmp_path / "marts", quiet=True, dbt=dbt)


def test_a_payment_recorded_for_a_spot_without_a_line_is_held_to_nothing(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    """The dealer records a payment for a seat that bet nothing in the round (a Tripóker seat
    paid 50.00) and a progressive collected from a Hold'em seat that bet none (5.00): no line
    held either record, so neither was compared with anything. Each is now held to nothing,
    under the game's payment article: the money paid is an overpayment (DEF-TCP3), the money
    taken an underpayment (DEF-THP2); the rounds settle as the clean night's. A pair plus the
    lake never received (its message lost: EVT-GAP on the round) leaves the dealer's record of
    it without a line too, but the dealer did right: that is no payment finding."""
    events = decode(CLEAN.messages)
    placed = [e for e in events if e["event_type"] == "bet_placed"]
    bets = {(e["round_id"], e["seat"], e["spot"]) for e in placed}
    betting = {(e["round_id"], e["seat"]) for e in placed}
    seats = {(e["table_id"], e["seat"]) for e in placed}  # the seats each table has

    def idle(e: Event) -> list[int]:
        """The seats of the table that bet nothing in the round of `e`."""
        return [
            s for t, s in sorted(seats) if t == e["table_id"] and (e["round_id"], s) not in betting
        ]

    def recorded(game: str, test: Callable[[Event], bool]) -> int:
        return find(
            events, lambda e: e["event_type"] == "payout_recorded" and e["game"] == game and test(e)
        )

    paid = recorded("tripoker", lambda e: bool(idle(e)))
    to_idle = events[paid] | {"event_id": str(uuid.UUID(int=4)), "seat": idle(events[paid])[0],
                              "spot": "ante", "paid_cents": 5_000, "collected_cents": 0,
                              "commission_cents": 0}  # fmt: skip
    taken = recorded("holdem", lambda e: (e["round_id"], e["seat"], "progressive") not in bets)
    progressive = events[taken] | {"event_id": str(uuid.UUID(int=5)), "spot": "progressive",
                                   "paid_cents": 0, "collected_cents": 500,
                                   "commission_cents": 0}  # fmt: skip
    for at, event in sorted(((paid, to_idle), (taken, progressive)), reverse=True):
        events.insert(at + 1, event)
    for table_id in {e["table_id"] for e in events}:
        for n, e in enumerate((e for e in events if e["table_id"] == table_id), start=1):
            e["seq"] = n  # no gap: the device sent them
    # then one message is lost: a pair plus beside its seat's ante, in another round
    lost = events.pop(
        find(
            events,
            lambda e: e["event_type"] == "bet_placed" and e["spot"] == "pair_plus"
            and (e["round_id"], e["seat"], "ante") in bets
            and e["round_id"] not in (to_idle["round_id"], progressive["round_id"]),
            3,
        )
    )  # fmt: skip
    con = settle(tmp_path / "lake", encode(events))
    assert violations(con) == Counter(
        {"DEF-TCP3/overpayment": 1, "DEF-THP2/underpayment": 1, "EVT-GAP/sequence_gap": 1}
    )
    found = table(
        con,
        "SELECT round_id, evidence->>'seat', evidence->>'spot', "
        "(evidence->'computed'->>'net_cents')::BIGINT, "
        "(evidence->'recorded'->>'paid_cents')::BIGINT, "
        "(evidence->'recorded'->>'collected_cents')::BIGINT FROM violations "
        "WHERE rule_id <> 'EVT-GAP'",
    )
    assert found == sorted(
        [
            (to_idle["round_id"], str(to_idle["seat"]), "ante", 0, 5_000, 0),
            (progressive["round_id"], str(progressive["seat"]), "progressive", 0, 0, 500),
        ]
    )
    got = by_round(con)
    assert got[lost["round_id"]][0][4] == clean[lost["round_id"]][0][4] - lost["amount_cents"]
    # the records change no settlement
    assert_untouched_equal(clean, got, {lost["round_id"]})
    con.close()


def test_a_bet_paid_twice_a_payment_in_a_voided_round_and_a_commission_not_due_are_found(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    """Two records of one Tripóker ante's payment (the bet paid twice) kept only the last, which
    matched; and a payment recorded before a round was voided was held to nothing, since a
    voided round's returned wagers were never compared with the dealer's records. Now a spot's
    records add up (the second payment is an overpayment of its amount; the finding points at
    the last record and says how many there were) and a voided round's
    returned wagers are held to them (a payment on one is an overpayment), both under the
    game's payment article (DEF-TCP3); the paid-twice round settles as the clean night's. A
    commission recorded for the house's own position (seat 0, no line) read as an
    underpayment of a bet: it is a commission not due (PGP-A17c), the money paid being right."""
    events = decode(CLEAN.messages)
    win = find(
        events,
        lambda e: e["event_type"] == "payout_recorded" and e["game"] == "tripoker"
        and e["spot"] == "ante" and e["paid_cents"] > 0,
        2,
    )  # fmt: skip
    again = events[win] | {"event_id": str(uuid.UUID(int=6))}
    events.insert(win + 1, again)
    # a commission recorded for the house's own position in a Pai Gow round the house banks
    house = find(events, lambda e: e["event_type"] == "payout_recorded" and e["game"] == "pai_gow")
    commission = events[house] | {"event_id": str(uuid.UUID(int=9)), "seat": 0, "spot": "main",
                                  "collected_cents": 0, "paid_cents": 0,
                                  "commission_cents": 250}  # fmt: skip
    assert next(
        e["banker_position"] for e in events
        if e["round_id"] == commission["round_id"] and e["event_type"] == "round_started"
    ) == 0  # fmt: skip
    events.insert(house + 1, commission)
    # a later Tripóker round is voided once its cards are dealt, after the dealer paid a seat
    voided = next(
        e["round_id"] for e in events[win + 2 :]
        if e["event_type"] == "round_started" and e["game"] == "tripoker"
    )  # fmt: skip
    kept = [e for e in events if e["round_id"] == voided and e["event_type"] in (
        "round_started", "bet_placed", "bets_closed", "cards_dealt")]  # fmt: skip
    ante = next(e for e in kept if e["event_type"] == "bet_placed" and e["spot"] == "ante")
    paid = {k: ante[k] for k in ENVELOPE} | {
        "event_id": str(uuid.UUID(int=7)), "event_type": "payout_recorded", "seat": ante["seat"],
        "spot": "ante", "collected_cents": 0, "paid_cents": 3_000, "commission_cents": 0,
    }  # fmt: skip
    void = {k: ante[k] for k in ENVELOPE} | {
        "event_id": str(uuid.UUID(int=8)), "event_type": "round_voided", "reason": "misdeal",
    }  # fmt: skip
    at = events.index(kept[-1])
    events = [
        e
        for e in [*events[: at + 1], paid, void, *events[at + 1 :]]
        if e["round_id"] != voided or e in kept or e is paid or e is void
    ]
    for table_id in {e["table_id"] for e in events}:
        for n, e in enumerate((e for e in events if e["table_id"] == table_id), start=1):
            e["seq"] = n  # no gap: the device sent them
    con = settle(tmp_path / "lake", encode(events))
    assert violations(con) == Counter({"DEF-TCP3/overpayment": 2, "PGP-A17c/commission_not_due": 1})
    found = table(
        con,
        "SELECT round_id, evidence->>'seat', evidence->>'spot', "
        "(evidence->'computed'->>'net_cents')::BIGINT, "
        "(evidence->'recorded'->>'paid_cents')::BIGINT, event_id, "
        "(evidence->>'records')::INTEGER FROM violations",
    )
    computed = next(
        line[6] for line in clean[again["round_id"]][1]
        if line[1] == again["seat"] and line[2] == "ante"
    )  # fmt: skip
    assert computed == again["paid_cents"] - again["collected_cents"]
    assert found == sorted(
        [
            (again["round_id"], str(again["seat"]), "ante", computed, 2 * again["paid_cents"],
             again["event_id"], 2),
            (voided, str(ante["seat"]), "ante", 0, 3_000, paid["event_id"], None),
            (commission["round_id"], "0", "main", 0, 0, commission["event_id"], None),
        ],
        key=repr,
    )  # fmt: skip
    got = by_round(con)
    assert got[voided][0][2] == "voided"
    # every wager of the voided round returned, the paid seat's with the dealer's record
    assert table(
        con,
        "SELECT seat, spot, outcome, net_cents, recorded_paid_cents, payout_difference_cents "
        f"FROM settlements WHERE round_id = '{voided}'",
    ) == table(
        con,
        "SELECT seat, spot, 'returned', 0, "
        f"CASE WHEN seat = {ante['seat']} AND spot = 'ante' THEN 3000 END, "
        f"CASE WHEN seat = {ante['seat']} AND spot = 'ante' THEN 3000 END "
        f"FROM (SELECT seat, spot FROM settlements WHERE round_id = '{voided}')",
    )
    assert {(line[1], line[2]) for line in got[voided][1]} == {
        (e["seat"], e["spot"]) for e in kept if e["event_type"] == "bet_placed"
    }
    assert got[commission["round_id"]] == clean[commission["round_id"]]
    assert_untouched_equal(clean, got, {voided})
    con.close()


def test_a_pai_gow_seat_that_bets_twice_plays_one_wager_of_both(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    """A second bet_placed for a Pai Gow seat (a resend under a new id, a bet added) left the
    round unsettled ("seat is repeated") with no finding, where the other games add a spot's
    bets up. Now the seat plays one wager of both: a push stays a push (the dealer's all-zero
    record right), a loss loses both bets, so the dealer who collected one left the other with
    the player (an overpayment, PGP-A17c)."""
    events = decode(CLEAN.messages)
    lines = {
        (rid, line[1]): line for rid, (_, round_lines) in clean.items() for line in round_lines
    }

    def bet_of(outcome: str) -> int:
        return find(
            events,
            lambda e: e["event_type"] == "bet_placed" and e["game"] == "pai_gow"
            and lines[(e["round_id"], e["seat"])][3] == outcome,
            2,
        )  # fmt: skip

    pushed, lost = bet_of("push"), bet_of("lose")
    assert events[pushed]["round_id"] != events[lost]["round_id"]
    again = {
        at: events[at] | {"event_id": str(uuid.UUID(int=10 + n))}
        for n, at in enumerate((pushed, lost))
    }
    for at in sorted(again, reverse=True):
        events.insert(at + 1, again[at])
    for table_id in {e["table_id"] for e in events}:
        for n, e in enumerate((e for e in events if e["table_id"] == table_id), start=1):
            e["seq"] = n  # no gap: the device sent them
    con = settle(tmp_path / "lake", encode(events))
    assert violations(con) == Counter({"PGP-A17c/overpayment": 1})
    got = by_round(con)
    for bet in again.values():
        rid, seat, amount = bet["round_id"], bet["seat"], bet["amount_cents"]
        row, round_lines = got[rid]
        clean_row = clean[rid][0]
        assert row[2] == "settled"
        assert (row[3], row[4]) == (clean_row[3] + 1, clean_row[4] + amount)
        line = next(line for line in round_lines if line[1] == seat)
        before = lines[(rid, seat)]
        assert line[3] == before[3]  # the same hands, the same outcome, on both bets
        if line[3] == "push":
            assert line[4:] == (0, 0, 0)
        else:
            assert line[4:] == (0, 0, -2 * amount) and before[6] == -amount
    found = table(
        con,
        "SELECT round_id, evidence->>'seat', (evidence->'computed'->>'net_cents')::BIGINT, "
        "(evidence->'recorded'->>'collected_cents')::BIGINT FROM violations",
    )
    bet = again[lost]
    assert found == [(bet["round_id"], str(bet["seat"]), -2 * bet["amount_cents"],
                      bet["amount_cents"])]  # fmt: skip
    assert_untouched_equal(clean, got, {bet["round_id"] for bet in again.values()})
    con.close()


def test_the_same_breach_twice_in_one_event_gets_two_ids_the_same_on_a_rerun() -> None:
    """Whatever check reports a breach twice alike: both rows kept, the second numbered."""
    from consumers.processor import Processor
    from consumers.rows import RowBatch
    from consumers.state import TableState
    from rules.procedure import Finding, Severity

    finding = Finding(
        rule_id="ALL-3", check="duplicate_card", severity=Severity.CRITICAL,
        evidence={"card": "Jk"}, seq=7, event_id="e-7",
    )  # fmt: skip
    made = []
    for _ in range(2):  # a rerun of the same input
        out = RowBatch()
        state = TableState(table_id="PG-01")
        for _ in range(3):
            Processor()._violation(state, out, finding, None)
        made.append(out.rows["violations"])
    ids = [row["violation_id"] for row in made[0]]
    assert len(set(ids)) == 3
    assert ids == [row["violation_id"] for row in made[1]]
    assert [json.loads(r["evidence"]).get("occurrence") for r in made[0]] == [None, 2, 3]


def test_a_bet_on_a_spot_the_game_does_not_take_is_never_settled_as_another(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    """A Tripóker pair plus sent as `call`, a Hold'em ante as `play`, a Pai Gow main as `ante`:
    the engine once settled such a bet as the game's other spot (a `call` paid as pair plus).
    The round is not settled on a bet it cannot name, says why, and ALL-1 reports the bet
    (no limit is posted for that spot); every other round is untouched."""
    events = decode(CLEAN.messages)
    changed = {}
    for game, spot, new in (
        ("tripoker", "pair_plus", "call"),
        ("holdem", "ante", "play"),
        ("pai_gow", "main", "ante"),
    ):
        i = find(events, lambda e, g=game, s=spot: e["game"] == g and e.get("spot") == s
                 and e["event_type"] == "bet_placed", 3)  # fmt: skip
        events[i]["spot"] = new
        changed[events[i]["round_id"]] = new
    con = settle(tmp_path, encode(events))
    rows = dict(
        con.execute(
            "SELECT round_id, status || ': ' || status_reason FROM rounds WHERE round_id IN "
            f"({', '.join('?' * len(changed))})",
            list(changed),
        ).fetchall()
    )
    for round_id, spot in changed.items():
        assert rows[round_id].startswith(f"unsettled: cannot settle: a bet on '{spot}'"), rows
    found = con.execute(
        "SELECT round_id, evidence->>'spot', evidence->>'min_cents' FROM violations "
        "WHERE rule_id = 'ALL-1'"
    ).fetchall()
    assert sorted(found) == sorted((r, s, None) for r, s in changed.items())
    assert violations(con, "EVT-ENGINE") == Counter()
    assert_untouched_equal(clean, by_round(con), set(changed))


def test_a_profile_version_beyond_the_lakes_column_is_a_dead_letter_not_a_crash(
    tmp_path: Path,
) -> None:
    """A `table_opened` naming version 3,000,000,000 once passed the contract and then failed the
    batch's commit (the lake's INTEGER column): the consumer stopped at that offset for good.
    The contract bounds the version; the event is a dead letter and the table's rounds wait
    for a table_opened (EVT stream findings), every other table untouched."""
    events = decode(CLEAN.messages)
    opened = find(events, lambda e: e["event_type"] == "table_opened" and e["game"] == "tripoker")
    events[opened]["profile_version"] = 3_000_000_000
    con = settle(tmp_path, encode(events))
    (reason, detail) = con.execute("SELECT reason, detail FROM dead_letters").fetchone()
    assert reason == "schema" and "profile_version" in detail
    others = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE status <> 'settled') FROM rounds "
        "WHERE game <> 'tripoker'"
    ).fetchone()
    assert others is not None and others[0] > 0 and others[1] == 0


def test_an_error_in_the_engine_is_contained_to_its_round(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = sorted(rid for rid in clean if rid.startswith("TP-"))[7]
    real = registry.GAMES[Game.TRIPOKER]

    def settle_or_fail(kinds: RoundEvents, profile: Any, meter_cents: int | None) -> Any:
        if started(kinds).round_id == target:
            raise RuntimeError("an input no check foresaw")
        return real.settle(kinds, profile, meter_cents)

    monkeypatch.setitem(registry.GAMES, Game.TRIPOKER, replace(real, settle=settle_or_fail))
    con = settle(tmp_path, CLEAN.messages)
    got = by_round(con)
    assert_untouched_equal(clean, got, {target})
    (row, lines) = got[target]
    assert row[2] == "unprocessable" and lines == ()
    (reason,) = con.execute(
        "SELECT status_reason FROM rounds WHERE round_id = ?", [target]
    ).fetchone()
    assert "an input no check foresaw" in reason
    found = con.execute(
        "SELECT round_id, severity, evidence FROM violations WHERE rule_id = 'EVT-ENGINE'"
    ).fetchall()
    assert [(r, s) for r, s, _ in found] == [(target, "critical")]
    evidence = json.loads(found[0][2])
    assert "RuntimeError" in evidence["error"] and evidence["round_events"]
    # The batch committed whole: every message is in the lake.
    (stored,) = con.execute("SELECT count(*) FROM events").fetchone()
    assert stored == len(CLEAN.messages)


# -- finding 2: a seq that jumps or restarts costs at most the round it falls in ---------------


def test_a_seq_jump_costs_at_most_the_round_it_falls_in(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    events = decode(CLEAN.messages)
    tp = [i for i, e in enumerate(events) if e["table_id"] == "TP-01" and e["round_id"]]
    jumped = tp[len(tp) // 4]
    events[jumped]["seq"] += 1000
    con = settle(tmp_path, encode(events))
    assert violations(con) == Counter({"EVT-SEQ/seq_jump": 1})
    assert_untouched_equal(clean, by_round(con), {events[jumped]["round_id"]})


@pytest.mark.parametrize("where", ["between rounds", "inside a round"])
def test_a_device_that_restarts_its_numbering_is_resynchronised(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]], where: str
) -> None:
    events = decode(CLEAN.messages)
    pg = [i for i, e in enumerate(events) if e["table_id"] == "PG-01"]
    start = find(
        events, lambda e: e["table_id"] == "PG-01" and e["event_type"] == "round_started", 30
    )
    if where == "inside a round":
        start += 3
    for n, i in enumerate(i for i in pg if i >= start):
        events[i]["seq"] = n + 1  # the device rebooted and counts from 1 again
    con = settle(tmp_path, encode(events))
    assert violations(con) == Counter({"EVT-SEQ/seq_back": 1})
    touched = {events[start]["round_id"]} if where == "inside a round" else set()
    got = by_round(con)
    assert_untouched_equal(clean, got, touched)
    assert len(got) == len(clean)


def test_a_second_recording_of_the_same_tables_is_recognised_and_flagged_once(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    other = night(tables=1, hours=2, seed=22, faults="none")  # same tables and round ids
    con = settle(tmp_path, [*CLEAN.messages, *other.messages])
    assert by_round(con) == clean  # its rounds were already played: none is played again
    found = violations(con)
    assert found == Counter({"EVT-SEQ/seq_back": 3, "EVT-DUP/round_replayed": 3}), found
    (stored,) = con.execute("SELECT count(DISTINCT event_id) FROM events").fetchone()
    assert stored == len(CLEAN.messages) + len(other.messages)  # new events, all kept


def test_a_second_recording_after_a_restart_is_recognised_from_the_lake_in_one_lookup_a_batch(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    settle(tmp_path, CLEAN.messages).close()  # a consumer that then stopped
    other = night(tables=1, hours=2, seed=22, faults="none")  # same tables and round ids
    asked: list[int] = []
    lookup = LakeSink.lookup_rounds

    def counted(sink: LakeSink, round_ids: Sequence[str]) -> set[str]:
        asked.append(len(round_ids))
        return lookup(sink, round_ids)

    monkeypatch.setattr(LakeSink, "lookup_rounds", counted)
    offset = len(CLEAN.messages)
    raw = [
        RawMessage(m.value, m.key.encode(), "table-events", 0, offset + i)
        for i, m in enumerate(other.messages)
    ]
    batch = 500
    con = settle(tmp_path, raw, batch=batch)  # a new consumer: only the lake knows the rounds
    assert by_round(con) == clean  # none of its rounds is played again
    found = violations(con)
    assert found == Counter({"EVT-SEQ/seq_back": 3, "EVT-DUP/round_replayed": 3}), found
    # the new consumer had not seen the first night's rounds: the lake answered for every one
    # of them (each a replay), one lookup a batch at most
    replays = sum(json.loads(m.value)["event_type"] == "round_started" for m in other.messages)
    assert sum(asked) == replays > 100
    assert len(asked) <= -(-len(raw) // batch)


def marts_rows(marts: Path, sql: str) -> list[tuple[Any, ...]]:
    con = connect_marts(marts)
    try:
        return table(con, sql)
    finally:
        con.close()


MONEY = {
    "fct_rounds": "round_id, table_id, dealer_id, deck_id, shuffler, status, started_at, ended_at, "
    "bets_placed, wagered_cents, "
    "house_result_cents, handle_cents, settled_house_result_cents, commission_cents, "
    "payout_cents, theoretical_win_cents",
    "fct_bets": "* EXCLUDE (lake_row_id)",
}


def test_the_marts_build_on_a_restarted_numbering_and_on_a_replayed_night(
    tmp_path: Path,
    dbt: DbtWorker,
) -> None:
    """What the consumer takes in stride must not fail the marts' build either. A device that
    restarts its numbering (seq 1 again, resynchronised) made the meter test read the table's
    readings in seq order, two numberings interleaved: 'recorded meter fell without a hit',
    34 times on a 3-hour night, on a full build. A second night that reuses the first one's
    round ids (its rounds skipped as replays, EVT-DUP) had its bets read as the first night's
    wagers, and its starts as their starts: settlement per bet, the row contract of
    fct_rounds and the coverage test failed. The marts of both equal the clean night's (the
    shuffler of each round too, once found by seq)."""
    clean = tmp_path / "clean"
    settle(clean / "lake", CLEAN.messages).close()
    build_marts(lakes.Lake(root=clean / "lake"), clean / "marts", quiet=True, dbt=dbt)

    events = decode(CLEAN.messages)
    for table_id in {e["table_id"] for e in events}:
        table_events = [e for e in events if e["table_id"] == table_id]
        starts = [i for i, e in enumerate(table_events) if e["event_type"] == "round_started"]
        for n, e in enumerate(table_events[starts[len(starts) // 2] :], start=1):
            e["seq"] = n  # the device rebooted between two rounds and counts from 1 again
    rebooted = tmp_path / "rebooted"
    con = settle(rebooted / "lake", encode(events))
    assert violations(con) == Counter({"EVT-SEQ/seq_back": 3})
    con.close()
    build_marts(lakes.Lake(root=rebooted / "lake"), rebooted / "marts", quiet=True, dbt=dbt)
    for name, columns in {
        **MONEY,
        "fct_table_sessions": "*",
        "dim_tables": "*",
        "fct_progressive_ledger": "* EXCLUDE (lake_row_id)",
    }.items():
        sql = f"SELECT {columns} FROM {name}"
        assert marts_rows(rebooted / "marts", sql) == marts_rows(clean / "marts", sql), name

    other = night(tables=1, hours=2, seed=22, faults="none")  # same tables and round ids
    replayed = tmp_path / "replayed"
    con = settle(replayed / "lake", [*CLEAN.messages, *other.messages])
    skipped = Counter(r for (r,) in con.execute("SELECT reason FROM skipped_events").fetchall())
    replays = [json.loads(m.value) for m in other.messages]
    assert skipped == Counter(
        "round_replayed" if e["event_type"] == "round_started" else "round_skipped"
        for e in replays
        if e["round_id"] is not None
    )  # every event of every round of the second night, none of the first's
    con.close()
    build_marts(lakes.Lake(root=replayed / "lake"), replayed / "marts", quiet=True, dbt=dbt)
    for name, columns in MONEY.items():
        sql = f"SELECT {columns} FROM {name}"
        assert marts_rows(replayed / "marts", sql) == marts_rows(clean / "marts", sql), name


def test_the_same_recording_published_twice_adds_one_violation_per_table(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    con = settle(tmp_path, [*CLEAN.messages, *CLEAN.messages])
    assert by_round(con) == clean
    assert violations(con) == Counter({"EVT-DUP/duplicate_event": 3})
    (stored, distinct) = con.execute(
        "SELECT count(*), count(DISTINCT event_id) FROM events"
    ).fetchone()
    assert stored == distinct == len(CLEAN.messages)


# -- finding 3: duplicates over the whole history, whichever table they claim -------------------


def test_duplicates_are_caught_however_old_across_tables_and_restarts(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    events = decode(CLEAN.messages)
    half = len(events) // 2
    first = CLEAN.messages[:half]
    con = settle(tmp_path, first)  # a consumer that then stopped
    con.close()
    bet = find(events, lambda e: e["event_type"] == "bet_placed", 3)
    changed = {**events[bet], "amount_cents": events[bet]["amount_cents"] + 100}
    moved = find(events, lambda e: e["table_id"] == "TH-01" and e["event_type"] == "cards_dealt")
    elsewhere = {**events[moved], "table_id": "TP-01", "game": "tripoker"}
    replayed = CLEAN.messages[2]  # the night's third message, thousands of events later
    rest = [*CLEAN.messages[half:], replayed, *encode([changed, elsewhere])]
    raw = [
        RawMessage(m.value, m.key.encode(), "table-events", 0, half + i) for i, m in enumerate(rest)
    ]
    con = settle(tmp_path, raw)  # a new consumer on the same lake
    (stored, distinct) = con.execute(
        "SELECT count(*), count(DISTINCT event_id) FROM events"
    ).fetchone()
    assert stored == distinct == len(CLEAN.messages)
    assert violations(con) == Counter(
        {"EVT-DUP/duplicate_event": 1, "EVT-DUP/conflicting_duplicate": 2}
    )
    (evidence,) = con.execute(
        "SELECT evidence FROM violations WHERE check_name = 'duplicate_event'"
    ).fetchone()
    assert json.loads(evidence) == {
        "original": {"partition": 0, "offset": 2},
        "repeat": {"partition": 0, "offset": len(CLEAN.messages)},
    }
    severities = con.execute(
        "SELECT DISTINCT severity FROM violations WHERE check_name = 'conflicting_duplicate'"
    ).fetchall()
    assert severities == [("critical",)]
    kept = con.execute("SELECT reason, raw FROM dead_letters ORDER BY source_offset").fetchall()
    assert [r for r, _ in kept] == ["conflicting_duplicate"] * 2  # the evidence is kept
    assert json.loads(kept[0][1])["amount_cents"] == changed["amount_cents"]
    assert by_round(con) == clean


# -- finding 4: one meaning per message -----------------------------------------------------------


def test_a_repeated_json_key_is_a_dead_letter(tmp_path: Path) -> None:
    events = decode(CLEAN.messages)
    bet = find(events, lambda e: e["event_type"] == "bet_placed", 2)
    text = CLEAN.messages[bet].value.decode()
    amount = f'"amount_cents":{events[bet]["amount_cents"]}'
    twice = text.replace(amount, '"amount_cents":7,' + amount).encode()
    messages = list(CLEAN.messages)
    messages[bet] = Message(events[bet]["table_id"], twice)
    con = settle(tmp_path, messages)
    rows = con.execute("SELECT reason, detail, raw FROM dead_letters").fetchall()
    assert [(r, bytes(raw)) for r, _, raw in rows] == [("duplicate_key", twice)]
    assert "amount_cents" in rows[0][1]
    (stored,) = con.execute(
        "SELECT count(*) FROM events WHERE event_id = ?", [events[bet]["event_id"]]
    ).fetchone()
    assert stored == 0


def test_other_spellings_are_stored_as_the_contract_writes_them(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    events = decode(CLEAN.messages)
    messages = list(CLEAN.messages)
    respelled = []
    for n in (3, 4, 5):
        i = find(events, lambda e: e["event_type"] == "bet_placed", n)
        e = dict(reversed(list(events[i].items())))  # another key order
        e["event_id"] = e["event_id"].upper()
        e["occurred_at"] = e["occurred_at"].replace("T", "t").replace("Z", "z")
        text = json.dumps(e, separators=(", ", ": ")).replace('"seat"', '"s\\u0065at"')
        messages[i] = Message(e["table_id"], text.encode())
        respelled.append(i)
    con = settle(tmp_path, messages)
    assert by_round(con) == clean
    for i in respelled:
        canonical = dump_event(parse_event(CLEAN.messages[i].value)).decode()
        (payload, event_id) = con.execute(
            "SELECT payload, event_id FROM events WHERE source_offset = ?", [i]
        ).fetchone()
        assert (payload, event_id) == (canonical, events[i]["event_id"])


# -- finding 5: implausible events ----------------------------------------------------------------


@pytest.mark.parametrize("clock", ["message timestamps", "a recording without them"])
def test_implausible_times_are_violations(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]], clock: str
) -> None:
    events = decode(CLEAN.messages)
    touched = set()
    for n, when in enumerate(
        ("2099-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z")
    ):
        i = find(events, lambda e: e["event_type"] == "bet_placed", 10 + 40 * n)
        events[i]["occurred_at"] = when
        touched.add(events[i]["round_id"])
    messages = encode(events)
    if clock == "message timestamps":  # each stamped with its true time, as a device would
        messages = [
            RawMessage(m.value, m.key.encode(), "table-events", 0, i, occurred_at_ms(c.value))
            for i, (m, c) in enumerate(zip(messages, CLEAN.messages, strict=True))
        ]
    con = settle(tmp_path, messages)
    rounds = con.execute(
        "SELECT DISTINCT round_id FROM violations WHERE rule_id = 'EVT-TIME'"
    ).fetchall()
    assert {r for (r,) in rounds} == touched
    assert violations(con) == Counter({"EVT-TIME/implausible_time": 3})
    assert_untouched_equal(clean, by_round(con), touched)
    got = by_round(con)
    assert all(got[r] == clean[r] for r in touched)  # the time is the only thing wrong


def test_a_clock_that_drifts_past_the_skew_is_flagged_once_per_round(tmp_path: Path) -> None:
    """Every message stamped 10 minutes after its occurred_at (a device whose clock is behind):
    EVT-TIME once per round (with the table events before it), never once per message."""
    messages = [
        RawMessage(m.value, m.key.encode(), "table-events", 0, i, occurred_at_ms(m.value) + 600_000)  # type: ignore[operator]
        for i, m in enumerate(CLEAN.messages)
    ]
    con = settle(tmp_path, messages)
    (found, rounds) = con.execute(
        "SELECT count(*), count(DISTINCT round_id) FROM violations WHERE rule_id = 'EVT-TIME'"
    ).fetchone()
    (total,) = con.execute("SELECT count(*) FROM rounds").fetchone()
    assert (
        0 < found <= total + 3 * 10 and rounds <= total
    )  # at most one per round, and between rounds
    assert violations(con).keys() == {"EVT-TIME/implausible_time"}


def test_misaddressed_events_are_dead_letters(
    tmp_path: Path, clean: dict[str, tuple[Any, ...]]
) -> None:
    events = decode(CLEAN.messages)
    pg = find(events, lambda e: e["event_type"] == "table_opened" and e["table_id"] == "PG-01")
    # While PG-01 is open: the same table claiming another game, another casino's event, and a
    # message without a key.
    other_game = {
        **events[pg],
        "event_id": "00000000-0000-4000-8000-000000000001",
        "game": "holdem",
    }
    foreign = {
        **events[1],
        "event_id": "00000000-0000-4000-8000-000000000002",
        "casino_id": "casino-cusco-02",
    }
    n = len(CLEAN.messages)
    raw = [
        RawMessage(m.value, m.key.encode(), "table-events", 0, i)
        for i, m in enumerate(CLEAN.messages)
    ]
    inserted = [
        RawMessage(m.value, m.key.encode(), "table-events", 0, n + i)
        for i, m in enumerate(encode([other_game, foreign]))
    ]
    inserted.append(RawMessage(CLEAN.messages[5].value, None, "table-events", 0, n + 2))
    raw[n // 2 : n // 2] = inserted
    con = settle(tmp_path, raw, policy=StreamPolicy(casino_id="casino-lima-01"))
    reasons = con.execute("SELECT reason FROM dead_letters ORDER BY source_offset").fetchall()
    assert [r for (r,) in reasons] == ["game_mismatch", "foreign_casino", "key_mismatch"]
    assert by_round(con) == clean
    assert violations(con) == Counter()


def test_a_table_may_change_game_only_after_it_closed(tmp_path: Path) -> None:
    events = decode(CLEAN.messages)
    closed = find(events, lambda e: e["event_type"] == "table_closed" and e["table_id"] == "PG-01")
    opened = {
        **events[0],
        "event_id": "00000000-0000-4000-8000-000000000003",
        "game": "tripoker",
        "profile": "tripoker/pe-1999",
        "seq": events[closed]["seq"] + 1,
        "occurred_at": events[closed]["occurred_at"],
    }
    dealer = find(
        events, lambda e: e["event_type"] == "dealer_changed" and e["table_id"] == "PG-01"
    )
    still_pai_gow = {
        **events[dealer],
        "event_id": "00000000-0000-4000-8000-000000000004",
        "seq": opened["seq"] + 1,
        "occurred_at": opened["occurred_at"],
    }
    messages = [*CLEAN.messages[: closed + 1], *encode([opened, still_pai_gow])]
    con = settle(tmp_path, messages)
    reasons = con.execute("SELECT reason FROM dead_letters").fetchall()
    assert reasons == [("game_mismatch",)]  # reopened for Tripóker: Pai Gow is over there
