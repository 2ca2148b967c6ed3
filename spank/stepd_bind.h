/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Binding in slurmstepd: the step's topology and GPU map made once per
 * step (cached per boot), then each task bound before its exec (bind.h). */
#ifndef TE_BINDSTEP_H
#define TE_BINDSTEP_H

#include <stdint.h>

#include "bind/bind.h"
#include "settings/settings.h"

struct te_bindstep_out {
	char msg[TE_ERR_MAX]; /* error, or a warning when warn_only */
	int warn_only;
	char summary[512]; /* TRAINENV_BIND: "gpu=... numa=... cpus=..." */
	char visible[32];  /* CUDA_VISIBLE_DEVICES for bind-gpus=own */
	char verbose[768]; /* the line for bind=...,verbose */
};

/* Once per step, in slurmstepd before the tasks are forked. Never fails:
 * a problem is reported by every te_bindstep_task(). */
void te_bindstep_init(const struct te_config *cfg, uint32_t local_tasks,
		      const struct te_bind_gpu_env *step_env);

/* 1 when binding was asked for in this step. With --train-preflight and
 * no binding, te_bindstep_init() still computes the mapping ("map only":
 * mode none, and no topology at all when the step has no GPU here). */
int te_bindstep_active(void);

/* In the task: the rank's GPU for the pre-flight. 1 with its PCI bus id
 * ("0000:3b:00.0") in busid; 0 when the rank has no GPU (the step has
 * none on this node); -1 when it cannot be told (err says why). */
int te_bindstep_gpu(uint32_t local_id, const struct te_bind_gpu_env *task_env,
		    char *busid, size_t len, char *err, size_t errlen);

/* In the task, before exec: binds it. Returns 0 (out->msg may hold a
 * warning), or -1 with the reason in out->msg. */
int te_bindstep_task(uint32_t local_id, uint32_t global_id,
		     const struct te_bind_gpu_env *task_env, int own_gpus,
		     int verbose, struct te_bindstep_out *out);

#endif
