"""The one setting of Python's cyclic garbage collector while a simulation runs.

A simulation allocates many short-lived containers (event tuples, allocations) that reference
counting frees, and creates almost no cyclic garbage; at Python's usual rate (a young pass every
700 allocations) the passes examine the objects it keeps alive and free nothing. The simulator's
loops (`cosched.simulator.engine.Engine.run`, the ElastiSim runtime of ``cosched elastic``) and
`cosched.simulator.simulation.simulate`'s making of the engine (its per-job lists) run inside
`rare_collections`.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["GC_THRESHOLD", "rare_collections"]

# allocations between young collections in a simulation (Python: 700); a run keeps every job's node
# list to its end, so each pass reaching the older generations walks them all (CEA-Curie EASY: 5 %
# of the event loop's instructions at 100,000)
GC_THRESHOLD = 1_000_000


@contextlib.contextmanager
def rare_collections(whole_process: bool = False) -> Iterator[None]:
    """Young passes every GC_THRESHOLD allocations instead of 700 inside the block, and the objects
    alive when it begins frozen out of them: a pass examines what the block made, not, say, an
    engine's per-job lists made before its run (in plain Python, SDSC-SP2's run had one young pass
    over them, about 0.04 s).

    `whole_process` (a command run as a program): the frozen objects, the modules' among them, stay
    out of every pass (also the interpreter's full one at exit), and the rare passes last until the
    process ends. Otherwise the usual rate comes back after the block, the objects still alive
    joining the oldest generation without a pass (a caller in the same process goes on). Garbage is
    still collected: by the rarer passes, the oldest generation's and the interpreter's at exit."""
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        if not whole_process:
            gc.freeze()  # every tracked object into the permanent generation, young counts reset
            gc.set_threshold(*thresholds)
            gc.unfreeze()  # and back, into the oldest generation
