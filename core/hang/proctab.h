/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv's view of a step's processes on one node, from /proc: the pure
 * part (parse a stat line, an environment block and slurmstepd's process
 * title, pick the process that stands for each rank) for the hang
 * report's node-side collector and the torchrun watcher, and the one
 * reader of /proc/PID/stat (core/hang/proc_stat.c). */
#ifndef TE_PROCTAB_H
#define TE_PROCTAB_H

#include <stddef.h>
#include <stdint.h>

#include "util/strutil.h"

#define TE_PROC_MAX 4096 /* processes of one step on one node */

struct te_proc {
	int pid, ppid;
	char state; /* R S D T Z ... from /proc/PID/stat */
	char comm[32];
	uint64_t cpu_ticks; /* utime + stime */
	uint64_t start;	    /* start time (clock ticks after boot): a pid
				   reused later has another */
	int is_python;	    /* its program is a python interpreter */
	long job, step;	    /* SLURM_JOB_ID, SLURM_STEP_ID; -1 unknown */
	long procid;	    /* SLURM_PROCID, -1 unknown */
	long rank;	    /* RANK (torchrun workers), -1 unknown */
	int elastic;	    /* TORCHELASTIC_RUN_ID is set: a worker */
	char node[64];	    /* SLURMD_NODENAME, "" unknown */
	int agent;	    /* a torchrun task (TRAINENV_LAUNCHER says so) */
	long world;	    /* WORLD_SIZE, -1 unknown */
	/* The parent as the scanner saw it: a task is a child of its step's
	 * slurmstepd; a process whose parent died (a data loader whose
	 * worker is gone) is adopted by init or a subreaper, and is none. */
	int parent_kind;	    /* TE_PARENT_* (0: unknown, as zeroed) */
	long stepd_job, stepd_step; /* TE_PARENT_STEPD: the step it runs */
};

#define TE_PARENT_UNKNOWN 0 /* not looked at, or not readable */
#define TE_PARENT_STEPD 1   /* a slurmstepd ("slurmstepd: [JOB.STEP]") */
#define TE_PARENT_OTHER 2   /* anything else (init, a shell, ...) */

/* The content of /proc/PID/stat into p (pid, comm, state, ppid, cpu);
 * 0, or -1 when it is not such a line. */
int te_proc_stat_parse(const char *line, struct te_proc *p);

/* Reads /proc/PID/stat and parses it (te_proc_stat_parse): 0, or -1 when
 * it cannot be read or parsed. The tree's one reader of that file
 * (core/hang/proc_stat.c). */
int te_proc_stat_read(int pid, struct te_proc *p);
/* A process's start time (clock ticks after boot): a pid and its start
 * time name one process, never a later one of the same pid. 0 or -1. */
int te_proc_start_time(int pid, uint64_t *start);

/* The NUL-separated environment block env[0..len) into p's job, step,
 * procid, rank, world, elastic and node (absent or malformed values stay
 * -1, 0 or ""). Without SLURM_JOB_ID, job, step, procid and node come from
 * TRAINENV_TASK ("JOB STEP PROCID NODE", all four or none). */
void te_proc_environ_parse(const char *env, size_t len, struct te_proc *p);

/* A process's environment read whole, however large (a task may have
 * 20,000 variables, megabytes), in pieces of any size: only the first
 * entry of each variable te_proc_environ_parse reads is kept, in out (a
 * block for it); entries longer than TE_ENV_PICK_ENTRY are none of them
 * (their values would not parse) and are skipped. */
#define TE_ENV_PICK_ENTRY 256
struct te_env_pick {
	char cur[TE_ENV_PICK_ENTRY];
	struct te_nul_entries split; /* the entry being read, in cur */
	unsigned seen;		     /* the variables kept (a bit each) */
	char out[16 * TE_ENV_PICK_ENTRY];
	size_t outlen;
};
void te_env_pick_init(struct te_env_pick *s);
void te_env_pick_feed(struct te_env_pick *s, const char *buf, size_t n);
/* The last entry, when the block did not end with its NUL. */
void te_env_pick_end(struct te_env_pick *s);

/* slurmstepd's process title, /proc/PID/cmdline cmd[0..len): 0 with its
 * job and step when it is "slurmstepd: [JOB.STEP]" (a numbered step),
 * else -1 (another program, the batch or extern step). */
int te_proc_stepd_title(const char *cmd, size_t len, long *job, long *step);

/* 1 when a program's path names a Python interpreter ("python3.11",
 * ".../python3", "python"). */
int te_proc_is_python(const char *exe);

/* What stands for one rank in the report. */
struct te_rank_proc {
	long rank; /* the job-wide rank */
	int idx;   /* into the table */
};

/* From the n processes of the node (any user's step mixed in), the ones of
 * job.step that stand for ranks: under a torchrun task its workers (each
 * with its RANK, not their own children; an agent without workers is no
 * rank); else for each task the shallowest Python process of its tree
 * (the task itself first), or the task when none runs Python. A task is
 * a process of the step whose parent is not of the step and is the step's
 * slurmstepd (or unknown): an orphan adopted by init is none, nor is
 * anything under it. Processes are indexed by pid (O(n log n), 2,048 of
 * them in about a millisecond). Up to max, ordered by rank; returns how
 * many, or 0 when out of memory. */
size_t te_proc_pick_ranks(const struct te_proc *t, size_t n, long job,
			  long step, struct te_rank_proc *out, size_t max);

#endif
