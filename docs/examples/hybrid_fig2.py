"""The CUA versus CUP example of Fan et al. (Fig. 2), run by the simulator and drawn as job lanes.

4 nodes. J1 and J2 run on 2 nodes each from time 0: J1 ends at 1,000 s as estimated; J2 ends at
1,800 s but its estimate says 4,000 s, and it completes a checkpoint every 1,200 s. An on-demand
job on 4 nodes is announced at 500 s for 2,000 s and arrives then. CUA collects the nodes of J1 and
J2 as they actually end; CUP earmarks J1 (estimated to end in time) and preempts J2 right after its
checkpoint, since J2's estimate ends too late. Writes docs/img/hybrid_fig2.png:

    python docs/examples/hybrid_fig2.py
"""

from pathlib import Path

import numpy as np

from cosched.simulator.hybrid.plots import timeline
from cosched.simulator.hybrid.run import hybrid_engine
from cosched.simulator.hybrid.workload import HybridWorkload
from cosched.simulator.platform import Platform
from cosched.simulator.workload import make_workload

nan = np.nan
jobs = make_workload(
    [1, 2, 3],
    submit=[0, 0, 2000],
    run=[1000, 1800, 500],
    cores=[2, 2, 4],
    estimate=[1000, 4000, 500],
)
fig2 = HybridWorkload(
    jobs,
    job_type=np.array(["rigid", "rigid", "on-demand"]),
    notice_kind=np.array([-1, -1, 1]),  # rigid, rigid,
    notice_time=np.array([nan, nan, 500.0]),
    estimated_arrival=np.array([nan, nan, 2000.0]),
    n_min=np.array([2, 2, 4]),
    n_max=np.array([2, 2, 4]),
    setup=np.zeros(3),
)  # on-demand
checkpoints = [nan, 1200.0, nan]  # J2 completes a checkpoint every 1,200 s

panels = []
for mechanism in ("cua-paa", "cup-paa"):
    # the periods are seconds of run with the writes inside, as the figure draws them
    engine = hybrid_engine(
        fig2,
        Platform(4),
        mechanism,
        periods=checkpoints,
        log_events=True,
        checkpoint_writes="inside",
    )
    result = engine.run()
    panels.append((mechanism.upper().replace("-", "&"), result))
    print(
        mechanism,
        "start",
        result.start.tolist(),
        "end",
        result.end.tolist(),
        "preemptions",
        engine.preemptions,
    )

out = Path(__file__).resolve().parents[1] / "img" / "hybrid_fig2.png"
timeline(
    panels,
    {0: "J1", 1: "J2", 2: "on-demand"},
    out,
    marks={"notice": 500, "arrival (as estimated)": 2000},
)
print("wrote", out)
