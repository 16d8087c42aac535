// Records and enums: the row types of a run's tables (numpy dtypes), what
// their rows cost, and the enums their columns hold.
#include <utility>

#include "acesim/records.hpp"
#include "acesim/simulator.hpp"
#include "inputs.hpp"
#include "pybind.hpp"

namespace acesim::bindings {

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

void register_records(py::module_& m) {
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
}

}  // namespace acesim::bindings
