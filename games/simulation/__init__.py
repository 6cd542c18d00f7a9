"""Shared machinery of the table simulators: a table's event stream, its numbering and faults."""
