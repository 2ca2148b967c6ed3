/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: node health's parsers of hostile text
 * (core/health/): the policy (the input as a site's policy, its second
 * half as a user's, then merged), the sysfs values (state, rate, speed),
 * the runner's wire, and the drain's input: the controller's node list
 * (sinfo's lines), the drain keys and the decision over that list, and
 * the site hook's output (its first line, its verdict, its path rule).
 * Beyond "no crash": every error is one bounded
 * line, a merge never weakens the site's policy unless it allows it, and
 * decoded results stay printable and within their sizes. */
// FUZZ-MAX-LEN: 204800
// FUZZ-SOURCES: core/health/health_policy.c core/health/health_storage.c core/health/health_net.c core/health/health_result.c core/health/health_wire.c core/health/health_drain.c core/health/health_hook.c core/health/health_xid.c core/util/strutil.c core/util/sysutil.c core/util/textbuf.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "health/health.h"
#include "util/strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const char *err, size_t errlen)
{
	if (strlen(err) >= errlen || strchr(err, '\n'))
		abort();
}

/* The merge keeps every one of the site's choices unless it allows
 * weakening. */
static void check_merge(const struct te_health_policy *site,
			const struct te_health_policy *out)
{
	int i;

	/* the gpu check's NVLink and XID keys are the site's alone */
	if (out->nvlink != site->nvlink || out->xid != site->xid ||
	    out->n_xid_fail != site->n_xid_fail)
		abort();
	if (site->user_may_weaken)
		return;
	if ((site->checks & ~out->checks) ||
	    out->ib_min_gbps < site->ib_min_gbps)
		abort();
	for (i = 0; i < TE_HC_COUNT; i++)
		if (out->action[i] < site->action[i])
			abort();
	for (i = 0; i < site->n_eth; i++) {
		int j, found = 0;

		for (j = 0; j < out->n_eth; j++)
			if (!strcmp(out->eth[j].name, site->eth[i].name) &&
			    out->eth[j].min_mbps >= site->eth[i].min_mbps)
				found = 1;
		if (!found)
			abort();
	}
}

static void check_set(const struct te_health_set *s)
{
	int i;

	if (s->n < 0 || s->n > TE_HEALTH_RESULTS_MAX || s->cut < 0 ||
	    s->cut_fail < 0 || s->cut_fail > s->cut)
		abort();
	for (i = 0; i < s->n; i++)
		if (!te_is_printable(s->r[i].text, TE_HEALTH_TEXT_MAX - 1) ||
		    !te_is_printable(s->r[i].device, TE_HEALTH_DEV_MAX - 1) ||
		    !te_is_printable(s->r[i].value, TE_HEALTH_VALUE_MAX - 1))
			abort();
}

/* Only the site drains: a result drains only for a check the site runs
 * with drain (te_health_action_for, review finding 1). */
static void check_actions(const struct te_health_set *s,
			  const struct te_health_policy *site,
			  const struct te_health_policy *merged)
{
	int i, c;

	for (i = 0; i < s->n; i++) {
		if (te_health_action_for(&s->r[i], site, merged) != TE_HA_DRAIN)
			continue;
		for (c = 0; c < TE_HC_COUNT; c++)
			if (!strcmp(s->r[i].check, te_health_check_name(c)))
				break;
		if (c == TE_HC_COUNT || !(site->checks & (1u << c)) ||
		    site->action[c] != TE_HA_DRAIN)
			abort();
	}
}

/* The controller's list as hostile text: every node's fields bounded and
 * without control bytes; the decision's line one bounded line; the
 * reason printable, within its bound, starting "trainenv: ". */
static void fuzz_drain(const char *text)
{
	static struct te_drain_node nodes[64];
	struct te_drain_policy p;
	char err[256], why[512], reason[TE_DRAIN_REASON_MAX], key[32];
	const char *eq = strchr(text, '=');
	int n, i;

	why[0] = '\0';
	te_drain_policy_init(&p);
	if (eq && (size_t)(eq - text) < sizeof(key)) {
		memcpy(key, text, (size_t)(eq - text));
		key[eq - text] = '\0';
		if (te_drain_policy_set(&p, key, eq + 1, "site", err,
					sizeof(err)) < 0)
			one_line(err, sizeof(err));
	}
	te_drain_reason(text, reason, sizeof(reason));
	if (strncmp(reason, "trainenv: ", 10) ||
	    !te_is_printable(reason, TE_DRAIN_REASON_MAX - 1))
		abort();
	n = te_drain_parse_nodes(text, nodes, 64, err, sizeof(err));
	if (n < 0) {
		one_line(err, sizeof(err));
		return;
	}
	for (i = 0; i < n; i++)
		if (strchr(nodes[i].reason, '\n') ||
		    strlen(nodes[i].reason) >= sizeof(nodes[i].reason))
			abort();
	if (n > 0)
		te_drain_decide(&p, nodes[0].name, nodes, n, 1800000000LL,
				reason, why, sizeof(why));
	one_line(why, sizeof(why));
}

/* The hook's output as hostile bytes (NUL included): its first line is
 * printable and within its buffer, its one result printable, and a path
 * the rule takes is absolute, printable and without a ".." component. */
static void fuzz_hook(const uint8_t *data, size_t size, const char *text)
{
	static struct te_health_set s;
	char line[TE_HEALTH_TEXT_MAX], small[5];
	size_t n;
	int status = size ? data[0] | (size > 1 ? data[1] << 8 : 0) : 0;

	n = te_health_hook_first_line((const char *)data, size, line,
				      sizeof(line));
	if (n != strlen(line) || !te_is_printable(line, sizeof(line) - 1))
		abort();
	n = te_health_hook_first_line((const char *)data, size, small,
				      sizeof(small));
	if (n > sizeof(small) - 1 || n != strlen(small))
		abort();
	te_health_set_init(&s, "fuzz");
	te_health_hook_result("/etc/h.sh", size > 2 ? data[2] % 3 : 0,
			      status & 0xffff, (const char *)data, size, &s);
	if (s.n != 1)
		abort();
	check_set(&s);
	if (te_health_hook_path_ok(text) &&
	    (text[0] != '/' || strstr(text, "/../") ||
	     !te_is_printable(text, TE_HEALTH_HOOK_PATH_MAX - 1) ||
	     strchr(text, ' ') ||
	     (strlen(text) >= 3 && !strcmp(text + strlen(text) - 3, "/.."))))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct te_health_set set;
	struct te_health_policy site, user, out;
	char err[256], *text, word[32];
	unsigned long tenths;
	long mbps;
	size_t half = size / 2;

	if (size > TE_HEALTH_WIRE_MAX + 4096) /* past the wire's bound */
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	te_health_policy_init(&site);
	te_health_policy_init(&user);
	err[0] = '\0';
	if (te_health_policy_parse(&site, text, half, "site", err,
				   sizeof(err)) < 0)
		one_line(err, sizeof(err));
	if (te_health_policy_parse(&user, text + half, size - half, "user", err,
				   sizeof(err)) < 0)
		one_line(err, sizeof(err));
	if (te_health_policy_merge(&site, &user, &out, err, sizeof(err)) < 0)
		one_line(err, sizeof(err));
	else
		check_merge(&site, &out);
	te_health_parse_state(text, word, sizeof(word));
	te_health_parse_rate(text, &tenths);
	te_health_parse_speed(text, &mbps);
	te_health_set_init(&set, "fuzz");
	if (te_health_wire_decode(text, size, "ib", &set, err, sizeof(err)) < 0)
		one_line(err, sizeof(err));
	check_set(&set);
	if (te_health_policy_merge(&site, &user, &out, err, sizeof(err)) == 0)
		check_actions(&set, &site, &out);
	fuzz_drain(text);
	fuzz_hook(data, size, text);
	free(text);
	return 0;
}
