# Cython's augmenting .pxd of engine.py: the compiled engine calls the sorted columns' edits, the
# search of `by_end`, the completion heap, the scheduler's pass and the allocator's start and end
# of a job as C functions; its loop state extends view's Clock.

from cosched.simulator.allocators cimport end_job, start_job
from cosched.simulator.colocation cimport HeatmapSpeedModel, append_neighbourhood, node_state
from cosched.simulator.bisection cimport Completions, EndOrder, TouchedJobs
from cosched.simulator.view cimport (
    Clock, SchedulingPass, SortedColumn, insert_sorted, remove_sorted
)
