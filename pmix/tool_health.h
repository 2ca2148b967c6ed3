/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The node health checks as `trainenv health` and the job prolog's helper
 * (trainenv-health) run them: what they check on this node, and the one
 * call that runs them (tool_health.c). */
#ifndef TE_TOOL_HEALTH_H
#define TE_TOOL_HEALTH_H

#include <stddef.h>

#include "health/health.h"
#include "health/health_prolog.h"

#define GPUS_MAX 64

struct te_health_ctx {
	const char *root; /* the sysfs tree: "/sys" or a stand-in */
	const struct te_health_policy *pol;
	unsigned gpus[GPUS_MAX]; /* the job's GPUs (NVML indices) */
	int ngpus;		 /* 0: every GPU NVML shows */
	long allowed_uid;	 /* whose processes are the job's;
				  * TE_HEALTH_NO_JOB: none given */
	int drain;		 /* --drain */
	const char *node;	 /* --node: this node's Slurm name */
	const char *slurm_bin;	 /* --slurm-bin: sinfo's, scontrol's dir */
	struct te_drain_policy drain_pol;
};

/* Runs the checks c->pol names, each in its own child bounded by the
 * policy's health_timeout (te_health_run), into set (whose node is set).
 * 0, or -1 with err when none could be started. */
int te_health_checks_run(const struct te_health_ctx *c,
			 struct te_health_set *set, char *err, size_t errlen);

/* The job-side runs' node name (node_opt, else this host's) into node,
 * and c->root: "/sys", or the site's health_test_root for that node
 * (test_root; "" none) into root. 0, or -1 when it does not fit. */
int te_health_ctx_node(struct te_health_ctx *c, const char *node_opt,
		       const char *test_root, char *node, size_t nodelen,
		       char *root, size_t rootlen);

/* trainenv health --prolog (tool_health_prolog.c): the job prolog's
 * run; argv as te_tool_health's. */
int te_tool_health_prolog(int argc, char **argv);
/* trainenv-health --step (tool_health_step.c): the user's checks, as the
 * user, for a task of a step. */
int te_tool_health_step(int argc, char **argv);

#endif
