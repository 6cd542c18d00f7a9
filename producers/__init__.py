"""Table producers: the Kafka client device integrators use, and the table simulator.

Both speak the contract of `events/`; see docs/events.md.
"""
