// The fleet model driven step by step by an outside scheduler
// (FleetModelCore): built from the same named specs as simulate.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "acesim/fleet_model.hpp"
#include "acesim/simulator.hpp"
#include "inputs.hpp"
#include "nesting.hpp"
#include "pybind.hpp"

namespace acesim::bindings {

void register_fleet_model(py::module_& m) {
    using Core = FleetModelCore;
    py::class_<ModelEvent>(m, "ModelEvent", "Something the model reports to the scheduler, by field.")
        .def_readonly("time", &ModelEvent::time)
        .def_property_readonly("kind", [](const ModelEvent& e) { return static_cast<std::uint32_t>(e.kind); })
        .def_readonly("job", &ModelEvent::job)
        .def_readonly("cause", &ModelEvent::cause)
        .def_readonly("fault_time", &ModelEvent::fault_time)
        .def_readonly("nodes", &ModelEvent::nodes)
        .def_readonly("progress", &ModelEvent::progress)
        .def_readonly("durable", &ModelEvent::durable)
        .def_readonly("held", &ModelEvent::held);
    py::class_<Core>(m, "FleetModel")
        .def(py::init([](const std::vector<Distribution>& distributions, const py::object& fleet,
                         const std::vector<CauseSpec>& causes, std::int64_t job_failures,
                         const py::object& policy, std::uint32_t gpus_per_node, std::uint64_t seed,
                         std::uint32_t replica, double horizon, std::uint64_t max_events,
                         bool check_invariants, bool record_events, bool report_checkpoints,
                         std::uint64_t max_stalled_failures) {
                 const int depth = nesting_depth("FleetModel");
                 SimulationInput in;
                 in.distributions = distributions;
                 in.job_failures = index_or_none(job_failures);
                 in.causes = causes;
                 set_fleet(in, fleet);
                 set_policy(in, policy, depth);
                 set_run_options(in, gpus_per_node, 1, replica, seed, horizon, 1, max_events,
                                 max_stalled_failures);
                 in.check_invariants = check_invariants;
                 in.record_events = record_events;
                 return std::make_unique<Core>(std::move(in), report_checkpoints);
             }),
             py::arg("distributions"), py::arg("fleet"), py::arg("causes"), py::arg("job_failures"),
             py::arg("policy"), py::kw_only(), py::arg("gpus_per_node"), py::arg("seed"), py::arg("replica"),
             py::arg("horizon"), py::arg("max_events"), py::arg("check_invariants"), py::arg("record_events"),
             py::arg("report_checkpoints"), py::arg("max_stalled_failures") = kDefaultMaxStalledFailures)
        .def("add_distribution", &Core::add_distribution, py::arg("distribution"))
        .def(
            "submit",
            [](Core& c, std::uint32_t gpus, double work, double interval, std::uint32_t rule,
               std::uint32_t init, std::uint32_t save, std::uint32_t load, std::int32_t priority,
               std::int64_t persist, const std::vector<CheckpointTierSpec>& tiers, std::uint32_t min_gpus,
               std::int64_t reconfigure, double scaling, double checkpoint_bytes) {
                if (rule > 3) throw std::invalid_argument("rule: unknown interval rule");
                JobSpec spec;
                spec.gpus = gpus;
                spec.work = work;
                spec.checkpoint_interval = interval;
                spec.rule = static_cast<IntervalRule>(rule);
                spec.init = init;
                spec.save = save;
                spec.load = load;
                spec.priority = priority;
                JobOptions options;
                options.persist = index_or_none(persist);
                options.min_gpus = min_gpus;
                options.reconfigure = index_or_none(reconfigure);
                options.scaling = scaling;
                options.checkpoint_bytes = checkpoint_bytes;
                return c.submit(spec, options, tiers);
            },
            py::kw_only(), py::arg("gpus"), py::arg("work"), py::arg("checkpoint_interval"), py::arg("rule"),
            py::arg("init"), py::arg("save"), py::arg("load"), py::arg("priority"), py::arg("persist"),
            py::arg("tiers"), py::arg("min_gpus"), py::arg("reconfigure"), py::arg("scaling"),
            py::arg("checkpoint_bytes"))
        .def("start", &Core::start, py::arg("job"), py::arg("nodes"))
        .def("can_start", &Core::can_start, py::arg("job"), py::arg("nodes"))
        .def("stop", &Core::stop, py::arg("job"), py::arg("for_job"))
        .def("resize", &Core::resize, py::arg("job"), py::arg("nodes"))
        .def("advance", &Core::advance, py::arg("until"), py::arg("whole_instant") = true)
        .def_property_readonly("now", &Core::now)
        .def("peek", &Core::peek)
        .def_property_readonly("jobs", &Core::jobs)
        .def_property_readonly("nodes", &Core::nodes)
        .def("free_nodes", &Core::free_nodes)
        .def("spare_nodes", &Core::spare_nodes)
        .def("state", &Core::state, py::arg("job"))
        .def("nodes_of", &Core::nodes_of, py::arg("job"))
        .def("node_states",
             [](const Core& c) {
                 std::vector<std::uint8_t> states = c.node_states();
                 return py::array_t<std::uint8_t>(static_cast<py::ssize_t>(states.size()), states.data());
             })
        .def("down_nodes", &Core::down_nodes)
        .def("running", &Core::running)
        .def("waiting", &Core::waiting)
        .def("queued", &Core::queued)
        .def("job_nodes", &Core::job_nodes, py::arg("job"))
        .def_property_readonly("logged", &Core::logged)
        .def(
            "events_since", [](const Core& c, std::size_t first) { return to_numpy(c.events_since(first)); },
            py::arg("first"))
        .def("close", [](Core& c) { return output_tables(c.close()); });
}

}  // namespace acesim::bindings
