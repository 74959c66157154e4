# Cython's augmenting .pxd of filler.py: Filler's order calls its run's `FillerOrder` at C level.

from cosched.simulator.schedulers.co_ordering cimport FillerOrder
