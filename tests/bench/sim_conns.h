/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scale simulation's count of one process's connections
 * (sim_conns.c). */
#ifndef TE_SIM_CONNS_H
#define TE_SIM_CONNS_H

#include <sys/types.h>

struct sim_conns {
	int max_conns; /* most connections seen at once */
	int diag_ok;   /* listening sockets were taken out */
	unsigned long samples;
	unsigned long *ino; /* scratch: the socket inodes of a sample */
	int cap;
};

/* One look at pid's descriptors: the number of its sockets, or -1 when
 * it is gone; c->max_conns is raised to its connections (its sockets
 * less its listening ones) when that is a new maximum. */
int sim_conns_sample(struct sim_conns *c, pid_t pid);
void sim_conns_free(struct sim_conns *c);

#endif
