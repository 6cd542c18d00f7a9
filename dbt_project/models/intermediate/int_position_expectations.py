"""Every new player position's house result as expected given the cards and decisions as played
(the hold test's expectation, issue 18). A Python model because each round is rebuilt from the
lake's stored events and valued by the game's own math (`GameSpec.expected`): exact enumeration
for Tripóker, deterministic sampling for Hold'em calls and Pai Gow with the estimate's error
inside the variance. consumers/evidence.py does the work, incrementally;
consumers/evaluation.py evaluates, loaded only when a round is left to evaluate."""


def model(dbt, session):
    from consumers.increments import unchanged, watermark

    dbt.config(materialized="incremental", incremental_strategy="append")
    positions = dbt.ref("fct_positions")
    # the lake tables each round is rebuilt from (consumers/stored_rounds.py)
    dbt.source("lake", "rounds")
    dbt.source("lake", "events")
    dbt.source("lake", "settlements")
    dbt.source("lake", "jackpot_ledger")
    mark = watermark(dbt, session)
    if (nothing := unchanged(dbt, session, positions, mark)) is not None:
        return nothing
    from consumers.evidence import model

    return model(dbt, session, positions, "expected", mark)
