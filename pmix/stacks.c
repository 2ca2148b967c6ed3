/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-stacks: the hang report. On a login node (as `trainenv stacks
 * JOB[.STEP]`, or started by srun's exit watchdog with --exit-report) it
 * runs itself on every node of the step in an overlapping step (--local),
 * merges what the nodes send (core/hang/stacks.h), prints the ranks grouped by
 * stack, and for --exit-report ends the step per exit-action. As the job's
 * user: no root, nothing Slurm does not let the user do. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/dumpdir.h"
#include "util/runcap.h"
#include "hang/stacks.h"
#include "hang/stacks_nccl.h"
#include "stacks_int.h"
#include "report/steprecord.h"
#include "settings/settings.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "launch/version.h"

#define PREFIX "trainenv: "
#define TE_STR_(x) #x
#define TE_STR(x) TE_STR_(x)
#define NODES_OUT_MAX (64u * 1024 * 1024) /* all nodes' records */
#define REPORT_MAX (4u * 1024 * 1024)
#define STEP_INFO_MAX (64 * 1024)
#define COLLECT_MS 90000 /* the overlapping step */

extern char **environ;

struct opts {
	long job, step; /* step -1: the job's newest step */
	int local, json, exit_report, watch, task_pid;
	uint64_t task_start; /* --watch-workers: the task's start time */
	long uid;	     /* the step's user: whose processes count */
	const char *node;
	unsigned grace;
	const char *action, *first_exit, *stall, *record_dir;
};

static int usage(FILE *f)
{
	fprintf(f,
		"usage: trainenv stacks [--json] JOBID[.STEP]\n"
		"  the stack of every rank of a running step (Python frames "
		"with python3-dbg,\n  native ones otherwise), ranks with the "
		"same stack grouped, outliers first;\n  STEP: the job's "
		"newest step when left out. As the job's owner, on any "
		"node\n  that can run srun. See trainenv(8), HANGS.\n");
	return f == stdout ? 0 : 2;
}

/* "JOB" or "JOB.STEP" (decimal). */
static int parse_step(const char *s, long *job, long *step)
{
	char buf[32], *dot;
	uint64_t j, st;

	if (te_strlcpy(buf, s, sizeof(buf)) >= sizeof(buf))
		return -1;
	dot = strchr(buf, '.');
	if (dot)
		*dot++ = '\0';
	if (te_parse_u64(buf, 0x7fffffff, &j) < 0 ||
	    (dot && te_parse_u64(dot, 0x7ffffff0, &st) < 0))
		return -1;
	*job = (long)j;
	*step = dot ? (long)st : -1;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->uid = -1;
	o->action = "report";
	o->first_exit = "";
	o->job = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;

		if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--local") ||
			   !strcmp(a, "--exit-report")) {
			if (!v || parse_step(v, &o->job, &o->step) < 0 ||
			    o->step < 0)
				return -1;
			o->local = a[2] == 'l';
			o->exit_report = a[2] == 'e';
			i++;
		} else if (!strcmp(a, "--grace") && v &&
			   te_parse_u64(v, te_setting_max(TE_S_EXIT_GRACE),
					&n) == 0) {
			o->grace = (unsigned)n;
			i++;
		} else if (!strcmp(a, "--action") && v &&
			   (!strcmp(v, "report") || !strcmp(v, "term") ||
			    !strcmp(v, "kill"))) {
			o->action = v;
			i++;
		} else if (!strcmp(a, "--first-exit") && v) {
			o->first_exit = v;
			i++;
		} else if (!strcmp(a, "--watch-workers") && v &&
			   parse_step(v, &o->job, &o->step) == 0 &&
			   o->step >= 0) {
			o->watch = 1;
			i++;
		} else if (!strcmp(a, "--node") && v && v[0]) {
			o->node = v;
			i++;
		} else if (!strcmp(a, "--task-pid") && v &&
			   te_parse_u64(v, 0x3fffffff, &n) == 0 && n > 1) {
			o->task_pid = (int)n;
			i++;
		} else if (!strcmp(a, "--task-start") && v &&
			   te_parse_u64(v, UINT64_MAX, &n) == 0) {
			o->task_start = n;
			i++;
		} else if (!strcmp(a, "--uid") && v &&
			   te_parse_u64(v, 0x7fffffff, &n) == 0) {
			o->uid = (long)n;
			i++;
		} else if (!strcmp(a, "--record-dir") && v && v[0] == '/') {
			o->record_dir = v;
			i++;
		} else if (!strcmp(a, "--stall") && v) {
			o->stall = v;
			i++;
		} else if (a[0] != '-' && o->job < 0 &&
			   parse_step(a, &o->job, &o->step) == 0) {
			continue;
		} else {
			return -1;
		}
	}
	return o->job < 0 ? -1 : 0;
}

/* The value of "KEY=" in one line of scontrol's -o output. */
static int field(const char *line, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t l = strcspn(p + kl + 1, " \n");

			if (l == 0 || l >= len)
				return -1;
			memcpy(out, p + kl + 1, l);
			out[l] = '\0';
			return 0;
		}
		p += kl;
	}
	return -1;
}

/* One run of a command found on PATH (scontrol, scancel, srun): its
 * output in out (stderr too with TE_SPAWN_STDERR), at most ms long. */
struct cmd {
	char *const *argv, *const *envp;
	int ms;
	unsigned flags;
	char *out;
	size_t cap;
	struct te_spawn_out so;
	char err[PATH_MAX + 256]; /* why it did not run, or failed */
};

/* 0 when it ran and exited 0 in time; -1 with why in c->err otherwise
 * (c->so tells what happened when it ran). Says nothing itself. */
static int run_cmd(struct cmd *c)
{
	char path[PATH_MAX], why[256];

	memset(&c->so, 0, sizeof(c->so));
	c->out[0] = '\0';
	if (te_find_program(c->argv[0], path, sizeof(path)) < 0) {
		te_snprintf(c->err, sizeof(c->err), "%s is not on PATH",
			    c->argv[0]);
		c->so.killed = -1; /* it did not run */
		return -1;
	}
	if (te_spawn_capture(path, c->argv, c->envp ? c->envp : environ, c->ms,
			     c->flags, c->out, c->cap, &c->so, why,
			     sizeof(why)) < 0) {
		te_snprintf(c->err, sizeof(c->err), "%s", why);
		c->so.killed = -1; /* it did not run */
		return -1;
	}
	if (c->so.killed || !WIFEXITED(c->so.status) ||
	    WEXITSTATUS(c->so.status)) {
		te_snprintf(c->err, sizeof(c->err), "%s failed%s", c->argv[0],
			    c->so.killed ? " (no answer in time)" : "");
		return -1;
	}
	return 0;
}

/* Runs a Slurm command; its output in buf. 0, or -1 (said on stderr:
 * its own message, which it wrote there, and that it failed). */
static int slurm_cmd(char *const argv[], char *buf, size_t cap, int ms)
{
	struct cmd c = { .argv = argv, .ms = ms, .out = buf, .cap = cap };

	if (run_cmd(&c) < 0) {
		fprintf(stderr, PREFIX "%s\n", c.err);
		return -1;
	}
	return 0;
}

/* "UserId=1000" (scontrol show step), or "UserId=name(1000)": the step's
 * uid, or -1. */
static long step_uid(const char *line)
{
	char u[96], *num;
	uint64_t n;

	if (field(line, "UserId", u, sizeof(u)) < 0)
		return -1;
	num = strrchr(u, '(');
	num = num ? num + 1 : u;
	num[strcspn(num, ")")] = '\0';
	return te_parse_u64(num, 0x7fffffff, &n) == 0 ? (long)n : -1;
}

/* The step runs in Slurm's own OCI containers (srun --container: its
 * Container= field): each task is the runtime, the program under it. */
static int step_in_oci;

/* The step's node list, node and task count; with step -1, the job's
 * newest numbered step. */
static int step_nodes(long job, long *step, char *nodes, size_t len,
		      unsigned *nnodes, unsigned *ntasks, long *uid)
{
	static char out[STEP_INFO_MAX];
	char id[48], sid[48], num[16], *line, *save = NULL;
	char *argv[] = { (char *)"scontrol", (char *)"show",
			 (char *)"step",     id,
			 (char *)"-o",	     NULL };
	uint64_t n;
	long best = -1;

	if (*step >= 0)
		te_snprintf(id, sizeof(id), "%ld.%ld", job, *step);
	else
		te_snprintf(id, sizeof(id), "%ld", job);
	if (slurm_cmd(argv, out, sizeof(out), 15000) < 0)
		return -1;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		long j, s;

		if (field(line, "StepId", sid, sizeof(sid)) < 0 ||
		    parse_step(sid, &j, &s) < 0 || j != job || s < 0 ||
		    (*step >= 0 && s != *step) || s < best ||
		    field(line, "NodeList", nodes, len) < 0 ||
		    field(line, "Nodes", num, sizeof(num)) < 0 ||
		    te_parse_u64(num, 1u << 20, &n) < 0 || !n)
			continue;
		best = s;
		*nnodes = (unsigned)n;
		*ntasks = field(line, "Tasks", num, sizeof(num)) == 0 &&
					  te_parse_u64(num, 1u << 24, &n) == 0
				  ? (unsigned)n
				  : 0;
		*uid = step_uid(line);
		/* a bundle's path (absolute); "(null)" when none */
		step_in_oci = strstr(line, " Container=/") != NULL;
	}
	if (best < 0) {
		fprintf(stderr, PREFIX "no running step %s of yours\n", id);
		return -1;
	}
	*step = best;
	return 0;
}

/* The job's environment without Slurm's step variables (the overlapping
 * step gets its own), nor trainenv's, nor the SPANK options of the step's
 * srun (_SLURM_SPANK_OPTION_*, which srun started by the exit watchdog
 * inherits and passes on) and pyxis's defaults (PYXIS_CONTAINER_*): the
 * collector runs on the node, never in the step's container, where it
 * does not exist. */
static char **clean_env(void)
{
	static const char *const drop[] = { "SLURM_",
					    "SRUN_",
					    "PMIX_",
					    "_SLURM_SPANK_OPTION_",
					    "PYXIS_CONTAINER_",
					    "TRAINENV_",
					    NULL };
	static const char *const keep[] = { "SLURM_CONF=", "TRAINENV_GDB=",
					    NULL };

	return te_env_without_dup(environ, drop, keep);
}

/* Every node's records, decoded into *procs (grown), and NCCL's view
 * into nv (core/hang/stacks_nccl.h); how many stacks, or -1.
 * te_stack_merge stops at the step's rank count. */
static long collect(const struct opts *o, const char *nodes, unsigned nnodes,
		    unsigned ntasks, struct te_proc_stack **procs,
		    struct te_hn_view *nv)
{
	char self[PATH_MAX], jobarg[32], nodesarg[4096], nn[16], step[48];
	char uidarg[24];
	char *argv[] = { (char *)"srun",
			 (char *)"--overlap",
			 jobarg,
			 nodesarg,
			 (char *)"-N",
			 nn,
			 (char *)"--ntasks-per-node=1",
			 (char *)"--kill-on-bad-exit=0",
			 (char *)"-Q",
			 (char *)"--time=2",
			 (char *)"--train=off",
			 self,
			 (char *)"--local",
			 step,
			 (char *)"--uid",
			 uidarg,
			 NULL };
	struct cmd c = { .argv = argv, .ms = COLLECT_MS, .cap = NODES_OUT_MAX };
	const struct te_spawn_out *so = &c.so;
	long n = 0, got;
	size_t fr_max;
	int left_out = 0;
	ssize_t l;
	char **env, *out, *records = NULL;

	l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (l <= 0)
		return -1;
	self[l] = '\0';
	te_snprintf(jobarg, sizeof(jobarg), "--jobid=%ld", o->job);
	if (te_snprintf(nodesarg, sizeof(nodesarg), "--nodelist=%s", nodes) < 0)
		return -1;
	te_snprintf(nn, sizeof(nn), "%u", nnodes);
	te_snprintf(uidarg, sizeof(uidarg), "%ld", o->uid);
	te_snprintf(step, sizeof(step), "%ld.%ld", o->job, o->step);
	env = clean_env();
	out = malloc(NODES_OUT_MAX);
	if (!env || !out) {
		free(env);
		free(out);
		return -1;
	}
	c.envp = env;
	c.out = out;
	if (run_cmd(&c) < 0 && c.so.killed < 0) {
		fprintf(stderr, PREFIX "cannot look into the step: %s\n",
			c.err);
		n = -1;
		goto out;
	}
	if (so->killed)
		fprintf(stderr,
			PREFIX "some nodes did not answer within %d s\n",
			COLLECT_MS / 1000);
	/* the nodes' lines, told apart by their tags however srun
	 * interleaved them */
	got = te_stack_demux(out, so->got, &records);
	if (got < 0) {
		fprintf(stderr,
			PREFIX "out of memory for the nodes' records\n");
		n = -1;
		goto out;
	}
	n = te_stack_merge(records, (size_t)got, ntasks, nnodes, procs,
			   &left_out);
	/* as many flight recorder ranks as the step's tasks can stand for
	 * (te_stack_merge's ceiling), never what a record claims */
	fr_max = (size_t)nnodes * TE_STACK_NODE_RANKS;
	if (ntasks && ntasks * (size_t)TE_STACK_TASK_WORKERS < fr_max)
		fr_max = ntasks * (size_t)TE_STACK_TASK_WORKERS;
	if (te_hn_collect(records, (size_t)got, fr_max, nv) < 0)
		fprintf(stderr, PREFIX "out of memory for the flight "
				       "recorder's ranks: some left out\n");
	free(records);
	if (left_out)
		fprintf(stderr,
			PREFIX "more processes than the step's ranks "
			       "were reported: the rest are left out\n");
	/* Slurm refused the overlapping step (not the job's owner, the job
	 * ended) or it failed on every node: that is no "nothing runs" */
	if (n == 0 &&
	    (so->killed || !WIFEXITED(so->status) || WEXITSTATUS(so->status))) {
		fprintf(stderr,
			PREFIX "cannot look into step %s: srun failed "
			       "(see its message above)\n",
			step);
		n = -1;
	}
out:
	free(env);
	free(out);
	return n;
}

/* 1 while the step is there. */
static int step_alive(const char *id)
{
	static char out[STEP_INFO_MAX];
	char *argv[] = { (char *)"scontrol", (char *)"show", (char *)"step",
			 (char *)id,	     (char *)"-o",   NULL };
	struct cmd c = {
		.argv = argv, .ms = 10000, .out = out, .cap = sizeof(out)
	};

	return run_cmd(&c) == 0 && strstr(out, "StepId=") != NULL;
}

/* scancel ARGV..., its words kept (stderr too): they count only if the
 * step then runs on. 0 when it did what was asked. */
static int scancel_quiet(char *const argv[], char *out, size_t cap, char *err,
			 size_t errlen)
{
	struct cmd c = { .argv = argv,
			 .ms = 30000,
			 .flags = TE_SPAWN_STDERR,
			 .out = out,
			 .cap = cap };
	int rc = run_cmd(&c);

	if (rc < 0)
		te_snprintf(err, errlen, "%s", c.err);
	return rc;
}

/* What scancel said, on one line, when the step outlived it. */
static void scancel_failed(const char *id, const char *what, const char *err,
			   char *out)
{
	out[strcspn(out, "\n")] = '\0';
	fprintf(stderr, PREFIX "step %s still runs: %s: %s%s%s\n", id, what,
		err, out[0] ? ": " : "", out);
}

/* The exit-action: end the step. term: SIGTERM (Python and most programs
 * end, and may say where they were), SIGKILL TERM_WAIT_S later if the step
 * is still there; kill: SIGKILL at once (Slurm's own step cancel). */
#define TERM_WAIT_S 10
static void end_step(const struct opts *o)
{
	char id[48], out[4096], err[PATH_MAX + 256];
	char *term[] = { (char *)"scancel", (char *)"-Q",
			 (char *)"--signal=TERM", id, NULL };
	char *kill9[] = { (char *)"scancel", (char *)"-Q", id, NULL };
	int kill_now = !strcmp(o->action, "kill"), i, rc, alive;

	te_snprintf(id, sizeof(id), "%ld.%ld", o->job, o->step);
	fprintf(stderr, PREFIX "%s: ending step %s (exit-action=%s: %s)\n",
		o->stall ? "stall" : "exit-grace", id, o->action,
		kill_now ? "SIGKILL"
			 : "SIGTERM, SIGKILL " TE_STR(
				   TERM_WAIT_S) " s later if it still runs");
	if (!kill_now) {
		/* libslurm signals the step on every node of the job; a node
		 * whose ranks have all ended has no slurmstepd of the step
		 * left and answers "Invalid job id specified", so scancel
		 * fails although every rank still running got the signal:
		 * what it said counts only when the step outlives it. */
		rc = scancel_quiet(term, out, sizeof(out), err, sizeof(err));
		for (i = 0; (alive = step_alive(id)) && i < TERM_WAIT_S * 2;
		     i++)
			poll(NULL, 0, 500);
		if (!alive)
			return;
		if (rc < 0)
			scancel_failed(id, "scancel --signal=TERM", err, out);
	}
	/* through slurmctld; the step may end meanwhile (no error then) */
	if (scancel_quiet(kill9, out, sizeof(out), err, sizeof(err)) < 0 &&
	    step_alive(id))
		scancel_failed(id, "scancel", err, out);
}

/* The report's JSON beside the step's record (DIR/UID/JOBID, the user's own). */
static void write_hang_record(const struct opts *o, const char *json)
{
	char job[16], name[48], why[PATH_MAX + 200], path[TE_DUMP_DIR_PATH_MAX];
	int dfd, fd;

	te_snprintf(job, sizeof(job), "%ld", o->job);
	te_step_record_name(name, sizeof(name), (uint32_t)o->step, 1);
	dfd = te_dump_dir_open(o->record_dir, job, getuid(), path, sizeof(path),
			       why, sizeof(why));
	if (dfd < 0) {
		fprintf(stderr, PREFIX "no record of the hang report: %s\n",
			why);
		return;
	}
	if (why[0]) /* DIR/UID another user's: whose, and what is used */
		fprintf(stderr, PREFIX "the hang report's record: %s\n", why);
	fd = openat(dfd, name,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0 || write(fd, json, strlen(json)) != (ssize_t)strlen(json))
		fprintf(stderr,
			PREFIX "no record of the hang report: %s/%s: "
			       "%s\n",
			path, name, fd < 0 ? strerror(errno) : "short write");
	if (fd >= 0)
		close(fd);
	close(dfd);
}

/* No rank of the step found: why, in one line. Slurm before 23.02 writes
 * an OCI container's environment before the step's (the programs there
 * have no SLURM_PROCID: nothing tells their ranks); later releases pass
 * it, and their programs are found under the runtime, unless /proc hides
 * it or the runtime nests deeper. The release this tool was built for (a
 * build per release) is the cluster's. */
static void say_no_rank(long job, long step)
{
	unsigned v = TE_SLURM_VERSION_NUMBER;

	if (step_in_oci && v < (23u << 16 | 2u << 8))
		printf(PREFIX
		       "no rank of step %ld.%ld found: Slurm %u.%02u "
		       "starts the programs in its OCI containers (srun "
		       "--container) without the step's environment, so the "
		       "hang report cannot tell their ranks; Slurm 23.02 and "
		       "later pass it\n",
		       job, step, v >> 16, v >> 8 & 255);
	else if (step_in_oci)
		printf(PREFIX "no rank of step %ld.%ld found in its OCI "
			      "containers (srun --container)\n",
		       job, step);
	else
		printf(PREFIX "no rank of step %ld.%ld is running\n", job,
		       step);
}

/* NCCL's view above the stacks (none for a step without NCCL). */
static void print_nccl(const struct te_hn_view *nv, FILE *f)
{
	static char text[TE_HN_RAS_LINES * TE_HN_RAS_LINE + 64 * 1024];

	if (te_hn_report_text(nv, text, sizeof(text)) > 0)
		fputs(text, f);
}

/* NCCL's view into the JSON report; when it does not fit, one line on
 * stderr says the report lacks it (never silently). */
static void nccl_json(const struct te_hn_view *nv, char *report)
{
	char why[200];

	if (te_hn_report_json(nv, report, REPORT_MAX, why, sizeof(why)) < 0)
		fprintf(stderr, PREFIX "hang: %s\n", why);
}

static int login_side(struct opts *o)
{
	struct te_hn_view nv = { .ras_outcome = -1 };
	struct te_proc_stack *procs = NULL;
	char nodes[4000], *report;
	unsigned nnodes = 0, ntasks = 0;
	int64_t t0 = te_now_ms();
	long n, i;

	if (step_nodes(o->job, &o->step, nodes, sizeof(nodes), &nnodes, &ntasks,
		       &o->uid) < 0)
		return 1;
	if (o->uid < 0) {
		fprintf(stderr, PREFIX "step %ld.%ld: its user is unknown\n",
			o->job, o->step);
		return 1;
	}
	n = collect(o, nodes, nnodes, ntasks, &procs, &nv);
	if (n < 0) {
		free(procs);
		te_hn_view_free(&nv);
		/* no stacks is no reason to leave a hung step running */
		if (o->exit_report && strcmp(o->action, "report"))
			end_step(o);
		return 1;
	}
	if (o->exit_report) {
		for (i = 0; i < n; i++)
			procs[i].since_ms =
				o->stall ? -1
					 : (int64_t)o->grace * 1000 +
						   (te_now_ms() - t0);
		if (n == 0) {
			fprintf(stderr,
				PREFIX "%s: step %ld.%ld: every rank "
				       "ended meanwhile\n",
				o->stall ? "stall" : "exit-grace", o->job,
				o->step);
			free(procs);
			te_hn_view_free(&nv);
			return 0;
		}
		if (o->stall)
			fprintf(stderr,
				PREFIX "stall: step %ld.%ld: %s; %ld "
				       "rank%s run%s:\n",
				o->job, o->step, o->stall, n, n == 1 ? "" : "s",
				n == 1 ? "s" : "");
		else
			fprintf(stderr,
				PREFIX
				"exit-grace: %u s after the first "
				"task of step %ld.%ld ended (%s), %ld rank%s "
				"still run%s:\n",
				o->grace, o->job, o->step, o->first_exit, n,
				n == 1 ? "" : "s", n == 1 ? "s" : "");
	}
	report = malloc(REPORT_MAX);
	if (!report) {
		free(procs);
		te_hn_view_free(&nv);
		return 1;
	}
	if (o->json) {
		te_stack_report_json(report, REPORT_MAX, procs, (size_t)n);
		nccl_json(&nv, report);
	} else {
		if (n > 0)
			print_nccl(&nv, o->exit_report ? stderr : stdout);
		te_stack_report_text(report, REPORT_MAX, procs, (size_t)n);
	}
	fputs(report, o->exit_report ? stderr : stdout);
	if (o->exit_report && o->record_dir) {
		te_stack_report_json(report, REPORT_MAX, procs, (size_t)n);
		nccl_json(&nv, report);
		write_hang_record(o, report);
	}
	te_hn_view_free(&nv);
	if (!o->json && !o->exit_report && n == 0)
		say_no_rank(o->job, o->step);
	fflush(NULL);
	free(report);
	free(procs);
	if (o->exit_report && strcmp(o->action, "report"))
		end_step(o);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc;

	if ((rc = te_protocol_args(&argc, &argv)) >= 0)
		return rc;
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return usage(stdout);
	if (parse_args(argc, argv, &o) < 0)
		return usage(stderr);
	if (o.local)
		return o.uid >= 0 ? te_stacks_node(o.job, o.step, (uid_t)o.uid)
				  : usage(stderr);
	if (o.watch)
		return o.node && o.task_pid
			       ? te_stacks_watch_workers(o.job, o.step, o.node,
							 o.task_pid,
							 o.task_start)
			       : usage(stderr);
	return login_side(&o);
}
