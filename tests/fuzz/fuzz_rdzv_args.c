/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the rendezvous helper's command line and settings
 * (core/launch/rdzv_args.c), which any user can give trainenv-rdzv by
 * hand: the input's first line is its TRAINENV_SETTINGS, the rest is split
 * at newlines into at most 40 words, and whatever is taken reads back in
 * range. */
// FUZZ-SOURCES: core/launch/rdzv_args.c core/launch/rankenv.c core/launch/launch_timeline.c core/launch/launch_verdict.c core/launch/rdzv_core.c core/launch/rdzv_proto.c core/util/strutil.c core/settings/settings.c core/settings/value.c core/settings/policy.c core/settings/resolve.c|
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "launch/rdzv_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[4096];
	char *argv[42], *p, *enc, err[256];
	struct te_rdzv_opts o;
	int argc = 0;

	if (size >= sizeof(buf))
		size = sizeof(buf) - 1;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = (char *)"trainenv-rdzv";
	enc = buf;
	p = strchr(buf, '\n');
	if (p) {
		*p++ = '\0';
		while (argc < 41) {
			char *nl = strchr(p, '\n');

			argv[argc++] = p;
			if (!nl)
				break;
			*nl = '\0';
			p = nl + 1;
		}
	}
	argv[argc] = NULL;
	if (te_rdzv_args_parse(argc, argv, &o, err, sizeof(err)) == 0) {
		if (o.failed && strlen(o.failed) > TE_FAIL_TEXT_MAX)
			__builtin_trap();
		if (te_rdzv_opts_settings(&o, enc, err, sizeof(err)) == 0) {
			if (o.port_lo > o.port_hi || o.port_lo == 0 ||
			    o.port_start < o.port_lo ||
			    o.port_start > o.port_hi ||
			    o.vcheck < TE_W_VCHECK_WARN ||
			    o.vcheck > TE_W_VCHECK_OFF ||
			    o.barrier > te_setting_max(TE_S_BARRIER) ||
			    o.tree_width < 2 || o.tree_width > 1024 ||
			    (o.ckpt && o.ckpt[0] != '/'))
				__builtin_trap();
		} else if (!memchr(err, '\0', sizeof(err))) {
			__builtin_trap();
		}
	} else if (!memchr(err, '\0', sizeof(err))) {
		__builtin_trap();
	}
	return 0;
}
