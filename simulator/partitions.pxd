# Cython's augmenting .pxd of partitions.py: a start or an end on one pool (`_PoolStarts`) makes the
# job's allocation and holds or gives back its nodes on the allocator through C calls
# (allocators.pxd).

from cosched.simulator.allocators cimport Allocation, _WholeNodes, _listed, insert_nodes
