# Cython's augmenting .pxd of ordered.py: the C fields and methods of `TimeOrder`, which the
# compiled engine cimports (engine.pxd) to move its completions and `by_end` without a Python call.

cdef class TimeOrder:
    cdef double[:] _times
    cdef long long[:] _jobs
    cdef double[:] _time_of
    cdef readonly Py_ssize_t size
    cpdef double earliest(self)
    cpdef add(self, Py_ssize_t job, double time)
    cpdef remove(self, Py_ssize_t job)
    cpdef move(self, Py_ssize_t job, double time)
    cpdef Py_ssize_t pop(self)
    cdef Py_ssize_t _position(self, double time, Py_ssize_t job)
    cdef tuple _item(self, Py_ssize_t at)
