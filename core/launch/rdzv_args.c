/* The trainenv-rdzv helper's command line, parsed into plain options.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>

#include "launch/launch_tree.h"
#include "launch/rdzv_args.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"

#define WEEK_S (7 * 86400)

static int num_arg(const char *s, uint64_t max, uint64_t *v)
{
	return s ? te_parse_u64(s, max, v) : -1;
}

/* "LO-HI", 1 <= LO <= HI <= 65535. 0 or -1. */
static int port_range_arg(const char *v, struct te_rdzv_opts *o)
{
	char lo[8], hi[8];
	const char *d = v ? strchr(v, '-') : NULL;
	uint64_t l, h;

	if (!d || (size_t)(d - v) >= sizeof(lo) || strlen(d + 1) >= sizeof(hi))
		return -1;
	memcpy(lo, v, (size_t)(d - v));
	lo[d - v] = '\0';
	te_strlcpy(hi, d + 1, sizeof(hi));
	if (te_parse_u64(lo, 65535, &l) < 0 ||
	    te_parse_u64(hi, 65535, &h) < 0 || !l || l > h)
		return -1;
	o->port_lo = (uint16_t)l;
	o->port_hi = (uint16_t)h;
	return 0;
}

static int vcheck_arg(const char *v, struct te_rdzv_opts *o)
{
	if (!v)
		return -1;
	if (!strcmp(v, "warn"))
		o->vcheck = TE_W_VCHECK_WARN;
	else if (!strcmp(v, "fail"))
		o->vcheck = TE_W_VCHECK_FAIL;
	else if (!strcmp(v, "off"))
		o->vcheck = TE_W_VCHECK_OFF;
	else
		return -1;
	return 0;
}

/* The option a with its value v (NULL: none left): 0 or -1. */
static int value_arg(const char *a, const char *v, struct te_rdzv_opts *o)
{
	uint64_t n;

	if (!strcmp(a, "--job") && num_arg(v, UINT32_MAX, &n) == 0)
		o->job = (unsigned long)n;
	else if (!strcmp(a, "--step") && num_arg(v, UINT32_MAX, &n) == 0)
		o->step = (unsigned long)n;
	else if (!strcmp(a, "--port-start") && num_arg(v, 65535, &n) == 0)
		o->port_start = (uint16_t)n;
	else if (!strcmp(a, "--port-range"))
		return port_range_arg(v, o);
	else if (!strcmp(a, "--barrier") && num_arg(v, WEEK_S, &n) == 0)
		o->barrier = (unsigned)n;
	else if (!strcmp(a, "--wait") && num_arg(v, WEEK_S, &n) == 0 && n > 0)
		o->wait = (unsigned)n;
	else if (!strcmp(a, "--tree-width") &&
		 num_arg(v, TE_TREE_WIDTH_MAX, &n) == 0 &&
		 n >= TE_TREE_WIDTH_MIN)
		o->tree_width = (unsigned)n;
	else if (!strcmp(a, "--version-check"))
		return vcheck_arg(v, o);
	else if (!strcmp(a, "--checkpoint-dir") && v && v[0] == '/')
		o->ckpt = v;
	else if (!strcmp(a, "--failed") && v && *v) {
		te_rdzv_clean_text(o->failed_text, sizeof(o->failed_text), v);
		o->failed = o->failed_text;
	} else
		return -1;
	return 0;
}

int te_rdzv_args_parse(int argc, char **argv, struct te_rdzv_opts *o,
		       char *err, size_t errlen)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->wait = 300;
	o->port_lo = 20000;
	o->port_hi = 29999;
	o->vcheck = TE_W_VCHECK_WARN;
	o->tree_width = TE_LAUNCH_TREE_WIDTH_DEFAULT;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--ifname"))
			o->ifname = 1;
		else if (!strcmp(a, "--test-hooks"))
			o->hooks = 1;
		else if (!strcmp(a, "--lead"))
			o->lead = 1;
		else if (!strcmp(a, "--record"))
			o->record = 1;
		else if (value_arg(a, v, o) < 0)
			return te_err(err, errlen, "bad argument '%.40s'", a);
		else
			i++;
	}
	return 0;
}
