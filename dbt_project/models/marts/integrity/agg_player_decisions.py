"""The hole-carding numbers per player (and game) and per dealer x player pair over every decision
in the lake: the count of decisions that matched the full-information choice against its exact
Poisson-binomial null (consumers/evidence.py `decision_tests`). A Python model because SQL has
no Poisson-binomial tail. Incremental: a build reads only the decisions above the watermark and
adds them to the rows of their subjects (counts, and the null's law each row keeps), replacing
those rows; every subject from every decision when the code that computes them changed
(`code_version`)."""


def model(dbt, session):
    from consumers.increments import source_version, unchanged, watermark

    dbt.config(
        materialized="incremental", incremental_strategy="delete+insert", unique_key="subject_key"
    )
    decisions = dbt.ref("fct_decisions")
    version = source_version("consumers.evidence")
    stale = (
        dbt.is_incremental
        and session.sql(
            f"SELECT count(*) FROM {dbt.this} WHERE code_version IS DISTINCT FROM '{version}'"
        ).fetchone()[0]
    )
    # its watermark is the newest decision of a player: those without a player never count
    players = decisions.filter("player_ref IS NOT NULL")
    mark = watermark(dbt, session)
    if not stale and (nothing := unchanged(dbt, session, players, mark)) is not None:
        return nothing
    from consumers.evidence import decision_tests

    if stale or not dbt.is_incremental:
        return decision_tests(session, decisions)
    return decision_tests(
        session, decisions, since=mark, previous=session.sql(f"SELECT * FROM {dbt.this}")
    )
