/* The slurmstepd side's shared state (private to slurmstepd.c and the
 * per-task features it calls): the step's facts, the task's failure text,
 * and the small helpers every feature uses.
 * SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TE_SLURMSTEPD_H
#define TE_SLURMSTEPD_H

#include <netinet/in.h>
#include <stdint.h>

#include "bind/bind.h"
#include "report/failrep.h"
#include "plugin.h"
#include "launch/rdzv_proto.h"

/* Facts about the step, gathered once in user_init. */
struct te_step {
	int have;
	int batch;			/* no ranks: batch script, extern
					   step, launcher_daemons */
	int launcher_daemons;		/* srun --external-launcher */
	uint32_t job_id, step_id, nnodes, node_id, ntasks, local_tasks;
	int argc;
	char **argv;
	char master_addr[INET6_ADDRSTRLEN + 1];
	char master_note[TE_ERR_MAX];	/* why there is no address */
	char node[64];
	char slurm_node[64];		/* as in the step's node list: "" when
					   too long or odd */
	/* first-failure report */
	int report;
	uint16_t report_port;
	char report_host[INET6_ADDRSTRLEN + 1];
	char report_token[TE_FAILREP_TOKEN_LEN + 1];
	int torchrun;			/* this task is torchrun's agent */
	int64_t since_ms;		/* te_now_ms() when the plugin first
					   saw the step on this node */
};
extern struct te_step te_step;

/* Why the task fails (its stderr and the slurmd log). */
#define TE_STEPD_ERR_MAX (TE_RDZV_TEXT_MAX + 64)
extern char te_stepd_err[TE_STEPD_ERR_MAX];

/* The job's environment through spank_getenv, from a ring of buffers so
 * that a caller may hold a few values at once (a te_getenv_fn). */
const char *te_stepd_getenv(void *ctx, const char *name);
/* The GPU lists Slurm gave the step (bufs hold the texts). */
void te_stepd_gpu_env(spank_t sp, struct te_bind_gpu_env *e,
		      char bufs[3][1024]);

/* stepd_watch.c: a torchrun task's worker watcher (--train-exit-grace). */
void te_stepd_watch_workers(spank_t sp);

/* env without SLURM_JOB_ID, SLURM_STEP_ID and TRAINENV_TASK, and without
 * the variables that start with also (NULL: none), whole however many it has
 * (an allocated array of env's strings: free the array only; NULL when
 * out of memory), for a process started beside a task that must not pass
 * for one of the step's ranks (stepd_watch.c). */
char **te_stepd_env_not_a_rank(char **env, const char *also);
/* Runs path with argv and env in a process of its own session, detached
 * (reparented at once: nobody reaps it), stdin and stdout /dev/null,
 * stderr the task's with keep_stderr (its lines are in srun's output)
 * else /dev/null, fd (-1: none) its descriptor 3 and no other. 0 once it
 * runs path, or -1 (errno) when it could not be forked or executed. */
int te_stepd_spawn_detached(const char *path, char *const argv[],
			    char *const env[], int fd, int keep_stderr);

/* stepd_preflight.c: --train-preflight for one task. 0, or -1 (the task
 * fails: line is its own error, why the others'), or -2 (the same, but
 * the check could not be started: not the node's fault). */
int te_stepd_preflight(spank_t sp, uint32_t local_id, uint32_t global_id,
		       char *line, size_t linelen, char *why, size_t whylen);

/* stepd_rdzv.c: the launch rendezvous for one task (1: rr holds the
 * result; 0: none for this step; -1: the task fails, te_stepd_err says
 * why), whether the step has a PMIx server, and the first-collective
 * barrier's preload. */
int te_stepd_has_pmix(spank_t sp);
int te_stepd_rendezvous(spank_t sp, uint32_t local_id, uint32_t global_id,
			struct te_rdzv_result *rr, int *quiet,
			const char *failed);
int te_stepd_preload_nccl_barrier(spank_t sp);
/* Set by te_stepd_rendezvous when this task's helper speaks another
 * protocol under the barrier: after saying why, the task ends the step
 * (te_stepd_end_step_now), so that the other nodes need not wait for the
 * barrier's deadline. */
extern int te_stepd_end_step;
void te_stepd_end_step_now(void);

/* stepd_container.c: the task's mount namespace and root as Slurm made
 * them (noted in task_init_privileged), and task_init's check that no
 * plugin listed before trainenv (pyxis) has moved the task into a
 * container since: 0, or -1 with te_stepd_err saying to list trainenv
 * first. */
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
