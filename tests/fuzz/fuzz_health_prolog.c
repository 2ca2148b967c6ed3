/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the job prolog's parsers of hostile text
 * (core/health/health_prolog.c): the input's first line as the site's
 * health items, its second as a user's --train-health, merged; the rest
 * as a verdict file (which the step reads as root's, but decodes as if
 * anyone had written it). Beyond "no crash": every error is one bounded
 * line, a merge never weakens the site, a decoded verdict is printable. */
// FUZZ-MAX-LEN: 16384
// FUZZ-SOURCES: core/health/health_prolog.c core/health/health_policy.c core/health/health_storage.c core/health/health_xid.c core/health/health_drain.c core/health/health_hook.c core/health/health_result.c core/util/strutil.c core/util/sysutil.c core/util/textbuf.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "health/health_prolog.h"
#include "util/strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const char *err, size_t errlen)
{
	if (strlen(err) >= errlen || strchr(err, '\n'))
		abort();
}

static void printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			abort();
}

/* The next line of data into line (NUL-terminated, cut to size). */
static size_t take_line(const uint8_t *data, size_t size, size_t pos,
			char *line, size_t cap)
{
	size_t n = 0;

	while (pos < size && data[pos] != '\n') {
		if (n + 1 < cap)
			line[n++] = (char)data[pos];
		pos++;
	}
	line[n] = '\0';
	return pos < size ? pos + 1 : pos;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct te_health_policy site, user, merged;
	static char site_items[TE_HEALTH_ITEMS_MAX + 1],
		user_text[TE_HEALTH_ITEMS_MAX + 1];
	struct te_drain_policy dp;
	struct te_health_prolog_policy pp;
	char err[512], node[TE_HEALTH_NODE_MAX], line[TE_HEALTH_TEXT_MAX + 16];
	char root[TE_HEALTH_ROOT_MAX + TE_HEALTH_NODE_MAX];
	size_t pos;

	pos = take_line(data, size, 0, site_items, sizeof(site_items));
	pos = take_line(data, size, pos, user_text, sizeof(user_text));
	err[0] = '\0';
	if (te_health_site_load(site_items, &site, &dp, &pp, err, sizeof(err)) <
	    0) {
		one_line(err, sizeof(err));
	} else {
		if (pp.test_root[0] &&
		    te_health_root_for(pp.test_root, "n1", root,
				       sizeof(root)) == 0)
			printable(root);
		te_health_policy_init(&user);
		err[0] = '\0';
		if (te_health_user_parse(&user, user_text, err, sizeof(err)) <
			    0 ||
		    te_health_policy_merge(&site, &user, &merged, err,
					   sizeof(err)) < 0) {
			one_line(err, sizeof(err));
		} else if (!site.user_may_weaken &&
			   ((site.checks & ~merged.checks) ||
			    merged.ib_min_gbps < site.ib_min_gbps)) {
			abort();
		}
	}
	err[0] = node[0] = line[0] = '\0';
	switch (te_health_verdict_decode((const char *)data + pos, size - pos,
					 node, sizeof(node), line, sizeof(line),
					 err, sizeof(err))) {
	case 1:
		if (strncmp(line, "drain ", 6) && strncmp(line, "exclude ", 8))
			abort();
		printable(line);
		/* fall through */
	case 0:
		printable(node);
		break;
	default:
		one_line(err, sizeof(err));
	}
	return 0;
}
