// Simulate: the event-heap run (simulate) and the single-job batch
// (simulate_batch), their inputs by name.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "acesim/simulator.hpp"
#include "inputs.hpp"
#include "interruptible.hpp"
#include "nesting.hpp"
#include "pybind.hpp"

namespace acesim::bindings {

void register_simulate(py::module_& m) {
    m.def(
        "simulate",
        [](const std::vector<Distribution>& distributions, const py::object& jobs,
           const py::object& job_failures, const std::vector<CauseSpec>& causes, const py::object& fleet,
           const py::object& policy, std::uint32_t gpus_per_node, std::uint32_t replicas,
           std::uint32_t first_replica, std::uint64_t seed, double horizon, bool record_events,
           bool check_invariants, unsigned threads, std::uint64_t max_events, const py::object& time_limit,
           const py::object& job_options, std::uint64_t max_stalled_failures) {
            const int depth = nesting_depth("simulate");
            Borrowed borrowed;  // the JobArray's columns, read in place by the run
            SimulationInput in = job_input(distributions, jobs, job_failures, causes, borrowed);
            set_job_options(in, job_options);
            set_time_limits(in, time_limit);
            set_fleet(in, fleet);
            set_policy(in, policy, depth);
            set_run_options(in, gpus_per_node, replicas, first_replica, seed, horizon, threads, max_events,
                            max_stalled_failures);
            in.record_events = record_events;
            in.check_invariants = check_invariants;
            // Safe without the GIL: the core reads only `in` (C++ copies of
            // the inputs, and a JobArray's columns, which `borrowed` holds)
            // and writes only its output; a Python policy callback takes the
            // GIL itself. Ctrl-C stops it.
            CancelFlag cancel{false};
            in.cancel = &cancel;
            const std::uint64_t units = static_cast<std::uint64_t>(in.replicas) *
                                        (in.jobs.size() + (in.fleet.enabled ? in.fleet.nodes : 0u)) * 8u;
            SimulationOutput out = run_interruptible(cancel, units, [&] { return simulate(in); });
            return output_tables(std::move(out));
        },
        py::arg("distributions"), py::arg("jobs"), py::arg("job_failures"), py::arg("causes"),
        py::arg("fleet"), py::arg("policy"), py::kw_only(), py::arg("gpus_per_node"), py::arg("replicas"),
        py::arg("first_replica"), py::arg("seed"), py::arg("horizon"), py::arg("record_events"),
        py::arg("check_invariants"), py::arg("threads"), py::arg("max_events"),
        py::arg("time_limit") = py::none(), py::arg("job_options") = py::none(),
        py::arg("max_stalled_failures") = kDefaultMaxStalledFailures);

    m.def(
        "simulate_batch",
        [](const std::vector<Distribution>& distributions, const py::object& jobs,
           const py::object& job_failures, const std::vector<CauseSpec>& causes, std::uint32_t gpus_per_node,
           std::uint32_t replicas, std::uint32_t first_replica, std::uint64_t seed, double horizon,
           unsigned threads, std::uint64_t max_events, const std::string& device,
           const py::object& job_options, std::uint64_t max_stalled_failures) {
            nesting_depth("batch_simulate");
            if (device != "cpu" && device != "cuda")
                throw std::invalid_argument("device must be 'cpu' or 'cuda', got '" + device + "'");
            Borrowed borrowed;  // the JobArray's columns, read in place by the run
            SimulationInput in = job_input(distributions, jobs, job_failures, causes, borrowed);
            set_job_options(in, job_options);
            set_run_options(in, gpus_per_node, replicas, first_replica, seed, horizon, threads, max_events,
                            max_stalled_failures);
            // The core touches no Python object; Ctrl-C stops the CPU path (a
            // CUDA batch stops when its kernels end).
            CancelFlag cancel{false};
            in.cancel = &cancel;
            const std::uint64_t units = static_cast<std::uint64_t>(in.replicas) * in.jobs.size();
            SimulationOutput out =
                run_interruptible(cancel, units, [&] { return simulate_batch(in, device == "cuda"); });
            return to_numpy(std::move(out.jobs));
        },
        py::arg("distributions"), py::arg("jobs"), py::arg("job_failures"), py::arg("causes"), py::kw_only(),
        py::arg("gpus_per_node"), py::arg("replicas"), py::arg("first_replica"), py::arg("seed"),
        py::arg("horizon"), py::arg("threads"), py::arg("max_events"), py::arg("device"),
        py::arg("job_options") = py::none(), py::arg("max_stalled_failures") = kDefaultMaxStalledFailures);
}

}  // namespace acesim::bindings
