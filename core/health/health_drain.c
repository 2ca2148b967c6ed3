/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: whether a node that failed a check drains itself (issue
 * 34), as a plain function of the site's switch and cap and of what the
 * controller lists: never over another's drain or down reason, never a
 * resume, never more than the cap of nodes per interval cluster-wide.
 * Also the reason's text and the parser of the controller's node list
 * (sinfo -N -o '%N %n %T %H %E'). Pure. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "health/health.h"
#include "util/strutil.h"

void te_drain_policy_init(struct te_drain_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->on = 1;
	p->max = TE_DRAIN_MAX_PCT_DEFAULT;
	p->max_is_pct = 1;
	p->interval_s = TE_DRAIN_INTERVAL_DEFAULT;
}

/* health_drain_max=N or N%. */
static int set_max(struct te_drain_policy *p, const char *val,
		   const char *where, char *err, size_t errlen)
{
	static const char acc[] = "a number of nodes 0 to 100000, or a "
				  "percentage of the nodes 1% to 100%";
	char num[16];
	size_t l = strlen(val);
	int pct = l > 0 && val[l - 1] == '%';
	uint64_t v;

	if (l >= sizeof(num))
		return te_health_bad_value(where, "health_drain_max", val, acc,
					   err, errlen);
	memcpy(num, val, l + 1);
	if (pct)
		num[l - 1] = '\0';
	if (te_parse_u64(num, pct ? 100 : TE_DRAIN_MAX_MAX, &v) < 0 ||
	    (pct && v == 0))
		return te_health_bad_value(where, "health_drain_max", val, acc,
					   err, errlen);
	p->max = (unsigned)v;
	p->max_is_pct = pct;
	return 1;
}

int te_drain_policy_set(struct te_drain_policy *p, const char *key,
			const char *val, const char *where, char *err,
			size_t errlen)
{
	uint64_t v;

	if (!strcmp(key, "health_drain")) {
		if (strcmp(val, "on") && strcmp(val, "off"))
			return te_health_bad_value(where, key, val, "on, off",
						   err, errlen);
		p->on = !strcmp(val, "on");
		return 1;
	}
	if (!strcmp(key, "health_drain_max"))
		return set_max(p, val, where, err, errlen);
	if (!strcmp(key, "health_drain_interval")) {
		if (te_parse_u64(val, TE_DRAIN_INTERVAL_MAX, &v) < 0 || !v)
			return te_health_bad_value(where, key, val,
						   "seconds, 1 to 604800", err,
						   errlen);
		p->interval_s = (unsigned)v;
		return 1;
	}
	return 0;
}

void te_drain_reason(const char *line, char *out, size_t len)
{
	size_t i, n;

	if (len == 0)
		return;
	if (len > TE_DRAIN_REASON_MAX)
		len = TE_DRAIN_REASON_MAX;
	te_snprintf(out, len, "%s %s", TE_DRAIN_PREFIX, line);
	n = strlen(out);
	for (i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 ||
		    (unsigned char)out[i] > 0x7e)
			out[i] = '?';
}

int te_drain_parse_time(const char *text, long long *t)
{
	struct tm tm;
	const char *end;
	time_t v;

	if (!strcmp(text, "Unknown") || !strcmp(text, "None")) {
		*t = -1;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	if (strlen(text) != 19)
		return -1;
	end = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || *end)
		return -1;
	tm.tm_isdst = -1;
	v = mktime(&tm);
	if (v == (time_t)-1)
		return -1;
	*t = (long long)v;
	return 0;
}

int te_drain_parse_node(const char *line, struct te_drain_node *n)
{
	char when[32];
	const char *p = line;
	size_t i;

	memset(n, 0, sizeof(*n));
	if (te_next_word(&p, n->name, sizeof(n->name)) < 0 ||
	    te_next_word(&p, n->host, sizeof(n->host)) < 0 ||
	    te_next_word(&p, n->state, sizeof(n->state)) < 0 ||
	    te_next_word(&p, when, sizeof(when)) < 0 ||
	    te_drain_parse_time(when, &n->reason_time) < 0)
		return -1;
	te_strlcpy(n->reason, p, sizeof(n->reason));
	n->reason[strcspn(n->reason, "\n")] = '\0';
	for (i = strlen(n->reason); i > 0 && n->reason[i - 1] == ' '; i--)
		n->reason[i - 1] = '\0';
	for (i = 0; n->reason[i]; i++)
		if ((unsigned char)n->reason[i] < 0x20 ||
		    (unsigned char)n->reason[i] == 0x7f)
			n->reason[i] = '?';
	if (!strcmp(n->reason, "none"))
		n->reason[0] = '\0';
	return 0;
}

int te_drain_parse_nodes(const char *text, struct te_drain_node *nodes, int max,
			 char *err, size_t errlen)
{
	char line[TE_DRAIN_REASON_MAX * 4], q[64];
	const char *p = text;
	int n = 0, i;

	while (*p) {
		size_t l = strcspn(p, "\n");
		struct te_drain_node node;

		te_snprintf(line, sizeof(line), "%.*s", (int)l, p);
		p += l + (p[l] == '\n');
		if (!line[0])
			continue;
		if (te_drain_parse_node(line, &node) < 0) {
			te_quote(q, sizeof(q), line);
			return te_err(err, errlen,
				      "the controller's node list: junk line "
				      "'%s'",
				      q);
		}
		for (i = 0; i < n; i++)
			if (!strcmp(nodes[i].name, node.name))
				break;
		if (i < n || n >= max)
			continue;
		nodes[n++] = node;
	}
	return n;
}

const struct te_drain_node *te_drain_find(const struct te_drain_node *nodes,
					  int n, const char *self)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(nodes[i].name, self))
			return &nodes[i];
	for (i = 0; i < n; i++)
		if (!strcmp(nodes[i].host, self))
			return &nodes[i];
	return NULL;
}

static int held(const char *state);

static int ours(const char *reason)
{
	return !strncmp(reason, TE_DRAIN_PREFIX, strlen(TE_DRAIN_PREFIX));
}

/* A state Slurm holds a node out of service in: drained, draining,
 * down, fail, failing (with any of its flag suffixes). */
static int held(const char *state)
{
	return !strncmp(state, "drain", 5) || !strncmp(state, "down", 4) ||
	       !strncmp(state, "fail", 4);
}

/* The cap in nodes: N, or N% of n nodes rounded up, at least 1. */
static unsigned cap_nodes(const struct te_drain_policy *p, int n)
{
	unsigned long c;

	if (!p->max_is_pct)
		return p->max;
	c = ((unsigned long)n * p->max + 99) / 100;
	return c ? (unsigned)c : 1;
}

enum te_drain_decision te_drain_decide(const struct te_drain_policy *p,
				       const char *self,
				       const struct te_drain_node *nodes, int n,
				       long long now, const char *reason,
				       char *why, size_t len)
{
	const struct te_drain_node *me = te_drain_find(nodes, n, self);
	unsigned cap = cap_nodes(p, n), recent = 0;
	int i;

	if (!p->on) {
		te_snprintf(why, len,
			    "%s not drained: draining is off "
			    "(health_drain=off): %s",
			    self, reason);
		return TE_DRAIN_OFF;
	}
	if (!me) {
		te_snprintf(why, len,
			    "%s not drained: the controller lists no node %s "
			    "(give its Slurm name with --node)",
			    self, self);
		return TE_DRAIN_UNKNOWN;
	}
	/* a reason left on a node back in service (Slurm 24.11 keeps an
	 * admin's after a resume while the node is not responding yet) is
	 * not a drain: only a held node's reason is kept */
	if (me->reason[0] && !ours(me->reason) && held(me->state)) {
		te_snprintf(why, len,
			    "%s not drained: it is %s with another reason "
			    "('%.100s'), left as it is",
			    me->name, me->state, me->reason);
		return TE_DRAIN_FOREIGN;
	}
	if (me->reason[0] && held(me->state)) {
		te_snprintf(why, len, "%s already %s by trainenv ('%.100s')",
			    me->name, me->state, me->reason);
		return TE_DRAIN_OURS;
	}
	for (i = 0; i < n; i++)
		if (&nodes[i] != me && ours(nodes[i].reason) &&
		    nodes[i].reason_time >= 0 &&
		    nodes[i].reason_time + (long long)p->interval_s > now)
			recent++;
	if (recent >= cap) {
		te_snprintf(why, len,
			    "%s not drained: the cap is reached: %u node%s "
			    "drained by trainenv in the last %u s "
			    "(health_drain_max=%u%s: %u of %d nodes): %s",
			    me->name, recent, recent == 1 ? "" : "s",
			    p->interval_s, p->max, p->max_is_pct ? "%" : "",
			    cap, n, reason);
		return TE_DRAIN_CAP;
	}
	te_snprintf(why, len, "draining %s: %s", me->name, reason);
	return TE_DRAIN_DO;
}

int te_drain_keep(const struct te_drain_policy *p, const char *self,
		  const struct te_drain_node *nodes, int n, long long now)
{
	const struct te_drain_node *me = te_drain_find(nodes, n, self);
	unsigned cap = cap_nodes(p, n), ahead = 0;
	int i;

	if (!me || !ours(me->reason) || !held(me->state))
		return 1; /* not ours (any more): nothing to undo */
	for (i = 0; i < n; i++) {
		const struct te_drain_node *o = &nodes[i];

		if (o == me || !ours(o->reason) || !held(o->state) ||
		    o->reason_time < 0 ||
		    o->reason_time + (long long)p->interval_s <= now)
			continue;
		/* earlier, or as early and first by name: the same order on
		 * every node that reads the same list */
		if (o->reason_time < me->reason_time ||
		    (o->reason_time == me->reason_time &&
		     strcmp(o->name, me->name) < 0))
			ahead++;
	}
	return ahead < cap;
}
