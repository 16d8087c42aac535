// Policy views and callbacks: what a Python failure policy and placement
// callback see, the callables wrapped for the core, and the policy spec
// (PolicySpec, QuarantineSpec) bound with named fields.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "acesim/simulator.hpp"
#include "inputs.hpp"
#include "nesting.hpp"
#include "pybind.hpp"

namespace acesim::bindings {
namespace {

/// A Python callable as the core's failure decision, its calls nested at
/// `depth` (nesting.hpp; set_policy sets it for the run). The core calls it
/// from worker threads without the GIL: it takes the GIL for the call, and
/// a Python exception travels back through the core as error_already_set.
struct PythonDecision {
    std::shared_ptr<py::object> callable;
    int depth = 1;

    std::int32_t operator()(const acesim_failure_view& view) const {
        py::gil_scoped_acquire gil;
        const CallbackDepth nested(depth);
        py::object result = (*callable)(view);
        if (result.is_none()) return ACESIM_DEFAULT;
        // An int, a Replacement or any integer type (a numpy integer), never a bool.
        PyObject* r = result.ptr();
        if (PyBool_Check(r) || !PyIndex_Check(r))
            throw py::type_error("on_failure must return an acesim.Replacement or None, got " +
                                 std::string(py::str(py::type::of(result).attr("__name__"))));
        const auto number = py::reinterpret_steal<py::object>(PyNumber_Index(r));
        if (!number) throw py::error_already_set();
        int overflow = 0;
        const long long choice = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
        if (overflow != 0 || choice < -1 || choice > 3)
            throw py::value_error("on_failure returned " + std::string(py::str(result)) +
                                  "; expected an acesim.Replacement or None");
        return static_cast<std::int32_t>(choice);
    }
};

/// A Python placement callable: place(view, free_nodes) -> node ids or
/// None (nested and called as PythonDecision).
struct PythonPlacement {
    std::shared_ptr<py::object> callable;
    int depth = 1;

    bool operator()(const PlacementView& view, const PlacementCandidates& candidates,
                    std::vector<std::uint32_t>& chosen) const {
        py::gil_scoped_acquire gil;
        const CallbackDepth nested(depth);
        const auto n = static_cast<py::ssize_t>(candidates.nodes.size());
        py::array_t<std::uint32_t> free_nodes(n, candidates.nodes.data());
        // The view the callback gets is its own copy (it may keep it), with
        // the candidates' observed history beside the ids.
        py::object v = py::cast(view);
        v.attr("node_failures") = py::array_t<std::uint32_t>(n, candidates.failures.data());
        v.attr("since_failure") = py::array_t<double>(n, candidates.since_failure.data());
        py::object result = (*callable)(v, free_nodes);
        if (result.is_none()) return false;
        try {
            chosen = result.cast<std::vector<std::uint32_t>>();
        } catch (const py::cast_error&) {
            throw py::type_error("place must return a sequence of node ids or None");
        }
        return true;
    }
};

/// The Python callable a callback field holds (None: none or not Python's).
template <class Wrapper, class Function>
py::object python_callable(const Function& f) {
    const auto* wrapper = f.template target<Wrapper>();
    return wrapper == nullptr ? py::object(py::none()) : *wrapper->callable;
}

/// A callback field set from Python: a callable or None.
template <class Wrapper, class Function>
void set_callable(Function& f, const py::object& callable, const char* field) {
    if (callable.is_none()) {
        f = nullptr;
        return;
    }
    if (!PyCallable_Check(callable.ptr()))
        throw py::type_error(std::string("PolicySpec.") + field + ": expected a callable or None, got " +
                             std::string(py::str(py::type::of(callable).attr("__name__"))));
    f = Wrapper{std::make_shared<py::object>(callable)};
}

}  // namespace

void set_policy(SimulationInput& in, const py::object& policy, int depth) {
    if (policy.is_none()) return;
    if (!py::isinstance<PolicySpec>(policy)) throw py::type_error("policy: expected a PolicySpec or None");
    in.policy = policy.cast<const PolicySpec&>();
    if (auto* f = in.policy.on_failure.target<PythonDecision>()) f->depth = depth;
    if (auto* f = in.policy.place.target<PythonPlacement>()) f->depth = depth;
}

void register_policy(py::module_& m) {
    // The read-only view a Python failure policy receives (same fields as the C ABI).
    py::class_<acesim_failure_view>(m, "FailureView",
                                    "What a failure policy sees of one failure (read-only; the fields "
                                    "of the C ABI's acesim_failure_view).")
        .def_readonly("time", &acesim_failure_view::time)
        .def_readonly("fault_time", &acesim_failure_view::fault_time)
        .def_readonly("progress", &acesim_failure_view::progress)
        .def_readonly("work", &acesim_failure_view::work)
        .def_readonly("lost_work", &acesim_failure_view::lost_work)
        .def_readonly("repair_remaining", &acesim_failure_view::repair_remaining)
        .def_readonly("replica", &acesim_failure_view::replica)
        .def_readonly("job", &acesim_failure_view::job)
        .def_readonly("gpus", &acesim_failure_view::gpus)
        .def_readonly("priority", &acesim_failure_view::priority)
        .def_readonly("failures", &acesim_failure_view::failures)
        .def_readonly("cause", &acesim_failure_view::cause)
        .def_readonly("nodes_held", &acesim_failure_view::nodes_held)
        .def_readonly("nodes_needed", &acesim_failure_view::nodes_needed)
        .def_readonly("free_nodes", &acesim_failure_view::free_nodes)
        .def_readonly("spare_nodes", &acesim_failure_view::spare_nodes)
        .def_readonly("down_nodes", &acesim_failure_view::down_nodes)
        .def_readonly("quarantined_nodes", &acesim_failure_view::quarantined_nodes)
        .def_readonly("preemptible_nodes", &acesim_failure_view::preemptible_nodes)
        .def("__repr__", [](const acesim_failure_view& v) {
            return "FailureView(time=" + std::to_string(v.time) + ", job=" + std::to_string(v.job) +
                   ", cause=" + std::to_string(v.cause) + ", nodes_needed=" + std::to_string(v.nodes_needed) +
                   ", spare_nodes=" + std::to_string(v.spare_nodes) +
                   ", free_nodes=" + std::to_string(v.free_nodes) + ")";
        });

    py::class_<PlacementView>(m, "PlacementView", py::dynamic_attr(),
                              "What a placement callback sees of one start: the job and, aligned with "
                              "the candidate nodes, their observed failures and the seconds since each "
                              "one's last.")
        .def_readonly("time", &PlacementView::time)
        .def_readonly("replica", &PlacementView::replica)
        .def_readonly("job", &PlacementView::job)
        .def_readonly("gpus", &PlacementView::gpus)
        .def_readonly("priority", &PlacementView::priority)
        .def_readonly("nodes_needed", &PlacementView::nodes_needed)
        .def_readonly("gpus_per_node", &PlacementView::gpus_per_node)
        .def_readonly("recovering", &PlacementView::recovering)
        .def("__repr__", [](const PlacementView& v) {
            return "PlacementView(time=" + std::to_string(v.time) + ", job=" + std::to_string(v.job) +
                   ", nodes_needed=" + std::to_string(v.nodes_needed) + ")";
        });

    py::enum_<Replacement>(m, "Replacement")
        .value("SPARES", Replacement::Spares)
        .value("WAIT_REPAIR", Replacement::WaitRepair)
        .value("PREEMPT_LOWER", Replacement::PreemptLower)
        .value("REQUEUE", Replacement::Requeue);
    py::enum_<Preemption>(m, "Preemption")
        .value("IMMEDIATE", Preemption::Immediate)
        .value("CHECKPOINT_AWARE", Preemption::CheckpointAware);
    py::enum_<Backfill>(m, "Backfill").value("EASY", Backfill::Easy).value("GREEDY", Backfill::Greedy);

    py::class_<QuarantineSpec> quarantine(
        m, "QuarantineSpec",
        "A node with `failures` failures within `window` s leaves service for `duration`.");
    def_keyword_init(quarantine);
    quarantine.def_readwrite("enabled", &QuarantineSpec::enabled)
        .def_readwrite("failures", &QuarantineSpec::failures)
        .def_readwrite("window", &QuarantineSpec::window)
        .def_readwrite("duration", &QuarantineSpec::duration);

    py::class_<PolicySpec> policy(m, "PolicySpec", "The core's recovery policy (PolicySpec), by field.");
    // Every field by keyword (None: the default), as FleetSpec's.
    policy.def(py::init([](const py::object& replacement, const py::object& preemption,
                           const py::object& preemption_grace, const py::object& quarantine,
                           const py::object& on_failure, const py::object& place, const py::object& compiled,
                           const py::object& compiled_user_data, const py::object& replacement_delay,
                           const py::object& backfill, const py::kwargs& unknown) {
                   refuse_unknown(unknown, "PolicySpec");
                   PolicySpec p;
                   take_enum(replacement, p.replacement, Replacement::Requeue, "PolicySpec.replacement");
                   take_enum(preemption, p.preemption, Preemption::CheckpointAware, "PolicySpec.preemption");
                   take(preemption_grace, p.preemption_grace, "PolicySpec.preemption_grace");
                   take(quarantine, p.quarantine, "PolicySpec.quarantine");
                   set_callable<PythonDecision>(p.on_failure, on_failure, "on_failure");
                   set_callable<PythonPlacement>(p.place, place, "place");
                   std::uintptr_t address = 0, data = 0;
                   take(compiled, address, "PolicySpec.compiled");
                   take(compiled_user_data, data, "PolicySpec.compiled_user_data");
                   p.compiled = reinterpret_cast<acesim_failure_policy_fn>(address);
                   p.compiled_user_data = reinterpret_cast<void*>(data);
                   take_law(replacement_delay, p.replacement_delay, "PolicySpec.replacement_delay");
                   take_enum(backfill, p.backfill, Backfill::Greedy, "PolicySpec.backfill");
                   return p;
               }),
               py::kw_only(), py::arg("replacement") = py::none(), py::arg("preemption") = py::none(),
               py::arg("preemption_grace") = py::none(), py::arg("quarantine") = py::none(),
               py::arg("on_failure") = py::none(), py::arg("place") = py::none(),
               py::arg("compiled") = py::none(), py::arg("compiled_user_data") = py::none(),
               py::arg("replacement_delay") = py::none(), py::arg("backfill") = py::none());
    def_enum(policy, "replacement", &PolicySpec::replacement, Replacement::Requeue);
    def_enum(policy, "preemption", &PolicySpec::preemption, Preemption::CheckpointAware);
    def_enum(policy, "backfill", &PolicySpec::backfill, Backfill::Greedy);
    def_law(policy, "replacement_delay", &PolicySpec::replacement_delay);
    policy.def_readwrite("preemption_grace", &PolicySpec::preemption_grace)
        .def_readwrite("quarantine", &PolicySpec::quarantine)
        .def_property(
            "on_failure", [](const PolicySpec& p) { return python_callable<PythonDecision>(p.on_failure); },
            [](PolicySpec& p, const py::object& f) {
                set_callable<PythonDecision>(p.on_failure, f, "on_failure");
            })
        .def_property(
            "place", [](const PolicySpec& p) { return python_callable<PythonPlacement>(p.place); },
            [](PolicySpec& p, const py::object& f) { set_callable<PythonPlacement>(p.place, f, "place"); })
        // A compiled decision (acesim.CompiledPolicy): its address and user data (0: none).
        .def_property(
            "compiled", [](const PolicySpec& p) { return reinterpret_cast<std::uintptr_t>(p.compiled); },
            [](PolicySpec& p, std::uintptr_t address) {
                p.compiled = reinterpret_cast<acesim_failure_policy_fn>(address);
            })
        .def_property(
            "compiled_user_data",
            [](const PolicySpec& p) { return reinterpret_cast<std::uintptr_t>(p.compiled_user_data); },
            [](PolicySpec& p, std::uintptr_t data) { p.compiled_user_data = reinterpret_cast<void*>(data); });
}

}  // namespace acesim::bindings
