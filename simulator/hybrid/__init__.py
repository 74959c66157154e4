"""Hybrid workloads (seed 004): on-demand jobs beside rigid and malleable ones, and the mechanisms
that make room for them."""
