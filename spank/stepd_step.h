/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The slurmstepd side's shared state (stepd_step.c): the step's settings
 * and facts, the task's failure text, and the small helpers every stepd_*
 * file uses. slurmstepd.c calls the features, the features call this; it
 * calls none of them back. */
#ifndef TE_STEPD_STEP_H
#define TE_STEPD_STEP_H

#include <netinet/in.h>
#include <stdint.h>
#include <slurm/spank.h>

#include "bind/bind.h"
#include "report/failrep.h"
#include "launch/rdzv_proto.h"
#include "state.h"

/* Facts about the step, gathered once in user_init. */
struct te_step {
	int have;
	int batch;	      /* no ranks: batch script, extern
					   step, launcher_daemons */
	int launcher_daemons; /* srun --external-launcher */
	uint32_t job_id, step_id, nnodes, node_id, ntasks, local_tasks;
	int argc;
	char **argv;
	char master_addr[INET6_ADDRSTRLEN + 1];
	char master_note[TE_ERR_MAX]; /* why there is no address */
	char node[64];
	char slurm_node[64]; /* as in the step's node list: "" when
					   too long or odd */
	/* first-failure report */
	int report;
	uint16_t report_port;
	char report_host[INET6_ADDRSTRLEN + 1];
	char report_token[TE_FAILREP_TOKEN_LEN + 1];
	int report_health; /* srun reads health lines */
	int torchrun;	   /* this task is torchrun's agent */
	int64_t since_ms;  /* te_now_ms() when the plugin first
					   saw the step on this node */
};
extern struct te_step te_step;

/* Why the task fails (its stderr and the slurmd log). */
#define TE_STEPD_ERR_MAX (TE_RDZV_TEXT_MAX + 64)
extern char te_stepd_err[TE_STEPD_ERR_MAX];

/* Resolves te_plug.cfg from the node's policy, the options srun passed and
 * the job environment, once (again only while it has not succeeded nor
 * failed); a failure leaves its reason in te_stepd_err. */
void te_stepd_resolve(spank_t sp);
/* Fills te_step, once per step. */
void te_stepd_gather(spank_t sp);

/* The job's environment through spank_getenv, from a ring of buffers so
 * that a caller may hold a few values at once (a te_getenv_fn). */
const char *te_stepd_getenv(void *ctx, const char *name);
/* LIBDIR/file of what trainenv puts into the tasks (the NCCL shim, the
 * NCCL profiler plugin): the site's lib-dir, else the install's. 0 with
 * the path in out when it can be read; -1 when it cannot (errno says
 * why), -2 when the path does not fit in out. */
int te_stepd_lib_file(const char *file, char *out, size_t len);
/* The GPU lists Slurm gave the step (bufs hold the texts). */
void te_stepd_gpu_env(spank_t sp, struct te_bind_gpu_env *e,
		      char bufs[3][1024]);

/* env without SLURM_JOB_ID, SLURM_STEP_ID and TRAINENV_TASK, and without
 * the variables that start with also (NULL: none), whole however many it has
 * (an allocated array of env's strings: free the array only; NULL when
 * out of memory), for a process started beside a task that must not pass
 * for one of the step's ranks (stepd_watch.c, stepd_container.c). */
char **te_stepd_env_not_a_rank(char **env, const char *also);
/* Runs path with argv and env in a process of its own session, detached
 * (reparented at once: nobody reaps it), stdin and stdout /dev/null,
 * stderr the task's with keep_stderr (its lines are in srun's output)
 * else /dev/null, fd (-1: none) its descriptor 3 and no other. 0 once it
 * runs path, or -1 (errno) when it could not be forked or executed. The
 * one way the plugin starts a helper detached: the torchrun watcher
 * (stepd_watch.c), the container check and the barrier proxy
 * (stepd_container.c). */
int te_stepd_spawn_detached(const char *path, char *const argv[],
			    char *const env[], int fd, int keep_stderr);

#endif
