/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of node health in the job prolog (core/health/
 * health_prolog.c): the prolog's keys and their errors, the site's items
 * read back, the test root's %n, the user's --train-health text (lists,
 * keys with and without "health_", refusals), the prolog's decision (a
 * site drain, a user's stricter check capped at exclude, warn, errors),
 * and the verdict file's text both ways, hostile text included. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/health_prolog.h"
#include "util/strutil.h"
#include "settings/settings.h"
#include "tap.h"

static char err[512];

static void test_prolog_keys(void)
{
	struct te_health_prolog_policy p;

	te_health_prolog_init(&p);
	is_int(p.on_fail, TE_HOF_VERDICT,
	       "health_on_fail is verdict by default");
	is_int(te_health_prolog_set(&p, "health_on_fail", "fail", "w", err,
				    sizeof(err)),
	       1, "health_on_fail=fail applies");
	is_int(p.on_fail, TE_HOF_FAIL, "... the prolog fails on a drain");
	is_int(te_health_prolog_set(&p, "health_on_fail", "maybe", "w", err,
				    sizeof(err)),
	       -1, "health_on_fail=maybe: refused");
	is_str(err,
	       "w: health_on_fail: invalid value 'maybe'; accepted: fail, "
	       "verdict",
	       "... one line naming the key, the value and what is accepted");
	is_int(te_health_prolog_set(&p, "health_test_root", "/var/t/%n/sys",
				    "w", err, sizeof(err)),
	       1, "health_test_root=/var/t/%%n/sys applies");
	is_int(te_health_prolog_set(&p, "health_test_root", "/var/../etc", "w",
				    err, sizeof(err)),
	       -1, "health_test_root with '..': refused");
	is_int(te_health_prolog_set(&p, "health_test_root", "rel/dir", "w", err,
				    sizeof(err)),
	       -1, "health_test_root not absolute: refused");
	is_int(te_health_prolog_set(&p, "health_test_root", "/t/%s", "w", err,
				    sizeof(err)),
	       -1, "health_test_root with a '%%' other than %%n: refused");
	is_int(te_health_prolog_set(&p, "health_ib_rate", "200", "w", err,
				    sizeof(err)),
	       0, "another key is not the prolog's (0)");
}

static void test_site_load(void)
{
	struct te_health_policy hp;
	struct te_drain_policy dp;
	struct te_health_prolog_policy pp;
	char root[64];

	is_int(te_health_site_load("health=ib,gpu health_ib_rate=200 "
				   "health_ib_action=drain health_drain_max=2 "
				   "health_on_fail=fail health_test_root=/t/%n",
				   &hp, &dp, &pp, err, sizeof(err)),
	       0, "the site's items read back");
	is_int(hp.checks, (1u << TE_HC_IB) | (1u << TE_HC_GPU),
	       "... checks ib and gpu");
	is_int(hp.ib_min_gbps, 200, "... ib rate 200");
	is_int(hp.action[TE_HC_IB], TE_HA_DRAIN, "... ib drains");
	is_int(dp.max, 2, "... the drain cap 2");
	is_int(pp.on_fail, TE_HOF_FAIL, "... on fail: fail");
	is_int(te_health_root_for(pp.test_root, "n17", root, sizeof(root)), 0,
	       "the test root for n17");
	is_str(root, "/t/n17", "... %%n is the node's name");
	is_int(te_health_root_for("/t/%n/%n", "node-with-a-long-name", root,
				  16),
	       -1, "a root that does not fit: -1");
	is_str(root, "", "... and no partial path");
	is_int(te_health_site_load("health=ib health_bogus=1", &hp, &dp, &pp,
				   err, sizeof(err)),
	       -1, "an unknown health key: refused");
	is_str(err,
	       "plugstack.conf: unknown health key 'health_bogus' (see "
	       "trainenv(8), \"Node health\")",
	       "... one line naming it");
	is_int(te_health_site_load("health_ib_action=sometimes", &hp, &dp, &pp,
				   err, sizeof(err)),
	       -1, "a bad action: refused");
	like(err, "health_ib_action: invalid value 'sometimes'; accepted:",
	     "... naming the key and the value");
	is_int(te_health_site_load("", &hp, &dp, &pp, err, sizeof(err)), 0,
	       "no items: nothing to check");
	is_int(hp.checks, 0, "... no checks");
}

static void test_user(void)
{
	struct te_health_policy site, user, merged;
	struct te_drain_policy dp;
	struct te_health_prolog_policy pp;

	te_health_site_load("health=ib health_ib_action=exclude "
			    "health_ib_rate=100",
			    &site, &dp, &pp, err, sizeof(err));
	te_health_policy_init(&user);
	is_int(te_health_user_parse(&user, "ib,eth;ib_rate=200;eth=ib0:1000",
				    err, sizeof(err)),
	       0, "the user's 'ib,eth;ib_rate=200;eth=ib0:1000' parses");
	is_int(user.checks, (1u << TE_HC_IB) | (1u << TE_HC_ETH),
	       "... a bare list is health=");
	is_int(user.ib_min_gbps, 200, "... ib_rate is health_ib_rate");
	is_int(te_health_policy_merge(&site, &user, &merged, err, sizeof(err)),
	       0, "... stricter than the site's: merged");
	is_int(merged.ib_min_gbps, 200, "... at the user's 200");
	te_health_policy_init(&user);
	is_int(te_health_user_parse(&user, "health_ib_action=warn", err,
				    sizeof(err)),
	       0, "the full key name is accepted too");
	is_int(te_health_policy_merge(&site, &user, &merged, err, sizeof(err)),
	       -1, "... but warn is weaker than the site's exclude: refused");
	like(err, "health_ib_action=warn", "... naming the user's key");
	te_health_policy_init(&user);
	is_int(te_health_user_parse(&user, "colour=blue", err, sizeof(err)), -1,
	       "an unknown key: refused");
	like(err, "--train-health: unknown key 'health_colour'",
	     "... naming the option and the key");
	is_int(te_health_user_parse(&user, "ib\x01", err, sizeof(err)), -1,
	       "a control character: refused");
	like(err, "--train-health: control", "... naming the option");
	is_int(te_health_user_parse(&user, "timeout=1", err, sizeof(err)), 0,
	       "timeout=1 parses as health_timeout ...");
	is_int(te_health_policy_merge(&site, &user, &merged, err, sizeof(err)),
	       -1, "... but is the site's alone: refused in the merge");
	is_int(te_health_user_parse(&user, ";;; ;", err, sizeof(err)), 0,
	       "only separators: nothing");
}

/* A set with one ib port DOWN and one rate below the user's 400. */
static void failing_set(struct te_health_set *s)
{
	te_health_set_init(s, "n2");
	te_health_add(s, "ib", "mlx5_0 port 1", "DOWN", TE_HV_FAIL,
		      "ib mlx5_0 port 1 state DOWN (want ACTIVE)");
	te_health_add(s, "ib", "mlx5_1 port 1", "200 Gb/s", TE_HV_FAIL,
		      "ib mlx5_1 port 1 rate 200 Gb/s (want 400)");
	te_health_add(s, "ib", "mlx5_2 port 1", "ACTIVE", TE_HV_PASS,
		      "ib mlx5_2 port 1 ACTIVE");
}

static void test_decide(void)
{
	static struct te_health_set s;
	struct te_health_policy site, user, merged;
	struct te_drain_policy dp;
	struct te_health_prolog_policy pp;
	struct te_health_prolog_outcome o;

	failing_set(&s);
	te_health_site_load("health=ib health_ib_action=drain "
			    "health_ib_rate=100",
			    &site, &dp, &pp, err, sizeof(err));
	te_health_policy_init(&user);
	te_health_user_parse(&user, "ib_rate=400", err, sizeof(err));
	te_health_policy_merge(&site, &user, &merged, err, sizeof(err));
	te_health_prolog_decide(&s, &site, &merged, &o);
	is_int(o.n_drain, 1, "site drain: the port DOWN drains");
	is_str(o.drain_line, "ib mlx5_0 port 1 state DOWN (want ACTIVE)",
	       "... with its line as the reason");
	is_int(o.n_exclude, 2,
	       "... the user's stricter rate keeps the node out too");
	is_str(o.exclude_line, "ib mlx5_0 port 1 state DOWN (want ACTIVE)",
	       "... the first failure is the job's line");

	te_health_set_init(&s, "n2");
	te_health_add(&s, "ib", "mlx5_1 port 1", "200 Gb/s", TE_HV_FAIL,
		      "ib mlx5_1 port 1 rate 200 Gb/s (want 400)");
	te_health_prolog_decide(&s, &site, &merged, &o);
	is_int(o.n_drain, 0,
	       "a failure only of the user's stricter rate: never drains");
	is_int(o.n_exclude, 1, "... but keeps the node out of this job");

	te_health_set_init(&s, "n2");
	te_health_add(&s, "ib", "mlx5_0 port 1", "", TE_HV_ERROR,
		      "ib: no answer within 10 s");
	te_health_prolog_decide(&s, &site, &site, &o);
	is_int(o.n_drain, 0, "a check that could not decide: never drains");
	is_int(o.n_exclude, 1, "... it keeps the node out of this job");

	te_health_site_load("health=ib", &site, &dp, &pp, err, sizeof(err));
	failing_set(&s);
	te_health_prolog_decide(&s, &site, &site, &o);
	is_int(o.n_drain + o.n_exclude, 0, "the site's warn: nothing done");
	is_int(o.n_warn, 2, "... two warnings");
}

static void test_verdict(void)
{
	static struct te_health_set s;
	static char buf[TE_HEALTH_VERDICT_MAX];
	struct te_health_policy site;
	struct te_drain_policy dp;
	struct te_health_prolog_policy pp;
	char node[64], line[256];

	failing_set(&s);
	te_health_site_load("health=ib health_ib_action=exclude", &site, &dp,
			    &pp, err, sizeof(err));
	is_int(te_health_verdict_encode("n2", &s, &site, &site, buf,
					sizeof(buf)),
	       0, "a verdict encodes");
	is_str(buf,
	       "trainenv-health-verdict 1\nnode n2\n"
	       "exclude ib mlx5_0 port 1 state DOWN (want ACTIVE)\n"
	       "exclude ib mlx5_1 port 1 rate 200 Gb/s (want 400)\n",
	       "... one line per failure with its action");
	is_int(te_health_verdict_decode(buf, strlen(buf), node, sizeof(node),
					line, sizeof(line), err, sizeof(err)),
	       1, "... and decodes: a failure");
	is_str(node, "n2", "... the node");
	is_str(line, "exclude ib mlx5_0 port 1 state DOWN (want ACTIVE)",
	       "... the first failure's line");
	is_int(te_health_verdict_decode("trainenv-health-verdict 1\nnode n2\n",
					35, node, sizeof(node), line,
					sizeof(line), err, sizeof(err)),
	       0, "a verdict without failures: 0");
	is_int(te_health_verdict_decode("hello\n", 6, node, sizeof(node), line,
					sizeof(line), err, sizeof(err)),
	       -1, "not a verdict: -1");
	is_str(err, "not a trainenv health verdict", "... saying so");
	{
		static const char evil[] =
			"trainenv-health-verdict 1\nnode n\x1b[2J\n"
			"drain \x07\xff owned\n";

		is_int(te_health_verdict_decode(evil, sizeof(evil) - 1, node,
						sizeof(node), line,
						sizeof(line), err, sizeof(err)),
		       1, "control and high bytes: still one failure");
		is_str(line, "drain ?? owned",
		       "... cleaned to printable ASCII");
		is_str(node, "n?[2J", "... the node too");
	}
	is_int(te_health_verdict_decode(buf, 20, node, sizeof(node), line,
					sizeof(line), err, sizeof(err)),
	       -1, "a verdict cut inside its first line: -1");
	is_int(te_health_verdict_encode("n2", &s, &site, &site, buf, 40), -1,
	       "a buffer too small to encode: -1 (cut)");
}

/* The settings room keeps the health keys as given (core/settings/
 * policy.c): in order, bounded, printable, no blanks; from a policy file
 * a message names the key, never the value. */
static void test_policy_items(void)
{
	static struct te_policy p;
	static const char file[] = "health=ib\nhealth_ib_rate=200 # fast\n";
	static const char bad[] = "health=ib\nhealth_eth=ib0 secret\n";
	struct te_health_policy hp;
	struct te_drain_policy dp;
	struct te_health_prolog_policy pp;

	te_policy_init(&p);
	is_int(te_policy_buffer(&p, file, sizeof(file) - 1, "/etc/t.conf", err,
				sizeof(err)),
	       0, "a policy file's health keys are taken");
	is_str(p.health.items, "health=ib health_ib_rate=200",
	       "... kept in order, the comment gone");
	is_int(te_health_site_load(p.health.items, &hp, &dp, &pp, err,
				   sizeof(err)),
	       0, "... and read back by the health room");
	is_int(hp.ib_min_gbps, 200, "... health_ib_rate 200");
	te_policy_init(&p);
	is_int(te_policy_buffer(&p, bad, sizeof(bad) - 1, "/etc/t.conf", err,
				sizeof(err)),
	       -1, "a value with a blank in a policy file: refused");
	like(err, "/etc/t.conf:2: health_eth: invalid value",
	     "... naming the file, the line and the key");
	ok(!strstr(err, "secret"), "... never the value (users may not "
				   "read the file)");
}

/* The user's checks for the step: what the user's text touches, cut to
 * what a user may run (no hook, no XIDs, no node GPU count). */
static int step_of(const char *site_items, const char *user_text,
		   struct te_health_policy *step)
{
	static struct te_health_job_policy jp;

	if (te_health_job_policy(site_items, user_text, &jp, err, sizeof(err)) <
	    0) {
		printf("# %s\n", err);
		return -1;
	}
	return te_health_step_policy(&jp.site, &jp.user, &jp.merged, step);
}

static void test_step_policy(void)
{
	struct te_health_policy st;
	const char *site =
		"health=ib,gpu,hook health_hook=/usr/sbin/chk "
		"health_xid=on health_gpu_count=8 health_ib_rate=100";

	is_int(step_of(site, "ib_rate=200", &st), 1,
	       "a stricter ib rate: the step runs the ib check");
	is_int(st.checks, 1u << TE_HC_IB, "  the ib check only");
	is_int((int)st.ib_min_gbps, 200, "  at the user's rate");
	is_int(step_of(site, "gpu_action=exclude", &st), 1,
	       "a stricter gpu action: the gpu check");
	ok(st.checks == 1u << TE_HC_GPU &&
		   st.action[TE_HC_GPU] == TE_HA_EXCLUDE,
	   "  with the user's action");
	ok(!st.xid && st.gpu_count == 0 && !st.hook[0],
	   "  without the XIDs, the node's GPU count or the hook (root's)");
	is_int(step_of(site, "ib,gpu,hook,eth;eth=lo:1000", &st), 1,
	       "an interface the user adds: the eth check");
	is_int(st.checks, 1u << TE_HC_ETH,
	       "  only that one: the site's, named again, are the prolog's");
	is_int(step_of("health=ib", "ib,gpu", &st), 1, "checks the user names");
	is_int(st.checks, 1u << TE_HC_GPU, "  the one the site does not run");
	is_int(step_of("", "ib,gpu", &st), 1, "no site check: the user's");
	is_int(st.checks, (1u << TE_HC_IB) | (1u << TE_HC_GPU), "  both");
	is_int(step_of(site, "", &st), 0,
	       "no text of the user's: nothing for the step");
	is_int(step_of("health=ib health_storage=64M", "ib,gpu", &st), 1,
	       "the site's storage check");
	ok(st.storage_bytes == 0, "  is the launch's, never the step's");
}

/* The job's AdminComment: the node's entry added after what is there,
 * once; no room, no write. */
static void test_comment(void)
{
	char out[TE_HEALTH_COMMENT_MAX + 1], cur[TE_HEALTH_COMMENT_READ + 8];
	int i;

	is_int(te_health_comment_compose("(null)          \n", "n2",
					 "left out: ib down", out, sizeof(out)),
	       1, "an empty comment (squeue's \"(null)\", padded): added");
	is_str(out, "trainenv: n2: left out: ib down", "  as the one entry");
	memset(cur, ' ', TE_HEALTH_COMMENT_READ);
	memcpy(cur, "site", 4);
	strcpy(cur + TE_HEALTH_COMMENT_READ, "\n");
	is_int(te_health_comment_compose(cur, "n2", "x", out, sizeof(out)), 1,
	       "squeue's field padded to its whole width: read as its text");
	is_str(out, "site; trainenv: n2: x", "  with the padding gone");
	is_int(te_health_comment_compose("a\nb", "n2", "x", out, sizeof(out)),
	       -1, "two lines (two rows, a message): never written back");
	is_int(te_health_comment_compose("a\tb", "n2", "x", out, sizeof(out)),
	       -1, "an odd byte: never written back");
	is_int(te_health_comment_compose("site text   ", "n2", "drained: x",
					 out, sizeof(out)),
	       1, "the site's own text: kept in front");
	is_str(out, "site text; trainenv: n2: drained: x", "  joined by '; '");
	is_int(te_health_comment_compose("site; trainenv: n2: drained: x", "n2",
					 "drained: x", out, sizeof(out)),
	       0, "the node's entry is there: nothing to write");
	is_int(te_health_comment_compose("trainenv: n22: y", "n2", "x", out,
					 sizeof(out)),
	       1, "another node whose name starts the same is not this one");
	is_int(te_health_comment_compose("a trainenv: n2: y", "n2", "x", out,
					 sizeof(out)),
	       1, "\"trainenv: n2:\" inside the site's text is no entry");
	is_int(te_health_comment_compose("", "n2", "bad\x01\xff", out,
					 sizeof(out)),
	       1, "a reason with odd bytes");
	is_str(out, "trainenv: n2: bad??", "  is cleaned to printable ASCII");
	out[0] = '\0';
	for (i = 0; i < TE_HEALTH_COMMENT_NODES; i++)
		te_appendf(out, sizeof(out), "%strainenv: n%d: x",
			   i ? "; " : "", 10 + i);
	is_int(te_health_comment_compose(out, "n2", "x", cur, sizeof(cur)), -1,
	       "as many of trainenv's entries as TE_HEALTH_COMMENT_NODES: "
	       "no more");
	memset(cur, 'a', TE_HEALTH_COMMENT_MAX - 10);
	cur[TE_HEALTH_COMMENT_MAX - 10] = '\0';
	is_int(te_health_comment_compose(cur, "n2", "drained: x", out,
					 sizeof(out)),
	       -1, "no room under TE_HEALTH_COMMENT_MAX: nothing written");
	memset(cur, 'a', TE_HEALTH_COMMENT_READ);
	cur[TE_HEALTH_COMMENT_READ] = '\0';
	is_int(te_health_comment_compose(cur, "n2", "x", out, sizeof(out)), -1,
	       "a value that fills squeue's width was cut: never written "
	       "back");
}

int main(void)
{
	test_prolog_keys();
	test_site_load();
	test_user();
	test_decide();
	test_verdict();
	test_policy_items();
	test_comment();
	test_step_policy();
	return tap_done();
}
