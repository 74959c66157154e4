# Cython's augmenting .pxd of engine.py: the compiled loop moves its completions through
# `TimeOrder`'s C methods (ordered.pxd).

from cosched.simulator.ordered cimport TimeOrder
