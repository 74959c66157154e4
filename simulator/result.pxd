# Cython's augmenting .pxd of result.py: `node_arrays` reads the allocations' fields in C, a run
# of node ids (allocators.pxd) from its first id and count.

from cosched.simulator.allocators cimport Allocation
