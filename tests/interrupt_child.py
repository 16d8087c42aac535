"""A child process that starts one long acesim call, prints "ready", and on
Ctrl-C prints the time it caught KeyboardInterrupt, then runs a small
simulation to show it is still usable. Run as
``python -c CHILD CALL THREADS [SCALE]`` (SCALE multiplies the replicas of
the single-job simulate). Shared by tests/test_interrupt.py and
bench/test_bench_interrupt.py."""

from __future__ import annotations

import textwrap

CHILD = textwrap.dedent(
    """
    import signal, sys, time
    import numpy as np
    import acesim as ace

    # A child inherits an ignored or blocked SIGINT from its parent (a test
    # process that some other code left so): say so, and take Python's own
    # Ctrl-C handling back, which is what a user's session has.
    inherited = (signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, []))
    if inherited[0] is not signal.default_int_handler or signal.SIGINT in inherited[1]:
        print(f"inherited SIGINT: {inherited[0]}, blocked {sorted(inherited[1])}", file=sys.stderr)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    what, threads = sys.argv[1], int(sys.argv[2])
    scale = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0

    def long_call():
        # Each takes over five seconds when not interrupted, and holds at
        # most about 2 GB.
        if what == "simulate":
            job = ace.Job(1024, 7 * ace.DAY, ace.HOUR)
            return ace.simulate(job, replicas=int(2_000_000 * scale), threads=threads)
        if what == "fleet":
            fleet = ace.Fleet(16384, node_failures=ace.Weibull(0.8, 30 * ace.DAY),
                              repair=4 * ace.HOUR, spares=16)
            jobs = ace.workloads.meta_like(30, 16384 * 8, seed=1)
            return ace.simulate(jobs, fleet=fleet, horizon=30 * ace.DAY, threads=threads)
        if what == "batch":
            jobs = [ace.Job(1024, 28 * ace.DAY, t) for t in np.linspace(600, 7200, 50)]
            return ace.batch_simulate(jobs, replicas=100_000, threads=threads)
        if what == "sample":
            return ace.Gamma(0.7, 10.0).sample(200_000_000, threads=threads)
        if what == "stationary":
            return ace.Weibull(0.7, 10.0).sample(150_000_000, stationary=True, threads=threads)
        if what == "sweep":
            job = ace.Job(1024, 7 * ace.DAY, ace.HOUR)
            return ace.sweep([{"jobs": job, "replicas": 500_000, "threads": threads}] * 8)
        raise SystemExit(f"unknown call {what}")

    print("ready", flush=True)
    try:
        long_call()
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic():.6f}", flush=True)
    res = ace.simulate(ace.Job(8, 3600.0, 600.0), replicas=3)
    print("usable", res.jobs.size, flush=True)
    """
)
