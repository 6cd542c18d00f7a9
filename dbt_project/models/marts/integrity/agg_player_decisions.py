"""The hole-carding numbers per player (and game) and per dealer x player pair over every decision
in the lake: the count of decisions that matched the full-information choice against its exact
Poisson-binomial null (consumers/evidence.py `decision_tests`). A Python model because SQL has
no Poisson-binomial tail; rebuilt whole each time (it is small: one row per player and pair)."""


def model(dbt, session):
    dbt.config(materialized="table")
    from consumers.evidence import decision_tests

    return decision_tests(session, dbt.ref("fct_decisions"))
