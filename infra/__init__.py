"""The platform layer under the CLI, consumers, producers and dashboards: configuration, the lake
and its maintenance, the marts, Kafka helpers and the local broker. Imports nothing above it."""
