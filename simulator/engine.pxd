# Cython's augmenting .pxd of engine.py: the compiled engine calls the sorted columns' edits and the
# search of `by_end` as C functions.

from cosched.simulator.bisection cimport end_position, pop_due, push_event
from cosched.simulator.view cimport SortedColumn, insert_sorted, remove_sorted
