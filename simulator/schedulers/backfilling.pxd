# Cython's augmenting .pxd of backfilling.py: the compiled EASY pass reads the view's columns
# through their C-level list (`column_items`), and the engine's queue through its list and gap; the
# queue scheduler's pass (base.py) calls the in-order step and the EASY pass at C level.

from cosched.simulator.bisection cimport EndOrder, int_position
from cosched.simulator.view cimport (
    Clock, ReadOnlyColumn, SortedColumn, Starter, column_items
)

cdef class _QueueHeads:
    cdef object _live
    cdef SortedColumn _queue

    cdef object head(self)

cpdef object start_each(object jobs, Starter starter, object table)
cpdef object queue_slice(object queue, Py_ssize_t start, Py_ssize_t stop)
# (shadow time, extra units) as a C pair: a Python tuple only for a Python caller
cpdef (double, Py_ssize_t) shadow_time(
    Py_ssize_t need, Py_ssize_t free, object by_end, object held, object extra=*
) except *
cdef Py_ssize_t _backfill(
    list candidates, SortedColumn queue, Py_ssize_t first, Py_ssize_t stop, object units,
    object duration, double[::1] estimates, long long[::1] sizes, Py_ssize_t free, double now,
    double shadow, Py_ssize_t extra, object start
) except -1

cdef class EasyBackfill:
    cdef readonly object view  # the view it reads and acts through
    cdef object _reservations
    cdef str _extra
    cdef Starter _starter
    cdef object _units
    cdef object _held
    cdef object _durations
    cdef object _eligible
    cdef object _by_end
    cdef Clock _clock
    cdef long long[::1] _sizes  # the engine's typed units table, or None
    cdef double[::1] _estimates  # the engine's typed `queued_duration`, or None
    cdef double _shadow
    cdef Py_ssize_t _spare, _shadow_changes, _shadow_head, _shadow_free
    cdef bint _remembers
    cdef double _rejected_shadow
    cdef Py_ssize_t _rejected_from, _rejected_to, _rejected_free, _rejected_extra
    cdef Py_ssize_t _rejected_requeues

    cpdef object run(self, object head, object candidates)
    cdef object run_queue(self, SortedColumn queue, Py_ssize_t first, Py_ssize_t stop)
    cdef object _behind(
        self, object head, object candidates, SortedColumn queue, Py_ssize_t first,
        Py_ssize_t stop
    )
    cdef Py_ssize_t _untested(
        self, SortedColumn queue, Py_ssize_t first, Py_ssize_t stop, Py_ssize_t free,
        Py_ssize_t extra, double shadow
    ) except? -1
    cdef Py_ssize_t started(self, object job) except? -1
