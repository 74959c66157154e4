"""`TimeOrder` (the engine's completions) keeps the one tie rule on generated sequences of adds,
moves, removals and pops: ascending time, equal times by job index."""

from hypothesis import given
from hypothesis import strategies as st

from cosched.simulator.ordered import TimeOrder

JOBS = 12
# few distinct times, so that equal times (ties) are frequent
TIMES = st.sampled_from([0.0, 1.5, 2.0, 7.25, float("inf")])
STEPS = st.lists(st.tuples(st.sampled_from("amrp"), st.integers(0, JOBS - 1), TIMES), max_size=60)


@given(STEPS)
def test_time_order_pops_ascending_times_and_equal_times_by_job_index(steps):
    order, model = TimeOrder(JOBS), {}  # model: job -> time
    for kind, job, time in steps:
        if kind == "a" and job not in model:
            order.add(job, time)
            model[job] = time
        elif kind == "m" and job in model:
            order.move(job, time)
            model[job] = time
        elif kind == "r" and job in model:
            order.remove(job)
            del model[job]
        elif kind == "p" and model:
            first = min(model, key=lambda j: (model[j], j))
            assert order.earliest() == model[first]
            assert order.pop() == first
            del model[first]
        assert len(order) == len(model)
    expected = sorted(model, key=lambda j: (model[j], j))
    assert [order.pop() for _ in expected] == expected
    assert len(order) == 0 and order.earliest() == float("inf")


@given(st.dictionaries(st.integers(0, JOBS - 1), TIMES), st.integers(-14, 14), st.integers(-14, 14))
def test_time_order_reads_as_the_sorted_list_of_time_job_pairs(times, index, stop):
    order = TimeOrder(JOBS)
    for job, time in times.items():
        order.add(job, time)
    pairs = sorted((time, job) for job, time in times.items())
    assert list(order) == pairs and order == pairs and order[index:stop] == pairs[index:stop]
    assert list(reversed(order)) == pairs[::-1]
    if -len(pairs) <= index < len(pairs):
        assert order[index] == pairs[index]
    for pair in pairs[:2] + [(1.5, index)]:
        assert (pair in order) == (pair in pairs) and order.count(pair) == pairs.count(pair)
        if pair in pairs:
            assert order.index(pair) == pairs.index(pair)
