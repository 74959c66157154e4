# Cython's augmenting .pxd of base.py: the queue scheduler's pass (`_RunPass`) calls the in-order
# step and the EASY pass of backfilling.py at C level.

from cosched.simulator.schedulers.backfilling cimport EasyBackfill, start_each
