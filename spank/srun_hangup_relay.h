/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hang-up shield's relays (srun_hangup_relay.c). */
#ifndef TE_HANGUP_RELAY_H
#define TE_HANGUP_RELAY_H

#include "util/relaybuf.h"

/* Per relayed stream: enough to absorb bursts, small enough that a stalled
 * reader holds srun back soon. */
#define RELAY_CAP (256 * 1024)

struct te_hup_relay {
	int input; /* the terminal to srun's stdin (else srun's output) */
	int hold;  /* a re-executed srun's stderr until its plugin takes
			 * the real one back: kept, not written */
	int in;	   /* where it comes from, -1 when done */
	int out;   /* the destination, as srun had it */
	int wfd;   /* our own non-blocking descriptor for out, or -1 */
	int sock;  /* out is a socket: send() with MSG_DONTWAIT */
	int dead;  /* the destination failed: drop from now on */
	int full;  /* the last write would have blocked: wait for POLLOUT */
	struct te_relaybuf buf;
};

/* 1 when srun's fd is a terminal, pipe or socket: relayed. */
int te_hup_needs_relay(int fd);
/* From in (srun's pipe) to out, with RELAY_CAP bytes at mem. */
void te_hup_relay_open(struct te_hup_relay *r, int in, int out, char *mem);
/* Writes what it can without blocking (may_write: poll said out has room,
 * for a destination that could not be made non-blocking). */
void te_hup_relay_flush(struct te_hup_relay *r, int may_write);
/* Reads from in while there is room. */
void te_hup_relay_fill(struct te_hup_relay *r);
/* srun's stdin relay's end (see srun_hangup_relay.c). */
void te_hup_input_settle(struct te_hup_relay *r, int srun_gone);
/* The terminal tty, read for srun into to_srun, its stdin's pipe. */
void te_hup_input_open(struct te_hup_relay *r, int tty, int to_srun, char *mem);

#endif
