"""A fast path of the elastic simulation that must give the same bits as the general code: a
payload expression evaluated without its error context (`Expressions.amount`)."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from cosched.errors import InputError
from cosched.simulator.elastic.expressions import Expressions

EXPRESSIONS = (
    "flops / num_nodes ^ alpha",
    "model_size",
    "size * (num_nodes - 2)",
    "phase_iteration % 2 == 0 ? size : 0",
    "sqrt(size) - alpha",
)


@settings(max_examples=200, deadline=None)
@given(
    text=st.sampled_from(EXPRESSIONS),
    values=st.tuples(
        st.floats(min_value=-1e12, max_value=1e15, allow_nan=False, allow_infinity=False),
        st.integers(min_value=1, max_value=512),
        st.floats(min_value=-2.0, max_value=2.0),
        st.integers(min_value=0, max_value=9),
    ),
)
def test_amount_is_the_evaluated_value_or_nan(text, values):
    size, nodes, alpha, iteration = values
    variables = {
        "alpha": alpha,
        "flops": abs(size),
        "model_size": size,
        "num_nodes": float(nodes),
        "phase_iteration": float(iteration),
        "size": size,
    }
    names = tuple(sorted(variables))
    expressions = Expressions()
    assert math.isnan(expressions.amount(text, names, variables))  # not compiled yet
    try:
        want = expressions.evaluate(text, variables, where="test: bytes")
    except InputError:  # negative or not finite: `amount` leaves it to `evaluate`'s error
        assert math.isnan(expressions.amount(text, names, variables))
        return
    assert expressions.amount(text, names, variables).hex() == want.hex()
