"""dashboards package."""
