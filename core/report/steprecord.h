/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv's record of one step, as JSON: the effective settings, the
 * first failure and how many tasks failed, and what the exit watchdog did
 * (the hang report's own JSON lies beside it). srun writes it at its end
 * into DIR/UID/JOBID/trainenv.STEP.json (DIR: --train-nccl-dump-dir, else
 * the site's record-dir; core/report/dumpdir.h); trainenv(8), FILES, documents
 * the fields. Pure. */
#ifndef TE_STEPRECORD_H
#define TE_STEPRECORD_H

#include <stddef.h>
#include <stdint.h>

#include "report/failrep.h"
#include "settings/settings.h"

struct te_step_record {
	uint32_t job, step;
	const struct te_config *cfg;
	int64_t start_sec, end_sec;	/* srun's wall clock */
	int64_t start_ms, end_ms;	/* the same in ms since the epoch (0:
				     unknown): "start_ms", "end_ms" */
	const struct te_failrep *first; /* NULL: no task failed */
	unsigned nfailed;
	const char *watchdog;	 /* why the hang report ran, or NULL */
	const char *hang_report; /* its JSON's file name, or NULL */
	/* when each node came to the launch barrier (rank 0's helper told
	 * srun), or NULL */
	const struct te_launch_skew *launch;
	int64_t launch_passed_ms; /* srun's wall clock (ms since the epoch)
				     when that came: the barrier passed; 0
				     unknown */
	/* the job prolog's verdicts on the step's nodes that slurmstepd
	 * told srun of (health lines), in the order they came */
	const struct te_failrep *health;
	unsigned nhealth;
	/* what srun decided at the step's end (--train-spares,
	 * --train-requeue): "relaunch", "relaunch-same" (on the same nodes,
	 * --train-transient), "requeue" or "stop", and its line;
	 * NULL: nothing to decide */
	const char *restart, *restart_why;
	/* Slurm's start of this run of the job, in seconds (0: unknown):
	 * "job_start", for the goodput's wall time */
	int64_t job_start_sec;
	/* at a restart verdict, the checkpoint directory (--train-checkpoint
	 * -dir, NULL: none) and its newest file's mtime in ms since the
	 * epoch (0: none there): "checkpoint":{"dir":..,"newest":S.mmm|null},
	 * for the training lost since it */
	const char *checkpoint_dir;
	int64_t checkpoint_ms;
	/* the step watch's last line (--train-step-watch), or NULL:
	 * "step_time" */
	const char *step_time;
	/* the stragglers' last line (--train-straggler), or NULL:
	 * "straggler" */
	const char *straggler;
	/* srun ended the step to leave this straggler out at a checkpoint
	 * (--train-straggler-exclude), or NULL:
	 * "straggler_excluded":{"node":..,"dir":..} */
	const char *strag_excluded;
	const char *strag_excluded_dir;
};

/* The record into buf; 0, or -1 when it does not fit (buf then holds
 * nothing usable). */
int te_step_record_json(char *buf, size_t len, const struct te_step_record *r);

/* "trainenv.STEP.json" and "trainenv.STEP.hang.json". */
void te_step_record_name(char *buf, size_t len, uint32_t step, int hang);
/* 1 when name is a step's record, "trainenv.STEP.json" with STEP digits
 * (the hang report's is not one). */
int te_step_record_is_name(const char *name);

#endif
