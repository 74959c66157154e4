# Cython's augmenting .pxd of base.py: the queue scheduler's pass (`_RunPass`) calls the in-order
# step, the queue's window and the EASY pass of backfilling.py at C level, reads the engine's clock
# and columns in C and is the engine's scheduling pass (view.pxd); a kept order is a sorted column
# of ranks, searched and edited in C; a scheduler's compiled order (Filler's) is asked in C.

from cosched.simulator.bisection cimport int_position
from cosched.simulator.schedulers.co_ordering cimport FillerOrder
from cosched.simulator.schedulers.backfilling cimport (
    EasyBackfill, _QueueHeads, queue_slice, start_each
)
from cosched.simulator.view cimport (
    Clock, SchedulingPass, SortedColumn, Starter, column_items, remove_sorted
)
