"""Cluster simulator: platform, workloads, event engine, schedulers, co-location, metrics."""
