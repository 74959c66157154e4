# Cython's augmenting .pxd of backfilling.py: the compiled EASY pass reads the view's columns
# through their C-level list (`_read`), and the engine's queue through its list and gap.

from cosched.simulator.view cimport ReadOnlyColumn, SortedColumn
