"""Compiled ExprTk expressions are released safely when a reference cycle holds them.

cexprtk 0.4's symbol table writes through its variables' object when it is freed; if the cyclic
garbage collector has already cleared that object (replaced it by None), the write lands in the
memory beside None and the process crashes, typically at exit (`cosched elastic` on an adaptive or
evolving project exited with a segmentation fault after writing its outputs). `Expressions` frees
its expressions itself before the collector clears them. The check runs in a child process: the
failure is a crash.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

# a symbol table and its expression older than the object that holds them in a cycle: the
# collector clears the table first unless the holder releases them before
CHILD = textwrap.dedent(
    """
    import gc, sys
    from cosched.simulator.elastic.expressions import Expressions
    gc.disable()
    first = Expressions()
    first.evaluate("a * 2 + b", {"a": 1.0, "b": 0.5}, where="flops")
    held = Expressions()
    held._compiled = dict(first._compiled)  # allocated after the table and the expression
    del first
    class Cycle:
        pass
    cycle = Cycle()
    cycle.self, cycle.expressions = cycle, held
    del cycle, held
    before = sys.getrefcount(type(None))
    gc.collect()
    print(before, sys.getrefcount(type(None)))
    """
)


def test_expressions_in_a_garbage_cycle_are_freed_without_corrupting_memory():
    child = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=False
    )
    assert child.returncode == 0, child.stderr
    before, after = map(int, child.stdout.split())
    assert after == before  # a stray write zeroes the reference count of type(None)


def test_a_released_expressions_object_compiles_again():
    from cosched.simulator.elastic.expressions import Expressions

    expressions = Expressions()
    assert expressions.evaluate("a * 2", {"a": 3.0}, where="flops") == 6.0
    expressions.__del__()
    assert expressions.evaluate("a * 2", {"a": 4.0}, where="flops") == 8.0
