/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: what a launch-tree parent reads from a child (the
 * summary's grp, stor, miss and sum lines, one input line after another on one
 * connection), the process map from PMIx (Slurm's PMIX_ANL_MAP), and
 * rank 0's reports and verdict over what was merged: nothing read may
 * overrun a bound or make a report longer than its buffer. */
// FUZZ-SOURCES: core/launch/launch_tree.c core/launch/launch_tree_wire.c core/launch/launch_tree_report.c core/launch/launch_timeline.c core/launch/launch_verdict.c core/launch/rdzv_core.c core/health/health_storage.c core/health/health_result.c core/util/textbuf.c core/util/strutil.c|
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "launch/launch_tree.h"
#include "settings/settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char TOK[] = "0123456789abcdef0123456789abcdef";

static int host_cb(void *ctx, uint32_t rank, char *host, size_t len)
{
	(void)ctx;
	return rank % 3 ? (snprintf(host, len, "n%u", rank), 0) : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char in[8192];
	struct te_tree_sum pend, total;
	struct te_procmap m;
	struct te_launch_checks c = { .vcheck = TE_W_VCHECK_FAIL,
				      .ckpt = "/ck",
				      .rank0_host = "n0",
				      .storage_permille = 500 };
	char out[TE_COORD_TEXT_MAX + 1], wire[16384], *line, *save = NULL;
	uint32_t rank;

	if (size >= sizeof(in))
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	if (te_procmap_parse_anl(in, 64, &m) == 0) {
		uint32_t sub[64];

		te_tree_subtree_ranks(&m, 3, sub);
		te_procmap_node_of(&m, 63);
		te_procmap_free(&m);
	}
	if (te_procmap_parse_anl("(vector,(0,8,8))", 64, &m) < 0)
		return 0;
	te_tree_sum_init(&pend);
	te_tree_sum_init(&total);
	for (line = strtok_r(in, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (te_tree_line_parse(line, TOK, 64, 8, 1000, &pend, &rank) ==
		    TE_TL_SUM) {
			te_tree_sum_merge(&total, &pend);
			te_tree_sum_init(&pend);
		}
	}
	te_tree_sum_absent(&total, &m, 2, 1);
	te_tree_missing_text(&total, 64, &m, host_cb, NULL, out, sizeof(out));
	te_tree_verdict(&c, &total, out, sizeof(out));
	te_tree_sum_format(wire, sizeof(wire), TOK, 1, &total, 5000);
	te_procmap_free(&m);
	return 0;
}
