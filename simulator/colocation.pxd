# Cython's augmenting .pxd of colocation.py: the compiled co-location allocator reads the node
# state's lists and calls its edits in C, and reads an allocation's fields (allocators.pxd).

from cosched.simulator.allocators cimport Allocation, NodeState, _listed


cpdef append_neighbourhood(list touched, job, NodeState state)


cdef class HeatmapSpeedModel:
    cdef public object speedups
    cdef public object app
    cdef public object spread
    cdef public object known
    cdef public list _rows
    cdef public list _apps
    cdef public list _alone

    cpdef double speed_in(
        self, NodeState state, job, Allocation allocation, Py_ssize_t cores_per_node
    ) except? -1
    cpdef double speed_beside(self, Py_ssize_t job, dict others, bint spread) except? -1
