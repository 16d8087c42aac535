// The fleet and cause specs (FleetSpec with its rate windows, maintenance
// windows and repair stages; CauseSpec; CheckpointTierSpec) bound with
// named fields: Python builds them by keyword and they cross as they are.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "acesim/simulator.hpp"
#include "inputs.hpp"
#include "pybind.hpp"

namespace acesim::bindings {

std::uint32_t law_field(std::int64_t index, const std::string& field) {
    if (index < -1 || index >= static_cast<std::int64_t>(kNoDistribution))
        throw std::invalid_argument(field + ": a law index or -1 (none), got " + std::to_string(index));
    return index_or_none(index);
}

void set_fields(py::object& self, const py::kwargs& kwargs) {
    const py::handle cls = py::type::of(self);
    // The field's name, built only for an error.
    auto field = [&cls](py::handle key) {
        return std::string(py::str(cls.attr("__name__"))) + "." + std::string(py::str(key));
    };
    for (const auto& [key, value] : kwargs) {
        if (!py::hasattr(cls, key)) throw py::type_error(field(key) + ": no such field");
        try {
            py::setattr(self, key, value);
        } catch (py::error_already_set& e) {
            // A setter's own error names its field already; pybind11's
            // "incompatible function arguments" does not.
            if (!e.matches(PyExc_TypeError) || std::string(e.what()).find(field(key)) != std::string::npos)
                throw;
            throw py::type_error(field(key) + ": cannot take a value of type " +
                                 std::string(py::str(py::type::of(value).attr("__name__"))));
        }
    }
}

void set_fleet(SimulationInput& in, const py::object& fleet) {
    if (fleet.is_none()) return;
    if (!py::isinstance<FleetSpec>(fleet)) throw py::type_error("fleet: expected a FleetSpec or None");
    in.fleet = fleet.cast<const FleetSpec&>();
    in.fleet.enabled = true;
}

void register_specs(py::module_& m) {
    py::class_<CauseSpec> cause(m, "CauseSpec", "A failure cause (CauseSpec), by field.");
    // Typed keywords rather than def_keyword_init: a taxonomy builds one
    // per cause for every call (Llama 3's: 18), at a third of the cost.
    const CauseSpec defaults{};
    cause.def(py::init([](double share, std::int64_t detect, bool node_down, std::uint32_t nodes,
                          bool node_scope, double slowdown) {
                  return CauseSpec{
                      share, law_field(detect, "CauseSpec.detect"), node_down, nodes, node_scope, slowdown};
              }),
              py::kw_only(), py::arg("share") = defaults.share,
              py::arg("detect") = law_value(defaults.detect), py::arg("node_down") = defaults.node_down,
              py::arg("nodes") = defaults.nodes, py::arg("node_scope") = defaults.node_scope,
              py::arg("slowdown") = defaults.slowdown);
    def_law(cause, "detect", &CauseSpec::detect);
    cause.def_readwrite("share", &CauseSpec::share)
        .def_readwrite("node_down", &CauseSpec::node_down)
        .def_readwrite("nodes", &CauseSpec::nodes)
        .def_readwrite("node_scope", &CauseSpec::node_scope)
        .def_readwrite("slowdown", &CauseSpec::slowdown);

    py::class_<CheckpointTierSpec> tier(m, "CheckpointTierSpec", "A checkpoint tier of a job, by field.");
    def_keyword_init(tier);
    tier.def_readwrite("interval", &CheckpointTierSpec::interval)
        .def_readwrite("save", &CheckpointTierSpec::save)
        .def_readwrite("load", &CheckpointTierSpec::load)
        .def_readwrite("replication", &CheckpointTierSpec::replication);

    py::enum_<NodeClock>(m, "NodeClock").value("WALL", NodeClock::Wall).value("BUSY", NodeClock::Busy);

    py::class_<RateWindow> window(m, "RateWindow", "Node failure rates times `factor` on [start, end).");
    def_keyword_init(window);
    window.def_readwrite("start", &RateWindow::start)
        .def_readwrite("end", &RateWindow::end)
        .def_readwrite("factor", &RateWindow::factor);

    py::class_<MaintenanceWindow> maintenance(m, "MaintenanceWindow",
                                              "`nodes` leave service at `start` for `duration`.");
    def_keyword_init(maintenance);
    maintenance.def_readwrite("start", &MaintenanceWindow::start)
        .def_readwrite("duration", &MaintenanceWindow::duration)
        .def_readwrite("nodes", &MaintenanceWindow::nodes);

    py::class_<RepairStageSpec> stage(m, "RepairStageSpec", "A stage of a repair pipeline, by field.");
    def_keyword_init(stage);
    def_law(stage, "duration", &RepairStageSpec::duration);
    stage.def_readwrite("escalate", &RepairStageSpec::escalate).def_readwrite("fix", &RepairStageSpec::fix);

    // `enabled` is not a field here: a run has a fleet when it is given one.
    py::class_<FleetSpec> fleet(m, "FleetSpec", "The nodes, their failure processes and repair (FleetSpec).");
    def_keyword_init(fleet);
    def_law(fleet, "repair", &FleetSpec::repair);
    def_law(fleet, "node_failures", &FleetSpec::node_failures);
    def_laws(fleet, "node_failure_laws", &FleetSpec::node_failure_laws);
    def_laws(fleet, "node_failure_reported", &FleetSpec::node_failure_reported);
    def_law(fleet, "cold_spare_delay", &FleetSpec::cold_spare_delay);
    def_enum(fleet, "node_clock", &FleetSpec::node_clock, NodeClock::Busy);
    fleet.def_readwrite("nodes", &FleetSpec::nodes)
        .def_readwrite("spares", &FleetSpec::spares)
        .def_readwrite("lemon_fraction", &FleetSpec::lemon_fraction)
        .def_readwrite("lemon_factor", &FleetSpec::lemon_factor)
        .def_readwrite("stationary_start", &FleetSpec::stationary_start)
        .def_readwrite("node_failure_times", &FleetSpec::node_failure_times)
        .def_readwrite("rate_windows", &FleetSpec::rate_windows)
        .def_readwrite("maintenance", &FleetSpec::maintenance)
        .def_readwrite("repair_stages", &FleetSpec::repair_stages)
        .def_readwrite("misdiagnosis", &FleetSpec::misdiagnosis)
        .def_readwrite("cold_spares", &FleetSpec::cold_spares)
        .def_readwrite("lend_spares", &FleetSpec::lend_spares)
        .def_readwrite("storage_bandwidth", &FleetSpec::storage_bandwidth);
}

}  // namespace acesim::bindings
