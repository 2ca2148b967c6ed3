/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-health: the job prolog's node health run (spank/jobprolog.c
 * starts it as root on each node of a job). Runs the checks of the job's
 * policy (the site's health keys made stricter by the user's
 * --train-health), drains the node where a failure's action is drain
 * (with the site's guards), and leaves the verdict for the job's steps
 * in a root-owned file; exit 0 (nothing keeps the node out), 1 (a
 * verdict was left), 3 (drained, and the site's health_on_fail=fail: the
 * prolog fails), 2 (usage). Every line it writes is for slurmd's log. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health/health_prolog.h"
#include "util/strutil.h"
#include "tool.h"
#include "tool_health.h"

#define PREFIX "trainenv-health: "
#define EXIT_PASS 0
#define EXIT_VERDICT 1
#define EXIT_USAGE 2
#define EXIT_DRAINED_FAIL 3
#define PRINT_MAX 8 /* failure lines; the rest counted */
_Static_assert(TE_HEALTH_PROLOG_DRAIN_S ==
		       TE_DRAIN_CONTROLLER_S + 1 + 2 * TE_DRAIN_SLURM_S,
	       "TE_HEALTH_PROLOG_DRAIN_S counts the drain's controller calls");

struct prolog_opts {
	const char *job, *site, *user, *node, *gpus;
	unsigned long job_id; /* job's number */
	long uid;
};

static int usage_error(const char *what)
{
	fprintf(stderr,
		PREFIX "%s\nusage: trainenv-health --prolog --job ID "
		       "--allow-uid UID --site ITEMS [--user TEXT] [--node "
		       "NAME] [--gpus LIST]\n(run by trainenv's job prolog)\n",
		what);
	return EXIT_USAGE;
}

static int parse_opts(int argc, char **argv, struct prolog_opts *o)
{
	uint64_t v;
	int i;

	o->uid = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i],
			   *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--prolog"))
			continue;
		if (!val)
			return usage_error("an option without its value");
		i++;
		if (!strcmp(a, "--job") &&
		    te_parse_u64(val, 0xffffffffu, &v) == 0) {
			o->job = val;
			o->job_id = (unsigned long)v;
		} else if (!strcmp(a, "--allow-uid") &&
			   te_parse_u64(val, 4294967294u, &v) == 0)
			o->uid = (long)v;
		else if (!strcmp(a, "--site"))
			o->site = val;
		else if (!strcmp(a, "--user"))
			o->user = val;
		else if (!strcmp(a, "--node") &&
			 te_word_valid(val, TE_HEALTH_NODE_MAX, "-_."))
			o->node = val;
		else if (!strcmp(a, "--gpus") &&
			 strspn(val, "0123456789,") == strlen(val))
			o->gpus = val;
		else
			return usage_error("unknown option or bad value");
	}
	if (!o->job || !o->site || o->uid < 0)
		return usage_error("--job, --allow-uid and --site are needed");
	return 0;
}

/* --gpus "0,1" into c. */
static void job_gpus(const char *list, struct te_health_ctx *c)
{
	char buf[256], *save = NULL, *tok;
	uint64_t v;

	c->ngpus = 0;
	if (!list || te_strlcpy(buf, list, sizeof(buf)) >= sizeof(buf))
		return;
	for (tok = strtok_r(buf, ",", &save); tok && c->ngpus < GPUS_MAX;
	     tok = strtok_r(NULL, ",", &save))
		if (te_parse_u64(tok, 1023, &v) == 0)
			c->gpus[c->ngpus++] = (unsigned)v;
}

/* The directory of verdicts: root's, not a link, not writable by others
 * (made when missing). 0, or -1 (said). */
static int verdict_dir(void)
{
	static const char *const dirs[] = { "/run/trainenv",
					    TE_HEALTH_VERDICT_DIR };
	struct stat st;
	int i;

	for (i = 0; i < 2; i++) {
		/* the mode set, not left to slurmd's umask: the job's tasks
		 * (its user) read the verdict (review finding 6) */
		if (mkdir(dirs[i], 0755) == 0)
			chmod(dirs[i], 0755);
		else if (errno != EEXIST) {
			fprintf(stderr, PREFIX "cannot make %s: %s\n", dirs[i],
				strerror(errno));
			return -1;
		}
		if (lstat(dirs[i], &st) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != 0 || (st.st_mode & 022)) {
			fprintf(stderr,
				PREFIX "%s is not a directory of root's that "
				       "only root may write: no verdict left\n",
				dirs[i]);
			return -1;
		}
	}
	return 0;
}

/* The verdict into DIR/job.JOB.NODE, whole or not at all (a new file
 * renamed over any old one). 0, or -1 (said). */
static int verdict_write(const struct prolog_opts *o, const char *node,
			 const char *text)
{
	char path[256], tmp[300];
	size_t len = strlen(text);
	int fd, ok;

	if (verdict_dir() < 0)
		return -1;
	te_health_verdict_path(o->job_id, node, path, sizeof(path));
	te_snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		fprintf(stderr, PREFIX "cannot write %s: %s\n", tmp,
			strerror(errno));
		return -1;
	}
	ok = fchmod(fd, 0644) == 0 && write(fd, text, len) == (ssize_t)len &&
	     fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		fprintf(stderr, PREFIX "cannot write %s: %s\n", path,
			strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The job's policies (a user's text the site refuses is said, and the
 * site's checks run alone). 0, or -1 (said). */
static int job_policy(const struct prolog_opts *o,
		      struct te_health_job_policy *jp)
{
	char err[512];
	int rc = te_health_job_policy(o->site, o->user, jp, err, sizeof(err));

	if (rc == -1) {
		fprintf(stderr, PREFIX "site health keys: %s\n", err);
		return -1;
	}
	if (rc == -2)
		fprintf(stderr,
			PREFIX "job %s: the user's %s is not used: %s\n",
			o->job, TE_HEALTH_OPTION, err);
	return 0;
}

/* One line per result that failed or could not decide, with its
 * action. */
static void print_failures(const struct te_health_set *set,
			   const struct prolog_opts *o,
			   const struct te_health_policy *site,
			   const struct te_health_policy *merged)
{
	int i, shown = 0, more = 0;

	for (i = 0; i < set->n; i++) {
		const struct te_health_result *r = &set->r[i];

		if (r->verdict != TE_HV_FAIL && r->verdict != TE_HV_ERROR)
			continue;
		/* the plugin reads a bounded output (review finding 4) */
		if (shown++ >= PRINT_MAX) {
			more++;
			continue;
		}
		fprintf(stderr, PREFIX "job %s node %s: %s (%s: %s)\n", o->job,
			set->node, r->text, te_health_verdict_name(r->verdict),
			te_health_action_name(
				te_health_action_for(r, site, merged)));
	}
	if (more + set->cut_fail + set->cut_error)
		fprintf(stderr, PREFIX "job %s node %s: %d more not shown\n",
			o->job, set->node,
			more + set->cut_fail + set->cut_error);
}

int te_tool_health_prolog(int argc, char **argv)
{
	static struct te_health_set set;
	static struct te_health_ctx ctx;
	static struct te_health_job_policy jp;
	static char verdict[TE_HEALTH_VERDICT_MAX];
	struct te_health_prolog_outcome out;
	struct prolog_opts o = { 0 };
	char node[TE_HEALTH_NODE_MAX], root[TE_HEALTH_ROOT_MAX + 64], err[256];
	char root_stale[256];
	int drained = 0, rc = parse_opts(argc, argv, &o);

	if (rc)
		return rc;
	if (job_policy(&o, &jp) < 0)
		return EXIT_USAGE;
	if (!jp.merged.checks)
		return EXIT_PASS;
	if (te_health_ctx_node(&ctx, o.node, jp.prolog.test_root, node,
			       sizeof(node), root, sizeof(root)) < 0)
		return usage_error("health_test_root too long");
	ctx.pol = &jp.merged;
	/* a job with no GPU here (no SLURM_JOB_GPUS: a CPU job, shards,
	 * MPS) shares the node's GPUs with other users' jobs: their
	 * processes are no fault of the node (review finding 1) */
	ctx.allowed_uid = o.gpus ? o.uid : TE_HEALTH_NO_JOB;
	job_gpus(o.gpus, &ctx);
	/* an earlier job's verdict under this id (a cluster's ids
	 * restarted) is never this job's (review finding 5) */
	te_health_verdict_path(o.job_id, node, root_stale, sizeof(root_stale));
	unlink(root_stale);
	te_health_set_init(&set, node);
	if (te_health_checks_run(&ctx, &set, err, sizeof(err)) < 0) {
		fprintf(stderr, PREFIX "job %s node %s: %s (not judged)\n",
			o.job, node, err);
		return EXIT_PASS;
	}
	te_health_reap();
	te_health_prolog_decide(&set, &jp.site, &jp.merged, &out);
	if (!out.n_exclude) {
		print_failures(&set, &o, &jp.site, &jp.merged);
		return EXIT_PASS;
	}
	/* the verdict first: what is printed may be cut, the verdict not */
	if (te_health_verdict_encode(node, &set, &jp.site, &jp.merged, verdict,
				     sizeof(verdict)) < 0)
		fprintf(stderr, PREFIX "the verdict was cut\n");
	verdict_write(&o, node, verdict);
	print_failures(&set, &o, &jp.site, &jp.merged);
	if (out.n_drain)
		drained = te_health_drain_line(
				  out.drain_line, &jp.drain, node, NULL,
				  te_tool_start_ms() +
					  (int64_t)jp.merged.timeout_s * 1000 +
					  TE_HEALTH_PROLOG_DRAIN_S * 1000) == 1;
	fprintf(stderr, PREFIX "job %s node %s: left out of the job: %s%s\n",
		o.job, node, out.exclude_line, drained ? " (drained)" : "");
	/* in what time the drain left */
	te_snprintf(err, sizeof(err), "%s: %s",
		    drained ? "drained" : "left out", out.exclude_line);
	te_health_comment_job(o.job, node, err, NULL,
			      te_tool_start_ms() +
				      (int64_t)jp.merged.timeout_s * 1000 +
				      TE_HEALTH_PROLOG_DRAIN_S * 1000);
	return drained && jp.prolog.on_fail == TE_HOF_FAIL ? EXIT_DRAINED_FAIL
							   : EXIT_VERDICT;
}
