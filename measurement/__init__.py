"""Speed measurement on Linux nodes: counters, speed probe, co-run harness."""

from cosched._areas import require_package_name

require_package_name(__name__, "measurement")  # never a second copy under the folder name

__all__: list[str] = []
