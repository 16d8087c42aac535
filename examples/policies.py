"""Five recovery policies compared on the same node failures (see README)."""

import acesim as ace

fleet = ace.Fleet(
    nodes=136,
    gpus_per_node=8,
    spares=0,
    repair=ace.LogNormal(mu=8.0, sigma=1.0),  # median ~50 min, long tail
    node_failures=ace.Exponential(ace.DAY / 6.5e-3),  # Meta RSC-1: 6.5 per 1000 node-days
    lemon_fraction=0.05,
    lemon_factor=20.0,  # a few bad nodes fail 20x as often
)
jobs = [ace.Job(1024, work=7 * ace.DAY, checkpoint_interval="daly", priority=1, name="flagship")]
jobs += [
    ace.Job(16, work=12 * ace.HOUR, checkpoint_interval=ace.HOUR, submit=i * 3 * ace.HOUR)
    for i in range(64)
]

policies = {
    "spares": ace.Policy(replacement=ace.Replacement.SPARES),
    "wait-repair": ace.Policy(replacement=ace.Replacement.WAIT_REPAIR),
    "preempt-lower": ace.Policy(
        replacement=ace.Replacement.PREEMPT_LOWER,
        preemption=ace.Preemption.CHECKPOINT_AWARE,
        preemption_grace=10 * ace.MINUTE,
    ),
    "requeue": ace.Policy(replacement=ace.Replacement.REQUEUE),
    "spares+quarantine": ace.Policy(
        quarantine=ace.Quarantine(failures=2, window=7 * ace.DAY, duration=30 * ace.DAY)
    ),
}
print(
    f"{'policy':<18}{'flagship ETTR':>14}{'fleet ETTR':>11}{'failures':>9}"
    f"{'churn GPU-h':>12}{'quarantined node-h':>19}"
)
for name, policy in policies.items():
    res = ace.simulate(
        jobs, fleet=fleet, policy=policy, causes=ace.LLAMA3_CAUSES, replicas=200, seed=7
    )  # same seed: the same node failures for every policy
    flagship = res.pooled_ettr(job=0)
    f = res.fleet
    print(
        f"{name:<18}{flagship:14.4f}{f['ettr'].mean():11.4f}{f['failures'].mean():9.2f}"
        f"{f['churn_gpu_hours'].mean():12.1f}{f['quarantined_node_hours'].mean():19.1f}"
    )
