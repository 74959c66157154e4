cimport cython
from libc.string cimport memmove

# Cython's augmenting .pxd of bisection.py: the compiled engine, view and allocators cimport the
# search and the completion heap and call them as C functions.

cpdef Py_ssize_t int_position(
    list items, Py_ssize_t value, Py_ssize_t low, Py_ssize_t high, bint right
) except? -1
cpdef Py_ssize_t _search(
    list items, Py_ssize_t value, Py_ssize_t low, Py_ssize_t high, bint right
) except? -1

# the engine's completion heap, called at C level from the compiled engine (its buffers: C fields);
# its buffer reads and moves raise nothing (noexcept: no error test after each call)
@cython.final
cdef class Completions:
    cdef double[::1] ends
    cdef long long[::1] jobs
    cdef long long[::1] versions
    cdef Py_ssize_t size
    cdef list _events

    cpdef double earliest(self) noexcept
    cpdef push(self, double end, Py_ssize_t job, Py_ssize_t version)
    cpdef Py_ssize_t pop_due(self, double now, list current)
    cpdef _push(self, double end, Py_ssize_t job, Py_ssize_t version)
    cpdef _pop(self)
    cdef void _sift_down(
        self, Py_ssize_t start, Py_ssize_t position, double end, long long job, long long version
    ) noexcept
    cdef _grow(self)
    cdef inline bint _earlier(self, Py_ssize_t first, Py_ssize_t second) noexcept
    cdef inline void _move(self, Py_ssize_t source, Py_ssize_t target) noexcept

# the running jobs by predicted end (the engine's `by_end`), changed at C level by the compiled
# engine and read in C by the compiled shadow time (its buffers: C fields); its buffer reads and
# moves raise nothing (noexcept)
@cython.final
cdef class EndOrder:
    cdef double[::1] ends
    cdef long long[::1] jobs
    cdef Py_ssize_t size
    cdef list pairs

    cdef (double, Py_ssize_t) pair_at(self, Py_ssize_t position) noexcept
    cpdef add(self, double predicted, Py_ssize_t job)
    cpdef remove(self, double predicted, Py_ssize_t job)
    cpdef move(self, Py_ssize_t job, double before, double after)
    cdef void _move(self, Py_ssize_t source, Py_ssize_t target, Py_ssize_t count) noexcept
    cdef Py_ssize_t _position(self, double predicted, Py_ssize_t job) noexcept
    cdef _grow(self, Py_ssize_t size)
    cpdef list _listed(self)

# the engine's jobs whose speeds follow a change: recorded in C by the compiled co-location
# module (`append_neighbourhood`), read in C by the compiled engine (its buffers: C fields)
@cython.final
cdef class TouchedJobs:
    cdef long long[::1] jobs
    cdef unsigned char[::1] _marked
    cdef readonly Py_ssize_t count

    cpdef add(self, Py_ssize_t job)
    cpdef Py_ssize_t ascending_in_state(self, list states, Py_ssize_t wanted) except -1
    cpdef list first(self, Py_ssize_t count)
