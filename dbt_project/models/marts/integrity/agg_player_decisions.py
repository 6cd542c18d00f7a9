"""The hole-carding numbers per player (and game) and per dealer x player pair over every decision
in the lake: the count of decisions that matched the full-information choice against its exact
Poisson-binomial null (consumers/evidence.py `decision_tests`). A Python model because SQL has
no Poisson-binomial tail. Incremental: a build recomputes, over all their decisions, only the
players (and games) with decisions above the watermark, and replaces their rows."""


def model(dbt, session):
    from consumers.increments import unchanged, watermark

    dbt.config(
        materialized="incremental", incremental_strategy="delete+insert", unique_key="subject_key"
    )
    decisions = dbt.ref("fct_decisions")
    # its watermark is the newest decision of a player: those without a player never count
    if (nothing := unchanged(dbt, session, decisions.filter("player_ref IS NOT NULL"))) is not None:
        return nothing
    from consumers.evidence import decision_tests

    return decision_tests(session, decisions, since=watermark(dbt, session))
