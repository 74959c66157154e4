# Cython's augmenting .pxd of allocators.py: the compiled allocators call the simulator's one
# binary search (bisection.py) as a C function.

from cosched.simulator.bisection cimport int_position
