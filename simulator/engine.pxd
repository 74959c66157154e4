# Cython's augmenting .pxd of engine.py: the compiled engine calls the sorted columns' edits, the
# search of `by_end` and the allocator's start and end of a job as C functions.

from cosched.simulator.bisection cimport end_position
from cosched.simulator.view cimport SortedColumn, insert_sorted, remove_sorted
from cosched.simulator.allocators cimport end_job, start_job
