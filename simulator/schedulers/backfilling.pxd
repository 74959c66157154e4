# Cython's augmenting .pxd of backfilling.py: the compiled EASY pass reads the view's columns
# through their C-level list (`_read`), and the engine's queue through its list and gap; the queue
# scheduler's pass (base.py) calls the in-order step and the EASY pass at C level.

from cosched.simulator.view cimport Clock, ReadOnlyColumn, SortedColumn

cpdef object start_each(object jobs, object start, object table, object free_units)
cpdef object queue_slice(object queue, Py_ssize_t start, Py_ssize_t stop)

cdef class EasyBackfill:
    cdef readonly object view  # the view it reads and acts through
    cdef object _reservations
    cdef str _extra
    cdef object _free_units
    cdef object _start
    cdef object _units
    cdef object _held
    cdef object _durations
    cdef object _eligible
    cdef object _by_end
    cdef Clock _clock

    cpdef object run(self, object head, object candidates)
    cpdef object started(self, object job)
