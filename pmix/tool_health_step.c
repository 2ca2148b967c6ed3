/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-health --step: the user's own node health checks
 * (--train-health), run as the user by each task of a step before its
 * pre-flight (spank/stepd_health.c). The checks the user's text names or
 * makes stricter (te_health_step_policy), with the site's thresholds as
 * the floor; nothing is drained, nothing written. Prints one line per
 * failure, "exclude TEXT" or "warn TEXT" (at most PRINT_MAX), and exits
 * 0 (nothing keeps the node out of the step), 1 (a check failed whose
 * action keeps it out) or 2 (usage, or the user's text refused). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "health/health_prolog.h"
#include "util/strutil.h"
#include "tool_health.h"

#define PREFIX "trainenv-health: "
#define EXIT_PASS 0
#define EXIT_EXCLUDE 1
#define EXIT_USAGE 2
#define PRINT_MAX 8

struct step_opts {
	const char *site, *user, *node;
};

static int usage_error(const char *what)
{
	fprintf(stderr,
		PREFIX "%s\nusage: trainenv-health --step --site ITEMS --user "
		       "TEXT [--node NAME]\n(run by each task of a step with "
		       "--train-health, as the job's user)\n",
		what);
	return EXIT_USAGE;
}

static int parse_opts(int argc, char **argv, struct step_opts *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i],
			   *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--step"))
			continue;
		if (!val)
			return usage_error("an option without its value");
		i++;
		if (!strcmp(a, "--site"))
			o->site = val;
		else if (!strcmp(a, "--user"))
			o->user = val;
		else if (!strcmp(a, "--node") &&
			 te_word_valid(val, TE_HEALTH_NODE_MAX, "-_."))
			o->node = val;
		else
			return usage_error("unknown option or bad value");
	}
	if (!o->site || !o->user)
		return usage_error("--site and --user are needed");
	return 0;
}

/* The step's policy from the site's items and the user's text: 1 (checks
 * to run), 0 (none), -1 (said). */
static int step_policy(const struct step_opts *o,
		       struct te_health_job_policy *jp,
		       struct te_health_policy *step)
{
	char err[512];

	if (te_health_job_policy(o->site, o->user, jp, err, sizeof(err)) < 0) {
		fprintf(stderr, PREFIX "%s\n", err);
		return -1;
	}
	return te_health_step_policy(&jp->site, &jp->user, &jp->merged, step);
}

int te_tool_health_step(int argc, char **argv)
{
	static struct te_health_set set;
	static struct te_health_ctx ctx;
	static struct te_health_job_policy jp;
	static struct te_health_policy step;
	struct step_opts o = { 0 };
	char node[TE_HEALTH_NODE_MAX], root[TE_HEALTH_ROOT_MAX + 64], err[256];
	int i, rc = parse_opts(argc, argv, &o), shown = 0, out = 0;

	if (rc)
		return rc;
	rc = step_policy(&o, &jp, &step);
	if (rc <= 0)
		return rc < 0 ? EXIT_USAGE : EXIT_PASS;
	if (te_health_ctx_node(&ctx, o.node, jp.prolog.test_root, node,
			       sizeof(node), root, sizeof(root)) < 0)
		return usage_error("health_test_root too long");
	ctx.pol = &step;
	/* the GPUs NVML shows the job's cgroup; other users' processes on
	 * an unconstrained node are no fault of it */
	ctx.allowed_uid = TE_HEALTH_NO_JOB;
	te_health_set_init(&set, node);
	if (te_health_checks_run(&ctx, &set, err, sizeof(err)) < 0) {
		fprintf(stderr, PREFIX "%s (not judged)\n", err);
		return EXIT_PASS;
	}
	te_health_reap();
	for (i = 0; i < set.n; i++) {
		const struct te_health_result *r = &set.r[i];
		/* a user's check never drains: drain keeps it out, no more */
		int keep_out = te_health_action_for(r, &jp.site, &step) !=
			       TE_HA_WARN;

		if (r->verdict != TE_HV_FAIL && r->verdict != TE_HV_ERROR)
			continue;
		out |= keep_out;
		if (shown++ < PRINT_MAX)
			printf("%s %s\n", keep_out ? "exclude" : "warn",
			       r->text);
	}
	if (!out && (set.cut_fail || set.cut_error)) {
		printf("exclude %d failed results past the %d listed\n",
		       set.cut_fail + set.cut_error, TE_HEALTH_RESULTS_MAX);
		out = 1;
	}
	fflush(stdout);
	return out ? EXIT_EXCLUDE : EXIT_PASS;
}
