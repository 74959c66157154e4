# Cython's augmenting .pxd of co_ordering.py: the queue scheduler's pass (base.py) calls Filler's
# order at C level; the order reads the engine's queue column through its list and gap (view.pxd),
# and the co-location allocator's free cores (colocation.pxd).

cimport cython

from cosched.simulator.colocation cimport _HalfNodes
from cosched.simulator.view cimport SortedColumn

@cython.final
cdef class FillerOrder:
    cdef long long[::1] _cores
    cdef double[::1] _keys
    cdef long long[::1] _places
    cdef object _view
    cdef _HalfNodes _halves
    cdef SortedColumn _queue

    cpdef list order_of(self, object view)
    cpdef list order(self, object queue, Py_ssize_t free_cores)
    cdef void _make_room(
        self, double[::1] keys, long long[::1] places, Py_ssize_t at, Py_ssize_t count
    ) noexcept
    cdef list _picked(self, list items, long long[::1] places, Py_ssize_t length)
