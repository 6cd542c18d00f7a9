"""Every new play/call/fold decision beside the legitimate-optimal and the full-information
choice (issue 18's hole-carding evidence). A Python model because each round is rebuilt from
the lake's stored events and judged by the game's own strategies (`GameSpec.informed`).
consumers/evidence.py does the work, incrementally;
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

    return model(dbt, session, positions, "informed", mark)
