/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: what trainenv-preflight writes on its pipe, as the
 * plugin reads it in the task (te_pf_parse), and the decisions and
 * messages made from an accepted result. */
// FUZZ-SOURCES: core/launch/preflight_proto.c core/util/strutil.c|
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "launch/preflight_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct te_pf_result r, back;
	static char buf[TE_PF_OUT_MAX + 64];
	struct te_pf_input in = { .rank = 3,
				  .local_id = 1,
				  .node = "n2",
				  .has_gpu = 1,
				  .verbose = 1 };
	struct te_pf_outcome o;
	char err[256];

	if (te_pf_parse((const char *)data, size, &r, err, sizeof(err)) < 0)
		return 0;
	/* what is accepted must be what the program could have written */
	if (te_pf_format(&r, buf, sizeof(buf)) == 0 &&
	    te_pf_parse(buf, strlen(buf), &back, err, sizeof(err)) < 0)
		abort();
	in.busid = r.gpu[0] ? r.gpu : "0000:3b:00.0";
	in.result = &r;
	te_pf_decide(&in, &o);
	if (memchr(o.line, '\n', strlen(o.line)) ||
	    strlen(o.line) >= sizeof(o.line))
		abort();
	return 0;
}
