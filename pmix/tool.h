/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The trainenv tool's subcommands (pmix/tool*.c). */
#ifndef TE_TOOL_H
#define TE_TOOL_H

#include <stdint.h>

/* Each subcommand gets argv[0] = its own name; returns the exit status. */
int te_tool_barrier(int argc, char **argv);
int te_tool_env(int argc, char **argv);
int te_tool_health(int argc, char **argv);
int te_tool_nodes(int argc, char **argv);
int te_tool_record(int argc, char **argv);
int te_tool_stacks(int argc, char **argv);
int te_tool_version(int argc, char **argv);

/* trainenv health --drain (tool_health_drain.c): set failed; drains node
 * self (its Slurm or host name) when pol and the controller allow it,
 * saying what it did or why not in one line on stderr; sinfo and
 * scontrol from bin (the admin's --slurm-bin), NULL: Slurm's bindir
 * (/usr/bin, then /usr/local/bin), never PATH. 0, or -1 when
 * the controller could not be asked or the drain failed. */
struct te_health_set;
struct te_drain_policy;
/* The most the drain's controller calls take: sinfo twice and scontrol,
 * 10 s each. */
#define TE_DRAIN_SLURM_S 10
#define TE_DRAIN_CONTROLLER_S (3 * TE_DRAIN_SLURM_S)
/* slurmd kills HealthCheckProgram at 60 s; the checks' bound plus the
 * controller calls must end by this, leaving 5 s to start and print. */
#define TE_DRAIN_BUDGET_S 55
int te_health_drain(const struct te_health_set *set,
		    const struct te_drain_policy *pol, const char *self,
		    const char *bin);
/* The same for one failing result's line (the reason's text): 1 when the
 * node was drained, 0 when not (the switch, the cap, another's reason,
 * or its drain undone because nodes that failed at the same moment took
 * the cap first: said), -1 when the controller could not be asked or
 * refused. The cap is checked again after the drain only when that fits
 * before deadline_ms (te_now_ms()). */
int te_health_drain_line(const char *line, const struct te_drain_policy *pol,
			 const char *self, const char *bin,
			 int64_t deadline_ms);
/* The job prolog's note of this node's verdict in the job's AdminComment
 * (te_health_comment_compose): read, add, write, read again, as long as
 * each controller call fits before deadline_ms. 0 when the entry is there
 * (or was written and not yet seen again), -1 when it could not be
 * (said on stderr). */
int te_health_comment_job(const char *job, const char *node, const char *line,
			  const char *bin, int64_t deadline_ms);
/* te_now_ms() at the program's start (tool_health_drain.c). */
int64_t te_tool_start_ms(void);

#endif
