/* acesim compiled-policy ABI (C). A recovery policy compiled to native code
 * (Cython `cdef`, Numba `cfunc`, C, Rust, ...) is called by the simulator
 * without the GIL at every failure decision. Keep this header C-only and
 * append-only: fields are never reordered or removed. */
#ifndef ACESIM_POLICY_ABI_H
#define ACESIM_POLICY_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACESIM_POLICY_ABI_VERSION 1

/* Replacement decisions a policy returns (values of acesim.Replacement). */
#define ACESIM_DEFAULT (-1)      /* use the Policy's built-in replacement */
#define ACESIM_SPARES 0          /* take hot spares, then free nodes; wait otherwise */
#define ACESIM_WAIT_REPAIR 1     /* wait for the failed nodes to be repaired */
#define ACESIM_PREEMPT_LOWER 2   /* take nodes from lower-priority jobs */
#define ACESIM_REQUEUE 3         /* release every node and queue again */

/* Read-only view of one failure decision. Durations in seconds. */
typedef struct acesim_failure_view {
    double time;                  /* wall-clock time of the decision (detection) */
    double fault_time;            /* when the fault happened */
    double progress;              /* committed progress of the job (seconds of work) */
    double work;                  /* total work of the job */
    double lost_work;             /* compute rolled back by this failure */
    double repair_remaining;      /* until every failed node of the job is back (0: none down) */
    uint32_t replica;
    uint32_t job;                 /* job index */
    uint32_t gpus;
    int32_t priority;
    uint32_t failures;            /* failures of this job so far, this one included */
    int32_t cause;                /* cause index, -1 without a cause taxonomy */
    uint32_t nodes_held;          /* healthy nodes the job still holds */
    uint32_t nodes_needed;        /* nodes it must replace to restart */
    uint32_t free_nodes;          /* whole free nodes in the general pool */
    uint32_t spare_nodes;         /* hot spares available */
    uint32_t down_nodes;          /* nodes under repair in the fleet */
    uint32_t quarantined_nodes;   /* nodes in quarantine in the fleet */
    uint32_t preemptible_nodes;   /* nodes held by running lower-priority jobs */
    uint32_t reserved_;           /* padding; always 0 */
} acesim_failure_view;

/* A compiled failure policy: returns one of the ACESIM_* decisions. */
typedef int32_t (*acesim_failure_policy_fn)(const acesim_failure_view* view, void* user_data);

#ifdef __cplusplus
}
#endif

#endif /* ACESIM_POLICY_ABI_H */
