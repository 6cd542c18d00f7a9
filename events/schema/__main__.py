"""Regenerate events/schema/table-events.schema.json from the models: `python -m events.schema`."""

from events.schema import write_schema

if __name__ == "__main__":
    print(f"wrote {write_schema()}")
