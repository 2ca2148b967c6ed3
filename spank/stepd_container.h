/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: trainenv and container plugins (pyxis, Slurm's
 * OCI containers) (stepd_container.c). */
#ifndef TE_STEPD_CONTAINER_H
#define TE_STEPD_CONTAINER_H

#include <stdint.h>
#include <slurm/spank.h>

/* The task's mount namespace and root as Slurm made them (noted in
 * task_init_privileged), and task_init's check that no plugin listed
 * before trainenv (pyxis) has moved the task into a container since: 0,
 * or -1 with te_stepd_err saying to list trainenv first. */
void te_stepd_container_note(void);
int te_stepd_container_check(void);
/* pyxis will put the task in a container (its options or their
 * environment defaults); the node's first task then starts the check of
 * what the program sees (TE_CONTAINER_HELPER, detached). */
#define TE_CONTAINER_HELPER "trainenv-container"
int te_stepd_container_coming(spank_t sp);
/* Slurm's own OCI container runs the step (srun --container: srun exports
 * a non-empty SLURM_CONTAINER to its tasks). */
int te_stepd_oci_step(spank_t sp);
/* For a step pyxis runs in a container, with PMIx: starts this task's
 * barrier proxy (trainenv-container barrier-proxy, detached) joined to
 * the task by a socket whose end the task keeps across the container's
 * entry and its exec (TRAINENV_BARRIER_FD): trainenv-nccl.so and the
 * Python module in the container ask it for the job-wide barrier, which
 * it runs on the node (core/launch/barrier_proxy.h). 0, or -1 when it could not
 * be started (te_stepd_err says why; a warning already said when
 * !required). */
int te_stepd_container_proxy(spank_t sp, int required);
void te_stepd_container_watch(spank_t sp, uint32_t local_id,
			      uint32_t global_id);

#endif
