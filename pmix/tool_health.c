/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv health: node health checks (issue 34) on this node, by hand:
 * the checks the health keys name, each in a child bounded in time
 * (core/health/), one line per result, or JSON; exit 0 only when every
 * check passes. The sysfs tree is /sys unless the invoking admin names
 * another (--sysfs-root): never from the environment. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "health/health.h"
#include "util/strutil.h"
#include "util/textbuf.h"
#include "tool.h"

#define DEFAULT_CHECKS "ib,eth"
#define OUT_MAX (TE_HEALTH_RESULTS_MAX * 1024)

struct health_ctx {
	const char *root;
	const struct te_health_policy *pol;
};

static void run_ib(const void *arg, struct te_health_set *out)
{
	const struct health_ctx *c = arg;

	te_health_check_ib(c->root, c->pol->ib_min_gbps, out);
}

static void run_eth(const void *arg, struct te_health_set *out)
{
	const struct health_ctx *c = arg;

	te_health_check_eth(c->root, c->pol->eth, c->pol->n_eth, out);
}

static void run_gpu(const void *arg, struct te_health_set *out)
{
	(void)arg;
	te_health_add(out, "gpu", "", "", TE_HV_FAIL,
		      "gpu: the GPU checks (NVML) are not built in this "
		      "version: cannot check");
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trainenv health [--json] [--sysfs-root DIR] "
		"[KEY=VALUE...]\n\n"
		"Runs node health checks on this node, each in a process of "
		"its own that is\nkilled at the bound (health_timeout), and "
		"prints one line per result\n(NODE CHECK VERDICT RESULT), or "
		"one JSON object with --json. Exits 0 when\nevery check passes "
		"(or does not apply), 1 when one fails, 2 on a usage error.\n\n"
		"KEY=VALUE: the health policy's keys (trainenv(8)):\n"
		"  health=ib,eth,gpu          the checks (default: %s)\n"
		"  health_ib_rate=GBPS        least InfiniBand/RoCE port rate "
		"(0: any)\n"
		"  health_eth=IF[:MBPS],...   Ethernet interfaces that must be "
		"up (and their speed)\n"
		"  health_timeout=S           each check's bound (1 to 300, "
		"default %d)\n"
		"  health_ib_action=, health_eth_action=, health_gpu_action=, "
		"health_user_weaker=\n"
		"                             parsed and checked; this command "
		"drains nothing\n\n"
		"--sysfs-root DIR  read DIR/class/... instead of /sys (a test's "
		"stand-in tree)\n",
		DEFAULT_CHECKS, TE_HEALTH_TIMEOUT_DEFAULT);
}

/* The command line into pol, root and json; 0, or 2 (usage). */
static int parse_args(int argc, char **argv, struct te_health_policy *pol,
		      const char **root, int *json)
{
	char err[TE_HEALTH_TEXT_MAX * 2];
	struct stat st;
	int i;

	te_health_policy_init(pol);
	te_health_policy_set(pol, "health", DEFAULT_CHECKS, "default", err,
			     sizeof(err));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json")) {
			*json = 1;
		} else if (!strcmp(a, "--sysfs-root") && i + 1 < argc) {
			*root = argv[++i];
			if (stat(*root, &st) < 0 || !S_ISDIR(st.st_mode)) {
				fprintf(stderr,
					"trainenv health: --sysfs-root: not a "
					"directory: %.200s\n",
					*root);
				return 2;
			}
		} else if (strchr(a, '=') && a[0] != '-') {
			if (te_health_policy_parse(pol, a, strlen(a),
						   "trainenv health", err,
						   sizeof(err)) < 0) {
				fprintf(stderr, "%s\n", err);
				return 2;
			}
		} else {
			char q[80];

			te_quote(q, sizeof(q), a);
			fprintf(stderr,
				"trainenv health: unexpected argument '%s' "
				"(see trainenv health --help)\n",
				q);
			return 2;
		}
	}
	return 0;
}

int te_tool_health(int argc, char **argv)
{
	static struct te_health_set set;
	static char out[OUT_MAX];
	struct te_health_policy pol;
	struct te_health_check checks[TE_HC_COUNT];
	struct health_ctx ctx;
	const char *root = "/sys";
	char node[TE_HEALTH_NODE_MAX], err[256];
	struct te_buf b;
	int json = 0, n = 0, rc;

	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	rc = parse_args(argc, argv, &pol, &root, &json);
	if (rc)
		return rc;
	ctx.root = root;
	ctx.pol = &pol;
	if (pol.checks & (1u << TE_HC_IB))
		checks[n++] = (struct te_health_check){ "ib", run_ib, &ctx };
	if (pol.checks & (1u << TE_HC_ETH))
		checks[n++] = (struct te_health_check){ "eth", run_eth, &ctx };
	if (pol.checks & (1u << TE_HC_GPU))
		checks[n++] = (struct te_health_check){ "gpu", run_gpu, &ctx };
	te_node_name(node, sizeof(node));
	te_health_set_init(&set, node);
	if (te_health_run(checks, n, (int)pol.timeout_s * 1000, &set, err,
			  sizeof(err)) < 0) {
		fprintf(stderr, "trainenv %s\n", err);
		return 1;
	}
	te_buf_init(&b, out, sizeof(out));
	if (json)
		te_health_json(&set, &b);
	else
		te_health_table(&set, &b);
	fputs(out, stdout);
	te_health_reap();
	return te_health_set_ok(&set) ? 0 : 1;
}
