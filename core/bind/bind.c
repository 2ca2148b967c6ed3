/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bind: GPU/NUMA mapping of local ranks (policy documented in bind.h):
 * the names of the modes, notes, formats and applying a rank's binding.
 * The machine: bind_machine.c; the mapping: bind_compute.c. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bind/bind.h"
#include "bind/bind_int.h"
#include "bind/cpulist.h"

/* ------------------------------------------------------------------ names */

int te_bind_mode_parse(const char *s, enum te_bind_mode *out)
{
	if (!s || !out)
		return -1;
	if (!strcmp(s, "none"))
		*out = TE_BIND_MODE_NONE;
	else if (!strcmp(s, "numa"))
		*out = TE_BIND_MODE_NUMA;
	else if (!strcmp(s, "cores"))
		*out = TE_BIND_MODE_CORES;
	else
		return -1;
	return 0;
}

int te_bind_smt_parse(const char *s, enum te_bind_smt *out)
{
	if (!s || !out)
		return -1;
	if (!strcmp(s, "all"))
		*out = TE_BIND_SMT_ALL;
	else if (!strcmp(s, "one"))
		*out = TE_BIND_SMT_ONE;
	else
		return -1;
	return 0;
}

const char *te_bind_mode_name(enum te_bind_mode m)
{
	switch (m) {
	case TE_BIND_MODE_NONE:
		return "none";
	case TE_BIND_MODE_NUMA:
		return "numa";
	case TE_BIND_MODE_CORES:
		return "cores";
	}
	return "?";
}

const char *te_bind_smt_name(enum te_bind_smt s)
{
	switch (s) {
	case TE_BIND_SMT_ALL:
		return "all";
	case TE_BIND_SMT_ONE:
		return "one";
	}
	return "?";
}

/* ------------------------------------------------------------------ notes */

void te_bind_note_add(char *note, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(note, len);
	va_list ap;
	int w;

	if (len == 0 || used + 1 >= len)
		return;
	if (used) {
		w = snprintf(note + used, len - used, "; ");
		if (w < 0 || (size_t)w >= len - used)
			goto full;
		used += (size_t)w;
	}
	va_start(ap, fmt);
	w = vsnprintf(note + used, len - used, fmt, ap);
	va_end(ap);
	if (w >= 0 && (size_t)w < len - used)
		return;
full:
	if (len >= 4)
		memcpy(note + len - 4, "...", 4);
}

int te_bind_format_set(hwloc_const_bitmap_t set, char *buf, size_t buflen)
{
	int w;

	if (!buf || buflen == 0)
		return -1;
	buf[0] = '\0';
	if (!set || hwloc_bitmap_weight(set) < 0)
		return -1;
	w = hwloc_bitmap_list_snprintf(buf, buflen, set);
	if (w < 0 || (size_t)w >= buflen) {
		buf[0] = '\0';
		return -1;
	}
	return w;
}

const char *te_bind_set_str(hwloc_const_bitmap_t set, char *buf, size_t len)
{
	if (te_bind_format_set(set, buf, len) < 0 && len >= 4) {
		hwloc_bitmap_list_snprintf(buf, len, set);
		memcpy(buf + len - 4, "...", 4);
	}
	return buf;
}

/* ------------------------------------------------------------------ apply */

int te_bind_apply(hwloc_topology_t topo, const struct te_bind_rank *rank,
		  int restrict_mem, char *err, size_t errlen)
{
	char buf[128];

	if (!topo || !rank) {
		snprintf(err, errlen, "internal error: nothing to apply");
		return -1;
	}
	if (!rank->bind)
		return 0;
	if (!hwloc_topology_is_thissystem(topo)) {
		snprintf(err, errlen,
			 "the topology was not discovered on this "
			 "machine (loaded from XML?): refusing to bind");
		return -1;
	}
	if (!rank->cpuset || hwloc_bitmap_iszero(rank->cpuset)) {
		snprintf(err, errlen, "rank %u has no CPU to bind to",
			 rank->rank);
		return -1;
	}
	if (hwloc_set_cpubind(topo, rank->cpuset, HWLOC_CPUBIND_PROCESS)) {
		snprintf(err, errlen, "cannot bind rank %u to CPUs %s: %s",
			 rank->rank,
			 te_bind_set_str(rank->cpuset, buf, sizeof(buf)),
			 strerror(errno));
		return -1;
	}
	if (!restrict_mem || !rank->nodeset ||
	    hwloc_bitmap_iszero(rank->nodeset) ||
	    hwloc_bitmap_isincluded(hwloc_topology_get_allowed_nodeset(topo),
				    rank->nodeset))
		return 0;
	if (hwloc_set_membind(topo, rank->nodeset, HWLOC_MEMBIND_BIND,
			      HWLOC_MEMBIND_PROCESS |
				      HWLOC_MEMBIND_BYNODESET) == 0)
		return 0;
	/* Linux only has a per-thread policy; it is inherited by later
	 * threads and kept across execve, which is what is needed here. */
	if (errno == ENOSYS &&
	    hwloc_set_membind(topo, rank->nodeset, HWLOC_MEMBIND_BIND,
			      HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) ==
		    0)
		return 0;
	snprintf(err, errlen,
		 "CPUs bound, but cannot bind the memory of "
		 "rank %u to NUMA node(s) %s: %s",
		 rank->rank, te_bind_set_str(rank->nodeset, buf, sizeof(buf)),
		 strerror(errno));
	return 1;
}

/* ------------------------------------------------------------------ format */

int te_bind_format_rank(const struct te_bind_rank *rank, char *buf,
			size_t buflen)
{
	size_t used;
	int w;

	if (!buf || buflen == 0)
		return -1;
	buf[0] = '\0';
	if (!rank)
		return -1;
	w = snprintf(buf, buflen, "rank %u gpu %s numa ", rank->rank,
		     rank->gpu >= 0 ? rank->busid : "none");
	if (w < 0 || (size_t)w >= buflen)
		goto fail;
	used = (size_t)w;
	w = te_bind_format_set(rank->nodeset, buf + used, buflen - used);
	if (w < 0)
		goto fail;
	used += (size_t)w;
	w = snprintf(buf + used, buflen - used, " cpus ");
	if (w < 0 || (size_t)w >= buflen - used)
		goto fail;
	used += (size_t)w;
	w = te_bind_format_set(rank->cpuset, buf + used, buflen - used);
	if (w < 0)
		goto fail;
	used += (size_t)w;
	if (used > INT_MAX)
		goto fail;
	return (int)used;
fail:
	buf[0] = '\0';
	return -1;
}
