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
    // Every field by keyword (None: the default), converted in one call: a
    // taxonomy builds one per cause for every run (Llama 3's: 18), and a
    // field at a time costs twice as much.
    cause.def(py::init([](const py::object& share, const py::object& detect, const py::object& node_down,
                          const py::object& nodes, const py::object& node_scope, const py::object& slowdown,
                          const py::kwargs& unknown) {
                  refuse_unknown(unknown, "CauseSpec");
                  CauseSpec c;
                  take(share, c.share, "CauseSpec.share");
                  take_law(detect, c.detect, "CauseSpec.detect");
                  take(node_down, c.node_down, "CauseSpec.node_down");
                  take(nodes, c.nodes, "CauseSpec.nodes");
                  take(node_scope, c.node_scope, "CauseSpec.node_scope");
                  take(slowdown, c.slowdown, "CauseSpec.slowdown");
                  return c;
              }),
              py::kw_only(), py::arg("share") = py::none(), py::arg("detect") = py::none(),
              py::arg("node_down") = py::none(), py::arg("nodes") = py::none(),
              py::arg("node_scope") = py::none(), py::arg("slowdown") = py::none());
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
    // Every field by keyword (None: the default), converted in one call:
    // a run builds one per call, and a field at a time costs five times as much.
    fleet.def(py::init([](const py::object& nodes, const py::object& spares, const py::object& repair,
                          const py::object& node_failures, const py::object& node_failure_laws,
                          const py::object& lemon_fraction, const py::object& lemon_factor,
                          const py::object& stationary_start, const py::object& node_failure_times,
                          const py::object& node_failure_reported, const py::object& node_clock,
                          const py::object& rate_windows, const py::object& maintenance,
                          const py::object& repair_stages, const py::object& misdiagnosis,
                          const py::object& cold_spares, const py::object& cold_spare_delay,
                          const py::object& lend_spares, const py::object& storage_bandwidth,
                          const py::kwargs& unknown) {
                  refuse_unknown(unknown, "FleetSpec");
                  FleetSpec f;
                  take(nodes, f.nodes, "FleetSpec.nodes");
                  take(spares, f.spares, "FleetSpec.spares");
                  take_law(repair, f.repair, "FleetSpec.repair");
                  take_law(node_failures, f.node_failures, "FleetSpec.node_failures");
                  take_laws(node_failure_laws, f.node_failure_laws, "FleetSpec.node_failure_laws");
                  take(lemon_fraction, f.lemon_fraction, "FleetSpec.lemon_fraction");
                  take(lemon_factor, f.lemon_factor, "FleetSpec.lemon_factor");
                  take(stationary_start, f.stationary_start, "FleetSpec.stationary_start");
                  take(node_failure_times, f.node_failure_times, "FleetSpec.node_failure_times");
                  take_laws(node_failure_reported, f.node_failure_reported,
                            "FleetSpec.node_failure_reported");
                  take_enum(node_clock, f.node_clock, NodeClock::Busy, "FleetSpec.node_clock");
                  take(rate_windows, f.rate_windows, "FleetSpec.rate_windows");
                  take(maintenance, f.maintenance, "FleetSpec.maintenance");
                  take(repair_stages, f.repair_stages, "FleetSpec.repair_stages");
                  take(misdiagnosis, f.misdiagnosis, "FleetSpec.misdiagnosis");
                  take(cold_spares, f.cold_spares, "FleetSpec.cold_spares");
                  take_law(cold_spare_delay, f.cold_spare_delay, "FleetSpec.cold_spare_delay");
                  take(lend_spares, f.lend_spares, "FleetSpec.lend_spares");
                  take(storage_bandwidth, f.storage_bandwidth, "FleetSpec.storage_bandwidth");
                  return f;
              }),
              py::kw_only(), py::arg("nodes") = py::none(), py::arg("spares") = py::none(),
              py::arg("repair") = py::none(), py::arg("node_failures") = py::none(),
              py::arg("node_failure_laws") = py::none(), py::arg("lemon_fraction") = py::none(),
              py::arg("lemon_factor") = py::none(), py::arg("stationary_start") = py::none(),
              py::arg("node_failure_times") = py::none(), py::arg("node_failure_reported") = py::none(),
              py::arg("node_clock") = py::none(), py::arg("rate_windows") = py::none(),
              py::arg("maintenance") = py::none(), py::arg("repair_stages") = py::none(),
              py::arg("misdiagnosis") = py::none(), py::arg("cold_spares") = py::none(),
              py::arg("cold_spare_delay") = py::none(), py::arg("lend_spares") = py::none(),
              py::arg("storage_bandwidth") = py::none());
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
