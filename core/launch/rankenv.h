/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rank environment of a task, computed from what Slurm knows about the
 * step. Pure functions: the plugin gathers the facts, these decide.
 *
 * Two launch styles:
 *  task      one Slurm task per rank (Megatron, Lightning, submitit, DDP):
 *            RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK,
 *            GROUP_RANK, MASTER_ADDR, MASTER_PORT
 *  torchrun  one launcher per node (torchrun, accelerate): the PET_*
 *            variables torchrun reads as defaults for its arguments, each
 *            Slurm task being one torchrun "node": PET_NNODES, PET_NODE_RANK,
 *            PET_NPROC_PER_NODE (when GPUs are known), PET_MASTER_ADDR,
 *            PET_MASTER_PORT, PET_RDZV_CONF (when a timeout is set).
 * Variables the user already set are never overwritten (the caller sets with
 * overwrite=0), except those an enclosing trainenv step set, which it names in
 * TRAINENV_RANK_VARS. */
#ifndef TE_RANKENV_H
#define TE_RANKENV_H

#include <stddef.h>
#include <stdint.h>

#define TE_RANKENV_MAX 12
#define TE_RANKENV_VALUE_MAX 256
#define TE_RANK_VARS_ENV "TRAINENV_RANK_VARS"
#define TE_LAUNCHER_ENV "TRAINENV_LAUNCHER"
/* "JOB STEP PROCID NODE": which task a process belongs to, for the hang
 * report, where Slurm's own variables do not reach (apptainer exec
 * --cleanenv keeps only trainenv's APPTAINERENV_ copies). */
#define TE_TASK_ENV "TRAINENV_TASK"
/* srun tells the step what kind it is: "external-launcher" for the daemons
 * of an MPI launcher (srun --external-launcher, Slurm 23.11+), whose tasks
 * are no ranks; unset for every other step. */
#define TE_STEP_KIND_ENV "TRAINENV_STEP_KIND"
#define TE_STEP_KIND_EXTERNAL "external-launcher"

enum te_launch {
	TE_LAUNCH_TASK,
	TE_LAUNCH_TORCHRUN
};

struct te_step_facts {
	uint32_t job_id, step_id;
	uint32_t nnodes, node_id;
	uint32_t ntasks;	      /* in the step */
	uint32_t local_tasks;	      /* on this node */
	uint32_t local_id, global_id; /* of this task */
	uint32_t gpus;		      /* GPUs of the step on this node */
	const char *master_addr;      /* address of rank 0's host */
	uint16_t master_port;
	uint64_t rdzv_timeout; /* seconds, 0: leave torchrun's */
};

struct te_envlist {
	int n;
	char name[TE_RANKENV_MAX][32];
	char value[TE_RANKENV_MAX][TE_RANKENV_VALUE_MAX];
};

/* 1 when argv is a per-node launcher: torchrun, python -m
 * torch.distributed.run|launch, accelerate launch. *what names it. */
int te_is_node_launcher(int argc, char *const *argv, const char **what);

/* Picks the launch style. setting_word is the launcher setting's word
 * (enum te_w_launcher in settings.h). why gets a short reason for
 * --train-explain. */
enum te_launch te_launcher_decide(int setting_word, int argc, char *const *argv,
				  uint32_t ntasks, uint32_t nnodes,
				  uint32_t gpus, char *why, size_t whylen);

/* MASTER_PORT without PMIx: the same on every rank of a step, different for
 * the steps of one job and spread over [lo, hi] by job id so that jobs
 * sharing a node rarely meet. Two steps collide only when
 * (job1 - job2) * 97 + (step1 - step2) is a multiple of the range size. */
uint16_t te_master_port(uint32_t job_id, uint32_t step_id, uint16_t lo,
			uint16_t hi);

/* The variables for one task. */
int te_rank_env(const struct te_step_facts *f, enum te_launch mode,
		struct te_envlist *out);

/* The first host of a Slurm host list ("n[01-03,7],gpu9" -> "n01").
 * Returns 0, or -1 for a malformed list or a too small buffer. */
int te_hostlist_first(const char *list, char *out, size_t outlen);

/* The number of entries of a device list such as CUDA_VISIBLE_DEVICES
 * ("0,1,2" -> 3); 0 for NULL, "" or "NoDevFiles"; -1 when malformed. */
int te_devlist_count(const char *list);

/* 1 when name is in the comma-separated list (TRAINENV_RANK_VARS). */
int te_name_in_list(const char *list, const char *name);

/* A list of the variables trainenv set together with what it set them to
 * (TRAINENV_HANG_VARS): "NAME=H,...", H the value's 32-bit FNV-1a in hex,
 * so that a step inside a step tells trainenv's value from one the job set
 * since. Appends name's entry to list (len bytes); -1 when it does not
 * fit (list unchanged). */
int te_owned_append(char *list, size_t len, const char *name,
		    const char *value);
/* 1 when list says trainenv set name to value: "NAME=H" with H value's
 * hash, or a bare "NAME" (a release before the hash: any value was
 * trainenv's); 0 otherwise (value NULL: unset since). */
int te_owned_is(const char *list, const char *name, const char *value);

#endif
