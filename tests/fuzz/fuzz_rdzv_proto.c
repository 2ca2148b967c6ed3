/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the helper's pipe output as the plugin reads it
 * (te_rdzv_parse). Built with ./configure --enable-fuzzers CC=clang. */
// FUZZ-SOURCES: core/launch/rdzv_proto.c core/launch/launch_timeline.c core/util/strutil.c core/settings/settings.c core/settings/value.c core/settings/policy.c core/settings/resolve.c|
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "launch/rdzv_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct te_rdzv_result r;
	static char buf[TE_RDZV_OUT_MAX + 64];
	char err[256];

	if (te_rdzv_parse((const char *)data, size, &r, err, sizeof(err)) == 0)
		te_rdzv_format(&r, buf, sizeof(buf));
	return 0;
}
