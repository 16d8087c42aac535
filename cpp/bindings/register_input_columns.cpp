// Input columns: the jobs as Python passes them (packed JobSpec rows, or a
// JobArray's columns read in place), their per-job options and time
// limits, each column by name.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "acesim/simulator.hpp"
#include "inputs.hpp"
#include "pybind.hpp"

namespace acesim::bindings {
namespace {

/// A JobArray's columns by name (see column_specs): numpy arrays, one
/// value per job, or for init, save and load the index every job shares.
struct JobColumnsArg {
    py::object gpus = py::none(), work = py::none(), checkpoint_interval = py::none(), rule = py::none(),
               init = py::none(), save = py::none(), load = py::none(), submit = py::none(),
               priority = py::none();
};

/// The per-job checkpoint levels and elastic options by name: persist
/// law per job (-1: none), first tier and tier count per job, the tiers,
/// min_gpus per job (0: not elastic), reconfigure law per job (-1: none),
/// scaling and checkpoint bytes per job.
struct JobOptionColumns {
    py::object persist = py::none(), tier_first = py::none(), tier_count = py::none();
    std::vector<CheckpointTierSpec> tiers;
    py::object min_gpus = py::none(), reconfigure = py::none(), scaling = py::none(),
               checkpoint_bytes = py::none();
};

/// Refuses a job column that is not one value per job.
void check_length(const py::array& column, std::size_t n, const char* name) {
    if (column.ndim() != 1 || static_cast<std::size_t>(column.shape(0)) != n)
        throw std::invalid_argument(std::string("jobs.") + name + ": expected " + std::to_string(n) +
                                    " values");
}

/// A column given by name, or an error naming it.
template <class T>
carray<T> column(const py::object& values, const char* name) {
    if (values.is_none()) throw std::invalid_argument(std::string("jobs.") + name + ": no column given");
    return values.cast<carray<T>>();
}

/// A column of one value per job, read in place through a JobField (byte
/// for byte: the buffer may be an offset view or arrive unaligned). The
/// reader holds a reference to the array.
template <class T>
class Column {
public:
    Column(const py::object& values, std::size_t n, const char* name)
        : array_(column<T>(values, name)),
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

/// An index (every job) or a sequence of indices (one per job); -1: none.
void set_failure_laws(SimulationInput& in, const py::object& laws) {
    if (py::isinstance<py::int_>(laws)) {
        in.job_failures = index_or_none(laws.cast<std::int64_t>());
        return;
    }
    for (std::int64_t law : laws.cast<std::vector<std::int64_t>>())
        in.job_failure_laws.push_back(index_or_none(law));
}

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

/// Column `values` of n values of T, to be read in place while `borrowed`
/// holds it.
template <class T>
const void* borrow(const py::object& values, std::size_t n, const char* name, Borrowed& borrowed) {
    auto array = column<T>(values, name);
    check_length(array, n, name);
    const void* data = static_cast<const py::array&>(array).data();
    borrowed.push_back(std::move(array));
    return data;
}

/// A law column of a JobArray: the index of the law every job shares (a
/// Python int: a JobArray has one law per field, and a column of the same
/// index would cost 4 bytes a job, 55 MB for 13.8M jobs; `shared` is set and
/// null returned), or one index per job (an array, read in place).
const void* borrow_law(const py::object& values, std::size_t n, const char* name, std::uint32_t& shared,
                       Borrowed& borrowed) {
    if (!py::isinstance<py::int_>(values)) return borrow<std::uint32_t>(values, n, name, borrowed);
    const auto index = values.cast<long long>();
    if (index < 0 || index > static_cast<long long>(std::numeric_limits<std::uint32_t>::max()))
        throw std::invalid_argument(std::string("jobs.") + name + ": a law index, got " +
                                    std::to_string(index));
    shared = static_cast<std::uint32_t>(index);
    return nullptr;
}

/// A JobArray's columns, read in place by the core (JobColumns) while
/// `borrowed` holds them.
JobTable column_specs(const JobColumnsArg& columns, Borrowed& borrowed) {
    JobColumns c;
    const std::size_t n = column<std::uint32_t>(columns.gpus, "gpus").size();
    c.size = n;
    c.gpus = borrow<std::uint32_t>(columns.gpus, n, "gpus", borrowed);
    c.work = borrow<double>(columns.work, n, "work", borrowed);
    c.checkpoint_interval = borrow<double>(columns.checkpoint_interval, n, "checkpoint_interval", borrowed);
    c.rule = borrow<std::uint32_t>(columns.rule, n, "rule", borrowed);
    c.init = borrow_law(columns.init, n, "init", c.shared_init, borrowed);
    c.save = borrow_law(columns.save, n, "save", c.shared_save, borrowed);
    c.load = borrow_law(columns.load, n, "load", c.shared_load, borrowed);
    c.submit = borrow<double>(columns.submit, n, "submit", borrowed);
    c.priority = borrow<std::int32_t>(columns.priority, n, "priority", borrowed);
    JobTable table(c);
    for (std::size_t j = 0; j < n; ++j) check_rule(table.rule_code(j));
    return table;
}

}  // namespace

SimulationInput job_input(const std::vector<Distribution>& distributions, const py::object& jobs,
                          const py::object& job_failures, const std::vector<CauseSpec>& causes,
                          Borrowed& borrowed) {
    SimulationInput in;
    in.distributions = distributions;
    if (py::isinstance<py::bytes>(jobs))
        in.jobs = packed_specs(jobs.cast<py::bytes>());
    else if (py::isinstance<JobColumnsArg>(jobs))
        in.jobs = column_specs(jobs.cast<const JobColumnsArg&>(), borrowed);
    else
        throw py::type_error("jobs: expected packed specs (bytes) or a JobColumns");
    set_failure_laws(in, job_failures);
    in.causes = causes;
    return in;
}

void set_job_options(SimulationInput& in, const py::object& options) {
    if (options.is_none()) return;
    if (!py::isinstance<JobOptionColumns>(options))
        throw py::type_error("job_options: expected a JobOptionColumns or None");
    const auto& t = options.cast<const JobOptionColumns&>();
    const std::size_t n = in.jobs.size();
    const Column<std::int64_t> persist(t.persist, n, "persist");
    const Column<std::uint32_t> first(t.tier_first, n, "tier_first");
    const Column<std::uint32_t> count(t.tier_count, n, "tier_count");
    const Column<std::uint32_t> min_gpus(t.min_gpus, n, "min_gpus");
    const Column<std::int64_t> reconfigure(t.reconfigure, n, "reconfigure");
    const Column<double> scaling(t.scaling, n, "scaling");
    const Column<double> bytes(t.checkpoint_bytes, n, "checkpoint_bytes");
    std::vector<JobOptions>& o = in.job_options;
    o.assign(n, JobOptions{});
    for (std::size_t j = 0; j < n; ++j) {
        o[j].persist = index_or_none(persist[j]);
        o[j].tier_first = first[j];
        o[j].tier_count = count[j];
        o[j].min_gpus = min_gpus[j];
        o[j].reconfigure = index_or_none(reconfigure[j]);
        o[j].scaling = scaling[j];
        o[j].checkpoint_bytes = bytes[j];
    }
    in.tiers = t.tiers;
}

void set_time_limits(SimulationInput& in, const py::object& time_limit) {
    if (time_limit.is_none()) return;
    in.time_limits = Column<double>(time_limit, in.jobs.size(), "time_limit").to_vector();
}

void register_input_columns(py::module_& m) {
    m.attr("JOB_SPEC_FORMAT") = kJobSpecFormat;

    py::class_<JobColumnsArg> columns(m, "JobColumns",
                                      "A JobArray's columns by name, read in place by the run (init, "
                                      "save and load: an index every job shares, or a column).");
    def_keyword_init(columns);
    columns.def_readwrite("gpus", &JobColumnsArg::gpus)
        .def_readwrite("work", &JobColumnsArg::work)
        .def_readwrite("checkpoint_interval", &JobColumnsArg::checkpoint_interval)
        .def_readwrite("rule", &JobColumnsArg::rule)
        .def_readwrite("init", &JobColumnsArg::init)
        .def_readwrite("save", &JobColumnsArg::save)
        .def_readwrite("load", &JobColumnsArg::load)
        .def_readwrite("submit", &JobColumnsArg::submit)
        .def_readwrite("priority", &JobColumnsArg::priority);

    py::class_<JobOptionColumns> options(m, "JobOptionColumns",
                                         "Per-job checkpoint levels and elastic options, by name.");
    def_keyword_init(options);
    options.def_readwrite("persist", &JobOptionColumns::persist)
        .def_readwrite("tier_first", &JobOptionColumns::tier_first)
        .def_readwrite("tier_count", &JobOptionColumns::tier_count)
        .def_readwrite("tiers", &JobOptionColumns::tiers)
        .def_readwrite("min_gpus", &JobOptionColumns::min_gpus)
        .def_readwrite("reconfigure", &JobOptionColumns::reconfigure)
        .def_readwrite("scaling", &JobOptionColumns::scaling)
        .def_readwrite("checkpoint_bytes", &JobOptionColumns::checkpoint_bytes);
}

}  // namespace acesim::bindings
