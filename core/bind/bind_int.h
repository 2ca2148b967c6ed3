/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bind's private header (core/bind*.c): helpers its parts share. */
#ifndef TE_BIND_INT_H
#define TE_BIND_INT_H

#include <stddef.h>

#include <hwloc.h>

#include "bind/bind.h"

/* Appends to a note, "; "-separated; a note that no longer fits ends with
 * "..." rather than being cut mid-word silently. */
__attribute__((format(printf, 3, 4))) void
te_bind_note_add(char *note, size_t len, const char *fmt, ...);
/* For messages only: a set as text, "..." when long. */
const char *te_bind_set_str(hwloc_const_bitmap_t set, char *buf, size_t len);

/* A set of CPUs that one or more ranks are placed in, before any split. */
struct te_bind_domain {
	hwloc_bitmap_t cpus; /* already intersected with the allowed CPUs */
	char note[TE_BIND_NOTE_LEN];
	size_t group; /* union-find parent, then group id */
};

/* Keeps, of every core that set touches, its lowest-numbered PU in set. */
void te_bind_smt_one(hwloc_topology_t topo, hwloc_bitmap_t set);
/* Cores mode (bind_cores.c): the domains that share CPUs form groups, and
 * each group's CPUs are split among its ranks. 0, or -1 out of memory. */
int te_bind_cores_mode(hwloc_topology_t topo, const struct te_bind_request *req,
		       struct te_bind_domain *dom, size_t ndom,
		       const size_t *rank_dom, struct te_bind_rank *ranks);

#endif
