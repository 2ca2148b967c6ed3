/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the recovery decisions' inputs a user controls: the
 * progress guard's state file (its first line) and the excluded node list
 * and node name a requeue plan is built from. Beyond "no crash": a parsed
 * state formats back to the same line, and every plan line is bounded. */
// FUZZ-SOURCES: core/report/recovery.c core/util/strutil.c core/report/failrep.c core/launch/launch_timeline.c core/hang/proc_stat.c core/hang/proctab.c core/util/sysutil.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/recovery.h"
#include "util/strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct te_progress p, q;
	struct te_requeue_facts rf = { .batch = 1,
				       .requeue_allowed = 1,
				       .budget = 3,
				       .job_nodes = 2,
				       .partition_nodes = 8 };
	struct te_requeue_plan plan;
	struct te_fault fault = { .kind = TE_FAULT_NODE };
	struct te_failrep fails[2];
	struct te_fault_facts ff = { .fails = fails,
				     .nfails = 2,
				     .fault_signals = ~0ULL };
	char *copy, *nl, line[TE_PROGRESS_LINE_MAX];

	if (size > 8192)
		return 0;
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	if (te_progress_parse(copy, &p) == 0) {
		if (te_progress_format(&p, line, sizeof(line)) < 0 ||
		    te_progress_parse(line, &q) < 0 ||
		    memcmp(&p, &q, sizeof(p)))
			abort();
	}
	nl = strchr(copy, '\n');
	rf.excluded = nl ? nl + 1 : copy;
	rf.restarts = (uint32_t)size % 5;
	te_strlcpy(fault.node, copy, sizeof(fault.node));
	te_strlcpy(fault.why, rf.excluded, sizeof(fault.why));
	te_requeue_decide(&rf, &fault, &plan);
	if (strlen(plan.line) >= sizeof(plan.line) ||
	    strlen(plan.exclude) >= sizeof(plan.exclude))
		abort();
	memset(fails, 0, sizeof(fails));
	te_strlcpy(fails[0].node, copy, sizeof(fails[0].node));
	te_strlcpy(fails[1].node, rf.excluded, sizeof(fails[1].node));
	fails[0].signaled = 1;
	fails[0].value = (int)(size % 70);
	fails[1].value = TE_EXIT_NODE_FAULT;
	ff.lost_node = rf.excluded;
	te_fault_find(&ff, &fault);
	if (strlen(fault.why) >= sizeof(fault.why))
		abort();
	free(copy);
	return 0;
}
