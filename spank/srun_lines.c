/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's recovery lines and node lists (srun_lines.h), shared by the
 * requeue (srun_recovery.c) and the relaunch (srun_relaunch.c). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurm_compat.h"

#include "report/recovery.h"
#include "srun_lines.h"
#include "state.h"
#include "util/strutil.h"

/* "n[1-2],n5" as "n1,n2,n5" (bounded; the compressed form when too long),
 * and how many nodes it names. */
uint32_t te_expand_nodes(const char *list, char *out, size_t len)
{
	te_hostlist_t hl;
	char *h;
	uint32_t n = 0;
	int fits = 1;

	out[0] = 0;
	if (!list || !list[0] || !(hl = slurm_hostlist_create(list)))
		return 0;
	while ((h = slurm_hostlist_shift(hl))) {
		if (fits && te_appendf(out, len, "%s%s", n ? "," : "", h) < 0)
			fits = 0;
		n++;
		free(h);
	}
	slurm_hostlist_destroy(hl);
	if (!fits)
		te_strlcpy(out, list, len);
	return n;
}

/* One line on srun's stderr (the job's output), in one write: srun's own
 * threads write there too. */
void te_recovery_say(const char *fmt, ...)
{
	char line[TE_RECOVERY_LINE_MAX + 64];
	va_list ap;
	int n;

	memcpy(line, TE_PREFIX, sizeof(TE_PREFIX));
	va_start(ap, fmt);
	n = vsnprintf(line + sizeof(TE_PREFIX) - 1,
		      sizeof(line) - sizeof(TE_PREFIX) - 1, fmt, ap);
	va_end(ap);
	(void)n;
	te_strlcpy(line + strlen(line), "\n", 2);
	if (write(STDERR_FILENO, line, strlen(line)) < 0)
		return;
}
