# Cython's augmenting .pxd of colocation.py: the compiled co-location allocator reads the node
# state's lists and calls its edits in C, and reads an allocation's fields (allocators.pxd).

from cosched.simulator.allocators cimport Allocation, NodeState, _listed
