# cython: language_level=3
# Cython declarations of the acesim compiled-policy C ABI (acesim_policy.h,
# installed in the directory that acesim.get_include() returns).
#
#     from libc.stdint cimport int32_t, uintptr_t
#     from acesim.policy_abi cimport acesim_failure_view, ACESIM_SPARES, ACESIM_WAIT_REPAIR
#
#     cdef int32_t my_policy(const acesim_failure_view* v, void* user) noexcept nogil:
#         return ACESIM_SPARES if v.spare_nodes >= v.nodes_needed else ACESIM_WAIT_REPAIR
#
#     def address():
#         return <uintptr_t>&my_policy
#
# Build with include_dirs=[acesim.get_include()]. The policy runs without the
# GIL: it must be `noexcept nogil` and must not touch Python objects.
# Declarations only (no Python-level module): cimporting this file adds no
# runtime import. Keep in step with acesim_policy.h (in acesim.get_include()).

from libc.stdint cimport int32_t, uint32_t

cdef extern from "acesim_policy.h" nogil:
    enum:
        ACESIM_POLICY_ABI_VERSION

    # Replacement decisions a policy returns (values of acesim.Replacement).
    enum:
        ACESIM_DEFAULT          # -1: use the Policy's built-in replacement
        ACESIM_SPARES           # 0: take hot spares, then free nodes; wait otherwise
        ACESIM_WAIT_REPAIR      # 1: wait for the failed nodes to be repaired
        ACESIM_PREEMPT_LOWER    # 2: take nodes from lower-priority jobs
        ACESIM_REQUEUE          # 3: release every node and queue again

    # Read-only view of one failure decision. Durations in seconds.
    ctypedef struct acesim_failure_view:
        double time
        double fault_time
        double progress
        double work
        double lost_work
        double repair_remaining
        uint32_t replica
        uint32_t job
        uint32_t gpus
        int32_t priority
        uint32_t failures
        int32_t cause
        uint32_t nodes_held
        uint32_t nodes_needed
        uint32_t free_nodes
        uint32_t spare_nodes
        uint32_t down_nodes
        uint32_t quarantined_nodes
        uint32_t preemptible_nodes
        uint32_t reserved_

    ctypedef int32_t (*acesim_failure_policy_fn)(
        const acesim_failure_view* view, void* user_data) noexcept nogil
