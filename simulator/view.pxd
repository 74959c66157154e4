# The C declarations of view.py's compiled extension type (Cython's augmenting .pxd): the compiled
# built-in passes cimport it to read a column's list without a call per item; Python sees neither
# attribute, so plug-ins still read the columns through their read-only interface.

cimport cython

from cosched.simulator.allocators cimport _Units
from cosched.simulator.bisection cimport int_position

cdef class ReadOnlyColumn:
    cdef object _items  # a list, or an array('d') of times
    cdef str _name

cdef class SortedColumn:
    cdef list _items
    cdef Py_ssize_t _head
    cdef str _name
    cdef list _counts  # a count per value (a counted column), or None (a sorted list)
    cdef Py_ssize_t _size  # how many values, with `_counts`

# the engine's time and change count, read by the compiled passes, and its start, called by them in
# C (the engine's loop state is one and overrides it)
cdef class Clock:
    cdef public double now
    cdef public Py_ssize_t changes
    cdef public Py_ssize_t requeues

    cpdef start(self, job, nodes=*, placement=*, reason=*)

# a pass's start and free units, called in C (a built-in allocator's count read in C)
@cython.final
cdef class Starter:
    cdef object _start
    cdef object _free_units
    cdef Clock _clock
    cdef _Units _units

    cdef start_chosen(self, job)
    cdef Py_ssize_t units_free(self) except? -1
    cdef Py_ssize_t _units_asked(self) except? -1

# a scheduler's pass, called by the compiled engine at C level (the queue scheduler's subclasses it)
cdef class SchedulingPass:
    cdef object _schedule
    cdef object _on_arrival
    cdef readonly bint hears_arrivals

    cpdef object schedule(self, object view)
    cpdef object hear(self, object on_arrival)
    cpdef object arrived(self, object view, object job)

# a read-only column's own list, which the compiled passes read
cpdef object column_items(object column)

# the engine's edits of a sorted column, called from the compiled engine as C functions
cpdef insert_sorted(SortedColumn column, Py_ssize_t value)
cpdef remove_sorted(SortedColumn column, Py_ssize_t value)
