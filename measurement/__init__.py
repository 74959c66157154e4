"""Speed measurement on Linux nodes: counters, speed probe, co-run harness."""

__all__: list[str] = []
