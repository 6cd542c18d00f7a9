# The Croupier application image: one image, every subcommand (`croupier --help`).
FROM python:3.11-slim
ENV UV_LINK_MODE=copy UV_COMPILE_BYTECODE=1 PATH="/app/.venv/bin:$PATH"
RUN pip install --no-cache-dir "uv==0.13.8"
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
# Every package of the wheel (pyproject's [tool.hatch.build.targets.wheel] packages) and the dbt
# project; tests/croupier/test_compose.py checks the list.
COPY croupier croupier
COPY infra infra
COPY events events
COPY rules rules
COPY games games
COPY producers producers
COPY consumers consumers
COPY dashboards dashboards
COPY dbt_project dbt_project
RUN uv sync --locked --no-dev && croupier lake --help >/dev/null \
    && dbt --version >/dev/null
ENV CROUPIER_DATA_DIR=/data
VOLUME /data
ENTRYPOINT ["croupier"]
CMD ["--help"]
