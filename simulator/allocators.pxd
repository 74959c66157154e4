# Cython's augmenting .pxd of allocators.py: the compiled allocators call the simulator's one
# binary search over lists (bisection.py) as a C function; the node state's fields and edits are
# declared so the compiled co-location allocator (colocation.pxd cimports it) calls `occupy`,
# `vacate`, `neighbours`, `idle_into` and `partly_used_into` in C and reads the idle count
# without attribute look-ups; the built-in allocators' base (`_Units`), the whole-node allocator's
# and `start_job`/`end_job`, so the compiled engine (engine.pxd) starts and ends jobs on them in C.
# Python sees the fields as ordinary attributes.

cimport cython

from cosched.simulator.bisection cimport int_position

cdef class NodeState:
    cdef public object cores_per_node
    cdef public Py_ssize_t slots
    cdef public Py_ssize_t idle
    cdef Py_ssize_t _partly  # partly used nodes
    # the neighbour table (`_forget_sharing`): per job its first entry; per entry the neighbour,
    # the nodes shared and the job's next entry; the free entries' first; `_gather`'s output
    cdef long long[::1] _heads
    cdef long long[::1] _others
    cdef long long[::1] _counts
    cdef long long[::1] _next
    cdef Py_ssize_t _free_entry
    cdef long long[::1] _gathered
    # per node: its cores and the cores in use; per node and slot (node * slots + slot): occupant
    cdef long long[::1] _cores
    cdef long long[::1] _used
    cdef long long[::1] _occupants
    cdef unsigned char[::1] _kinds  # per node: its kind (IDLE, PARTLY, FULL)
    cdef list _node_ids  # the node ids as Python ints, made once
    cdef public object _arrays

    cpdef occupy(self, job, nodes, cores)
    cpdef vacate(self, job, nodes, cores)
    cpdef list neighbours(self, job)
    cpdef dict sharing(self, job)
    cpdef list lowest_idle(self, Py_ssize_t count)
    cpdef Py_ssize_t idle_into(self, list chosen, Py_ssize_t at) except -1
    cpdef Py_ssize_t partly_used_into(self, list chosen, Py_ssize_t at) except -1
    cdef list _lowest(self, Py_ssize_t kind, Py_ssize_t count)
    cdef Py_ssize_t _lowest_into(self, Py_ssize_t kind, list chosen, Py_ssize_t at) except -1
    cdef inline void _file(self, Py_ssize_t node) noexcept  # C reads and writes alone: no error
    cdef _share(self, Py_ssize_t job, Py_ssize_t other, Py_ssize_t run)
    cdef _count_in(self, Py_ssize_t job, Py_ssize_t other, Py_ssize_t run)
    cdef _unshare(self, Py_ssize_t job)
    cdef _count_out(self, Py_ssize_t job, Py_ssize_t other)
    cdef Py_ssize_t _gather(self, Py_ssize_t job) except -1


@cython.final  # its C method is called directly
cdef class Allocation:
    cdef object _nodes  # np.ndarray | None
    cdef object _ids  # list[int] | None
    # C ints, so that an allocation with its run fields takes 48 bytes, as one without did
    cdef int _cores
    cdef bint _sorted
    cdef int _first  # a run's first node id (`_run`), else -1 (EMPTY)
    cdef int _count  # a run's node count

    cdef bint _is_run(self)
    cdef Py_ssize_t _size(self) except? -1


# also the co-location allocator's (colocation.pxd)
cpdef _listed(ids, Py_ssize_t cores, bint ascending=*)
cpdef insert_nodes(list idle, list chosen, bint ascending=*, Py_ssize_t lo=*)  # also partitions'


# the built-in allocators' base: `start_job` and `end_job` call its C methods where `_direct`
cdef class _Units:
    cdef public Py_ssize_t _free
    cdef public bint _direct

    cdef Allocation allocate_cores(self, engine, job, Py_ssize_t cores)
    cdef release_nodes(self, job, Allocation allocation)
    cpdef free_units(self)


cdef class _WholeNodes(_Units):
    cdef public Py_ssize_t _cpn  # cores per node (one node type)
    # idle node ids, ascending, from `_lo` on: the entries before `_lo` are stale (see `_take`)
    cdef public list _idle
    cdef public list _node_ids  # every node id as a Python int, made once (`release_nodes` of a run)
    cdef public Py_ssize_t _lo
    cdef public dict _holders  # job or reservation key -> its node ids
    # (holder or EMPTY, node ids) since the last read of the node state, oldest first; None:
    # rebuild on read
    cdef public object _changes
    cdef public object _state
    cdef public object needs
    cdef public dict _running  # the engine's running jobs when it calls in C, else None
    cdef public list _allocations  # the engine's allocation of each job, with `_running`

    cdef Allocation allocate_cores(self, engine, job, Py_ssize_t cores)
    cdef release_nodes(self, job, Allocation allocation)
    cpdef _hold(self, job, list chosen)
    cpdef _unhold(self, job, list chosen)
    cpdef list _take(self, job, Py_ssize_t count)
    cpdef _give_back(self, job, list chosen, bint ascending)
    cdef _return_idle(self, list chosen, Py_ssize_t begin, Py_ssize_t count, bint ascending)
    cpdef list _compact(self)
    cdef _changed(self, owner, list ids)


cpdef start_job(allocator, engine, job, Py_ssize_t cores)
cpdef end_job(allocator, job, allocation)
