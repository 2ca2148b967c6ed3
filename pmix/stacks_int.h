/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-stacks, private: the node-side collector (stacks_node.c) and
 * the login-side merger (stacks.c) of the hang report. */
#ifndef TE_PMIX_STACKS_INT_H
#define TE_PMIX_STACKS_INT_H

/* Prints, as TE-STACK1 records on stdout, the stack of every rank of
 * job.step (of user uid) still running on this node (core/hang/stacks.h). 0,
 * or 1 with a line on stderr when it cannot look. */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int te_stacks_node(long job, long step, uid_t uid);

/* uid's processes of any step on this node (node: SLURMD_NODENAME, NULL:
 * any) into t, with what each one's parent is (a step's slurmstepd or
 * not: te_proc_pick_ranks takes only its children for tasks); how many.
 * A process counts when its real uid is uid (not only its /proc
 * directory's owner: root owns a non-dumpable process's). A task's
 * environment names its node (SLURMD_NODENAME, set by slurmd): where
 * nodes share a process table (containers, the test cluster) only this
 * node's count, and a process outside any task (no node) is not a rank. */
struct te_proc;
size_t te_stacks_scan(struct te_proc *t, size_t max, const char *node,
		      uid_t uid);

/* NCCL's view of the step on this node, before the stacks (stacks_nccl.c):
 * the flight recorder dumps of the k ranks r (into t) and, on the first
 * node of the collecting step, NCCL RAS's answer, sent as tagged records
 * (core/hang/stacks_nccl.h) within TE_HN_NODE_MS. */
struct te_rank_proc;
void te_stacks_nccl(long job, long step, uid_t uid, const struct te_proc *t,
		    const struct te_rank_proc *r, size_t k, unsigned tag);

/* --watch-workers: until the task (task_pid with its start time
 * task_start; 0: the first seen) is gone, or the first of the node's
 * torchrun workers of job.step ends (then said to srun). 0. */
int te_stacks_watch_workers(long job, long step, const char *node, int task_pid,
			    uint64_t task_start);

/* gdb's command line, run before gdb attaches, that turns the automatic
 * loading of libraries' symbols off and defines (stacks_pybt.c)
 * trainenv-load-stack-libs (the symbols of the libraries on the threads'
 * stacks), trainenv-py-bt-threads (trainenv-py-bt on the threads with a
 * Python frame) and trainenv-py-bt (py-bt, or where py-bt cannot read the
 * frames, Python 3.12+, the thread state's frame chain). 0, or -1 when buf
 * is too small (16 KiB is enough). */
#define TE_STACKS_GDB_CMD_MAX 16384
int te_stacks_gdb_command(char *buf, size_t len);

/* How long gdb may take for one process at least: each gets its share of
 * the node's time left (TE_STACKS_NODE_MS over the ranks still to take),
 * never less than this (a Python 3.14 py-bt took 9-14 s on a busy 2-CPU
 * node, with its debug symbols to read). */
#define TE_STACKS_GDB_MS 8000
/* How long one node may spend on gdb in all (the login side waits 90 s). */
#define TE_STACKS_NODE_MS 60000

#endif
