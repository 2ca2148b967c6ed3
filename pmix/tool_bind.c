/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv bind: preview the GPU/NUMA mapping of a node, or bind the calling
 * process for its LOCAL_RANK and run a command (a torchrun worker wrapper:
 * `torchrun --no-python ... trainenv bind -- python3 train.py`).
 * Policy and environment rules: core/bind/bind.h.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bind/bind.h"
#include "bind/cpulist.h"
#include "tool_bind.h"

#define PROG "trainenv bind"
/* --allowed and --gpus are command-line strings: bounded like env values. */
#define ARG_LIST_MAXLEN 65536
#define ALLOWED_MAX_CPUS 65536

static const char usage_text[] =
	"usage: trainenv bind --show [--topology FILE.xml] [--gpus LIST|all|none]\n"
	"                     [--tasks N] [--mode none|numa|cores] [--smt all|one]\n"
	"                     [--allowed CPULIST] [--verbose]\n"
	"       trainenv bind --list-gpus [--topology FILE.xml]\n"
	"       trainenv bind [--mode none|numa|cores] [--smt all|one] [--tasks N]\n"
	"                     [--gpus LIST|all|none] [--no-membind] [--best-effort]\n"
	"                     [--topology FILE.xml] [--verbose] -- CMD [ARGS...]\n"
	"\n"
	"--show prints one line per local rank:\n"
	"  rank <r> gpu <pci-bus-id> numa <nodes> cpus <PU list>\n"
	"With -- CMD, binds this process for LOCAL_RANK (else SLURM_LOCALID) among\n"
	"LOCAL_WORLD_SIZE ranks (else --tasks) and runs CMD.\n"
	"GPUs (node indexes in PCI order): --gpus, else SLURM_STEP_GPUS,\n"
	"SLURM_JOB_GPUS or CUDA_VISIBLE_DEVICES. Allowed CPUs: --allowed, else the\n"
	"CPUs this process may use (the topology's with --topology).\n"
	"With -- CMD, --topology must be an export of this very machine (tests add\n"
	"GPUs to one); in production the machine is discovered.\n"
	"Defaults: --mode numa --smt all; memory bound to the rank's NUMA nodes.\n"
	"--best-effort runs CMD unbound, with a warning, when binding fails.\n";

struct opts {
	int show, list_gpus, verbose, no_membind, best_effort;
	const char *topology, *gpus, *allowed, *mode_s, *smt_s, *tasks_s;
	enum te_bind_mode mode;
	enum te_bind_smt smt;
	char **cmd; /* after "--" */
};

__attribute__((format(printf, 1, 2))) static void error_msg(const char *fmt,
							    ...)
{
	va_list ap;

	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, PROG ": error: %s%s%s\n", what, arg ? " " : "",
		arg ? arg : "");
	fputs(usage_text, stderr);
	return 2;
}

/* Decimal 0..max, nothing else (no sign, blank or suffix). */
static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	unsigned v = 0;
	size_t i;

	if (!s || !*s)
		return -1;
	for (i = 0; s[i]; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9' || i > 10)
			return -1;
		d = (unsigned)(s[i] - '0');
		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* "--name VALUE" or "--name=VALUE"; returns 1 when argv[*i] is that
 * option (value in *val, or NULL when missing), 0 otherwise. */
static int opt_value(int argc, char **argv, int *i, const char *name,
		     const char **val)
{
	size_t len = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, len))
		return 0;
	if (a[len] == '=') {
		*val = a + len + 1;
		return 1;
	}
	if (a[len])
		return 0;
	*val = (*i + 1 < argc) ? argv[++*i] : NULL;
	return 1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const char *const valued[] = {
		"--topology", "--gpus", "--allowed",
		"--mode",     "--smt",	"--tasks",
	};
	int i;

	memset(o, 0, sizeof(*o));
	o->mode = TE_BIND_MODE_NUMA;
	o->smt = TE_BIND_SMT_ALL;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		const char **slot[] = {
			&o->topology, &o->gpus,	 &o->allowed,
			&o->mode_s,   &o->smt_s, &o->tasks_s,
		};
		size_t k;
		int matched = 0;

		if (!strcmp(a, "--")) {
			o->cmd = argv + i + 1;
			if (!o->cmd[0])
				return usage_error("no command after --", NULL);
			break;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 1;
		}
		if (!strcmp(a, "--show")) {
			o->show = 1;
			continue;
		}
		if (!strcmp(a, "--list-gpus")) {
			o->list_gpus = 1;
			continue;
		}
		if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			o->verbose = 1;
			continue;
		}
		if (!strcmp(a, "--no-membind")) {
			o->no_membind = 1;
			continue;
		}
		if (!strcmp(a, "--best-effort")) {
			o->best_effort = 1;
			continue;
		}
		for (k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
			if (opt_value(argc, argv, &i, valued[k], &v)) {
				if (!v)
					return usage_error("missing value for",
							   valued[k]);
				*slot[k] = v;
				matched = 1;
				break;
			}
		}
		if (!matched)
			return usage_error("unknown argument", a);
	}
	if (o->mode_s && te_bind_mode_parse(o->mode_s, &o->mode))
		return usage_error("--mode accepts none, numa or cores, not",
				   o->mode_s);
	if (o->smt_s && te_bind_smt_parse(o->smt_s, &o->smt))
		return usage_error("--smt accepts all or one, not", o->smt_s);
	if (o->show + o->list_gpus + (o->cmd != NULL) != 1)
		return usage_error("give exactly one of --show, --list-gpus "
				   "or -- CMD",
				   NULL);
	if (o->cmd && o->allowed)
		return usage_error("--allowed is for --show only", NULL);
	return 0;
}

/* --allowed LIST, or for the real machine the CPUs this process may run on
 * now (srun/torchrun may have narrowed it), or NULL (the topology's). */
static int allowed_set(hwloc_topology_t topo, const struct opts *o,
		       hwloc_bitmap_t *out)
{
	char err[256];

	*out = NULL;
	if (o->allowed) {
		unsigned *cpus = calloc(ALLOWED_MAX_CPUS, sizeof(*cpus));
		size_t n = 0, i;

		if (!cpus) {
			error_msg("out of memory");
			return -1;
		}
		if (te_cpulist_parse(o->allowed, ARG_LIST_MAXLEN,
				     TE_CPULIST_INDEX_LIMIT, cpus,
				     ALLOWED_MAX_CPUS, &n, err, sizeof(err))) {
			error_msg("--allowed: %s", err);
			free(cpus);
			return -1;
		}
		if (n == 0) {
			error_msg("--allowed: the list is empty");
			free(cpus);
			return -1;
		}
		*out = hwloc_bitmap_alloc();
		if (!*out) {
			free(cpus);
			error_msg("out of memory");
			return -1;
		}
		for (i = 0; i < n; i++)
			hwloc_bitmap_set(*out, cpus[i]);
		free(cpus);
		return 0;
	}
	if (o->topology)
		return 0;
	*out = hwloc_bitmap_alloc();
	if (!*out || hwloc_get_cpubind(topo, *out, HWLOC_CPUBIND_PROCESS)) {
		/* Not knowing the current binding is no reason to fail: the
		 * topology's allowed set is the next best thing. */
		hwloc_bitmap_free(*out);
		*out = NULL;
	}
	return 0;
}

static int step_gpu_list(const struct te_bind_gpus *gpus, const struct opts *o,
			 unsigned *idx, size_t *n, char *note, size_t notelen)
{
	char err[256];
	size_t i;

	note[0] = '\0';
	if (o->gpus && !strcmp(o->gpus, "none")) {
		*n = 0;
		return 0;
	}
	if (o->gpus && !strcmp(o->gpus, "all")) {
		for (i = 0; i < gpus->n; i++)
			idx[i] = (unsigned)i;
		*n = gpus->n;
		return 0;
	}
	if (o->gpus) {
		if (te_cpulist_parse(o->gpus, ARG_LIST_MAXLEN,
				     TE_CPULIST_INDEX_LIMIT, idx,
				     TE_BIND_MAX_GPUS, n, err, sizeof(err))) {
			error_msg("--gpus: %s (or all, none)", err);
			return -1;
		}
		return 0;
	}
	{
		struct te_bind_gpu_env env = {
			.cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES"),
			.slurm_step_gpus = getenv("SLURM_STEP_GPUS"),
			.slurm_job_gpus = getenv("SLURM_JOB_GPUS"),
			.in_slurm = getenv("SLURM_JOB_ID") != NULL,
		};
		if (te_bind_gpus_from_env(&env, gpus->n, idx, TE_BIND_MAX_GPUS,
					  n, note, notelen, err, sizeof(err))) {
			error_msg("%s", err);
			return -1;
		}
	}
	return 0;
}

/* Number of local ranks: --tasks, LOCAL_WORLD_SIZE, else (for --show only)
 * one per GPU, at least one. */
static int task_count(const struct opts *o, size_t ngpus, int need,
		      unsigned *out)
{
	const char *lws = getenv("LOCAL_WORLD_SIZE");

	if (o->tasks_s) {
		if (parse_uint(o->tasks_s, TE_BIND_MAX_TASKS, out) ||
		    *out == 0) {
			error_msg("--tasks must be a number from 1 to %d",
				  TE_BIND_MAX_TASKS);
			return -1;
		}
		return 0;
	}
	if (lws) {
		if (parse_uint(lws, TE_BIND_MAX_TASKS, out) || *out == 0) {
			error_msg("LOCAL_WORLD_SIZE must be a number from 1 "
				  "to %d",
				  TE_BIND_MAX_TASKS);
			return -1;
		}
		return 0;
	}
	if (need) {
		error_msg("LOCAL_WORLD_SIZE is not set (torchrun sets it; "
			  "otherwise pass --tasks N)");
		return -1;
	}
	*out = ngpus ? (unsigned)ngpus : 1;
	return 0;
}

static int local_rank(unsigned ntasks, unsigned *out)
{
	const char *name = "LOCAL_RANK", *v = getenv("LOCAL_RANK");

	if (!v) {
		name = "SLURM_LOCALID";
		v = getenv("SLURM_LOCALID");
	}
	if (!v) {
		error_msg("LOCAL_RANK is not set: run under torchrun or srun, "
			  "or use --show to preview");
		return -1;
	}
	if (parse_uint(v, TE_BIND_MAX_TASKS, out)) {
		error_msg("%s must be a number from 0 to %d", name,
			  TE_BIND_MAX_TASKS - 1);
		return -1;
	}
	if (*out >= ntasks) {
		error_msg("%s=%u but there are only %u local ranks", name, *out,
			  ntasks);
		return -1;
	}
	return 0;
}

static int list_gpus(hwloc_topology_t topo)
{
	struct te_bind_gpus gpus;
	char err[256], nodes[256], cpus[1024];
	size_t i;

	if (te_bind_gpus(topo, &gpus, err, sizeof(err))) {
		error_msg("%s", err);
		return 1;
	}
	for (i = 0; i < gpus.n; i++) {
		const struct te_bind_gpu *g = &gpus.gpu[i];

		if (te_bind_format_set(g->nodeset, nodes, sizeof(nodes)) < 0)
			snprintf(nodes, sizeof(nodes), "?");
		if (te_bind_format_set(g->cpuset, cpus, sizeof(cpus)) < 0)
			snprintf(cpus, sizeof(cpus), "?");
		printf("gpu %zu %s %04x:%04x class %04x numa %s cpus %s near "
		       "%s L#%u\n",
		       i, g->busid, g->vendor_id, g->device_id, g->class_id,
		       nodes, cpus, hwloc_obj_type_string(g->locality->type),
		       g->locality->logical_index);
	}
	if (gpus.n == 0)
		printf("no NVIDIA GPU\n");
	te_bind_gpus_free(&gpus);
	return 0;
}

/* Prints a mapping line (and notes) for a rank; lines can be long on large
 * machines, hence the heap buffer. */
static int print_rank(FILE *f, const char *prefix,
		      const struct te_bind_rank *rk, int verbose)
{
	size_t len = 1 << 16;
	char *line = malloc(len);

	if (!line)
		return -1;
	if (te_bind_format_rank(rk, line, len) < 0) {
		free(line);
		return -1;
	}
	fprintf(f, "%s%s\n", prefix, line);
	if (verbose && rk->note[0])
		fprintf(f, "%snote: rank %u: %s\n", prefix, rk->rank, rk->note);
	free(line);
	return 0;
}

static int run_cmd(char **cmd)
{
	execvp(cmd[0], cmd);
	error_msg("cannot run %s: %s", cmd[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* What te_tool_bind's steps share, freed by its end. */
struct bind_run {
	hwloc_topology_t topo;
	hwloc_bitmap_t allowed;
	struct te_bind_gpus gpus;
	struct te_bind_result res;
	unsigned *idx; /* the step's GPUs */
	unsigned me;   /* this task's local rank */
	char note[TE_BIND_NOTE_LEN];
};

/* The topology (its XML must describe this very machine when a command
 * is bound with --topology: tests inside jobs; devices are added if need
 * be). 0, or -1 said. */
static int load_topology(const struct opts *o, struct bind_run *b)
{
	char err[512];

	if ((o->cmd && o->topology
		     ? te_bind_topology_load_local_xml(o->topology, &b->topo,
						       err, sizeof(err))
		     : te_bind_topology_load(o->topology, &b->topo, err,
					     sizeof(err)))) {
		error_msg("%s", err);
		return -1;
	}
	return 0;
}

/* The step's GPUs, the task count, this task's rank, the allowed CPUs,
 * and the mapping of every rank. 0, or -1 said. */
static int compute_binding(const struct opts *o, struct bind_run *b)
{
	struct te_bind_request req;
	unsigned ntasks = 0;
	size_t ngpus = 0;
	char err[512];

	b->idx = calloc(TE_BIND_MAX_GPUS, sizeof(*b->idx));
	if (!b->idx) {
		error_msg("out of memory");
		return -1;
	}
	if (te_bind_gpus(b->topo, &b->gpus, err, sizeof(err))) {
		error_msg("%s", err);
		return -1;
	}
	if (step_gpu_list(&b->gpus, o, b->idx, &ngpus, b->note,
			  sizeof(b->note)) ||
	    task_count(o, ngpus, o->cmd != NULL, &ntasks) ||
	    (o->cmd && local_rank(ntasks, &b->me)) ||
	    allowed_set(b->topo, o, &b->allowed))
		return -1;

	memset(&req, 0, sizeof(req));
	req.mode = o->mode;
	req.smt = o->smt;
	req.ntasks = ntasks;
	req.gpus = b->idx;
	req.ngpus = ngpus;
	req.allowed = b->allowed;
	if (te_bind_compute(b->topo, &req, &b->res, err, sizeof(err))) {
		error_msg("%s", err);
		return -1;
	}
	return 0;
}

/* --show: every rank's binding on stdout. The exit status. */
static int show_binding(const struct opts *o, const struct bind_run *b)
{
	unsigned r;

	if (o->verbose && b->note[0])
		printf("note: %s\n", b->note);
	if (o->verbose && b->res.note[0])
		printf("note: %s\n", b->res.note);
	for (r = 0; r < b->res.nranks; r++)
		if (print_rank(stdout, "", &b->res.ranks[r], o->verbose)) {
			error_msg("rank %u: line too long", r);
			return 1;
		}
	return fflush(stdout) ? 1 : 0;
}

/* This process bound as its rank's mapping says. The exit status. */
static int apply_binding(const struct opts *o, const struct bind_run *b)
{
	char err[512];
	int rc;

	rc = te_bind_apply(b->topo, &b->res.ranks[b->me], !o->no_membind, err,
			   sizeof(err));
	if (rc < 0) {
		error_msg("%s", err);
		return 1;
	}
	if (rc > 0)
		fprintf(stderr, PROG ": warning: %s\n", err);
	if (o->verbose) {
		if (b->note[0])
			fprintf(stderr, PROG ": note: %s\n", b->note);
		if (b->res.note[0])
			fprintf(stderr, PROG ": note: %s\n", b->res.note);
		print_rank(stderr, PROG ": ", &b->res.ranks[b->me], 1);
	}
	return 0;
}

int te_tool_bind(int argc, char **argv)
{
	struct opts o;
	struct bind_run b = { .gpus = { 0, NULL } };
	int rc, status = 1;

	rc = parse_args(argc, argv, &o);
	if (rc == 1)
		return 0;
	if (rc)
		return rc;

	/* Nothing to compute: run at once, without even reading the
	 * topology, so that "none" can never fail. */
	if (o.cmd && o.mode == TE_BIND_MODE_NONE)
		return run_cmd(o.cmd);

	if (load_topology(&o, &b) == 0) {
		if (o.list_gpus)
			status = list_gpus(b.topo);
		else if (compute_binding(&o, &b) == 0)
			status = o.show ? show_binding(&o, &b)
					: apply_binding(&o, &b);
	}

	te_bind_result_free(&b.res);
	te_bind_gpus_free(&b.gpus);
	hwloc_bitmap_free(b.allowed);
	free(b.idx);
	if (b.topo)
		hwloc_topology_destroy(b.topo);
	if (o.cmd && status == 0)
		return run_cmd(o.cmd);
	if (o.cmd && o.best_effort) {
		fprintf(stderr, PROG ": warning: running %s without binding\n",
			o.cmd[0]);
		return run_cmd(o.cmd);
	}
	return status;
}
