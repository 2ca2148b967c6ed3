/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One line to a TCP listener within a deadline: how a rank's stall
 * watchdog (libtrainenv) and the torchrun worker watcher (trainenv-stacks)
 * tell srun's report listener. Never used in slurmstepd (its own sender is
 * spank/stepd_failrep_send.c). */
#ifndef TE_SENDLINE_H
#define TE_SENDLINE_H

#include <stdint.h>

#include "report/failrep.h"

/* Connects to host:port (a numeric address: no name lookup, which has no
 * deadline) and writes line, all within ms milliseconds; 0, or -1 when it
 * could not. */
int te_send_line(const char *host, uint16_t port, const char *line, int ms);

/* r (its time stamped now) to srun's report listener, found in the job's
 * environment (TRAINENV_REPORT, SLURM_SRUN_COMM_HOST), within ms; 0, or -1
 * when there is no listener or the line could not go. */
int te_failrep_tell_srun(struct te_failrep *r, int ms);

#endif
