# Cython's augmenting .pxd of partitioned.py: the compiled per-partition pass reads the view's
# columns (free units and changes per partition, units per job) through their C-level list
# (`_items`), and its own queues (`SortedColumn`) through their list and gap (`_head`), edited by
# C calls of `insert_sorted`/`remove_sorted`; it calls the in-order step and the EASY pass in C.

from cosched.simulator.view cimport (
    Clock, ReadOnlyColumn, SortedColumn, insert_sorted, remove_sorted
)
from cosched.simulator.schedulers.backfilling cimport EasyBackfill, start_each
