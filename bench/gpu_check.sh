#!/usr/bin/env bash
# GPU check: build acesim with CUDA required, then check CPU/GPU parity of
# the batch samplers and of the batch Monte Carlo, and measure their
# throughput on the device. Run it on a machine with an NVIDIA GPU, from the
# repository root:
#
#   bash bench/gpu_check.sh            # results on stdout and in $OUT (if set)
#
# It needs python3 with pip, a CUDA compiler on PATH (or CUDACXX) and numpy.
# Where no package index can be reached (ACESIM_GPU_CHECK_OFFLINE=1, or
# detected), it builds against the build tools already installed
# (scikit-build-core, pybind11, cmake, ninja: pip --no-build-isolation) into
# a folder put on PYTHONPATH.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
out="${OUT:-/tmp/acesim-gpu-check}"
mkdir -p "$out"
offline="${ACESIM_GPU_CHECK_OFFLINE:-}"
if [ -z "$offline" ]; then
  if python3 -c "import socket; socket.create_connection(('pypi.org', 443), 3)" 2>/dev/null; then
    offline=0
  else
    offline=1
  fi
fi
venv="$(mktemp -d)/venv"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
start=$(date +%s)
if [ "$offline" = 1 ]; then
  site="$(dirname "$venv")/site"
  ACESIM_CUDA=ON python3 -m pip install -q --no-build-isolation --no-deps --no-index \
    --target "$site" . 2>&1 | tail -n 3
  export PYTHONPATH="$site"
  python() { python3 "$@"; }
else
  python3 -m venv "$venv"
  . "$venv/bin/activate"
  pip install -q --upgrade pip
  ACESIM_CUDA=ON pip install -q ".[test]" 2>&1 | tail -n 3
fi
echo "install (offline=$offline): $(( $(date +%s) - start )) s" | tee "$out/install.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/device.txt"
# The CUDA tests of the suite (they skip where no device is visible).
(cd "$repo" && python -m pytest -q -p no:cacheprovider -o addopts="-ra" \
   tests/test_batch.py tests/test_distributions.py tests/test_forward_recurrence.py \
   -k "cuda" 2>&1 | tee "$out/gpu_tests.txt" | tail -n 5) || true
cd /  # import the installed package, not the source tree
python - <<'PY' 2>&1 | tee "$out/gpu_check.txt"
import json, os, time
import numpy as np
import acesim as ace

assert ace.cuda_built(), "acesim was built without CUDA"
assert ace.cuda_available(), "no CUDA device visible"
report = {}

def ulp_diff(a, b):
    a = np.asarray(a, np.float64).view(np.int64)
    b = np.asarray(b, np.float64).view(np.int64)
    return int(np.max(np.abs(a - b))) if a.size else 0

laws = {
    "constant": ace.Constant(3.0),
    "exponential": ace.Exponential(3600.0),
    "weibull": ace.Weibull(0.5, 3600.0),
    "lognormal": ace.LogNormal(8.0, 1.0),
    "gamma": ace.Gamma(0.7, 1000.0),
    "mixture": ace.Mixture([(0.9, ace.Exponential(36000.0)), (0.1, ace.Exponential(600.0))]),
    "empirical": ace.Empirical(np.arange(1.0, 1000.0)),
    "block_bootstrap": ace.BlockBootstrap(np.arange(1.0, 1000.0), block=16),
    "replay": ace.Replay(np.arange(1.0, 1000.0)),
    "scale_aware": ace.ScaleAware(ace.Exponential(3600.0), ref_gpus=1024),
}
n = 10_000_000
for name, law in laws.items():
    cpu = law.sample(n, seed=7, stream=3, replica=1)
    gpu = law.sample(n, seed=7, stream=3, replica=1, device="cuda")
    t = time.perf_counter(); law.sample(n, seed=8, device="cuda"); g = time.perf_counter() - t
    t = time.perf_counter(); law.sample(n, seed=8, threads=os.cpu_count()); c = time.perf_counter() - t
    report[f"sample/{name}"] = dict(max_ulp=ulp_diff(cpu, gpu), identical=bool(np.array_equal(cpu, gpu)),
                                    gpu_draws_per_s=n / g, cpu_draws_per_s=n / c)
    print(name, report[f"sample/{name}"], flush=True)

# Batch Monte Carlo: a Young/Daly sweep, CPU threads vs CUDA.
grid = [ace.Job(g, work=7 * ace.DAY, checkpoint_interval=tau * ace.MINUTE, save=ace.LogNormal(4.0, 0.5))
        for g in (1024, 4096, 16384) for tau in (5, 10, 20, 40, 80, 160)]
laws = ace.ScaleAware(ace.Weibull(0.6, 10 * ace.HOUR), ref_gpus=1024)
replicas = 20_000
t = time.perf_counter(); cpu = ace.batch_simulate(grid, laws, replicas=replicas, seed=1, threads=os.cpu_count()); c = time.perf_counter() - t
t = time.perf_counter(); gpu = ace.batch_simulate(grid, laws, replicas=replicas, seed=1, device="cuda"); g = time.perf_counter() - t
fields = [f for f in cpu.jobs.dtype.names]
identical = {f: bool(np.array_equal(cpu.jobs[f], gpu.jobs[f], equal_nan=True)) for f in fields}
rel = float(np.max(np.abs(cpu.pooled_ettr() - gpu.pooled_ettr()) / cpu.pooled_ettr()))
report["batch"] = dict(points=len(grid), replicas=replicas, cpu_s=c, gpu_s=g, speedup=c / g,
                       runs_per_s_gpu=len(grid) * replicas / g, identical_fields=identical,
                       max_rel_pooled_ettr_diff=rel,
                       integer_fields_identical=all(identical[f] for f in ("failures", "checkpoints", "restarts")))
print("batch", json.dumps(report["batch"], indent=1), flush=True)
json.dump(report, open(os.path.join(os.environ.get("OUT", "/tmp/acesim-gpu-check"), "gpu_check.json"), "w"), indent=1)
PY
