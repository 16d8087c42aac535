"""Titan's per-GPU lifetimes as a censored Weibull, at the size of a 1,024-GPU
job: the MTBF in steady state and for a fresh gang (see README). Run from the
repository root; the data lies in ../shared/data."""

import acesim as ace
import numpy as np

# Columns batch, service_time_s and failed.
life = np.genfromtxt(
    "../shared/data/titan_gpu_lifetimes.csv",
    delimiter=",",
    names=True,
    dtype=None,
    encoding="utf-8",
    usecols=(1, 2, 3),
)
gpus = 1024
print(
    f"{'GPUs':<10}{'failed':>7}{'shape':>7}{'mean life (h)':>15}{'steady (h)':>12}{'fresh (h)':>11}"
)
for name, rows in [
    ("all", life),
    ("old batch", life[life["batch"] == "old"]),
    ("new batch", life[life["batch"] == "new"]),
]:
    # Still in service at the end of the log: right-censored.
    gpu_law = ace.fit.fit_weibull(rows["service_time_s"], censored=rows["failed"] == 0)
    steady = gpu_law.mean() / gpus  # superposition of 1,024 renewal processes
    fresh = ace.gang(gpu_law, gpus).mean()  # first failure of 1,024 new GPUs
    print(
        f"{name:<10}{np.count_nonzero(rows['failed']):>7,}{gpu_law.shape:>7.3f}"
        f"{gpu_law.mean() / ace.HOUR:>15,.0f}{steady / ace.HOUR:>12,.1f}{fresh / ace.HOUR:>11,.1f}"
    )
