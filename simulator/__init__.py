"""Cluster simulator: platform, workloads, event engine, schedulers, co-location, metrics."""

from cosched._areas import require_package_name

require_package_name(__name__, "simulator")  # never a second copy under the folder name
