# Cython's augmenting .pxd of allocators.py: the compiled allocators call the simulator's one
# binary search over lists (bisection.py) as a C function; the node state's fields and edits are
# declared so the compiled co-location allocator (colocation.pxd cimports it) calls `occupy`,
# `vacate` and `neighbours` in C and reads the idle and partly used lists without attribute
# look-ups. Python sees the fields as ordinary attributes (public).

from cosched.simulator.bisection cimport int_position

cdef class NodeState:
    cdef public object cores_per_node
    cdef public Py_ssize_t slots
    cdef public Py_ssize_t idle
    cdef public dict shared
    cdef public list idle_ids
    cdef public list partly_used_ids
    cdef public list _cores
    cdef public list _used
    cdef public list _occupants
    cdef public object _arrays

    cpdef occupy(self, job, nodes, cores)
    cpdef vacate(self, job, nodes, cores)
    cpdef list neighbours(self, job)
    cdef _occupy_lowest_idle(self, job, list ids, cores)
    cdef _share(self, job, list others, step)
