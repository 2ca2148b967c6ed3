/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one reader of /proc/PID/stat: the file read, then parsed by
 * te_proc_stat_parse (core/hang/proctab.c, the pure part). The hang report's
 * collector and the container check's start-time look both call this. */
#include "config.h"

#include <stdio.h>

#include "hang/proctab.h"
#include "util/strutil.h"
#include "util/sysutil.h"

int te_proc_stat_read(int pid, struct te_proc *p)
{
	/* a stat line is some 300 bytes: its comm at most 64 */
	char path[64], buf[1024];

	if (pid <= 0 ||
	    te_snprintf(path, sizeof(path), "/proc/%d/stat", pid) < 0 ||
	    te_read_small(path, buf, sizeof(buf), 0) <= 0)
		return -1;
	return te_proc_stat_parse(buf, p);
}

int te_proc_start_time(int pid, uint64_t *start)
{
	struct te_proc p;

	if (te_proc_stat_read(pid, &p) < 0)
		return -1;
	*start = p.start;
	return 0;
}
