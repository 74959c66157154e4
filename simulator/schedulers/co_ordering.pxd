# Cython's augmenting .pxd of co_ordering.py: Filler's pass (filler.py) calls a run's order at C
# level; the order reads the engine's queue column through its list and gap (view.pxd).

cimport cython

from cosched.simulator.view cimport SortedColumn

@cython.final
cdef class FillerOrder:
    cdef long long[::1] _cores
    cdef double[::1] _keys
    cdef long long[::1] _places

    cpdef list order(self, object queue, Py_ssize_t free_cores)
    cdef void _make_room(self, Py_ssize_t at, Py_ssize_t count) noexcept
