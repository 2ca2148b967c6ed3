/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of whether a failing node drains itself
 * (core/health/health_drain.c): the site's keys and their errors, the
 * reason's text and bound, the controller's node list as sinfo gives
 * it, and the decision: the switch off, another's reason kept, trainenv's
 * own drain left alone, the cap per interval (a count and a percentage),
 * a node the controller does not list. Run with TZ=UTC (main sets it). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "health/health.h"
#include "tap.h"

static char err[512], why[512];

static int set(struct te_drain_policy *p, const char *key, const char *val)
{
	err[0] = '\0';
	return te_drain_policy_set(p, key, val, "policy", err, sizeof(err));
}

static void test_keys(void)
{
	struct te_drain_policy p;

	te_drain_policy_init(&p);
	ok(p.on && p.max == 10 && p.max_is_pct && p.interval_s == 3600,
	   "by default: on, 10%% of the nodes per 3600 s");
	is_int(set(&p, "health_drain", "off"), 1, "health_drain=off applies");
	is_int(p.on, 0, "... draining is off");
	is_int(set(&p, "health_drain", "maybe"), -1,
	       "health_drain=maybe: refused");
	is_str(err,
	       "policy: health_drain: invalid value 'maybe'; accepted: on, off",
	       "... naming the key, the value and what is accepted");
	is_int(set(&p, "health_drain_max", "3"), 1, "health_drain_max=3");
	ok(p.max == 3 && !p.max_is_pct, "... a count of 3 nodes");
	is_int(set(&p, "health_drain_max", "25%"), 1, "health_drain_max=25%%");
	ok(p.max == 25 && p.max_is_pct, "... 25%% of the nodes");
	is_int(set(&p, "health_drain_max", "0"), 1, "health_drain_max=0");
	is_int(set(&p, "health_drain_max", "0%"), -1, "0%%: refused");
	is_int(set(&p, "health_drain_max", "101%"), -1, "101%%: refused");
	is_int(set(&p, "health_drain_max", "%"), -1, "a bare %%: refused");
	is_int(set(&p, "health_drain_max", "100001"), -1, "100001: refused");
	like(err, "accepted: a number of nodes 0 to 100000", "... saying why");
	is_int(set(&p, "health_drain_max", "12345678901234567890"), -1,
	       "a number too long: refused");
	is_int(set(&p, "health_drain_interval", "600"), 1,
	       "health_drain_interval=600");
	is_int(p.interval_s, 600, "... 600 s");
	is_int(set(&p, "health_drain_interval", "0"), -1,
	       "an interval 0: refused");
	is_int(set(&p, "health_drain_interval", "1w"), -1, "junk: refused");
	is_int(set(&p, "health_ib_rate", "100"), 0,
	       "another parser's key: not a drain key");
}

static void test_reason(void)
{
	char r[TE_DRAIN_REASON_MAX * 2], big[400];

	te_drain_reason("ib mlx5_0 port 1 state DOWN (want ACTIVE)", r,
			sizeof(r));
	is_str(r, "trainenv: ib mlx5_0 port 1 state DOWN (want ACTIVE)",
	       "the reason: trainenv: and the failing line");
	te_drain_reason("gpu 1 \x01"
			"bad\n\xc3\xa9",
			r, sizeof(r));
	is_str(r, "trainenv: gpu 1 ?bad???", "... printable only");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	te_drain_reason(big, r, sizeof(r));
	is_int((int)strlen(r), TE_DRAIN_REASON_MAX - 1,
	       "... cut to the reason's bound (127 bytes)");
	te_drain_reason("abc", r, 8);
	is_str(r, "trainen", "... and to the buffer");
}

static void test_parse(void)
{
	struct te_drain_node n, nodes[4];
	long long t;

	is_int(te_drain_parse_time("2026-11-29T15:22:01", &t), 0, "a time");
	ok(t == 1795965721LL, "... as the epoch (UTC here): %lld", t);
	is_int(te_drain_parse_time("Unknown", &t), 0, "Unknown: no time");
	ok(t == -1, "... -1");
	is_int(te_drain_parse_time("2026-11-29 15:22:01", &t), -1,
	       "a time with a blank: junk");
	is_int(te_drain_parse_time("2026-11-29T15:22:01x", &t), -1,
	       "trailing junk: refused");
	is_int(te_drain_parse_node("n1 n1 idle Unknown none", &n), 0,
	       "an idle node's line");
	ok(!strcmp(n.name, "n1") && !strcmp(n.state, "idle") && !n.reason[0] &&
		   n.reason_time == -1,
	   "... no reason, no time");
	is_int(te_drain_parse_node("n2 host2 drained 2026-11-29T15:22:01 "
				   "disk \x01 bad   ",
				   &n),
	       0, "a drained node's line");
	ok(!strcmp(n.host, "host2") && !strcmp(n.reason, "disk ? bad") &&
		   n.reason_time == 1795965721LL,
	   "... the reason whole (spaces kept, control bytes '?', trailing "
	   "blanks cut): '%s'",
	   n.reason);
	is_int(te_drain_parse_node("n1 n1 idle", &n), -1,
	       "too few fields: junk");
	is_int(te_drain_parse_node("n1 n1 idle yesterday none", &n), -1,
	       "a time that is not one: junk");
	is_int(te_drain_parse_nodes("n1 n1 idle Unknown none\n"
				    "n2 n2 idle Unknown none\n"
				    "n1 n1 idle Unknown none\n\n",
				    nodes, 4, err, sizeof(err)),
	       2, "the list: a node in two partitions counts once");
	is_int(te_drain_parse_nodes("n1 n1 idle Unknown none\n"
				    "n2 n2 idle Unknown none\n"
				    "n3 n3 idle Unknown none\n",
				    nodes, 2, err, sizeof(err)),
	       2, "... at most max");
	is_int(te_drain_parse_nodes("n1 n1 idle Unknown none\ngarbage\n", nodes,
				    4, err, sizeof(err)),
	       -1, "a junk line: refused");
	like(err, "junk line 'garbage'", "... naming it");
}

static struct te_drain_node cl[10];

static void node(int i, const char *state, long long t, const char *reason)
{
	memset(&cl[i], 0, sizeof(cl[i]));
	snprintf(cl[i].name, sizeof(cl[i].name), "n%d", i + 1);
	snprintf(cl[i].host, sizeof(cl[i].host), "h%d", i + 1);
	snprintf(cl[i].state, sizeof(cl[i].state), "%s", state);
	snprintf(cl[i].reason, sizeof(cl[i].reason), "%s", reason);
	cl[i].reason_time = t;
}

static void test_decide(void)
{
	const char *rs = "trainenv: ib mlx5_0 port 1 state DOWN (want ACTIVE)";
	struct te_drain_policy p;
	long long now = 100000;
	int i;

	te_drain_policy_init(&p);
	for (i = 0; i < 10; i++)
		node(i, "idle", -1, "");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_DO, "a failing node drains");
	is_str(why,
	       "draining n3: trainenv: ib mlx5_0 port 1 state DOWN (want "
	       "ACTIVE)",
	       "... saying so with the reason");
	is_int(te_drain_decide(&p, "h3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_DO, "... found by its host name too");
	like(why, "draining n3:", "... and named by its Slurm name");
	is_int(te_drain_decide(&p, "n11", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_UNKNOWN, "a node the controller does not list: not");
	like(why, "the controller lists no node n11", "... saying so");

	p.on = 0;
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_OFF, "health_drain=off: never drains");
	like(why, "n3 not drained: draining is off (health_drain=off)",
	     "... one line naming the switch");
	p.on = 1;

	node(2, "drained", now - 10, "bad DIMM, ticket 4711");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_FOREIGN, "an admin's drain is kept");
	is_str(why,
	       "n3 not drained: it is drained with another reason ('bad "
	       "DIMM, ticket 4711'), left as it is",
	       "... one line quoting it");
	node(2, "down*", now - 10, "Not responding");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_FOREIGN, "Slurm's own down reason is kept");
	node(2, "down", -1, "");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_DO, "a down node without a reason drains");
	node(2, "idle*", now - 10, "admin: bad DIMM");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_DO,
	       "an admin's reason left on a resumed (idle) node: not a drain, "
	       "the node drains");
	node(2, "drained", now - 10, "trainenv: eth eth1 operstate down");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_OURS, "already drained by trainenv: left alone");
	like(why, "n3 already drained by trainenv", "... saying so");
	node(2, "idle", -1, "");

	/* 10% of 10 nodes: 1 per interval */
	node(0, "drained", now - 100, "trainenv: gpu 0 remapped rows pending");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_CAP,
	       "10%% of 10 nodes, one drained by trainenv "
	       "within the hour: the cap holds");
	is_str(why,
	       "n3 not drained: the cap is reached: 1 node drained by "
	       "trainenv in the last 3600 s (health_drain_max=10%: 1 of 10 "
	       "nodes): trainenv: ib mlx5_0 port 1 state DOWN (want ACTIVE)",
	       "... one line naming the cap");
	node(0, "drained", now - 3600, "trainenv: gpu 0 remapped rows pending");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_DO,
	       "... a drain older than the interval does not count");
	node(0, "drained", now - 100, "bad DIMM");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_DO, "... nor an admin's drain");
	node(0, "drained", now - 100, "trainenv: gpu 0 remapped rows pending");
	p.max = 20;
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_DO, "20%% of 10: a second one drains");
	node(1, "draining", now - 5, "trainenv: gpu 3 ecc");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_CAP, "... not a third");
	like(why,
	     "2 nodes drained by trainenv in the last 3600 s "
	     "(health_drain_max=20%: 2 of 10 nodes)",
	     "... counting both");
	p.max = 1;
	p.max_is_pct = 1;
	is_int(te_drain_decide(&p, "n3", cl, 3, now, rs, why, sizeof(why)),
	       TE_DRAIN_CAP, "1%% of 3 nodes is still one node");
	p.max = 3;
	p.max_is_pct = 0;
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_DO, "health_drain_max=3: a third drains");
	node(3, "drained", now - 5, "trainenv: x");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_CAP, "... not a fourth");
	like(why, "(health_drain_max=3: 3 of 10 nodes)",
	     "... naming the count");
	p.max = 0;
	node(0, "idle", -1, "");
	node(1, "idle", -1, "");
	node(3, "idle", -1, "");
	is_int(te_drain_decide(&p, "n3", cl, 10, now, rs, why, sizeof(why)),
	       TE_DRAIN_CAP, "health_drain_max=0: never drains");
}

/* Nodes that failed at the same moment each drained past the cap: after
 * a second look only the first cap of trainenv's recent drains, by time
 * then name, keep theirs (review finding 2). */
static void test_keep(void)
{
	const char *rs = "trainenv: ib mlx5_0 port 1 state DOWN (want ACTIVE)";
	long long now = 1000000;
	struct te_drain_policy p;
	int i;

	te_drain_policy_init(&p); /* 10% of 10 nodes: 1 */
	for (i = 0; i < 10; i++)
		node(i, "idle", -1, "");
	node(2, "drained", now - 1, rs);
	node(5, "drained", now - 1, rs);
	node(7, "draining", now - 2, rs);
	is_int(te_drain_keep(&p, "n8", cl, 10, now), 1,
	       "three drained at once, cap 1: the earliest (n8) keeps it");
	is_int(te_drain_keep(&p, "n3", cl, 10, now), 0,
	       "... a later one (n3) undoes its drain");
	is_int(te_drain_keep(&p, "n6", cl, 10, now), 0, "... and n6 too");
	node(7, "idle", -1, "");
	is_int(te_drain_keep(&p, "n3", cl, 10, now), 1,
	       "two at the same second: the first by name (n3) keeps it");
	is_int(te_drain_keep(&p, "n6", cl, 10, now), 0,
	       "... the other (n6) undoes its drain");
	node(2, "drained", now - 4000, rs);
	is_int(te_drain_keep(&p, "n6", cl, 10, now), 1,
	       "a drain older than the interval does not count");
	node(2, "drained", now - 1, "admin: bad DIMM");
	is_int(te_drain_keep(&p, "n6", cl, 10, now), 1,
	       "another's drain does not count against the cap");
	is_int(te_drain_keep(&p, "n1", cl, 10, now), 1,
	       "a node not drained by trainenv: nothing to undo");
	is_int(te_drain_keep(&p, "n99", cl, 10, now), 1,
	       "a node not listed: nothing to undo");
	node(2, "drained", now - 1, rs);
	te_drain_policy_set(&p, "health_drain_max", "2", "w", err, sizeof(err));
	is_int(te_drain_keep(&p, "n6", cl, 10, now), 1,
	       "health_drain_max=2: the second (n6) keeps it");
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	test_keys();
	test_reason();
	test_parse();
	test_decide();
	test_keep();
	return tap_done();
}
