/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* First-failure report, the pure part: the wire line, its parser, the line
 * srun prints, and the decisions about srun's listener's connections. The
 * network halves are spank/srun_failrep_listen.c and spank/stepd_failrep_send.c
 * (failrep_net.h).
 *
 * slurmstepd tells srun which task failed, where, how and when; srun prints
 * one line per failed task and marks the first.
 *
 * srun (local_user_init) listens on a TCP port (inside SrunPortRange when
 * the site sets one) and puts the port and a random token into the job
 * environment (TRAINENV_REPORT). Its listener serves many connections at
 * once, each for a short while: other users' idle or garbage connections
 * are dropped or pushed out, and never delay srun's exit by more than the
 * grace its finish is given. When a task exits non-zero or by a signal,
 * slurmstepd (task_exit) only hands the line to the step's one sender
 * process (started at the first failure, as the job's user), which connects
 * to srun's address as slurmd saw it (SLURM_SRUN_COMM_HOST) without ever
 * blocking slurmstepd, within one budget for the whole step. Reports without
 * the token are dropped. A report that cannot be delivered is only logged on
 * the node: it never delays the step. */
#ifndef TE_FAILREP_H
#define TE_FAILREP_H

#include <stddef.h>
#include <stdint.h>

#include "launch/launch_timeline.h"

#define TE_FAILREP_ENV "TRAINENV_REPORT"
#define TE_FAILREP_TOKEN_LEN 32 /* hex characters */
#define TE_FAILREP_LINE_MAX 512
#define TE_FAILREP_PRINT_MAX 64	       /* lines printed before a summary */
#define TE_FAILREP_STALL_MAX 100000000 /* seconds a heartbeat may be old */
/* srun says which kinds of line beyond the first release's it reads: an
 * older srun refuses a line it does not know, so a newer slurmstepd sends
 * them only when told ("health": the job prolog's verdict on a node) */
#define TE_FAILREP_KINDS_ENV "TRAINENV_REPORT_KINDS"
#define TE_FAILREP_KIND_HEALTH "health"
/* "steptime": the step watch's line from rank 0's heartbeat thread */
#define TE_FAILREP_KIND_STEPTIME "steptime"
/* "straggler": one rank's window summary from trainenv's NCCL profiler
 * plugin (text: core/straggler/straggler.h's line, one rank) */
#define TE_FAILREP_KIND_STRAGGLER "straggler"
/* what this srun tells the nodes it reads */
#define TE_FAILREP_KINDS_READ "health,steptime,straggler"
#define TE_FAILREP_TEXT_MAX 240 /* a health line's reason */

struct te_failrep {
	uint32_t rank, local_rank;
	char node[64];
	int signaled;  /* 0: exit code in value */
	int stalled;   /* a rank's heartbeat stopped (value:
					   its age in seconds); not an exit */
	int ended;     /* a torchrun worker is gone (seen
					   from outside: no status) */
	int resumed;   /* workers back after their end (a
					   torchrun restart) */
	int health;    /* the job prolog's health checks left
					   the node out of the job: text says
					   why; not an exit */
	int steptime;  /* the step watch's verdict (text: its line,
					   core/straggler/steptime.h); not an
					   exit */
	int straggler; /* a rank's window of collective waits (text:
					   the straggler summary line); not
					   an exit */
	int launched;  /* the launch barrier passed (rank 0's
					   helper, for the step's record):
					   launch holds when each node came;
					   not an exit */
	struct te_launch_skew launch;
	int value;	 /* exit code or signal number */
	int core;	 /* core dumped */
	int by_trainenv; /* srun's side, not on the wire: it came
					   after trainenv began to end the step
					   (exit-grace or stall, exit-action
					   term or kill) */
	int64_t sec;	 /* wall clock at exit */
	uint32_t usec;
	char text[TE_FAILREP_TEXT_MAX + 1]; /* health, steptime, straggler:
					       printable ASCII */
};

/* Pure: the wire line and its parser (fuzzed), and the line srun prints. */
int te_failrep_format(char *buf, size_t len, const char *token,
		      const struct te_failrep *r);
int te_failrep_parse(const char *line, const char *token, struct te_failrep *r);
/* The line srun prints: "rank R (node N, local rank L) HOW at TIME", then
 * ": trainenv ended the step: ENDED_BY" when r->by_trainenv (ended_by:
 * why, or NULL), else ": the first failure of this step" when first. */
void te_failrep_describe(const struct te_failrep *r, int first,
			 const char *ended_by, char *buf, size_t len);
/* "PORT:TOKEN" from the environment value; 0 or -1. */
int te_failrep_env_parse(const char *env, uint16_t *port, char *token,
			 size_t toklen);
/* 1 when srun's TRAINENV_REPORT_KINDS value names KIND (a comma list). */
int te_failrep_kind_wanted(const char *env, const char *kind);

/* The state of one connection to srun's listener, and the pure decisions
 * about it (unit-tested): what its bytes say, when it has lived too long,
 * which slot a new connection takes. */
struct te_failrep_conn {
	int fd;	       /* -1: free slot */
	int authed;    /* a report with the token came */
	int64_t since; /* accepted at (monotonic ms) */
	size_t got;
	char buf[TE_FAILREP_LINE_MAX + 1];
};
#define TE_FAILREP_CONN_MS 1000	  /* a stranger's connection, at most */
#define TE_FAILREP_AUTHED_MS 5000 /* a sender's, at most */
typedef void (*te_failrep_report_fn)(const struct te_failrep *r, void *ctx);
/* After c->got grew: calls fn for each complete report line and keeps the
 * rest. Returns 0, or -1 when the connection must go: a line that is not a
 * report with the token, a NUL byte, or a line longer than the maximum. */
int te_failrep_conn_take(struct te_failrep_conn *c, const char *token,
			 te_failrep_report_fn fn, void *ctx);
int te_failrep_conn_expired(const struct te_failrep_conn *c, int64_t now);
/* The slot for a new connection: a free one, else the oldest that has not
 * shown the token (the caller closes it first); -1 when every slot holds a
 * sender that has (then the new one waits in the backlog). */
int te_failrep_conn_slot(const struct te_failrep_conn *t, int n);

/* Who started the step's report sender (spank/stepd_failrep_send.c). Under
 * contain_spank each task_exit may run in another clone of slurmstepd,
 * with its own descriptors: the sender's descriptor is only the starting
 * process's. A pid alone does not name that process (a clone that ended
 * and a later one of the same pid), so the owner is the pid with its
 * start time, and the descriptor is checked to be the sender's socket. */
struct te_failrep_owner {
	long pid;
	uint64_t start;	   /* field 22 of /proc/PID/stat; 0: unknown */
	uint64_t dev, ino; /* fstat of the descriptor; 0: none */
};
/* o for process pid and its descriptor fd (-1: none): 0, or -1 when the
 * start time cannot be read (o->start 0). */
int te_failrep_owner_of(struct te_failrep_owner *o, long pid, int fd);
/* 1 when now is the very process (pid and start time, known) that was,
 * and its descriptor the same socket; else 0. */
int te_failrep_owner_same(const struct te_failrep_owner *was,
			  const struct te_failrep_owner *now);

#endif
