"""Croupier: the platform's command line, configuration and local infrastructure (Kafka, lake)."""

__version__ = "0.1.0"
