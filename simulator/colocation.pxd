# Cython's augmenting .pxd of colocation.py: the compiled co-location allocator reads the node
# state's lists and calls its edits in C (allocators.pxd).

from cosched.simulator.allocators cimport NodeState
