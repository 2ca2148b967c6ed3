/* First-failure report: slurmstepd tells srun which task failed, where, how
 * and when; srun prints one line per failed task and marks the first.
 *
 * srun (local_user_init) listens on an ephemeral TCP port and puts the port
 * and a random token into the job environment (TRAINENV_REPORT). When a task
 * exits non-zero or by a signal, slurmstepd (task_exit) connects to srun's
 * address as slurmd saw it (SLURM_SRUN_COMM_HOST) with a short deadline and
 * sends one line. Reports without the token are dropped. A report that cannot
 * be delivered is only logged on the node: it never delays the step. */
#ifndef TE_FAILREP_H
#define TE_FAILREP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TE_FAILREP_ENV "TRAINENV_REPORT"
#define TE_FAILREP_TOKEN_LEN 32		/* hex characters */
#define TE_FAILREP_LINE_MAX 512
#define TE_FAILREP_PRINT_MAX 64		/* lines printed before a summary */

struct te_failrep {
	uint32_t rank, local_rank;
	char node[64];
	int signaled;			/* 0: exit code in value */
	int value;			/* exit code or signal number */
	int core;			/* core dumped */
	int64_t sec;			/* wall clock at exit */
	uint32_t usec;
};

/* Pure: the wire line and its parser (fuzzed), and the line srun prints. */
int te_failrep_format(char *buf, size_t len, const char *token,
		      const struct te_failrep *r);
int te_failrep_parse(const char *line, const char *token,
		     struct te_failrep *r);
void te_failrep_describe(const struct te_failrep *r, int first, char *buf,
			 size_t len);
/* "PORT:TOKEN" from the environment value; 0 or -1. */
int te_failrep_env_parse(const char *env, uint16_t *port, char *token,
			 size_t toklen);

/* srun side. */
int te_failrep_listen(char *envval, size_t envlen, char *err, size_t errlen);
void te_failrep_finish(int grace_ms);

/* slurmstepd side: sends one report to host:port, waiting at most
 * timeout_ms, from a child process running as uid/gid (the job's user:
 * the port comes from the job's environment). */
int te_failrep_send(const char *host, uint16_t port, const char *token,
		    const struct te_failrep *r, int timeout_ms, uid_t uid,
		    gid_t gid, char *err, size_t errlen);

#endif
