/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-rdzv: the launch rendezvous helper. The plugin's task_init runs
 * it (as the job user, with the task's environment, which holds PMIX_*)
 * just before the task's exec, and reads its results from the pipe on
 * stdout (core/launch/rdzv_proto.h). It is a plain PMIx client, so that no PMIx
 * client call ever runs inside slurmstepd or the task before exec
 * (docs/design.md section 3).
 *
 * One helper per node (--lead: the node's first task) stands for the
 * node's other tasks, which only leave an arrival file in the step's
 * private PMIx directory and wait for the result this helper leaves there
 * (PMIx_Init of every rank at once costs the node's PMIx server more than
 * the whole launch budget; see docs/pmix.md). Without that directory each
 * task runs its own helper.
 *
 * The node's address and versions are put over PMIx; rank 0 also puts
 * MASTER_ADDR and a MASTER_PORT it verified free. Then either
 * (its settings come from TRAINENV_SETTINGS, its command line has only
 * the step's facts: core/launch/rdzv_args.h)
 *  - barrier mode (barrier=S, or a checkpoint-dir): every helper
 *    registers its node's facts and ranks with rank 0's coordinator
 *    (pmix/barrier.c); when every rank is there rank 0 judges the facts
 *    (versions, checkpoint directory: core/launch/launch_verdict.c), reports
 *    once, and releases all; at the deadline every waiting task fails
 *    naming the missing ranks;
 *  - no barrier: each node takes rank 0's data as soon as it is there
 *    (direct modex, at most the barrier's built-in seconds) and compares
 *    its versions with rank 0's.
 * Always PMIx_Finalize before exit: Slurm kills the step when a client
 * leaves without it. */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "cudart_load.h"
#include "launch/launch_verdict.h"
#include "netinfo.h"
#include "rdzv_ckpt.h"
#include "launch/rdzv_args.h"
#include "launch/rdzv_core.h"
#include "launch/rdzv_proto.h"
#include "report/sendline.h"
#include "util/strutil.h"
#include "launch/version.h"
#include "util/sysutil.h"

static struct te_rdzv_result res;

#define LAUNCH_SEND_MS 500 /* rank 0 waits at most this for srun */

/* TRAINENV_RDZV_PROFILE=1: phase times on stderr (a debugging aid) */
static int profile;
static int64_t t_start;
static void phase(const char *what)
{
	struct timespec wall;

	if (!profile)
		return;
	/* the wall clock too: to line the nodes' helpers up with each other
	 * and with srun on one test machine */
	clock_gettime(CLOCK_REALTIME, &wall);
	fprintf(stderr, "trainenv-rdzv %s: %s at %lld ms (wall %lld.%06ld)\n",
		getenv("PMIX_RANK") ? getenv("PMIX_RANK") : "?", what,
		(long long)(te_now_ms() - t_start), (long long)wall.tv_sec,
		wall.tv_nsec / 1000);
}

__attribute__((format(printf, 1, 2))) static void warn(const char *fmt, ...)
{
	va_list ap;

	if (res.nwarn >= TE_RDZV_WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(res.warn[res.nwarn], sizeof(res.warn[0]), fmt, ap);
	va_end(ap);
	res.nwarn++;
}

__attribute__((format(printf, 2, 3))) static void fail(int quiet,
						       const char *fmt, ...)
{
	va_list ap;

	if (res.failed)
		return; /* the first reason is the one */
	res.failed = 1;
	res.quiet = quiet;
	va_start(ap, fmt);
	vsnprintf(res.error, sizeof(res.error), fmt, ap);
	va_end(ap);
}

static int emit(void)
{
	static char out[TE_RDZV_OUT_MAX];

	if (te_rdzv_format(&res, out, sizeof(out)) < 0)
		return 1;
	return te_write_all(STDOUT_FILENO, out, strlen(out)) < 0;
}

/* ---------------------------------------------------------------- hooks */

static const char *node_name(void)
{
	static char host[TE_HOST_MAX];
	const char *n = getenv("SLURMD_NODENAME");

	if (n && te_host_valid(n))
		return n;
	if (gethostname(host, sizeof(host)) < 0)
		return "unknown";
	host[sizeof(host) - 1] = '\0';
	return host;
}

static const char *hook_value(const char *var, char *buf, size_t len)
{
	return te_hook_value(getenv(var), node_name(), buf, len);
}

/* Test hooks, honoured only with --test-hooks (the site policy's
 * test-hooks=on): they simulate a node that starts late, a rank that
 * fails before the barrier, a node with another NCCL. Returns -1 when
 * this rank must fail now (no barrier: nobody to tell); with a barrier a
 * failing rank goes on to tell rank 0 (o->failed). */
static int hooks_before_init(struct te_rdzv_opts *o)
{
	char buf[64];
	const char *v;
	uint64_t n;

	if (!o->hooks)
		return 0;
	if ((v = hook_value("TRAINENV_TEST_DELAY", buf, sizeof(buf))) &&
	    te_parse_u64(v, 600, &n) == 0)
		te_sleep_ms((int64_t)n * 1000);
	if (!o->failed && (v = getenv("TRAINENV_TEST_FAIL_RANK")) &&
	    getenv("PMIX_RANK") && !strcmp(v, getenv("PMIX_RANK"))) {
		te_snprintf(o->failed_text, sizeof(o->failed_text),
			    "test hook "
			    "TRAINENV_TEST_FAIL_RANK: rank %.16s fails before "
			    "the barrier",
			    v);
		if (o->barrier > 0 || o->ckpt) {
			o->failed = o->failed_text;
			return 0;
		}
		fail(0, "%s", o->failed_text);
		return -1;
	}
	return 0;
}

/* TRAINENV_TEST_COORD_CUT=HOST:N: rank 0's coordinator, on HOST, cuts the
 * first N connections it accepts (the helpers' first tries). */
static unsigned hook_coord_cut(const struct te_rdzv_opts *o)
{
	char buf[16];
	const char *v;
	uint64_t n;

	if (!o->hooks ||
	    !(v = hook_value("TRAINENV_TEST_COORD_CUT", buf, sizeof(buf))) ||
	    te_parse_u64(v, 1000, &n) < 0)
		return 0;
	return (unsigned)n;
}

/* ---------------------------------------------------------------- versions */

/* The versions of the CUDA runtime, NCCL and the CUDA driver the job's
 * programs would load here ("none" stays where one is missing). */
static void probe_gpu_stack(struct te_versions *v)
{
	void *h;
	int code;

	te_cuda_version_text(te_cudart_version(), v->cudart, sizeof(v->cudart));
	/* NCCL and the CUDA driver are loaded, never linked: nodes without
	 * them keep working. Their version functions only read constants,
	 * so nothing else of theirs is bound (RTLD_LAZY): NCCL 2.28 (218 MB)
	 * loads in 0.6-1.0 ms instead of 0.8-1.8 ms with RTLD_NOW, on the
	 * launch's critical path (this runs beside PMIx_Init). */
	if ((h = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL))) {
		int (*get)(int *) = (int (*)(int *))dlsym(h, "ncclGetVersion");

		code = 0;
		if (get && get(&code) == 0)
			te_nccl_version_text(code, v->nccl, sizeof(v->nccl));
		dlclose(h);
	}
	if ((h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))) {
		int (*get)(int *) =
			(int (*)(int *))dlsym(h, "cuDriverGetVersion");

		code = 0;
		if (get && get(&code) == 0)
			te_cuda_version_text(code, v->cuda, sizeof(v->cuda));
		dlclose(h);
	}
}

static int env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/* This node has a GPU for the step: Slurm gave it some (the task's
 * environment, the helper's), or NVIDIA's driver is there: its control
 * device (a container given a GPU sees it too), or its /proc directory
 * (the device files may be made only at the first CUDA call, by
 * nvidia-modprobe, where nvidia-persistenced does not run). A node given
 * GPUs whose driver did not load is probed, and says "none": a broken
 * node is named, not left out. */
static int gpu_here(const struct te_rdzv_opts *o)
{
	char buf[64];
	const char *v;

	if (env_set("CUDA_VISIBLE_DEVICES") || env_set("SLURM_STEP_GPUS") ||
	    env_set("SLURM_JOB_GPUS"))
		return 1;
	/* TRAINENV_TEST_NVIDIACTL=n2:/dev/null: n2 has "a GPU" */
	if (o->hooks &&
	    (v = hook_value("TRAINENV_TEST_NVIDIACTL", buf, sizeof(buf))))
		return access(v, F_OK) == 0;
	return access("/dev/nvidiactl", F_OK) == 0 ||
	       access("/proc/driver/nvidia/gpus", F_OK) == 0;
}

static void probe_versions(const struct te_rdzv_opts *o, struct te_versions *v)
{
	char buf[TE_VER_MAX];
	const char *fake;
	/* A node without a GPU runs neither NCCL nor CUDA, whatever is
	 * installed: it says so (TE_VER_NOGPU, left out of their comparison)
	 * and loads nothing. Loading them costs 1.5-2 ms of CPU beside
	 * PMIx_Init (NCCL 2.28 maps 218 MB): on a CPU-only launch (gloo, or
	 * tests) only a slower launch. */
	int gpu = gpu_here(o);
	const char *absent = gpu ? "none" : TE_VER_NOGPU;

	te_strlcpy(v->trainenv, PACKAGE_VERSION, sizeof(v->trainenv));
	/* rank 0 fails the step on a node of another protocol */
	v->protocol = te_protocol_version();
	te_strlcpy(v->nccl, absent, sizeof(v->nccl));
	te_strlcpy(v->cuda, absent, sizeof(v->cuda));
	te_strlcpy(v->cudart, absent, sizeof(v->cudart));
	if (gpu)
		probe_gpu_stack(v);
	if (o->hooks &&
	    (fake = hook_value("TRAINENV_TEST_FAKE_NCCL_VERSION", buf,
			       sizeof(buf))) &&
	    te_version_word_valid(fake))
		te_strlcpy(v->nccl, fake, sizeof(v->nccl));
	if (o->hooks &&
	    (fake = hook_value("TRAINENV_TEST_FAKE_CUDART_VERSION", buf,
			       sizeof(buf))) &&
	    te_version_word_valid(fake))
		te_strlcpy(v->cudart, fake, sizeof(v->cudart));
}

/* Without a barrier: this node against rank 0's node, reported by this
 * node's first task. */
static void check_versions_rank0(struct te_pmix *p,
				 const struct te_rdzv_opts *o, int local_leader,
				 const struct te_versions *mine)
{
	struct te_versions v0;
	char s[256], host0[TE_HOST_MAX], text[TE_RDZV_TEXT_MAX];
	int timed_out, rc;

	if (p->me.rank == 0 ||
	    te_pmix_get_wait(p, 0, "te.ver", 10000, s, sizeof(s), &timed_out,
			     text, sizeof(text)) < 0 ||
	    te_versions_parse(s, &v0) < 0)
		return;
	if (te_versions_equal(&v0, mine))
		return;
	if (te_pmix_host_of(p, 0, host0, sizeof(host0)) < 0)
		te_strlcpy(host0, "?", sizeof(host0));
	rc = te_rank0_versions_verdict(o->vcheck, p->host, mine, host0, &v0,
				       text, sizeof(text));
	if (rc == TE_VERDICT_REJECT)
		fail(!local_leader, "%s", text);
	else if (rc == TE_VERDICT_WARN && local_leader)
		warn("%s", text);
}

/* ---------------------------------------------------------------- main */

static int port_free_cb(void *ctx, uint16_t port)
{
	return te_port_is_free(port);
}

static void parse_master(const char *s)
{
	char addr[TE_ADDR_MAX];
	unsigned port;

	if (sscanf(s, "%63s %u", addr, &port) == 2 && port > 0 &&
	    port < 65536) {
		te_strlcpy(res.master_addr, addr, sizeof(res.master_addr));
		res.master_port = (uint16_t)port;
	}
}

/* Failures the node's other tasks get as FAIL_QUIET: rank 0 reports them
 * for the job. */
static int followers_quiet;

/* The versions are probed (NCCL and CUDA loaded) while PMIx_Init runs. */
static struct te_versions probed;
static const struct te_rdzv_opts *probe_opts;

static void *probe_thread(void *arg)
{
	probe_versions(probe_opts, &probed);
	/* the node's storage check, beside PMIx_Init (the node's lead) */
	if (probe_opts->lead)
		te_rdzv_storage_run(probe_opts);
	return NULL;
}

/* The step's record wants the launch timeline: one line to srun's report
 * listener. Rank 0's start waits for it (a connect and a write to srun,
 * LAUNCH_SEND_MS at most): the helper must not leave a process behind. */
static void tell_srun_launch(const struct te_pmix *p,
			     const struct te_launch_skew *l)
{
	struct te_failrep f = { .launched = 1, .launch = *l };

	te_strlcpy(f.node, p->host, sizeof(f.node));
	if (te_failrep_tell_srun(&f, LAUNCH_SEND_MS) < 0)
		warn("the launch timeline did not reach srun: the step's "
		     "record will not have it");
}

/* What run's steps share. lc lives as long as the barrier: the barrier
 * keeps a pointer to it. */
struct run_ctx {
	struct te_pmix *p;
	const struct te_rdzv_opts *o;
	struct te_versions ver;
	struct te_launch_checks lc;
	unsigned timeout;
	char addr[TE_ADDR_MAX], err[TE_RDZV_TEXT_MAX];
	char text[TE_RDZV_TEXT_MAX], master[TE_ADDR_MAX + 8];
	char host0[TE_HOST_MAX];
	char info[512]; /* the checkpoint directory's probe */
};

/* This node's address and versions over PMIx; rank 0 also picks and puts
 * MASTER_ADDR and MASTER_PORT. 0, or -1 when run must end. */
static int run_publish(struct run_ctx *c)
{
	struct te_pmix *p = c->p;
	const struct te_rdzv_opts *o = c->o;
	const char *pattern = getenv("NCCL_SOCKET_IFNAME");
	char ifname[TE_IFNAME_MAX];

	if (!pattern || !*pattern)
		pattern = getenv("GLOO_SOCKET_IFNAME");
	if (te_node_address(pattern, c->addr, sizeof(c->addr), ifname,
			    sizeof(ifname), c->err, sizeof(c->err)) < 0) {
		fail(0, "node %s: no address for the rendezvous: %s", p->host,
		     c->err);
		return -1;
	}
	phase("address");
	c->ver = probed;
	phase("versions");
	if (te_versions_format(c->text, sizeof(c->text), &c->ver) < 0 ||
	    te_pmix_put(p, "te.ver", c->text, c->err, sizeof(c->err)) < 0 ||
	    te_pmix_put(p, "te.addr", c->addr, c->err, sizeof(c->err)) < 0) {
		fail(0, "rendezvous: %s",
		     c->err[0] ? c->err : "bad version text");
		return -1;
	}
	if (p->me.rank == 0) {
		uint16_t port = te_port_pick(o->port_start, o->port_lo,
					     o->port_hi, 1000, port_free_cb,
					     NULL);

		if (!port) /* still publish: the others must hear it */
			fail(0, "no free port for MASTER_PORT in %u-%u on %s",
			     o->port_lo, o->port_hi, p->host);
		te_snprintf(c->master, sizeof(c->master), "%s %u", c->addr,
			    (unsigned)port);
		if (te_pmix_put(p, "te.master", c->master, c->err,
				sizeof(c->err)) < 0)
			fail(0, "rendezvous: %s", c->err);
		if (o->ckpt)
			te_rdzv_ckpt_write(o, c->info, sizeof(c->info));
	}
	return 0;
}

/* No barrier: rank 0's data as soon as it is there (at most o->wait s),
 * and its versions compared with this node's. 0, or -1 when run must
 * end. */
static int run_no_barrier(struct run_ctx *c)
{
	struct te_pmix *p = c->p;
	int timed_out;

	if (te_pmix_commit(p, c->err, sizeof(c->err)) < 0) {
		fail(0, "rendezvous: %s", c->err);
		return -1;
	}
	if (p->me.rank == 0) {
		parse_master(c->master);
	} else if (te_pmix_get_wait(p, 0, "te.master", (int)c->timeout * 1000,
				    c->text, sizeof(c->text), &timed_out,
				    c->err, sizeof(c->err)) < 0) {
		fail(0,
		     "rank 0 (node %s) did not publish "
		     "MASTER_ADDR/MASTER_PORT: %s",
		     c->host0, c->err);
		return -1;
	} else {
		parse_master(c->text);
	}
	if (c->o->vcheck != TE_W_VCHECK_OFF)
		check_versions_rank0(p, c->o, 1, &c->ver);
	return 0;
}

/* Barrier mode: this node's facts for rank 0, the barrier prepared and
 * started, and (checkpoint-dir) this node's look at the directory.
 * The barrier, or NULL when run must end. */
static struct te_barrier *run_barrier_start(struct run_ctx *c)
{
	struct te_pmix *p = c->p;
	const struct te_rdzv_opts *o = c->o;
	struct te_barrier_opts bo = {
		.timeout_s = c->timeout,
		.seq = 0,
		.tmpdir = getenv("PMIX_SERVER_TMPDIR"),
		.addr = c->addr,
		.coordinated = 1,
		.followers = o->lead ? p->local_peers : NULL,
		.nfollowers = o->lead && p->nlocal > 0 ? (size_t)p->nlocal : 0,
		.failed = o->failed,
		.test_cut = p->me.rank == 0 ? hook_coord_cut(o) : 0,
		.tree_width = o->tree_width,
		.done_text = p->me.rank == 0 ? c->master : NULL,
		/* only "done" is left to hear: finalized meanwhile */
		.close_early = 1,
	};
	struct te_barrier *b;

	const struct te_storage_opts *st = te_rdzv_storage_load();

	c->lc = (struct te_launch_checks){
		.vcheck = o->vcheck,
		.ckpt = o->ckpt,
		.rank0_host = c->host0,
		.storage_permille = st->bytes ? st->permille : 0,
		.storage_exclude = st->exclude,
	};
	bo.checks = &c->lc;
	bo.node.ver = c->ver;
	te_strlcpy(bo.node.ckpt, "-", sizeof(bo.node.ckpt));
	if (o->ckpt) {
		/* rank 0's probe comes down the launch tree over the
		 * children's connections, each parent passing it on before
		 * its own look; every helper publishes its coordinator at
		 * once (before, the probe went through PMIx: a parent put it
		 * only once it had fetched it from its own parent, level
		 * after level, k direct modexes each) */
		bo.probe_check = te_rdzv_ckpt_probe_check;
		bo.probe_arg = (void *)o;
		bo.probe = p->me.rank == 0 ? c->info : NULL;
	}
	b = te_barrier_prepare(p, &bo, c->err, sizeof(c->err));
	if (!b) {
		fail(0, "barrier: %s", c->err);
		return NULL;
	}
	return b;
}

/* The barrier's outcome into res. 0 when it passed, -1 when run must
 * end. */
static int run_barrier_result(struct run_ctx *c,
			      const struct te_barrier_result *br)
{
	if (br->warn[0])
		warn("%s", br->warn);
	if (br->test_cut)
		warn("test hook TRAINENV_TEST_COORD_CUT: rank 0's "
		     "coordinator cut %u connections before they "
		     "registered",
		     br->test_cut);
	if (br->aborted) { /* every task prints rank 0's report */
		fail(0, "%s", br->msg);
		return -1;
	}
	if (br->rejected) {
		followers_quiet = 1;
		if (br->reporter)
			fail(0, "%s", br->msg);
		else
			fail(1, "a launch check failed (rank 0 reports "
				"it)");
		return -1;
	}
	if (!br->ok) {
		fail(0, "%s", br->msg);
		return -1;
	}
	if (br->has_launch) { /* rank 0: its task may say it */
		res.has_launch = 1;
		res.launch = br->launch;
		if (c->o->record)
			tell_srun_launch(c->p, &br->launch);
	}
	return 0;
}

/* Barrier mode: every rank here and the facts judged by rank 0. 0, or -1
 * when run must end. */
static int run_barrier(struct run_ctx *c)
{
	struct te_pmix *p = c->p;
	const struct te_rdzv_opts *o = c->o;
	struct te_barrier_result br;
	struct te_barrier *b;
	int timed_out;

	b = run_barrier_start(c);
	if (!b)
		return -1;
	phase("barrier prepared");
	te_barrier_wait(b, &br);
	phase("barrier done");
	if (run_barrier_result(c, &br) < 0)
		return -1;
	if (o->ckpt && te_strlcpy(res.checkpoint_dir, o->ckpt,
				  sizeof(res.checkpoint_dir)) >=
			       sizeof(res.checkpoint_dir))
		res.checkpoint_dir[0] = '\0';
	/* rank 0's address came down the tree with "done"; from PMIx
	 * (rank 0's node) only when it did not */
	if (p->me.rank == 0)
		parse_master(c->master);
	else if (br.done_text[0])
		parse_master(br.done_text);
	else if (!p->closing &&
		 te_pmix_get_wait(p, 0, "te.master", 10000, c->text,
				  sizeof(c->text), &timed_out, c->err,
				  sizeof(c->err)) == 0)
		parse_master(c->text);
	return 0;
}

static void run(struct te_pmix *p, const struct te_rdzv_opts *o)
{
	struct run_ctx c = { .p = p, .o = o };
	int barrier = o->barrier > 0 || o->ckpt;

	c.timeout = o->barrier ? o->barrier : o->wait;
	if (te_pmix_host_of(p, 0, c.host0, sizeof(c.host0)) < 0)
		te_strlcpy(c.host0, "?", sizeof(c.host0));
	if (run_publish(&c) < 0)
		return;
	if ((barrier ? run_barrier(&c) : run_no_barrier(&c)) < 0)
		return;
	if (!res.failed && (!res.master_addr[0] || !res.master_port))
		fail(0, "rank 0 published no usable MASTER_ADDR/MASTER_PORT");
	if (o->ifname && res.master_addr[0] &&
	    te_route_ifname(res.master_addr, res.ifname, sizeof(res.ifname),
			    c.err, sizeof(c.err)) < 0) {
		res.ifname[0] = '\0';
		warn("socket-ifname: %s", c.err);
	}
	if (res.ifname[0] && !te_ifname_valid(res.ifname))
		res.ifname[0] = '\0';
}

/* What the node's other tasks read (the plugin in their task_init): the
 * same results without the warnings (printed here once), failures
 * reported for the job by rank 0 made quiet. Written whole, then renamed
 * into place, after PMIx_Finalize: their programs may start PMIx clients
 * as soon as they read it. */
static void write_node_result(const struct te_rdzv_opts *o, const char *why)
{
	static struct te_rdzv_result f;
	const char *dir = getenv("PMIX_SERVER_TMPDIR");

	if (!o->lead || !te_private_dir_ok(dir))
		return;
	f = res;
	f.nwarn = 0;
	f.has_launch = 0; /* rank 0's task alone says it */
	if (f.failed && followers_quiet)
		f.quiet = 1;
	if (why) { /* this helper failed before the barrier */
		f.failed = 1;
		f.quiet = 0;
		te_snprintf(f.error, sizeof(f.error), "%s", why);
	}
	te_rdzv_write_node_result(dir, &f);
}

/* Started by a plugin from before the protocol check (0.1.0), which
 * reads this output as its own helper's: the line naming both versions is
 * this task's error, and with --lead the node's result, which that
 * plugin's other tasks of the node wait for. */
static int none_caller(int argc, char **argv)
{
	struct te_rdzv_opts o = { 0 };
	char line[TE_RDZV_TEXT_MAX];
	int i;

	for (i = 1; i < argc; i++)
		o.lead |= !strcmp(argv[i], "--lead");
	if (te_protocol_none_caller_line(argv[0], line, sizeof(line)) < 0)
		te_strlcpy(line,
			   "trainenv-rdzv: started by a plugin of trainenv "
			   "before the protocol check: " TE_PROTOCOL_ADVICE,
			   sizeof(line));
	fail(0, "%s", line);
	write_node_result(&o, NULL);
	return emit();
}

int main(int argc, char **argv)
{
	struct te_pmix p;
	struct te_rdzv_opts o;
	char err[TE_RDZV_TEXT_MAX], why[TE_RDZV_TEXT_MAX + 128];
	int rc;

	signal(SIGPIPE, SIG_IGN);
	t_start = te_now_ms();
	profile = getenv("TRAINENV_RDZV_PROFILE") != NULL;
	if (te_protocol_none_caller(argc, argv))
		return none_caller(argc, argv);
	if ((rc = te_protocol_args(&argc, &argv)) >= 0)
		return rc; /* the plugin compares and says it */
	/* the step's facts from the command line, every setting from the
	 * effective settings the plugin put in the environment */
	if (te_rdzv_args_parse(argc, argv, &o, err, sizeof(err)) < 0 ||
	    te_rdzv_opts_settings(&o, getenv(TE_SETTINGS_ENV), err,
				  sizeof(err)) < 0) {
		fail(0, "trainenv-rdzv: %s", err);
		return emit();
	}
	if (hooks_before_init(&o) < 0) { /* no barrier: nobody to tell */
		te_snprintf(why, sizeof(why),
			    "rank %s (node %s), this node's "
			    "first task, failed before the barrier: %s",
			    getenv("PMIX_RANK") ? getenv("PMIX_RANK") : "?",
			    node_name(), res.error);
		write_node_result(&o, why);
		return emit();
	}
	phase("start");
	{
		pthread_t th;
		int threaded;

		probe_opts = &o;
		te_rdzv_storage_load();
		threaded = pthread_create(&th, NULL, probe_thread, NULL) == 0;
		if (te_pmix_open(&p, err, sizeof(err)) < 0) {
			if (threaded)
				pthread_join(th, NULL);
			fail(0, "rendezvous: %s", err);
			write_node_result(&o, NULL);
			return emit();
		}
		if (threaded)
			pthread_join(th, NULL);
		else
			probe_versions(&o, &probed);
		if (!threaded && o.lead)
			te_rdzv_storage_run(&o);
	}
	phase("PMIx_Init done");
	run(&p, &o);
	te_rdzv_ckpt_remove(); /* rank 0's probe file, however run() ended */
	phase("run done");
	te_pmix_close(&p);
	phase("PMIx_Finalize done");
	if (o.failed && !res.failed) {
		/* rank 0 never answered: the node's tasks say who failed */
		te_snprintf(why, sizeof(why),
			    "rank %s (node %s) failed before "
			    "the barrier: %s",
			    getenv("PMIX_RANK") ? getenv("PMIX_RANK") : "?",
			    p.host, o.failed);
		write_node_result(&o, why);
	} else {
		write_node_result(&o, NULL);
	}
	if (o.failed) { /* this task: its own failure */
		res.failed = 1;
		res.quiet = 0;
		te_strlcpy(res.error, o.failed, sizeof(res.error));
	}
	return emit();
}
