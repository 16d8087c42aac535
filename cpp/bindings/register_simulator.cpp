#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "acesim/fleet_model.hpp"
#include "acesim/records.hpp"
#include "acesim/simulator.hpp"
#include "interruptible.hpp"
#include "nesting.hpp"
#include "pybind.hpp"

namespace acesim::bindings {
namespace {

template <class T>
using carray = py::array_t<T, py::array::c_style | py::array::forcecast>;

/// Refuses a job column that is not one value per job.
void check_length(const py::array& column, std::size_t n, const char* name) {
    if (column.ndim() != 1 || static_cast<std::size_t>(column.shape(0)) != n)
        throw std::invalid_argument(std::string("jobs.") + name + ": expected " + std::to_string(n) +
                                    " values");
}

/// A column of one value per job, read in place through a JobField (byte
/// for byte: the buffer may be an offset view or arrive unaligned). The
/// reader holds a reference to the array.
template <class T>
class Column {
public:
    Column(carray<T> a, std::size_t n, const char* name)
        : array_(std::move(a)),
          field_{static_cast<const unsigned char*>(static_cast<const py::array&>(array_).data()), sizeof(T)},
          n_(n) {
        check_length(array_, n, name);
    }

    T operator[](std::size_t j) const { return field_[j]; }

    /// Every value, as a vector.
    std::vector<T> to_vector() const {
        std::vector<T> out(n_);
        if (n_ > 0) std::memcpy(out.data(), field_.base, n_ * sizeof(T));
        return out;
    }

private:
    carray<T> array_;
    JobField<T> field_;
    std::size_t n_;
};

std::uint32_t index_or_none(std::int64_t i) {
    return i < 0 ? kNoDistribution : static_cast<std::uint32_t>(i);
}

/// Wraps a Python callable as the core's failure decision of a simulation
/// at nesting depth `depth` (nesting.hpp). The core calls it from worker
/// threads without the GIL: it takes the GIL for the call, and a Python
/// exception travels back through the core as error_already_set.
FailureDecision python_decision(py::object callable, int depth) {
    auto holder = std::make_shared<py::object>(std::move(callable));
    return [holder, depth](const acesim_failure_view& view) -> std::int32_t {
        py::gil_scoped_acquire gil;
        const CallbackDepth nested(depth);
        py::object result = (*holder)(view);
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
    };
}

/// An index (every job) or a sequence of indices (one per job); -1: none.
void set_failure_laws(SimulationInput& in, const py::object& laws) {
    if (py::isinstance<py::int_>(laws)) {
        in.job_failures = index_or_none(laws.cast<std::int64_t>());
        return;
    }
    for (std::int64_t law : laws.cast<std::vector<std::int64_t>>())
        in.job_failure_laws.push_back(index_or_none(law));
}

/// (share, detect law or -1, node_down, nodes, node scope, slowdown) per cause.
using CauseTuples = std::vector<std::tuple<double, std::int64_t, bool, std::uint32_t, bool, double>>;

/// JobSpec's bytes as Python's struct module packs them (native byte order,
/// standard sizes, no padding): work, checkpoint_interval, submit, gpus,
/// rule, init, save, load, priority.
constexpr const char* kJobSpecFormat = "=dddIIIIIi";
static_assert(offsetof(JobSpec, work) == 0 && offsetof(JobSpec, checkpoint_interval) == 8 &&
                  offsetof(JobSpec, submit) == 16 && offsetof(JobSpec, gpus) == 24 &&
                  offsetof(JobSpec, rule) == 28 && offsetof(JobSpec, init) == 32 &&
                  offsetof(JobSpec, save) == 36 && offsetof(JobSpec, load) == 40 &&
                  offsetof(JobSpec, priority) == 44,
              "kJobSpecFormat follows JobSpec's layout");

void check_rule(std::uint32_t rule) {
    if (rule > 3) throw std::invalid_argument("jobs.rule: unknown interval rule");
}

/// A list of Job objects, packed by Python one JobSpec after another
/// (kJobSpecFormat): copied as they are.
JobTable packed_specs(const py::bytes& packed) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(packed.ptr(), &data, &size) != 0) throw py::error_already_set();
    if (size % static_cast<Py_ssize_t>(sizeof(JobSpec)) != 0)
        throw std::invalid_argument("jobs: packed specs must be a whole number of " +
                                    std::to_string(sizeof(JobSpec)) + "-byte rows");
    std::vector<JobSpec> specs(static_cast<std::size_t>(size) / sizeof(JobSpec));
    if (!specs.empty()) std::memcpy(specs.data(), data, static_cast<std::size_t>(size));
    for (const JobSpec& spec : specs) check_rule(static_cast<std::uint32_t>(spec.rule));
    return JobTable(std::move(specs));
}

/// The arrays a run reads in place, held by the call that runs it (the
/// converted copy, where a column arrived in another dtype or layout).
using Borrowed = std::vector<py::object>;

/// Column `column` of n values of T, to be read in place while `borrowed`
/// holds it.
template <class T>
const void* borrow(const py::handle& column, std::size_t n, const char* name, Borrowed& borrowed) {
    auto array = column.cast<carray<T>>();
    check_length(array, n, name);
    const void* data = static_cast<const py::array&>(array).data();
    borrowed.push_back(std::move(array));
    return data;
}

/// A law column of a JobArray: the index of the law every job shares (a
/// Python int: a JobArray has one law per field, and a column of the same
/// index would cost 4 bytes a job, 55 MB for 13.8M jobs; `shared` is set and
/// null returned), or one index per job (an array, read in place).
const void* borrow_law(const py::handle& column, std::size_t n, const char* name, std::uint32_t& shared,
                       Borrowed& borrowed) {
    if (!py::isinstance<py::int_>(column)) return borrow<std::uint32_t>(column, n, name, borrowed);
    const auto index = column.cast<long long>();
    if (index < 0 || index > static_cast<long long>(std::numeric_limits<std::uint32_t>::max()))
        throw std::invalid_argument(std::string("jobs.") + name + ": a law index, got " +
                                    std::to_string(index));
    shared = static_cast<std::uint32_t>(index);
    return nullptr;
}

/// A JobArray's columns (gpus, work, checkpoint_interval, rule, init, save,
/// load, submit, priority), read in place by the core (JobColumns) while
/// `borrowed` holds them.
JobTable column_specs(const py::tuple& columns, Borrowed& borrowed) {
    if (columns.size() != 9) throw std::invalid_argument("jobs: expected 9 columns");
    JobColumns c;
    const auto n = static_cast<std::size_t>(py::len(columns[0]));
    c.size = n;
    c.gpus = borrow<std::uint32_t>(columns[0], n, "gpus", borrowed);
    c.work = borrow<double>(columns[1], n, "work", borrowed);
    c.checkpoint_interval = borrow<double>(columns[2], n, "checkpoint_interval", borrowed);
    c.rule = borrow<std::uint32_t>(columns[3], n, "rule", borrowed);
    c.init = borrow_law(columns[4], n, "init", c.shared_init, borrowed);
    c.save = borrow_law(columns[5], n, "save", c.shared_save, borrowed);
    c.load = borrow_law(columns[6], n, "load", c.shared_load, borrowed);
    c.submit = borrow<double>(columns[7], n, "submit", borrowed);
    c.priority = borrow<std::int32_t>(columns[8], n, "priority", borrowed);
    JobTable table(c);
    for (std::size_t j = 0; j < n; ++j) check_rule(table.rule_code(j));
    return table;
}

/// The jobs, their laws and the causes, as Python passes them: `jobs` is
/// packed specs (bytes) or a JobArray's columns (a tuple).
SimulationInput job_input(const std::vector<Distribution>& distributions, const py::object& jobs,
                          const py::object& job_failures, const CauseTuples& causes, Borrowed& borrowed) {
    SimulationInput in;
    in.distributions = distributions;
    if (py::isinstance<py::bytes>(jobs))
        in.jobs = packed_specs(jobs.cast<py::bytes>());
    else if (py::isinstance<py::tuple>(jobs))
        in.jobs = column_specs(jobs.cast<py::tuple>(), borrowed);
    else
        throw py::type_error("jobs: expected packed specs (bytes) or a tuple of columns");
    set_failure_laws(in, job_failures);
    for (const auto& [share, detect, node_down, nodes, node_scope, slowdown] : causes)
        in.causes.push_back(CauseSpec{share, index_or_none(detect), node_down, nodes, node_scope, slowdown});
    return in;
}

/// Asynchronous and tiered checkpoints and elastic jobs: (persist law per
/// job (-1: none), first tier per job, tier count per job, [(interval, save,
/// load, replication), ...], min_gpus per job (0: not elastic), reconfigure
/// law per job (-1: none), scaling per job, checkpoint bytes per job), or
/// None when no job has them.
void set_checkpoint_levels(SimulationInput& in, const py::object& levels) {
    if (levels.is_none()) return;
    auto t = levels.cast<py::tuple>();
    const auto persist = t[0].cast<carray<std::int64_t>>();
    const auto first = t[1].cast<carray<std::uint32_t>>();
    const auto count = t[2].cast<carray<std::uint32_t>>();
    const std::size_t n = in.jobs.size();
    const Column p(persist, n, "persist");
    const Column f(first, n, "tier_first");
    const Column c(count, n, "tier_count");
    std::vector<JobOptions>& o = in.job_options;
    o.assign(n, JobOptions{});
    for (std::size_t j = 0; j < n; ++j) {
        o[j].persist = index_or_none(p[j]);
        o[j].tier_first = f[j];
        o[j].tier_count = c[j];
    }
    for (const auto& [interval, save, load, replication] :
         t[3].cast<std::vector<std::tuple<double, std::uint32_t, std::uint32_t, std::uint32_t>>>())
        in.tiers.push_back(CheckpointTierSpec{interval, save, load, replication});
    const auto min_gpus = t[4].cast<carray<std::uint32_t>>();
    const auto reconfigure = t[5].cast<carray<std::int64_t>>();
    const auto scaling = t[6].cast<carray<double>>();
    const auto bytes = t[7].cast<carray<double>>();
    const Column by(bytes, n, "checkpoint_bytes");
    const Column mg(min_gpus, n, "min_gpus");
    const Column rc(reconfigure, n, "reconfigure");
    const Column sc(scaling, n, "scaling");
    for (std::size_t j = 0; j < n; ++j) {
        o[j].min_gpus = mg[j];
        o[j].reconfigure = index_or_none(rc[j]);
        o[j].scaling = sc[j];
        o[j].checkpoint_bytes = by[j];
    }
}

/// Wraps a Python placement callable: place(view, free_nodes) -> node ids
/// or None (a simulation's at nesting depth `depth`, as python_decision).
PlacementDecision python_placement(py::object callable, int depth) {
    auto holder = std::make_shared<py::object>(std::move(callable));
    return [holder, depth](const PlacementView& view, const PlacementCandidates& candidates,
                           std::vector<std::uint32_t>& chosen) -> bool {
        py::gil_scoped_acquire gil;
        const CallbackDepth nested(depth);
        const auto n = static_cast<py::ssize_t>(candidates.nodes.size());
        py::array_t<std::uint32_t> free_nodes(n, candidates.nodes.data());
        // The view the callback gets is its own copy (it may keep it), with
        // the candidates' observed history beside the ids.
        py::object v = py::cast(view);
        v.attr("node_failures") = py::array_t<std::uint32_t>(n, candidates.failures.data());
        v.attr("since_failure") = py::array_t<double>(n, candidates.since_failure.data());
        py::object result = (*holder)(v, free_nodes);
        if (result.is_none()) return false;
        try {
            chosen = result.cast<std::vector<std::uint32_t>>();
        } catch (const py::cast_error&) {
            throw py::type_error("place must return a sequence of node ids or None");
        }
        return true;
    };
}

/// The fleet from the dict of FleetSpec's fields Python builds (Fleet._core_spec), or None.
void set_fleet(SimulationInput& in, const py::object& fleet) {
    if (!fleet.is_none()) {
        // A dict of FleetSpec's fields by name (acesim.simulation builds it).
        auto d = fleet.cast<py::dict>();
        auto laws = [](py::handle v) {
            std::vector<std::uint32_t> out;
            for (std::int64_t law : v.cast<std::vector<std::int64_t>>()) out.push_back(index_or_none(law));
            return out;
        };
        FleetSpec& f = in.fleet;
        f.enabled = true;
        f.nodes = d["nodes"].cast<std::uint32_t>();
        f.spares = d["spares"].cast<std::uint32_t>();
        f.repair = index_or_none(d["repair"].cast<std::int64_t>());
        f.node_failures = index_or_none(d["node_failures"].cast<std::int64_t>());
        f.node_failure_laws = laws(d["node_failure_laws"]);
        f.lemon_fraction = d["lemon_fraction"].cast<double>();
        f.lemon_factor = d["lemon_factor"].cast<double>();
        f.stationary_start = d["stationary_start"].cast<bool>();
        if (!d["node_failure_reported"].is_none()) {
            f.node_failure_times = true;
            f.node_failure_reported = laws(d["node_failure_reported"]);
        }
        const auto clock = d["node_clock"].cast<std::uint32_t>();
        if (clock > 1) throw std::invalid_argument("fleet.node_clock: unknown clock");
        f.node_clock = static_cast<NodeClock>(clock);
        for (const auto& [start, end, factor] :
             d["rate_windows"].cast<std::vector<std::tuple<double, double, double>>>())
            f.rate_windows.push_back(RateWindow{start, end, factor});
        for (auto& [start, duration, nodes] :
             d["maintenance"].cast<std::vector<std::tuple<double, double, std::vector<std::uint32_t>>>>())
            f.maintenance.push_back(MaintenanceWindow{start, duration, std::move(nodes)});
        if (!d["repair_stages"].is_none()) {
            // A repair pipeline: [(duration law, escalate, fix), ...] and its misdiagnosis
            for (const auto& [law, escalate, fix] :
                 d["repair_stages"].cast<std::vector<std::tuple<std::int64_t, double, double>>>())
                f.repair_stages.push_back(RepairStageSpec{index_or_none(law), escalate, fix});
            f.misdiagnosis = d["misdiagnosis"].cast<double>();
        }
        f.cold_spares = d["cold_spares"].cast<std::uint32_t>();
        f.cold_spare_delay = index_or_none(d["cold_spare_delay"].cast<std::int64_t>());
        if (d.contains("lend_spares")) f.lend_spares = d["lend_spares"].cast<bool>();
        if (d.contains("storage_bandwidth") && !d["storage_bandwidth"].is_none())
            f.storage_bandwidth = d["storage_bandwidth"].cast<double>();
    }
}

/// The policy from the tuple Python builds (Policy._core_spec), or None,
/// for a simulation at nesting depth `depth` (its callbacks').
void set_policy(SimulationInput& in, const py::object& policy, int depth) {
    if (!policy.is_none()) {
        // (replacement, preemption, grace, quarantine or None, on_failure or None,
        //  compiled address, compiled user data, place or None,
        //  replacement_delay index or -1, backfill): Policy._core_spec builds it
        auto t = policy.cast<py::tuple>();
        PolicySpec& p = in.policy;
        p.replacement = static_cast<Replacement>(t[0].cast<std::uint32_t>());
        p.preemption = static_cast<Preemption>(t[1].cast<std::uint32_t>());
        p.preemption_grace = t[2].cast<double>();
        if (!t[3].is_none()) {
            auto q = t[3].cast<py::tuple>();
            p.quarantine =
                QuarantineSpec{true, q[0].cast<std::uint32_t>(), q[1].cast<double>(), q[2].cast<double>()};
        }
        if (!t[4].is_none()) p.on_failure = python_decision(t[4], depth);
        if (t.size() > 7 && !t[7].is_none()) p.place = python_placement(t[7], depth);
        if (t.size() > 8) p.replacement_delay = index_or_none(t[8].cast<std::int64_t>());
        if (t.size() > 9) {
            const auto backfill = t[9].cast<std::uint32_t>();
            if (backfill > 1) throw std::invalid_argument("policy.backfill: unknown backfill");
            p.backfill = static_cast<Backfill>(backfill);
        }
        const auto address = t[5].cast<std::uintptr_t>();
        if (address != 0) {
            p.compiled = reinterpret_cast<acesim_failure_policy_fn>(address);
            p.compiled_user_data = reinterpret_cast<void*>(t[6].cast<std::uintptr_t>());
        }
    }
}

/// A run's tables as numpy arrays, by name (what SimulationResult is built from).
py::dict output_tables(SimulationOutput&& out) {
    py::dict result;
    result["jobs"] = to_numpy(std::move(out.jobs));
    result["fleet"] = to_numpy(std::move(out.fleet));
    result["trace"] = to_numpy(std::move(out.trace));
    result["events"] = to_numpy(std::move(out.events));
    result["placements"] = to_numpy(std::move(out.placements));
    result["node_events"] = to_numpy(std::move(out.node_events));
    return result;
}

/// How many replicas of what, and with which limits: the options every run has.
void set_run_options(SimulationInput& in, std::uint32_t gpus_per_node, std::uint32_t replicas,
                     std::uint32_t first_replica, std::uint64_t seed, double horizon, unsigned threads,
                     std::uint64_t max_events, std::uint64_t max_stalled_failures) {
    in.gpus_per_node = gpus_per_node;
    in.replicas = replicas;
    in.first_replica = first_replica;
    in.seed = seed;
    in.horizon = horizon;
    in.threads = threads;
    in.max_events = max_events;
    in.max_stalled_failures = max_stalled_failures;
}

}  // namespace

void register_simulator(py::module_& m) {
    PYBIND11_NUMPY_DTYPE(JobRecord, replica, job, gpus, failures, preemptions, checkpoints, restarts,
                         priority, submit, end, wall, productive, wasted, ckpt_stall, overhead, detection,
                         queue_wait, recovery_wait, ettr, gpu_hours_lost, churn_gpu_hours, progress,
                         checkpoint_interval, mtbf, young_interval, daly_interval, expected_ettr,
                         expected_waste, completed, status, planned_interruptions, timeouts, lost_checkpoints,
                         tier_restores, narrow, contention, init, load, reconfigure);
    PYBIND11_NUMPY_DTYPE(
        FleetRecord, replica, jobs, jobs_completed, failures, node_failures, preemptions, checkpoints,
        quarantines, quarantined_nodes, spare_uses, events, makespan, ettr, gpu_hours, productive_gpu_hours,
        wasted_gpu_hours, ckpt_stall_gpu_hours, overhead_gpu_hours, detection_gpu_hours, queue_wait_gpu_hours,
        recovery_wait_gpu_hours, gpu_hours_lost, churn_gpu_hours, quarantined_node_hours, down_node_hours,
        planned_interruptions, maintenance_node_hours, retired_nodes, spare_idle_node_hours, cold_spare_uses,
        timeouts, narrow_gpu_hours, contention_gpu_hours, init_gpu_hours, load_gpu_hours,
        reconfigure_gpu_hours, heap_events);
    // The structs' padding members (pad_) are left out: the dtypes keep their
    // offsets and item sizes, with a gap where the padding is.
    PYBIND11_NUMPY_DTYPE(TraceRecord, replica, event, job, node, origin, cause, source, time, inter_failure);
    PYBIND11_NUMPY_DTYPE(EventRecord, replica, job, kind, other, time, progress);
    PYBIND11_NUMPY_DTYPE(PlacementRecord, replica, job, node, time);
    PYBIND11_NUMPY_DTYPE(NodeEventRecord, replica, node, kind, event, cause, time, until);
    // What a run's rows cost: a job row per replica x job, a fleet row and the
    // bookkeeping of one replica's output (Python sizes a run before it starts).
    m.attr("JOB_ROW_BYTES") = sizeof(JobRecord);
    m.attr("JOB_SPEC_FORMAT") = kJobSpecFormat;
    m.attr("REPLICA_BYTES") = sizeof(FleetRecord) + sizeof(SimulationOutput);

    py::enum_<IntervalRule>(m, "IntervalRule")
        .value("FIXED", IntervalRule::Fixed)
        .value("YOUNG", IntervalRule::Young)
        .value("DALY", IntervalRule::Daly)
        .value("ADAPTIVE", IntervalRule::Adaptive);

    py::enum_<EventKind>(m, "EventKind")
        .value("SUBMIT", EventKind::Submit)
        .value("START_BEGIN", EventKind::StartBegin)
        .value("COMPUTE_BEGIN", EventKind::ComputeBegin)
        .value("CHECKPOINT_BEGIN", EventKind::CheckpointBegin)
        .value("CHECKPOINT_END", EventKind::CheckpointEnd)
        .value("FAILURE", EventKind::Failure)
        .value("DETECTED", EventKind::Detected)
        .value("DONE", EventKind::Done)
        .value("HORIZON", EventKind::Horizon)
        .value("PREEMPTED", EventKind::Preempted)
        .value("WAITING", EventKind::Waiting)
        .value("MAINTENANCE", EventKind::Maintenance)
        .value("UNPLACEABLE", EventKind::Unplaceable)
        .value("TIME_LIMIT", EventKind::TimeLimit)
        .value("CHECKPOINT_DURABLE", EventKind::CheckpointDurable)
        .value("SHRINK", EventKind::Shrink)
        .value("GROW", EventKind::Grow);

    py::enum_<JobStatus>(m, "JobStatus")
        .value("DONE", JobStatus::Done)
        .value("RUNNING", JobStatus::Running)
        .value("QUEUED", JobStatus::Queued)
        .value("NOT_SUBMITTED", JobStatus::NotSubmitted)
        .value("UNPLACEABLE", JobStatus::Unplaceable);

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

    m.def(
        "simulate",
        [](const std::vector<Distribution>& distributions, const py::object& jobs, py::object job_failures,
           const CauseTuples& causes, py::object fleet, py::object policy, std::uint32_t gpus_per_node,
           std::uint32_t replicas, std::uint32_t first_replica, std::uint64_t seed, double horizon,
           bool record_events, bool check_invariants, unsigned threads, std::uint64_t max_events,
           py::object time_limit, py::object checkpoint_levels, std::uint64_t max_stalled_failures) {
            const int depth = nesting_depth("simulate");
            Borrowed borrowed;  // the JobArray's columns, read in place by the run
            SimulationInput in = job_input(distributions, jobs, job_failures, causes, borrowed);
            set_checkpoint_levels(in, checkpoint_levels);
            if (!time_limit.is_none()) {
                // One per job (inf: none).
                const auto limits = time_limit.cast<carray<double>>();
                in.time_limits = Column(limits, in.jobs.size(), "time_limit").to_vector();
            }
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
        py::arg("fleet"), py::arg("policy"), py::arg("gpus_per_node"), py::arg("replicas"),
        py::arg("first_replica"), py::arg("seed"), py::arg("horizon"), py::arg("record_events"),
        py::arg("check_invariants"), py::arg("threads"), py::arg("max_events"),
        py::arg("time_limit") = py::none(), py::arg("checkpoint_levels") = py::none(),
        py::arg("max_stalled_failures") = kDefaultMaxStalledFailures);

    m.def(
        "simulate_batch",
        [](const std::vector<Distribution>& distributions, const py::object& jobs, py::object job_failures,
           const CauseTuples& causes, std::uint32_t gpus_per_node, std::uint32_t replicas,
           std::uint32_t first_replica, std::uint64_t seed, double horizon, unsigned threads,
           std::uint64_t max_events, const std::string& device, py::object checkpoint_levels,
           std::uint64_t max_stalled_failures) {
            nesting_depth("batch_simulate");
            if (device != "cpu" && device != "cuda")
                throw std::invalid_argument("device must be 'cpu' or 'cuda', got '" + device + "'");
            Borrowed borrowed;  // the JobArray's columns, read in place by the run
            SimulationInput in = job_input(distributions, jobs, job_failures, causes, borrowed);
            set_checkpoint_levels(in, checkpoint_levels);
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
        py::arg("distributions"), py::arg("jobs"), py::arg("job_failures"), py::arg("causes"),
        py::arg("gpus_per_node"), py::arg("replicas"), py::arg("first_replica"), py::arg("seed"),
        py::arg("horizon"), py::arg("threads"), py::arg("max_events"), py::arg("device"),
        py::arg("checkpoint_levels") = py::none(),
        py::arg("max_stalled_failures") = kDefaultMaxStalledFailures);
    register_fleet_model(m);
}

void register_fleet_model(py::module_& m) {
    using Core = FleetModelCore;
    py::class_<Core>(m, "FleetModel")
        .def(py::init([](const std::vector<Distribution>& distributions, py::object fleet,
                         const CauseTuples& causes, std::int64_t job_failures, py::object policy,
                         std::uint32_t gpus_per_node, std::uint64_t seed, std::uint32_t replica,
                         double horizon, std::uint64_t max_events, bool check_invariants, bool record_events,
                         bool report_checkpoints, std::uint64_t max_stalled_failures) {
                 const int depth = nesting_depth("FleetModel");
                 SimulationInput in;
                 in.distributions = distributions;
                 in.job_failures = index_or_none(job_failures);
                 for (const auto& [share, detect, node_down, nodes, node_scope, slowdown] : causes)
                     in.causes.push_back(
                         CauseSpec{share, index_or_none(detect), node_down, nodes, node_scope, slowdown});
                 set_fleet(in, fleet);
                 set_policy(in, policy, depth);
                 set_run_options(in, gpus_per_node, 1, replica, seed, horizon, 1, max_events,
                                 max_stalled_failures);
                 in.check_invariants = check_invariants;
                 in.record_events = record_events;
                 return std::make_unique<Core>(std::move(in), report_checkpoints);
             }),
             py::arg("distributions"), py::arg("fleet"), py::arg("causes"), py::arg("job_failures"),
             py::arg("policy"), py::arg("gpus_per_node"), py::arg("seed"), py::arg("replica"),
             py::arg("horizon"), py::arg("max_events"), py::arg("check_invariants"), py::arg("record_events"),
             py::arg("report_checkpoints"), py::arg("max_stalled_failures") = kDefaultMaxStalledFailures)
        .def("add_distribution", &Core::add_distribution, py::arg("distribution"))
        .def(
            "submit",
            [](Core& c, std::uint32_t gpus, double work, double interval, std::uint32_t rule,
               std::uint32_t init, std::uint32_t save, std::uint32_t load, std::int32_t priority,
               std::int64_t persist,
               const std::vector<std::tuple<double, std::uint32_t, std::uint32_t, std::uint32_t>>& tiers,
               std::uint32_t min_gpus, std::int64_t reconfigure, double scaling, double checkpoint_bytes) {
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
                std::vector<CheckpointTierSpec> levels;
                for (const auto& [iv, sv, ld, rep] : tiers)
                    levels.push_back(CheckpointTierSpec{iv, sv, ld, rep});
                return c.submit(spec, options, levels);
            },
            py::arg("gpus"), py::arg("work"), py::arg("checkpoint_interval"), py::arg("rule"),
            py::arg("init"), py::arg("save"), py::arg("load"), py::arg("priority"), py::arg("persist"),
            py::arg("tiers"), py::arg("min_gpus"), py::arg("reconfigure"), py::arg("scaling"),
            py::arg("checkpoint_bytes"))
        .def("start", &Core::start, py::arg("job"), py::arg("nodes"))
        .def("can_start", &Core::can_start, py::arg("job"), py::arg("nodes"))
        .def("stop", &Core::stop, py::arg("job"), py::arg("for_job"))
        .def("resize", &Core::resize, py::arg("job"), py::arg("nodes"))
        .def(
            "advance",
            [](Core& c, double until) {
                py::list out;
                for (const ModelEvent& e : c.advance(until))
                    out.append(py::make_tuple(e.time, static_cast<std::uint32_t>(e.kind), e.job, e.cause,
                                              e.fault_time, e.nodes, e.progress, e.durable));
                return out;
            },
            py::arg("until"))
        .def_property_readonly("now", &Core::now)
        .def("peek", &Core::peek)
        .def_property_readonly("jobs", &Core::jobs)
        .def_property_readonly("nodes", &Core::nodes)
        .def("free_nodes", &Core::free_nodes)
        .def("spare_nodes", &Core::spare_nodes)
        .def("state", &Core::state, py::arg("job"))
        .def("nodes_of", &Core::nodes_of, py::arg("job"))
        .def_property_readonly("logged", &Core::logged)
        .def(
            "events_since", [](const Core& c, std::size_t first) { return to_numpy(c.events_since(first)); },
            py::arg("first"))
        .def("close", [](Core& c) { return output_tables(c.close()); });
}

}  // namespace acesim::bindings
