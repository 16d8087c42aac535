#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "acesim/records.hpp"
#include "acesim/simulator.hpp"
#include "pybind.hpp"

namespace acesim::bindings {
namespace {

template <class T>
using carray = py::array_t<T, py::array::c_style | py::array::forcecast>;

template <class T>
const T* column(const carray<T>& a, std::size_t n, const char* name) {
    if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n)
        throw std::invalid_argument(std::string("jobs.") + name + ": expected " + std::to_string(n) +
                                    " values");
    return a.data();
}

}  // namespace

void register_simulator(py::module_& m) {
    PYBIND11_NUMPY_DTYPE(JobRecord, replica, job, gpus, failures, preemptions, checkpoints, restarts,
                         priority, submit, end, wall, productive, wasted, ckpt_stall, overhead, detection,
                         queue_wait, recovery_wait, ettr, gpu_hours_lost, churn_gpu_hours, progress,
                         checkpoint_interval, mtbf, young_interval, daly_interval, expected_ettr,
                         expected_waste, completed);
    PYBIND11_NUMPY_DTYPE(FleetRecord, replica, jobs, jobs_completed, failures, preemptions, checkpoints,
                         quarantined_nodes, spare_uses, events, makespan, ettr, gpu_hours,
                         productive_gpu_hours, wasted_gpu_hours, ckpt_stall_gpu_hours, overhead_gpu_hours,
                         detection_gpu_hours, queue_wait_gpu_hours, recovery_wait_gpu_hours, gpu_hours_lost,
                         churn_gpu_hours);
    PYBIND11_NUMPY_DTYPE(TraceRecord, replica, job, node, cause, time, inter_failure);
    PYBIND11_NUMPY_DTYPE(EventRecord, replica, job, kind, pad_, time, progress);

    py::enum_<IntervalRule>(m, "IntervalRule")
        .value("FIXED", IntervalRule::Fixed)
        .value("YOUNG", IntervalRule::Young)
        .value("DALY", IntervalRule::Daly);

    py::enum_<EventKind>(m, "EventKind")
        .value("SUBMIT", EventKind::Submit)
        .value("START_BEGIN", EventKind::StartBegin)
        .value("COMPUTE_BEGIN", EventKind::ComputeBegin)
        .value("CHECKPOINT_BEGIN", EventKind::CheckpointBegin)
        .value("CHECKPOINT_END", EventKind::CheckpointEnd)
        .value("FAILURE", EventKind::Failure)
        .value("DETECTED", EventKind::Detected)
        .value("DONE", EventKind::Done)
        .value("HORIZON", EventKind::Horizon);

    // Dtypes, so Python can build empty arrays of the right layout.
    m.def("job_dtype", [] { return py::dtype::of<JobRecord>(); });
    m.def("fleet_dtype", [] { return py::dtype::of<FleetRecord>(); });
    m.def("trace_dtype", [] { return py::dtype::of<TraceRecord>(); });
    m.def("event_dtype", [] { return py::dtype::of<EventRecord>(); });

    m.def(
        "simulate",
        [](const std::vector<Distribution>& distributions, const carray<std::uint32_t>& gpus,
           const carray<double>& work, const carray<double>& checkpoint_interval,
           const carray<std::uint32_t>& rule, const carray<std::uint32_t>& init,
           const carray<std::uint32_t>& save, const carray<std::uint32_t>& load, const carray<double>& submit,
           const carray<std::int32_t>& priority, std::int64_t job_failures, std::uint32_t gpus_per_node,
           std::uint32_t replicas, std::uint32_t first_replica, std::uint64_t seed, double horizon,
           bool record_events, unsigned threads, std::uint64_t max_events) {
            SimulationInput in;
            in.distributions = distributions;
            const std::size_t n = static_cast<std::size_t>(gpus.size());
            const auto* g = column(gpus, n, "gpus");
            const auto* w = column(work, n, "work");
            const auto* ci = column(checkpoint_interval, n, "checkpoint_interval");
            const auto* r = column(rule, n, "rule");
            const auto* ini = column(init, n, "init");
            const auto* sv = column(save, n, "save");
            const auto* ld = column(load, n, "load");
            const auto* sb = column(submit, n, "submit");
            const auto* pr = column(priority, n, "priority");
            in.jobs.resize(n);
            for (std::size_t j = 0; j < n; ++j) {
                if (r[j] > 2) throw std::invalid_argument("jobs.rule: unknown interval rule");
                in.jobs[j] = JobSpec{g[j],  w[j],  ci[j], static_cast<IntervalRule>(r[j]), ini[j], sv[j],
                                     ld[j], sb[j], pr[j]};
            }
            in.job_failures = job_failures < 0 ? kNoDistribution : static_cast<std::uint32_t>(job_failures);
            in.gpus_per_node = gpus_per_node;
            in.replicas = replicas;
            in.first_replica = first_replica;
            in.seed = seed;
            in.horizon = horizon;
            in.record_events = record_events;
            in.threads = threads;
            in.max_events = max_events;
            SimulationOutput out;
            {
                // Safe without the GIL: the core reads only `in` (a C++ copy)
                // and writes only `out`.
                py::gil_scoped_release release;
                out = simulate(in);
            }
            py::dict result;
            result["jobs"] = to_numpy(std::move(out.jobs));
            result["fleet"] = to_numpy(std::move(out.fleet));
            result["trace"] = to_numpy(std::move(out.trace));
            result["events"] = to_numpy(std::move(out.events));
            return result;
        },
        py::arg("distributions"), py::arg("gpus"), py::arg("work"), py::arg("checkpoint_interval"),
        py::arg("rule"), py::arg("init"), py::arg("save"), py::arg("load"), py::arg("submit"),
        py::arg("priority"), py::arg("job_failures"), py::arg("gpus_per_node"), py::arg("replicas"),
        py::arg("first_replica"), py::arg("seed"), py::arg("horizon"), py::arg("record_events"),
        py::arg("threads"), py::arg("max_events"));
}

}  // namespace acesim::bindings
