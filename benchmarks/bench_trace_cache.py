"""Load time of a whole SWF trace: parsed (cache off), a cache miss (parse, hash, store) and a cache
hit (hash the trace, verify and read the entry), side by side in one run, alternating.

    python benchmarks/bench_trace_cache.py                      # CEA-Curie-2011 and SDSC-SP2
    python benchmarks/bench_trace_cache.py --repeat 9 --traces ../shared/data/swf/RICC-2010-2.swf.gz

The cache lives in a temporary XDG_CACHE_HOME; the hit must give the parsed workload value for
value. Prints median milliseconds per trace and the ratio parse / hit (the time the cache saves).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SWF = ROOT.parent / "shared" / "data" / "swf"
TRACES = [SWF / "CEA-Curie-2011-2.1-cln.swf.gz", SWF / "SDSC-SP2-1998-4.2-cln.swf.gz"]
COLUMNS = ("job_id", "submit", "run", "cores", "estimate")


def _milliseconds(read, path: Path) -> float:
    start = time.perf_counter()
    read(path)
    return (time.perf_counter() - start) * 1e3


def bench(paths: list[Path], repeat: int) -> None:
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="bench-trace-cache-")
    from cosched.simulator import workload

    for path in paths:
        times: dict[str, list[float]] = {"off": [], "miss": [], "hit": []}
        for _ in range(repeat):
            os.environ["COSCHED_NO_CACHE"] = "1"
            times["off"].append(_milliseconds(workload.read_swf, path))
            os.environ["COSCHED_NO_CACHE"] = "0"
            for entry in workload.cache_folder().glob("*.swfcache"):
                entry.unlink()
            times["miss"].append(_milliseconds(workload.read_swf, path))
            times["hit"].append(_milliseconds(workload.read_swf, path))
        hit = workload.read_swf(path)
        os.environ["COSCHED_NO_CACHE"] = "1"
        parsed = workload.read_swf(path)
        assert all((getattr(hit, name) == getattr(parsed, name)).all() for name in COLUMNS), (
            "a cache hit differs from the parse"
        )
        median = {key: statistics.median(values) for key, values in times.items()}
        print(
            f"{path.name} ({len(parsed):,} jobs), median of {repeat} [ms]: "
            f"parse {median['off']:.1f}, miss {median['miss']:.1f}, hit {median['hit']:.1f}; "
            f"parse / hit {median['off'] / median['hit']:.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="+", type=Path, default=TRACES)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bench(args.traces, args.repeat)


if __name__ == "__main__":
    main()
