/* SPDX-License-Identifier: GPL-2.0-or-later */
/* First-failure report, the network halves: srun's listener
 * (srun_failrep_listen.c) and slurmstepd's one sender per step (stepd_failrep_send.c).
 * The line and the decisions about connections are core/report/failrep.h. */
#ifndef TE_FAILREP_NET_H
#define TE_FAILREP_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "report/failrep.h"

/* srun side (srun_failrep_listen.c). lo..hi: the ports to bind (SrunPortRange),
 * 0..0 for any. print_failures: print the failed tasks (failure-report=on;
 * else the reports only feed the exit watchdog, srun_exitwatch.h). finish waits
 * at most grace_ms for reports still on their way, whatever other users
 * do, then prints what is held. */
int te_failrep_listen(uint16_t lo, uint16_t hi, int print_failures,
		      char *envval, size_t envlen, char *err, size_t errlen);
void te_failrep_finish(int grace_ms);
/* After finish: how many tasks failed, and the first (when any). */
int te_failrep_failed(struct te_failrep *first);
/* Called on the listener's thread with each failed task's report as it
 * comes (at most one function; NULL: none). It must not block. */
void te_failrep_on_failure(void (*fn)(const struct te_failrep *r));
/* After finish: every failed task's report, as many as max (the listener
 * keeps the first TE_FAILREP_KEEP, printed or not); returns how many. */
#define TE_FAILREP_KEEP 1024
int te_failrep_list(struct te_failrep *out, int max);
/* After finish: 1 and the launch timeline when rank 0's helper sent it
 * (the step's record asked for it), else 0. */
int te_failrep_launch(struct te_launch_skew *launch, int64_t *at_ms);
/* The job prolog's verdicts slurmstepd sent (health lines), one per node,
 * at most TE_FAILREP_HEALTH_KEEP; valid once the listener has finished. */
#define TE_FAILREP_HEALTH_KEEP 16
int te_failrep_health(const struct te_failrep **health);
/* The step watch's last line (rank 0's heartbeat thread sent it), or NULL:
 * for the step's record. */
const char *te_failrep_steptime(void);

/* slurmstepd side (stepd_failrep_send.c): one sender per step. add never waits
 * on the network: the first call starts the step's sender process (as
 * uid/gid: the port comes from the job's environment) and every call hands
 * it one line without blocking. The sender spends at most
 * TE_FAILREP_BUDGET_MS on the network in all. finish closes its input and
 * waits at most wait_ms for it; returns how many reports were not
 * delivered (0: all were), with why in err. */
#define TE_FAILREP_BUDGET_MS 2000
#define TE_FAILREP_FINISH_MS 1500 /* finish waits for the sender */
int te_failrep_sender_add(const char *host, uint16_t port, const char *token,
			  const struct te_failrep *r, uid_t uid, gid_t gid,
			  char *err, size_t errlen);
int te_failrep_sender_finish(int wait_ms, char *err, size_t errlen);

#endif
