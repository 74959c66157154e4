# Cython's augmenting .pxd of bisection.py: the compiled engine, view and allocators cimport the
# search and call it as C functions.

cpdef Py_ssize_t int_position(
    list items, Py_ssize_t value, Py_ssize_t low, Py_ssize_t high, bint right
) except? -1
cpdef Py_ssize_t end_position(list by_end, double predicted, Py_ssize_t job) except? -1
cpdef Py_ssize_t _search(
    list items, bint pairs, double end, Py_ssize_t value, Py_ssize_t low, Py_ssize_t high,
    bint right
) except? -1
cpdef push_event(list heap, tuple event)
cpdef tuple pop_due(list heap, double now)
cpdef _push(list heap, tuple event)
cpdef tuple _pop(list heap)
cdef _sift_down(list heap, Py_ssize_t start, Py_ssize_t position)
cdef _sift_up(list heap, Py_ssize_t position)
cdef bint _before(tuple event, tuple other_event) except -1
