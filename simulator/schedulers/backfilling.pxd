# Cython's augmenting .pxd of backfilling.py: the compiled EASY pass reads the view's columns
# through their C-level list (`_read`).

from cosched.simulator.view cimport ReadOnlyColumn
