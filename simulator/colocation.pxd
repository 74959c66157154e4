# Cython's augmenting .pxd of colocation.py: the compiled co-location allocator reads the node
# state's lists and calls its edits in C, and reads an allocation's fields (allocators.pxd); the
# neighbourhood of a job is recorded in the engine's touched jobs in C (bisection.pxd).

from cosched.simulator.allocators cimport Allocation, NodeState, _listed, _Units
from cosched.simulator.bisection cimport TouchedJobs


cpdef append_neighbourhood(TouchedJobs touched, Py_ssize_t job, where)
cpdef NodeState node_state(where)


cdef class HeatmapSpeedModel:
    cdef public object speedups
    cdef public object app
    cdef public object spread
    cdef public object known
    cdef double[::1] _pairs
    cdef long long[::1] _apps
    cdef double[::1] _alone
    cdef Py_ssize_t _width

    cpdef double speed_in(
        self, NodeState state, Py_ssize_t job, Allocation allocation, Py_ssize_t cores_per_node
    ) except? -1
    cpdef double speed_beside(self, Py_ssize_t job, others, bint spread) except? -1
    cdef double _least_speed(
        self, Py_ssize_t job, long long[::1] others, Py_ssize_t count, bint spread
    ) except? -1


cdef class _HalfNodes(_Units):
    cdef public NodeState state
    cdef public object needs
    cdef public str prefer
    cdef public Py_ssize_t half  # cores of a half node
    cdef public Py_ssize_t _cpn  # cores per node
    cdef public Py_ssize_t _free_cores
    cdef public list _spread_halves
    cdef public list _compact_nodes
    cdef public object _hinted  # the engine (or view) whose hints `_placement` holds
    cdef public object _placement
    cdef public object platform
    cdef public list _job_cores
    cdef public list _memory_use
    cdef public list _gpu_use
    cdef public object memory_used
    cdef public object gpus_used

    cpdef is_compact(self, engine, job)
    cpdef find(self, engine, job)
    cpdef allocate(self, engine, job)
    cdef Allocation allocate_cores(self, engine, job, Py_ssize_t cores)
    cdef release_nodes(self, job, Allocation allocation)
    cpdef commit(self, job, Allocation allocation)
    cpdef release(self, job, Allocation allocation)
    cpdef Py_ssize_t _sharable_into(self, job, list chosen, Py_ssize_t at) except -1
    cpdef _account(self, job, allocation, sign)
    cpdef free_cores(self)
