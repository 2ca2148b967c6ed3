/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: every line the barrier coordinator and its clients
 * read from the network or from PMIx peers (requests, replies, the
 * coordinator's address, versions, rank lists, hook values, a rank's
 * failure before the barrier and rank 0's abort report), what a node
 * makes of rank 0's checkpoint probe,
 * and the coordinator's early garbage check of a stranger's bytes. */
// FUZZ-SOURCES: core/launch/rdzv_core.c core/launch/rdzv_proto.c core/launch/launch_timeline.c core/launch/launch_verdict.c core/util/strutil.c core/settings/settings.c core/settings/value.c core/settings/policy.c core/settings/resolve.c|
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "launch/launch_verdict.h"
#include "launch/rdzv_core.h"
#include "launch/rdzv_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char line[4096];
	struct te_coord_req q;
	struct te_coord_reply r;
	struct te_coord_info ci;
	struct te_versions v;
	uint32_t ranks[64];
	char out[TE_COORD_LINE_MAX], buf[32];

	if (size >= sizeof(line))
		size = sizeof(line) - 1;
	memcpy(line, data, size);
	line[size] = '\0';
	if (te_coord_req_parse(line, "0123456789abcdef0123456789abcdef", 1000,
			       &q) == 0) {
		te_coord_req_format(out, sizeof(out),
				    "0123456789abcdef0123456789abcdef", &q);
		/* a line the coordinator takes is never dropped as garbage
		 * before it is whole */
		if (!te_coord_prefix_ok(line, strlen(line)))
			__builtin_trap();
		{
			struct te_ckpt_probe pr;
			char text[1024];

			te_ckpt_probe_parse(line, &pr, text, sizeof(text));
			te_ckpt_probe_content(line, q.host);
		}
	}
	te_coord_prefix_ok((const char *)data, size);
	if (te_coord_reply_parse(line, &r) == 0 && r.kind == TE_CR_ABORT)
		te_coord_reply_format(out, sizeof(out), r.kind, r.text);
	if (q.kind == TE_CQ_FAILED)
		te_failed_report(q.rank, q.host, q.why, out, sizeof(out));
	te_coord_info_parse(line, &ci);
	te_versions_parse(line, &v);
	te_rank_list_parse(line, 1000, ranks, 64);
	te_hook_value(line, "n1", buf, sizeof(buf));
	te_ifname_match(line, "eth0");
	return 0;
}
