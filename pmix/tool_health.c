/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv health: node health checks (issue 34) on this node, by hand:
 * the checks the health keys name, each in a child bounded in time
 * (core/health/), one line per result, or JSON; exit 0 only when every
 * check passes. The sysfs tree is /sys unless the invoking admin names
 * another (--sysfs-root): never from the environment. NVML is loaded
 * at run time (nvml_load.c), in the GPU check's child. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health/health.h"
#include "nvml_load.h"
#include "util/strutil.h"
#include "util/textbuf.h"
#include "tool.h"
#include "tool_health.h"

#define DEFAULT_CHECKS "ib,eth,gpu"
#define OUT_MAX (TE_HEALTH_RESULTS_MAX * 1024)

#define LOCK_DIR "/run/trainenv"

static void run_ib(const void *arg, struct te_health_set *out)
{
	const struct te_health_ctx *c = arg;

	te_health_check_ib_ports(c->root, c->pol->ib_min_gbps, c->pol->ib_ports,
				 c->pol->n_ib_ports, out);
}

static void run_eth(const void *arg, struct te_health_set *out)
{
	const struct te_health_ctx *c = arg;

	te_health_check_eth(c->root, c->pol->eth, c->pol->n_eth, out);
}

/* --kmsg FILE, --state-dir DIR: the XID check's kernel log and its
 * watermark's directory, named only on the command line (a test's
 * stand-ins), never by the environment; NULL: /dev/kmsg, /run/trainenv */
static const char *xid_kmsg, *xid_dir;

static void run_hook(const void *arg, struct te_health_set *out)
{
	const struct te_health_ctx *c = arg;

	te_health_check_hook(c->pol->hook, out);
}

/* The GPU check; with health_xid=on, the XIDs since the last check too:
 * the log read first (bounded), the watermark moved on only once the
 * results are made (a check killed in NVML leaves it for the next). */
static void run_gpu(const void *arg, struct te_health_set *out)
{
	const struct te_health_ctx *c = arg;
	static struct te_health_gpu_pci pci[GPUS_MAX];
	static struct te_xid_scan xid;
	char err[160];
	int npci = 0;

	if (c->pol->xid)
		te_xid_read(xid_kmsg, xid_dir, &xid);
	te_nvml_check(c->pol->nvml, c->gpus, c->ngpus, c->pol->gpu_count,
		      c->pol->nvlink, c->allowed_uid, c->pol->xid ? pci : NULL,
		      &npci, out);
	if (!c->pol->xid)
		return;
	te_xid_results(&xid, pci, npci, c->pol, out);
	if (!xid.err[0] && te_xid_commit(xid_dir, &xid, err, sizeof(err)) < 0)
		te_health_add(out, "gpu", "xid", "", TE_HV_ERROR, "gpu xid: %s",
			      err);
}

/* The lock the GPU check's child holds for its life (te_health_check's
 * lock), so that checks stuck in the driver never pile up: root's, under
 * /run/trainenv, one per NVML library (the tests' stand-ins apart from
 * the node's); NULL when not root (nothing to guard: no prolog). */
static const char *gpu_lock(const struct te_health_policy *pol)
{
	static char path[64];
	unsigned h = 2166136261u;
	const char *p;

	if (geteuid() != 0 || (mkdir(LOCK_DIR, 0755) < 0 && errno != EEXIST))
		return NULL;
	if (!pol->nvml[0])
		return LOCK_DIR "/health-gpu.lock";
	for (p = pol->nvml; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	te_snprintf(path, sizeof(path), LOCK_DIR "/health-gpu-%08x.lock", h);
	return path;
}

int te_health_checks_run(const struct te_health_ctx *c,
			 struct te_health_set *set, char *err, size_t errlen)
{
	const struct te_health_policy *pol = c->pol;
	struct te_health_check checks[TE_HC_COUNT];
	int n = 0;

	if (pol->checks & (1u << TE_HC_IB))
		checks[n++] = (struct te_health_check){ "ib", run_ib, c, NULL };
	if (pol->checks & (1u << TE_HC_ETH))
		checks[n++] =
			(struct te_health_check){ "eth", run_eth, c, NULL };
	if (pol->checks & (1u << TE_HC_GPU))
		checks[n++] = (struct te_health_check){ "gpu", run_gpu, c,
							gpu_lock(pol) };
	if (pol->checks & (1u << TE_HC_HOOK))
		checks[n++] =
			(struct te_health_check){ "hook", run_hook, c, NULL };
	return te_health_run(checks, n, (int)pol->timeout_s * 1000, set, err,
			     errlen);
}

int te_health_ctx_node(struct te_health_ctx *c, const char *node_opt,
		       const char *test_root, char *node, size_t nodelen,
		       char *root, size_t rootlen)
{
	if (node_opt)
		te_strlcpy(node, node_opt, nodelen);
	else
		te_node_name(node, nodelen);
	c->root = "/sys";
	if (!test_root[0])
		return 0;
	if (te_health_root_for(test_root, node, root, rootlen) < 0)
		return -1;
	c->root = root;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trainenv health [--json] [--sysfs-root DIR] [--gpus "
		"LIST]\n                       [--allow-uid UID] [--drain "
		"[--node NAME] [--slurm-bin DIR]]\n                       "
		"[KEY=VALUE...]\n\n"
		"Runs node health checks on this node, each in a process of "
		"its own that is\nkilled at the bound (health_timeout), and "
		"prints one line per result\n(NODE CHECK VERDICT RESULT), or "
		"one JSON object with --json. Exits 0 when\nevery check passes "
		"(or does not apply), 1 when one fails, 2 on a usage error.\n\n"
		"KEY=VALUE: the health policy's keys (trainenv(8)):\n"
		"  health=ib,eth,gpu,hook     the checks (default: %s)\n"
		"  health_ib_rate=GBPS        least InfiniBand/RoCE port rate "
		"(0: any)\n"
		"  health_eth=IF[:MBPS],...   Ethernet interfaces that must be "
		"up (and their speed)\n"
		"  health_hook=PATH|none      the site's hook, run with the "
		"checks (adds hook to\n                             them): "
		"exit 0 passes, else its first output line\n"
		"                             is the reason; root's file "
		"alone\n"
		"  health_timeout=S           each check's bound (1 to 300, "
		"default %d;\n                             with --drain at "
		"most %d)\n"
		"  health_drain=on|off        whether --drain drains (default "
		"on)\n"
		"  health_drain_max=N|N%%      nodes trainenv drains per "
		"interval, cluster-wide\n"
		"                             (default 10%%, at least 1)\n"
		"  health_drain_interval=S    that interval (default 3600)\n"
		"  health_nvlink=N            NVLink links per GPU that must be "
		"up (0: not checked)\n"
		"  health_xid=on|off          gpu: fail on XIDs logged since "
		"the last check\n"
		"  health_xid_fail=LIST       the XIDs that fail (default "
		"%s)\n"
		"  health_ib_action=, health_eth_action=, health_gpu_action=,\n"
		"  health_hook_action=, health_user_weaker=\n"
		"                             parsed and checked (the job's "
		"policy)\n\n"
		"--kmsg FILE       with health_xid=on, read the XIDs from FILE "
		"(records in\n                  /dev/kmsg's format) "
		"instead of /dev/kmsg\n"
		"--state-dir DIR   the XID watermark's directory (default "
		"/run/trainenv)\n"
		"--sysfs-root DIR  read DIR/class/... instead of /sys (a test's "
		"stand-in tree)\n"
		"--gpus LIST       the job's GPUs, NVML indices (0,1,...); "
		"default: every GPU\n"
		"--allow-uid UID   whose processes on the GPUs are the job's; "
		"without it the\n                  processes are not "
		"checked (no job: any user's may be there)\n"
		"--drain           on a failure, drain this node in Slurm with "
		"reason\n                  'trainenv: ' and the first failing "
		"line (as HealthCheckProgram)\n"
		"--node NAME       this node's Slurm name (default: the host "
		"name)\n"
		"--slurm-bin DIR   sinfo and scontrol from DIR (default: "
		"/usr/bin, then\n                  /usr/local/bin; never "
		"PATH)\n",
		DEFAULT_CHECKS, TE_HEALTH_TIMEOUT_DEFAULT,
		TE_DRAIN_BUDGET_S - TE_DRAIN_CONTROLLER_S, TE_XID_FAIL_DEFAULT);
}

/* --gpus LIST into c; 0, or 2 (usage). */
static int parse_gpus(const char *list, struct te_health_ctx *c)
{
	char buf[512], *save = NULL, *tok;
	uint64_t v;

	c->ngpus = 0;
	if (te_strlcpy(buf, list, sizeof(buf)) >= sizeof(buf))
		buf[0] = '\0';
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (c->ngpus >= GPUS_MAX || te_parse_u64(tok, 1023, &v) < 0)
			break;
		c->gpus[c->ngpus++] = (unsigned)v;
	}
	if (tok || !c->ngpus) {
		char q[80];

		te_quote(q, sizeof(q), list);
		fprintf(stderr,
			"trainenv health: --gpus: invalid value '%s'; "
			"accepted: a comma-separated list of GPU indices "
			"0 to 1023 (at most %d)\n",
			q, GPUS_MAX);
		return 2;
	}
	return 0;
}

/* --kmsg FILE (a file of records in /dev/kmsg's format) or --state-dir
 * DIR (absolute): 0, or 2 (usage). */
static int xid_option(const char *a, const char *v)
{
	struct stat st;

	if (!strcmp(a, "--kmsg")) {
		if (stat(v, &st) < 0 ||
		    (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))) {
			fprintf(stderr,
				"trainenv health: --kmsg: not a file: %.200s\n",
				v);
			return 2;
		}
		xid_kmsg = v;
		return 0;
	}
	if (v[0] != '/' || strlen(v) > 200) {
		fprintf(stderr, "trainenv health: --state-dir: invalid value; "
				"accepted: an absolute directory\n");
		return 2;
	}
	xid_dir = v;
	return 0;
}

/* An option with its value (argv[*i + 1]); 0, 1 (not one of these), or
 * 2 (usage). */
static int option_value(int argc, char **argv, int *i, struct te_health_ctx *c)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	struct stat st;
	uint64_t uid;

	if (strcmp(a, "--sysfs-root") && strcmp(a, "--gpus") &&
	    strcmp(a, "--allow-uid") && strcmp(a, "--node") &&
	    strcmp(a, "--slurm-bin") && strcmp(a, "--kmsg") &&
	    strcmp(a, "--state-dir"))
		return 1;
	if (!v) {
		fprintf(stderr, "trainenv health: %s needs a value\n", a);
		return 2;
	}
	(*i)++;
	if (!strcmp(a, "--kmsg") || !strcmp(a, "--state-dir"))
		return xid_option(a, v);
	if (!strcmp(a, "--node")) {
		if (!te_word_valid(v, TE_HEALTH_NODE_MAX, "-_.")) {
			fprintf(stderr,
				"trainenv health: --node: invalid value; "
				"accepted: a node name of letters, digits, "
				"'-', '_', '.'\n");
			return 2;
		}
		c->node = v;
		return 0;
	}
	if (!strcmp(a, "--gpus"))
		return parse_gpus(v, c);
	if (!strcmp(a, "--slurm-bin")) {
		if (v[0] != '/' || strchr(v, ':') || stat(v, &st) < 0 ||
		    !S_ISDIR(st.st_mode)) {
			fprintf(stderr,
				"trainenv health: --slurm-bin: invalid value; "
				"accepted: an absolute directory (no ':') "
				"holding sinfo and scontrol\n");
			return 2;
		}
		c->slurm_bin = v;
		return 0;
	}
	if (!strcmp(a, "--allow-uid")) {
		if (te_parse_u64(v, 4294967294u, &uid) < 0) {
			fprintf(stderr,
				"trainenv health: --allow-uid: invalid value; "
				"accepted: a numeric uid\n");
			return 2;
		}
		c->allowed_uid = (long)uid;
		return 0;
	}
	c->root = v;
	if (stat(v, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"trainenv health: --sysfs-root: not a directory: "
			"%.200s\n",
			v);
		return 2;
	}
	return 0;
}

/* A drain key (health_drain*=): 0 (applied), 1 (not one), 2 (usage). */
static int drain_key(const char *a, struct te_drain_policy *p)
{
	char key[32], err[TE_HEALTH_TEXT_MAX * 2];
	const char *eq = strchr(a, '=');

	if (!eq || (size_t)(eq - a) >= sizeof(key))
		return 1;
	memcpy(key, a, (size_t)(eq - a));
	key[eq - a] = '\0';
	switch (te_drain_policy_set(p, key, eq + 1, "trainenv health", err,
				    sizeof(err))) {
	case 1:
		return 0;
	case 0:
		return 1;
	}
	fprintf(stderr, "%s\n", err);
	return 2;
}

/* The command line into pol, c and json; 0, or 2 (usage). */
static int parse_args(int argc, char **argv, struct te_health_policy *pol,
		      struct te_health_ctx *c, int *json)
{
	char err[TE_HEALTH_TEXT_MAX * 2], q[80];
	int i, rc;

	te_health_policy_init(pol);
	te_health_policy_set(pol, "health", DEFAULT_CHECKS, "default", err,
			     sizeof(err));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json")) {
			*json = 1;
			continue;
		}
		if (!strcmp(a, "--drain")) {
			c->drain = 1;
			continue;
		}
		rc = option_value(argc, argv, &i, c);
		if (rc != 1) {
			if (rc)
				return rc;
			continue;
		}
		rc = drain_key(a, &c->drain_pol);
		if (rc != 1) {
			if (rc)
				return rc;
			continue;
		}
		if (strchr(a, '=') && a[0] != '-') {
			if (te_health_policy_parse(pol, a, strlen(a),
						   "trainenv health", err,
						   sizeof(err)) < 0) {
				fprintf(stderr, "%s\n", err);
				return 2;
			}
			continue;
		}
		te_quote(q, sizeof(q), a);
		fprintf(stderr,
			"trainenv health: unexpected argument '%s' (see "
			"trainenv health --help)\n",
			q);
		return 2;
	}
	return 0;
}

int te_tool_health(int argc, char **argv)
{
	static struct te_health_set set;
	static struct te_health_ctx ctx;
	static char out[OUT_MAX];
	struct te_health_policy pol;
	char node[TE_HEALTH_NODE_MAX], err[256];
	struct te_buf b;
	int json = 0, rc;

	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	ctx.root = "/sys";
	/* No --allow-uid: no job (HealthCheckProgram, root): every user's
	 * job may be on the GPUs, so none of their processes is foreign. */
	ctx.allowed_uid = TE_HEALTH_NO_JOB;
	te_drain_policy_init(&ctx.drain_pol);
	rc = parse_args(argc, argv, &pol, &ctx, &json);
	if (rc)
		return rc;
	/* review finding 10: slurmd kills HealthCheckProgram at 60 s; a
	 * bound that leaves the drain no time means it never drains */
	if (ctx.drain &&
	    pol.timeout_s + TE_DRAIN_CONTROLLER_S > TE_DRAIN_BUDGET_S) {
		fprintf(stderr,
			"trainenv health: health_timeout=%u with --drain: "
			"at most %d (the bound plus the controller's %d s "
			"must end within %d s: slurmd kills "
			"HealthCheckProgram at 60 s)\n",
			pol.timeout_s,
			TE_DRAIN_BUDGET_S - TE_DRAIN_CONTROLLER_S,
			TE_DRAIN_CONTROLLER_S, TE_DRAIN_BUDGET_S);
		return 2;
	}
	ctx.pol = &pol;
	te_node_name(node, sizeof(node));
	te_health_set_init(&set, node);
	if (te_health_checks_run(&ctx, &set, err, sizeof(err)) < 0) {
		fprintf(stderr, "trainenv %s\n", err);
		return 1;
	}
	te_buf_init(&b, out, sizeof(out));
	if (json)
		te_health_json(&set, &b);
	else
		te_health_table(&set, &b);
	fputs(out, stdout);
	fflush(stdout);
	te_health_reap();
	if (te_health_set_ok(&set))
		return 0;
	if (ctx.drain)
		te_health_drain(&set, &ctx.drain_pol,
				ctx.node ? ctx.node : node, ctx.slurm_bin);
	return 1;
}
