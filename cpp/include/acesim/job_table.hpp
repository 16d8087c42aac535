// The jobs of a run as the core reads them (SimulationInput::jobs): rows
// it owns, or a caller's columns read where they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace acesim {

/// How a job's checkpoint interval is chosen.
enum class IntervalRule : std::uint32_t {
    Fixed = 0,     ///< JobSpec::checkpoint_interval seconds of compute
    Young = 1,     ///< sqrt(2 C M) with C the mean save, M the job's mean time to failure
    Daly = 2,      ///< Daly's higher-order interval
    Adaptive = 3,  ///< Young's interval for an online MTBF estimate, updated at every start
};

/// A job as the core sees it; distributions are indices into
/// SimulationInput::distributions (shared by many jobs).
/// Doubles first, then the 4-byte fields: 48 bytes, without padding (a
/// month of a 1M-GPU fleet holds 13.8M of them).
struct JobSpec {
    double work = 0.0;                 ///< seconds of productive compute
    double checkpoint_interval = 0.0;  ///< seconds of compute between checkpoints (Fixed)
    double submit = 0.0;
    std::uint32_t gpus = 8;
    IntervalRule rule = IntervalRule::Fixed;
    std::uint32_t init = 0;  ///< distribution index
    std::uint32_t save = 0;
    std::uint32_t load = 0;
    std::int32_t priority = 0;
};
static_assert(sizeof(JobSpec) == 48, "JobSpec has no padding");

/// Where one JobSpec field of every job lies: job j's value is the
/// sizeof(T) bytes at base + j * stride. A column has stride sizeof(T), a
/// field of owned rows sizeof(JobSpec), and a value shared by every job
/// stride 0. Read byte for byte: a caller's column may be unaligned (an
/// array unpickled on a Dask worker), where reading it through a T* would
/// be undefined behaviour; on the platforms built for it is one load.
template <class T>
struct JobField {
    const unsigned char* base = nullptr;
    std::size_t stride = 0;

    T operator[](std::size_t j) const {
        T value;
        std::memcpy(&value, base + j * stride, sizeof(T));
        return value;
    }
};

/// A caller's columns, one value per job (a JobArray's), read in place:
/// a copy would touch as much memory again (83 MB for a fleet month's 1.7M
/// jobs, 660 MB at 1M GPUs). The caller keeps them alive and unchanged
/// while a run reads them. A law column may be one shared index instead.
struct JobColumns {
    std::size_t size = 0;
    const void* work = nullptr;  ///< double
    const void* checkpoint_interval = nullptr;
    const void* submit = nullptr;
    const void* gpus = nullptr;      ///< uint32
    const void* rule = nullptr;      ///< uint32 (IntervalRule)
    const void* priority = nullptr;  ///< int32
    /// uint32 law indices, or null: every job's is the shared one.
    const void* init = nullptr;
    const void* save = nullptr;
    const void* load = nullptr;
    std::uint32_t shared_init = 0;
    std::uint32_t shared_save = 0;
    std::uint32_t shared_load = 0;
};

/// Every job's JobSpec, read field by field from rows this table owns (a
/// list of jobs packed one after another, a FleetModel's submissions) or
/// from a caller's columns (JobColumns); both read the same way, through a
/// base and a stride per field.
class JobTable {
public:
    JobTable() { repoint(); }
    explicit JobTable(std::vector<JobSpec> rows) : rows_(std::move(rows)) { repoint(); }
    explicit JobTable(const JobColumns& columns) : columns_(columns), borrowed_(true) { repoint(); }
    // A copy or a move reads the same jobs through its own fields: owned
    // rows are its own, and a shared law index lives in its columns_.
    JobTable(const JobTable& other)
        : rows_(other.rows_), columns_(other.columns_), borrowed_(other.borrowed_) {
        repoint();
    }
    JobTable(JobTable&& other) noexcept
        : rows_(std::move(other.rows_)), columns_(other.columns_), borrowed_(other.borrowed_) {
        repoint();
        other.rows_.clear();
        other.repoint();
    }
    JobTable& operator=(JobTable other) noexcept {
        rows_.swap(other.rows_);
        columns_ = other.columns_;
        borrowed_ = other.borrowed_;
        repoint();
        return *this;
    }
    ~JobTable() = default;

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

    /// Job j's spec, assembled from its fields (where the call is inlined,
    /// only the fields read are loaded).
    JobSpec operator[](std::size_t j) const {
        JobSpec s;
        s.work = work_[j];
        s.checkpoint_interval = interval_[j];
        s.submit = submit_[j];
        s.gpus = gpus_[j];
        s.rule = static_cast<IntervalRule>(rule_[j]);
        s.init = init_[j];
        s.save = save_[j];
        s.load = load_[j];
        s.priority = priority_[j];
        return s;
    }
    /// Job j's rule as stored (a caller's column is checked before a run).
    std::uint32_t rule_code(std::size_t j) const { return rule_[j]; }

    /// Appends a job (owned rows only: a FleetModel's submission).
    void push_back(const JobSpec& spec) {
        require_owned();
        rows_.push_back(spec);
        repoint();
    }
    /// Drops the last job appended (a submission refused).
    void pop_back() {
        require_owned();
        rows_.pop_back();
        repoint();
    }

private:
    template <class T>
    static void point(JobField<T>& f, const void* base, std::size_t stride) {
        f.base = static_cast<const unsigned char*>(base);
        f.stride = stride;
    }
    /// A law's column, or (null) the index every job shares: stride 0.
    static void law(JobField<std::uint32_t>& f, const void* column, const std::uint32_t& shared) {
        if (column != nullptr)
            point(f, column, sizeof(std::uint32_t));
        else
            point(f, &shared, 0);
    }
    void require_owned() const {
        if (borrowed_) throw std::logic_error("JobTable: a caller's columns cannot be appended to");
    }
    void repoint() {
        if (borrowed_) {
            const JobColumns& c = columns_;
            size_ = c.size;
            point(work_, c.work, sizeof(double));
            point(interval_, c.checkpoint_interval, sizeof(double));
            point(submit_, c.submit, sizeof(double));
            point(gpus_, c.gpus, sizeof(std::uint32_t));
            point(rule_, c.rule, sizeof(std::uint32_t));
            point(priority_, c.priority, sizeof(std::int32_t));
            law(init_, c.init, c.shared_init);
            law(save_, c.save, c.shared_save);
            law(load_, c.load, c.shared_load);
            return;
        }
        size_ = rows_.size();
        const auto* b = reinterpret_cast<const unsigned char*>(rows_.data());
        const std::size_t s = sizeof(JobSpec);
        point(work_, b + offsetof(JobSpec, work), s);
        point(interval_, b + offsetof(JobSpec, checkpoint_interval), s);
        point(submit_, b + offsetof(JobSpec, submit), s);
        point(gpus_, b + offsetof(JobSpec, gpus), s);
        point(rule_, b + offsetof(JobSpec, rule), s);
        point(init_, b + offsetof(JobSpec, init), s);
        point(save_, b + offsetof(JobSpec, save), s);
        point(load_, b + offsetof(JobSpec, load), s);
        point(priority_, b + offsetof(JobSpec, priority), s);
    }

    std::vector<JobSpec> rows_;
    JobColumns columns_{};  ///< borrowed_: the caller's columns (a shared law index lives here)
    bool borrowed_ = false;
    std::size_t size_ = 0;
    JobField<double> work_, interval_, submit_;
    JobField<std::uint32_t> gpus_, rule_, init_, save_, load_;
    JobField<std::int32_t> priority_;
};

}  // namespace acesim
