/* slurmstepd: resolve the settings once per step from the node's policy, the
 * options srun passed and the job environment, then prepare every task just
 * before exec. Nothing here may fail the step in a way that drains the node:
 * errors are remembered and fail the tasks, with the reason on the tasks'
 * stderr (which reaches srun) and in the slurmd log. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bindstep.h"
#include "dumpdir.h"
#include "failrep_net.h"
#include "plugin.h"
#include "preflight_proto.h"
#include "rankenv.h"
#include "rdzv_client.h"
#include "strutil.h"

#define TE_CHECKPOINT_ENV "TRAINENV_CHECKPOINT_DIR"

static char remote_err[TE_RDZV_TEXT_MAX + 64];

static int task_fail(spank_t sp);

/* Facts about the step, gathered once in user_init. */
static struct {
	int have;
	int batch;			/* batch script or extern step */
	uint32_t job_id, step_id, nnodes, node_id, ntasks, local_tasks;
	int argc;
	char **argv;
	char master_addr[INET6_ADDRSTRLEN + 1];
	char master_note[TE_ERR_MAX];	/* why there is no address */
	char node[64];
	/* first-failure report */
	int report;
	uint16_t report_port;
	char report_host[INET6_ADDRSTRLEN + 1];
	char report_token[TE_FAILREP_TOKEN_LEN + 1];
} step;

/* spank_getenv copies into the caller's buffer: keep a few so that a caller
 * may hold two values at once. A value too long for the buffer is reported
 * as an over-long marker so that the parser refuses it with a clear error. */
static const char *remote_getenv(void *ctx, const char *name)
{
	static char ring[4][TE_VALUE_MAX + 2];
	static unsigned next;
	char *buf = ring[next++ % 4];
	spank_err_t rc;

	rc = spank_getenv((spank_t)ctx, name, buf, (int)sizeof(ring[0]));
	if (rc == ESPANK_SUCCESS)
		return buf;
	if (rc == ESPANK_NOSPACE) {
		memset(buf, 'x', sizeof(ring[0]) - 1);
		buf[sizeof(ring[0]) - 1] = '\0';
		return buf;
	}
	return NULL;
}

static void remote_resolve(spank_t sp)
{
	struct te_config inherited;
	char err[TE_ERR_MAX];
	int have_inh;

	if (te_plug.resolved || remote_err[0])
		return;
	if (!te_plug.policy_ok) {
		te_strlcpy(remote_err, te_plug.policy_err, sizeof(remote_err));
		return;
	}
	have_inh = te_inherited_config(remote_getenv, sp, &inherited) == 0;
	if (te_resolve(&te_plug.pol, (const char *const *)te_plug.opt,
		       remote_getenv, sp, have_inh ? &inherited : NULL,
		       &te_plug.cfg, err, sizeof(err)) < 0) {
		te_strlcpy(remote_err, err, sizeof(remote_err));
		slurm_error(TE_PREFIX "%s", err);
		return;
	}
	te_plug.resolved = 1;
}

/* The address of rank 0's node as this node resolves it: an IP address, so
 * that every rank connects to the same place whatever its resolver does. */
static void find_master(spank_t sp)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL, *p;
	const char *list = remote_getenv(sp, "SLURM_STEP_NODELIST");
	char host[256];
	int e;

	if (!list)
		list = remote_getenv(sp, "SLURM_JOB_NODELIST");
	if (!list || te_hostlist_first(list, host, sizeof(host)) < 0) {
		te_snprintf(step.master_note, sizeof(step.master_note),
			    "cannot read the step's node list");
		return;
	}
	if ((e = getaddrinfo(host, NULL, &hints, &ai)) != 0) {
		te_snprintf(step.master_note, sizeof(step.master_note),
			    "cannot resolve %s: %s", host, gai_strerror(e));
		return;
	}
	/* IPv4 first: it is what most training stacks expect. */
	for (int fam = 0; fam < 2 && !step.master_addr[0]; fam++)
		for (p = ai; p; p = p->ai_next) {
			const void *a;

			if (fam == 0 && p->ai_family == AF_INET)
				a = &((struct sockaddr_in *)p->ai_addr)->sin_addr;
			else if (fam == 1 && p->ai_family == AF_INET6)
				a = &((struct sockaddr_in6 *)p->ai_addr)->sin6_addr;
			else
				continue;
			if (inet_ntop(p->ai_family, a, step.master_addr,
				      sizeof(step.master_addr)))
				break;
			step.master_addr[0] = '\0';
		}
	freeaddrinfo(ai);
	if (!step.master_addr[0])
		te_snprintf(step.master_note, sizeof(step.master_note),
			    "%s has no IP address", host);
}

static void gather_step(spank_t sp)
{
	const char *s;

	if (step.have)
		return;
	step.have = 1;
	spank_get_item(sp, S_JOB_ID, &step.job_id);
	spank_get_item(sp, S_JOB_STEPID, &step.step_id);
	spank_get_item(sp, S_JOB_NNODES, &step.nnodes);
	spank_get_item(sp, S_JOB_NODEID, &step.node_id);
	spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &step.ntasks);
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &step.local_tasks);
	if (spank_get_item(sp, S_JOB_ARGV, &step.argc, &step.argv) !=
	    ESPANK_SUCCESS)
		step.argc = 0;
	step.batch = step.step_id == SLURM_BATCH_SCRIPT ||
		     step.step_id == SLURM_EXTERN_CONT;
	te_node_name(step.node, sizeof(step.node));
	if (!step.batch)
		find_master(sp);

	if ((s = remote_getenv(sp, TE_FAILREP_ENV)) &&
	    te_failrep_env_parse(s, &step.report_port, step.report_token,
				 sizeof(step.report_token)) == 0 &&
	    (s = remote_getenv(sp, "SLURM_SRUN_COMM_HOST")) &&
	    te_strlcpy(step.report_host, s, sizeof(step.report_host)) <
		    sizeof(step.report_host))
		step.report = 1;
}

static void gpu_env(spank_t sp, struct te_bind_gpu_env *e, char bufs[3][1024])
{
	static const char *const names[3] = {
		"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"
	};
	const char **dst[3] = { &e->cuda_visible_devices, &e->slurm_step_gpus,
				&e->slurm_job_gpus };
	int i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < 3; i++) {
		spank_err_t rc = spank_getenv(sp, names[i], bufs[i], 1024);

		/* An over-long list is junk: let the parser refuse it. */
		if (rc == ESPANK_NOSPACE)
			te_strlcpy(bufs[i], "too-long", 1024);
		*dst[i] = (rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE) ?
				  bufs[i] : NULL;
	}
	e->in_slurm = 1;
}

/* Once per step, before the tasks are forked. Called from init_post_opt,
 * where slurmstepd is still root (the topology cache is root's), and again
 * from user_init in case the first call could not run. Never fails: an
 * error here could drain the node. */
static void step_setup(spank_t sp)
{
	static int done;
	struct te_bind_gpu_env e;
	char bufs[3][1024];

	if (done)
		return;
	remote_resolve(sp);
	gather_step(sp);
	done = 1;
	if (te_plug.resolved && te_plug.cfg.v[TE_S_TRAIN].word == 0 &&
	    !step.batch) {
		gpu_env(sp, &e, bufs);
		te_bindstep_init(&te_plug.cfg, step.local_tasks, &e);
	}
}

int te_remote_post_opt(spank_t sp)
{
	step_setup(sp);
	return 0;
}

int te_remote_user_init(spank_t sp)
{
	step_setup(sp);
	return 0;
}

/* --train-barrier=first-collective: the job-wide barrier runs in each
 * process right before its first NCCL communicator, from trainenv-nccl.so
 * in LD_PRELOAD (before the user's own preloads). Its deadline is the
 * site's numeric barrier value, else 300 s. */
static int preload_nccl_barrier(spank_t sp)
{
	const struct te_value *site = &te_plug.pol.def[TE_S_BARRIER];
	const struct te_value *dir = &te_plug.cfg.v[TE_S_LIB_DIR];
	const char *old = remote_getenv(sp, "LD_PRELOAD");
	char lib[TE_VALUE_MAX + 32], val[2 * TE_VALUE_MAX + 40], secs[24];

	if (te_snprintf(lib, sizeof(lib), "%s/trainenv-nccl.so",
			dir->set ? dir->text : TE_LIBDIR) < 0 ||
	    te_snprintf(val, sizeof(val), "%s%s%s", lib, old && *old ? ":" : "",
			old ? old : "") < 0) {
		te_snprintf(remote_err, sizeof(remote_err), "LD_PRELOAD too "
			    "long for the first-collective barrier");
		return -1;
	}
	if (access(lib, R_OK) < 0) {
		te_snprintf(remote_err, sizeof(remote_err), "barrier="
			    "first-collective: %s: %s", lib, strerror(errno));
		return -1;
	}
	te_snprintf(secs, sizeof(secs), "%llu",
		    site->set && site->word < 0 ?
			    (unsigned long long)site->num : 300ULL);
	spank_setenv(sp, "TRAINENV_BARRIER_TIMEOUT", secs, 1);
	spank_setenv(sp, "LD_PRELOAD", val, 1);
	return 0;
}

/* Binds the task per policy; -1 fails it (bind-failure=fail). */
static int bind_task(spank_t sp, uint32_t local_id, uint32_t global_id)
{
	const struct te_value *b = &te_plug.cfg.v[TE_S_BIND];
	struct te_bindstep_out out;
	struct te_bind_gpu_env e;
	char bufs[3][1024];
	int rc;

	if (!te_bindstep_active())
		return 0;
	gpu_env(sp, &e, bufs);
	rc = te_bindstep_task(local_id, global_id, &e,
			      te_plug.cfg.v[TE_S_BIND_GPUS].word == 1,
			      (b->num & 1) != 0, &out);
	if (out.verbose[0])
		fprintf(stderr, TE_PREFIX "%s\n", out.verbose);
	if (rc < 0 && te_plug.cfg.v[TE_S_BIND_FAILURE].word == 1) {
		te_strlcpy(remote_err, out.msg, sizeof(remote_err));
		return task_fail(sp);
	}
	if (rc < 0 || out.warn_only) {
		fprintf(stderr, TE_PREFIX "warning: %s%s\n", out.msg,
			rc < 0 ? "; running unbound (bind-failure=warn)" : "");
		slurm_info(TE_PREFIX "%s", out.msg);
	}
	fflush(stderr);
	if (rc == 0) {
		spank_setenv(sp, "TRAINENV_BIND", out.summary, 1);
		spank_setenv(sp, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
		if (out.visible[0])
			spank_setenv(sp, "CUDA_VISIBLE_DEVICES", out.visible, 1);
	}
	return 0;
}

/* Writes the knob into every name it has (current and legacy). A value that
 * came from the environment stays as the user set it; only missing aliases
 * are filled in. */
static int export_knob(spank_t sp, int id)
{
	const struct te_setting *s = &te_settings[id];
	const struct te_value *v = &te_plug.cfg.v[id];
	const char *text;
	int e;

	if (!s->env || !v->set)
		return 0;
	text = te_value_env_text(id, v);
	for (e = 0; s->env[e]; e++) {
		int overwrite = v->src != TE_SRC_ENV;
		spank_err_t rc = spank_setenv(sp, s->env[e], text, overwrite);

		if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) {
			te_snprintf(remote_err, sizeof(remote_err),
				    "cannot set %s: %s", s->env[e],
				    spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

static int task_fail(spank_t sp)
{
	/* slurm_info() goes to the slurmd log only (slurm_error() from a task
	 * would also reach the task's stderr: the user would read it twice);
	 * the task's stderr is what the user sees in srun's output. */
	slurm_info(TE_PREFIX "error: %s", remote_err);
	fprintf(stderr, TE_PREFIX "error: %s\n", remote_err);
	fflush(stderr);
	return -1;
}

__attribute__((format(printf, 2, 3)))
static void task_warn(uint32_t local_id, const char *fmt, ...)
{
	va_list ap;

	if (local_id != 0)	/* once per node is enough */
		return;
	fprintf(stderr, TE_PREFIX "warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	fflush(stderr);
}

/* Sets name unless the user set it; a value an enclosing trainenv step set
 * (listed in TRAINENV_RANK_VARS) is not the user's. */
static void set_rank_var(spank_t sp, const char *inherited_list,
			 const char *name, const char *value, char *set_list,
			 size_t set_len)
{
	int overwrite = te_name_in_list(inherited_list, name);

	if (spank_setenv(sp, name, value, overwrite) == ESPANK_SUCCESS)
		te_appendf(set_list, set_len, "%s%s", set_list[0] ? "," : "",
			   name);
}

/* rr: the PMIx rendezvous' results, or NULL for the computed one. */
static void export_rank_env(spank_t sp, uint32_t local_id, uint32_t global_id,
			    const struct te_rdzv_result *rr)
{
	struct te_step_facts f = {
		.job_id = step.job_id, .step_id = step.step_id,
		.nnodes = step.nnodes, .node_id = step.node_id,
		.ntasks = step.ntasks, .local_tasks = step.local_tasks,
		.local_id = local_id, .global_id = global_id,
		.master_addr = step.master_addr[0] ? step.master_addr : NULL,
	};
	const struct te_value *range = &te_plug.cfg.v[TE_S_PORT_RANGE];
	const struct te_value *rdzv = &te_plug.cfg.v[TE_S_RDZV_TIMEOUT];
	const char *inh_list = remote_getenv(sp, TE_RANK_VARS_ENV);
	char inh[TE_VALUE_MAX + 2], set_list[512] = "", why[160], launch[200];
	struct te_envlist e;
	enum te_launch mode;
	int gpus, i;

	te_strlcpy(inh, inh_list ? inh_list : "", sizeof(inh));
	gpus = te_devlist_count(remote_getenv(sp, "CUDA_VISIBLE_DEVICES"));
	f.gpus = gpus > 0 ? (uint32_t)gpus : 0;
	f.master_port = te_master_port(step.job_id, step.step_id,
				       (uint16_t)range->num,
				       (uint16_t)range->num2);
	if (rr && rr->master_addr[0] && rr->master_port) {
		f.master_addr = rr->master_addr;
		f.master_port = rr->master_port;
	}
	f.rdzv_timeout = rdzv->set ? rdzv->num : 0;
	mode = te_launcher_decide(te_plug.cfg.v[TE_S_LAUNCHER].word, step.argc,
				  step.argv, step.ntasks, step.nnodes, f.gpus,
				  why, sizeof(why));
	te_snprintf(launch, sizeof(launch), "%s (%s)",
		    mode == TE_LAUNCH_TASK ? "task" : "torchrun", why);
	spank_setenv(sp, TE_LAUNCHER_ENV, launch, 1);
	if (rr && rr->ifname[0]) {
		set_rank_var(sp, inh, "NCCL_SOCKET_IFNAME", rr->ifname,
			     set_list, sizeof(set_list));
		set_rank_var(sp, inh, "GLOO_SOCKET_IFNAME", rr->ifname,
			     set_list, sizeof(set_list));
	}
	if (te_plug.cfg.v[TE_S_RANK_ENV].word == 0) {	/* else rank-env=no */
		if (!f.master_addr)
			task_warn(local_id, "MASTER_ADDR not set: %s",
				  step.master_note);
		if (te_rank_env(&f, mode, &e) == 0)
			for (i = 0; i < e.n; i++)
				set_rank_var(sp, inh, e.name[i], e.value[i],
					     set_list, sizeof(set_list));
	}
	spank_setenv(sp, TE_RANK_VARS_ENV, set_list, 1);
}

/* helper-dir/NAME: the helpers' path comes from the site policy or the
 * build, never from anything the user sets. */
static int helper_path(const char *name, char *path, size_t len)
{
	const struct te_value *d = &te_plug.cfg.v[TE_S_HELPER_DIR];

	return te_snprintf(path, len, "%s/%s", d->set ? d->text :
			   TE_PKGLIBEXECDIR, name);
}

/* What the program's run says when its output is not a result. */
static void preflight_spawn_err(const struct te_spawn_out *o, const char *buf,
				char *err, size_t errlen)
{
	static struct te_pf_result r;
	char perr[256];

	if (o->killed) {
		te_snprintf(err, errlen, "no answer within %d s: the check was "
			    "killed (the GPU or its driver hangs?)",
			    TE_PF_TIMEOUT_S);
		return;
	}
	if (o->too_long) {
		te_snprintf(err, errlen, "the check wrote more than %d bytes",
			    TE_PF_OUT_MAX);
		return;
	}
	if (te_pf_parse(buf, o->got, &r, perr, sizeof(perr)) == 0) {
		err[0] = '\0';
		return;
	}
	if (WIFSIGNALED(o->status))
		te_snprintf(err, errlen, "the check (%s) was killed by signal "
			    "%d (%s)", TE_PREFLIGHT_HELPER, WTERMSIG(o->status),
			    strsignal(WTERMSIG(o->status)));
	else if (WEXITSTATUS(o->status))
		te_snprintf(err, errlen, "the check (%s) exited with status %d "
			    "(%s)", TE_PREFLIGHT_HELPER, WEXITSTATUS(o->status),
			    perr);
	else
		te_snprintf(err, errlen, "unreadable output from the check "
			    "(%s): %s", TE_PREFLIGHT_HELPER, perr);
}

/* --train-preflight: checks this rank's GPU before the rendezvous, as the
 * job user, with trainenv-preflight (the CUDA runtime is only loaded in
 * that program, never here). 0: the GPU works, or there is nothing to
 * check on this node (said once for the step); -1: the task must fail,
 * with line (the task's own error) and why (for the other ranks). */
static int run_preflight(spank_t sp, uint32_t local_id, uint32_t global_id,
			 char *line, size_t linelen, char *why, size_t whylen)
{
	static char obuf[TE_PF_OUT_MAX + 1];
	static struct te_pf_result res;
	const struct te_config *c = &te_plug.cfg;
	struct te_pf_input in = {
		.rank = global_id, .local_id = local_id, .node = step.node,
		.verbose = c->v[TE_S_PREFLIGHT].word == 2,
	};
	struct te_pf_outcome out;
	struct te_bind_gpu_env e;
	struct te_spawn_out so;
	char bufs[3][1024], busid[TE_BIND_BUSID_LEN], merr[TE_ERR_MAX];
	char path[TE_VALUE_MAX + 32], serr[TE_ERR_MAX], hook[TE_PF_ERROR_MAX + 1];
	char perr[8], *argv[8], **envp = NULL;
	int n = 0;

	if (c->v[TE_S_PREFLIGHT].word <= 0)
		return 0;
	gpu_env(sp, &e, bufs);
	merr[0] = '\0';
	in.has_gpu = te_bindstep_gpu(local_id, &e, busid, sizeof(busid), merr,
				     sizeof(merr));
	in.busid = busid;
	in.map_err = merr;
	if (!te_pf_need_run(&in, &out))
		goto report;	/* no GPU here: the program is not run */
	serr[0] = '\0';
	if (helper_path(TE_PREFLIGHT_HELPER, path, sizeof(path)) < 0) {
		te_snprintf(serr, sizeof(serr), "helper-dir is too long");
	} else if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS ||
		   !envp) {
		te_snprintf(serr, sizeof(serr), "cannot read the task's "
			    "environment for the check");
	} else {
		argv[n++] = (char *)TE_PREFLIGHT_HELPER;
		argv[n++] = (char *)"--gpu";
		argv[n++] = busid;
		if (c->v[TE_S_TEST_HOOKS].word == 0 &&
		    te_hook_value(remote_getenv(sp, "TRAINENV_TEST_PREFLIGHT_FAIL"),
				  step.node, hook, sizeof(hook))) {
			argv[n++] = (char *)"--test-fail";
			argv[n++] = hook;
		}
		argv[n] = NULL;
		if (te_spawn_capture(path, argv, envp, TE_PF_TIMEOUT_S * 1000,
				     obuf, sizeof(obuf), &so, serr,
				     sizeof(serr)) < 0) {
			char m[TE_ERR_MAX];

			te_snprintf(m, sizeof(m), "cannot run the check: %s",
				    serr);
			te_strlcpy(serr, m, sizeof(serr));
		} else {
			preflight_spawn_err(&so, obuf, serr, sizeof(serr));
			if (!serr[0] &&
			    te_pf_parse(obuf, so.got, &res, perr,
					sizeof(perr)) < 0)
				te_snprintf(serr, sizeof(serr), "unreadable "
					    "output from the check");
		}
	}
	in.spawn_err = serr[0] ? serr : NULL;
	in.result = serr[0] ? NULL : &res;
	te_pf_decide(&in, &out);
report:
	if (out.action == TE_PF_FAIL) {
		te_strlcpy(line, out.line, linelen);
		te_strlcpy(why, out.why, whylen);
		return -1;
	}
	if (out.action == TE_PF_PASS)
		spank_setenv(sp, TE_PF_ENV, out.env, 1);
	if (out.line[0] && out.print) {
		fprintf(stderr, TE_PREFIX "%s\n", out.line);
		fflush(stderr);
	}
	if (out.line[0])
		slurm_info(TE_PREFIX "%s", out.line);
	return 0;
}

/* The step has a PMIx server for its tasks (srun --mpi=pmix). */
static int step_has_pmix(spank_t sp)
{
	return remote_getenv(sp, "PMIX_RANK") &&
	       remote_getenv(sp, "PMIX_NAMESPACE");
}

/* The launch rendezvous for this task. The node's first task runs
 * trainenv-rdzv, which stands for the node's other tasks; they only say
 * they are here and wait for its result (both through files in the step's
 * private PMIx directory). 1: rr holds the results; 0: no PMIx rendezvous
 * for this step (computed one); -1: the task must fail (remote_err says
 * why; *quiet: rank 0 reports it for the job).
 *
 * failed: this task already failed (the pre-flight), why: then it does
 * not arrive. With a barrier, rank 0 hears of it (a follower leaves a
 * failure file, the node's helper runs with --failed) and fails the whole
 * step at once; without one the task fails alone, and the node's first
 * task still runs the helper for the node's other tasks. */
static int run_rendezvous(spank_t sp, uint32_t local_id, uint32_t global_id,
			  struct te_rdzv_result *rr, int *quiet,
			  const char *failed)
{
	const struct te_config *c = &te_plug.cfg;
	const struct te_value *barrier = &c->v[TE_S_BARRIER];
	const struct te_value *ckpt = &c->v[TE_S_CHECKPOINT_DIR];
	const struct te_value *range = &c->v[TE_S_PORT_RANGE];
	char path[TE_VALUE_MAX + 32], a_job[16], a_step[16], a_range[16];
	char a_start[8], a_barrier[24], err[TE_ERR_MAX], tmpdir[TE_VALUE_MAX + 2];
	char hook_why[96], *argv[26], **envp = NULL;
	const char *s;
	unsigned long secs;
	int n = 0, timeout_ms, nodes_files, barrier_mode, lead_lock = -1;

	*quiet = 0;
	if (c->v[TE_S_RDZV].word == 2)		/* computed */
		return 0;
	if (!step_has_pmix(sp)) {
		if (c->v[TE_S_RDZV].word != 1)
			return 0;	/* auto: srun said it once */
		te_snprintf(remote_err, sizeof(remote_err), "rdzv=pmix, but "
			    "this step has no PMIx server: run it with srun "
			    "--mpi=pmix (or MpiDefault=pmix)");
		return -1;
	}
	secs = barrier->word < 0 ? (unsigned long)barrier->num : 0;
	barrier_mode = secs > 0 || ckpt->set;
	/* The helper keeps its own deadlines; this one only catches a helper
	 * that is stuck (killing a PMIx client makes Slurm end the step). */
	timeout_ms = (int)((secs ? secs : 300) + (ckpt->set ? 15 : 0) + 20) * 1000;
	s = remote_getenv(sp, "PMIX_SERVER_TMPDIR");
	nodes_files = s && te_strlcpy(tmpdir, s, sizeof(tmpdir)) < sizeof(tmpdir) &&
		      step.local_tasks > 1 && te_private_dir_ok(tmpdir);
	if (nodes_files && local_id != 0) {
		if (c->v[TE_S_TEST_HOOKS].word == 0) {
			char buf[32], rank[16];
			const char *v;
			uint64_t d;

			if ((v = te_hook_value(remote_getenv(sp, "TRAINENV_TEST_DELAY"),
					       step.node, buf, sizeof(buf))) &&
			    te_parse_u64(v, 600, &d) == 0)
				sleep((unsigned)d);
			te_snprintf(rank, sizeof(rank), "%u", global_id);
			if (!failed &&
			    (v = remote_getenv(sp, "TRAINENV_TEST_FAIL_RANK")) &&
			    !strcmp(v, rank)) {
				te_snprintf(remote_err, sizeof(remote_err),
					    "test hook TRAINENV_TEST_FAIL_RANK: "
					    "rank %s fails before the barrier", v);
				te_strlcpy(hook_why, remote_err,
					   sizeof(hook_why));
				failed = hook_why;
			}
		}
		if (failed) {
			/* rank 0 fails the step at once: no waiting for the
			 * barrier's deadline */
			if (barrier_mode &&
			    te_rdzv_leave_failed(tmpdir, global_id, failed) < 0)
				slurm_info(TE_PREFIX "rank %u: cannot leave its "
					   "failure file in %s", global_id,
					   tmpdir);
			return -1;
		}
		if (te_rdzv_follow(tmpdir, global_id, timeout_ms, rr, err,
				   sizeof(err)) < 0) {
			te_snprintf(remote_err, sizeof(remote_err),
				    "rendezvous: %s", err);
			return -1;
		}
		goto result;
	}
	/* without a barrier nobody waits for this task: only the node's
	 * other tasks need its helper */
	if (failed && !barrier_mode && !nodes_files)
		return -1;
	if (helper_path(TE_RDZV_HELPER, path, sizeof(path)) < 0) {
		te_snprintf(remote_err, sizeof(remote_err), "helper-dir is "
			    "too long");
		goto leader_failed;
	}
	te_snprintf(a_job, sizeof(a_job), "%u", step.job_id);
	te_snprintf(a_step, sizeof(a_step), "%u", step.step_id);
	te_snprintf(a_range, sizeof(a_range), "%u-%u", (unsigned)range->num,
		    (unsigned)range->num2);
	te_snprintf(a_start, sizeof(a_start), "%u",
		    te_master_port(step.job_id, step.step_id,
				   (uint16_t)range->num, (uint16_t)range->num2));
	te_snprintf(a_barrier, sizeof(a_barrier), "%lu", secs);
	argv[n++] = (char *)TE_RDZV_HELPER;
	argv[n++] = (char *)"--job";
	argv[n++] = a_job;
	argv[n++] = (char *)"--step";
	argv[n++] = a_step;
	argv[n++] = (char *)"--port-range";
	argv[n++] = a_range;
	argv[n++] = (char *)"--port-start";
	argv[n++] = a_start;
	argv[n++] = (char *)"--barrier";
	argv[n++] = a_barrier;
	argv[n++] = (char *)"--version-check";
	argv[n++] = (char *)te_settings[TE_S_VERSION_CHECK]
			    .words[c->v[TE_S_VERSION_CHECK].word >= 0 ?
					   c->v[TE_S_VERSION_CHECK].word : 0];
	if (ckpt->set) {
		argv[n++] = (char *)"--checkpoint-dir";
		argv[n++] = (char *)ckpt->text;
	}
	if (c->v[TE_S_SOCKET_IFNAME].word == 0)
		argv[n++] = (char *)"--ifname";
	if (c->v[TE_S_TEST_HOOKS].word == 0)
		argv[n++] = (char *)"--test-hooks";
	if (nodes_files)
		argv[n++] = (char *)"--lead";
	if (failed && barrier_mode) {
		argv[n++] = (char *)"--failed";
		argv[n++] = (char *)failed;
	}
	argv[n] = NULL;
	if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS || !envp) {
		te_snprintf(remote_err, sizeof(remote_err), "cannot read the "
			    "task's environment for the rendezvous");
		goto leader_failed;
	}
	/* held while this task waits: its followers see it end */
	lead_lock = nodes_files ? te_rdzv_lead_lock(tmpdir) : -1;
	if (te_rdzv_spawn(path, argv, envp, timeout_ms, rr, err,
			  sizeof(err)) < 0) {
		te_snprintf(remote_err, sizeof(remote_err), "rendezvous: %s "
			    "(--train-rdzv=computed skips the PMIx rendezvous)",
			    err);
		goto leader_failed;
	}
	if (lead_lock >= 0)
		close(lead_lock);	/* the node's result is there */
	if (failed)
		return -1;	/* the caller reports this task's own failure */
result:
	for (n = 0; n < rr->nwarn; n++)
		fprintf(stderr, TE_PREFIX "warning: %s\n", rr->warn[n]);
	fflush(stderr);
	if (rr->failed) {
		te_strlcpy(remote_err, rr->error, sizeof(remote_err));
		*quiet = rr->quiet;
		return -1;
	}
	return 1;
leader_failed:
	/* the node's other tasks wait for this task's result */
	if (nodes_files)
		te_rdzv_leave_error(tmpdir, remote_err);
	if (lead_lock >= 0)
		close(lead_lock);
	return -1;
}

/* DIR/JOBID for the flight recorder dumps. task_init runs as the job user:
 * the directory is made with the user's rights, never root's. In a shared
 * DIR another user may have made DIR/JOBID first (job ids are predictable)
 * or put a link there: it is opened without following a link, relative to
 * DIR, and used only when te_dump_dir_verdict() says it is the user's own;
 * otherwise the task runs without TORCH_NCCL_DEBUG_INFO_TEMP_FILE, warned. */
static void export_dump_dir(spank_t sp, uint32_t local_id)
{
	const struct te_value *d = &te_plug.cfg.v[TE_S_NCCL_DUMP_DIR];
	char dir[TE_VALUE_MAX + 32], file[TE_VALUE_MAX + 64], name[16];
	char why[160];
	struct stat pst, st;
	uid_t uid;
	int pfd, dfd = -1;

	if (!d->set)
		return;
	if (te_snprintf(name, sizeof(name), "%u", step.job_id) < 0 ||
	    te_snprintf(dir, sizeof(dir), "%s/%s", d->text, name) < 0 ||
	    te_snprintf(file, sizeof(file), "%s/nccl_trace_rank_", dir) < 0)
		return;
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
		uid = geteuid();
	/* O_PATH: DIR need not be readable, only searchable (as mkdir) */
	pfd = open(d->text, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		task_warn(local_id, "--train-nccl-dump-dir: cannot open %s: %s; "
			  "no flight recorder dumps there", d->text,
			  strerror(errno));
		return;
	}
	if (mkdirat(pfd, name, 0700) < 0 && errno != EEXIST) {
		task_warn(local_id, "--train-nccl-dump-dir: cannot create %s: "
			  "%s", dir, strerror(errno));
		goto out;
	}
	dfd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;

		/* what is there, for the message only */
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    fstat(pfd, &pst) == 0 &&
		    te_dump_dir_verdict(&pst, &st, uid, why, sizeof(why)) < 0)
			task_warn(local_id, "--train-nccl-dump-dir: %s %s; no "
				  "flight recorder dumps there", dir, why);
		else
			task_warn(local_id, "--train-nccl-dump-dir: cannot "
				  "open %s: %s", dir, strerror(e));
		goto out;
	}
	if (fstat(pfd, &pst) < 0 || fstat(dfd, &st) < 0) {
		task_warn(local_id, "--train-nccl-dump-dir: %s: %s", dir,
			  strerror(errno));
		goto out;
	}
	if (te_dump_dir_verdict(&pst, &st, uid, why, sizeof(why)) < 0) {
		task_warn(local_id, "--train-nccl-dump-dir: %s %s; no flight "
			  "recorder dumps there", dir, why);
		goto out;
	}
	spank_setenv(sp, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", file,
		     d->src == TE_SRC_ENFORCED);
out:
	if (dfd >= 0)
		close(dfd);
	close(pfd);
}

int te_remote_task_init(spank_t sp)
{
	static char enc[TE_S_COUNT * (3 * TE_VALUE_MAX + 3 * TE_ORIGIN_MAX + 80)];
	uint32_t local_id = 0, global_id = 0;
	uint64_t mask;
	int i;

	remote_resolve(sp);
	gather_step(sp);
	if (remote_err[0])
		return task_fail(sp);

	if (te_config_encode(&te_plug.cfg, enc, sizeof(enc)) == 0)
		spank_setenv(sp, TE_SETTINGS_ENV, enc, 1);
	if (te_plug.cfg.v[TE_S_TRAIN].word != 0)
		return 0;	/* --train=off */
	spank_get_item(sp, S_TASK_ID, &local_id);
	spank_get_item(sp, S_TASK_GLOBAL_ID, &global_id);

	/* slurmstepd resets signal dispositions after task_init_privileged,
	 * so this is the place; SIG_IGN survives execve. Only sighup=ignore
	 * (1) touches SIGHUP: the built-in shield leaves the tasks' signals
	 * as Slurm sets them. */
	if (te_plug.cfg.v[TE_S_SIGHUP].word == 1 &&
	    signal(SIGHUP, SIG_IGN) == SIG_ERR) {
		te_snprintf(remote_err, sizeof(remote_err),
			    "cannot ignore SIGHUP: %s", strerror(errno));
		return task_fail(sp);
	}
	mask = te_plug.cfg.v[TE_S_IGNORE_SIGNALS].word < 0 ?
		       te_plug.cfg.v[TE_S_IGNORE_SIGNALS].num : 0;
	for (i = 1; i < 64; i++)
		if ((mask & (1ULL << i)) && i != SIGUSR1 && i != SIGUSR2)
			signal(i, SIG_IGN);

	for (i = 0; i < TE_S_COUNT; i++)
		if (export_knob(sp, i) < 0)
			return task_fail(sp);
	export_dump_dir(sp, local_id);
	if (!step.batch) {
		static struct te_rdzv_result rr;
		const struct te_value *ckpt =
			&te_plug.cfg.v[TE_S_CHECKPOINT_DIR];
		char pf_line[TE_PF_LINE_MAX], pf_why[TE_PF_LINE_MAX];
		int have, quiet, pf;

		/* Bound first: the rendezvous helper and the pre-flight
		 * then start on the rank's CPUs too. */
		if (bind_task(sp, local_id, global_id) < 0)
			return -1;
		pf = run_preflight(sp, local_id, global_id, pf_line,
				   sizeof(pf_line), pf_why, sizeof(pf_why));
		have = run_rendezvous(sp, local_id, global_id, &rr, &quiet,
				      pf < 0 ? pf_why : NULL);
		if (pf < 0) {
			te_strlcpy(remote_err, pf_line, sizeof(remote_err));
			return task_fail(sp);
		}
		if (have < 0 && quiet) {
			/* rank 0 prints the job-wide report: only the node's
			 * log hears from the others */
			slurm_info(TE_PREFIX "%s", remote_err);
			return -1;
		}
		if (have < 0)
			return task_fail(sp);
		export_rank_env(sp, local_id, global_id, have ? &rr : NULL);
		if (have && rr.checkpoint_dir[0])
			spank_setenv(sp, TE_CHECKPOINT_ENV, rr.checkpoint_dir, 1);
		else if (!have && ckpt->set)	/* not verified: srun said so */
			spank_setenv(sp, TE_CHECKPOINT_ENV, ckpt->text, 1);
		/* A later PMIx client of this rank (MPI_Init, the barrier
		 * tool) needs the hash store: docs/design.md section 3. */
		if (have)
			spank_setenv(sp, "PMIX_MCA_gds", "hash", 0);
		if (te_plug.cfg.v[TE_S_BARRIER].word == 1 && step_has_pmix(sp) &&
		    preload_nccl_barrier(sp) < 0)
			return task_fail(sp);
	}
	return 0;
}

/* Once per step: what the sender could not deliver goes to the node's log. */
static void report_sender_finish(void)
{
	char err[TE_ERR_MAX];
	int lost = te_failrep_sender_finish(TE_FAILREP_FINISH_MS, err,
					    sizeof(err));

	if (lost > 0)
		slurm_info(TE_PREFIX "%d failure report%s of step %u.%u not "
			   "delivered to srun: %s", lost, lost == 1 ? "" : "s",
			   step.job_id, step.step_id, err);
}

/* Never waits on the network: the line goes to the step's sender. Only the
 * node's last task to exit lets the sender finish (bounded, once per step):
 * Slurm kills the step's processes right after it. */
int te_remote_task_exit(spank_t sp)
{
	static uint32_t exited, refused;
	struct te_failrep r = { 0 };
	struct timespec ts;
	int status = 0, last;
	uid_t uid;
	gid_t gid;
	char err[TE_ERR_MAX];

	if (!step.report || !te_plug.resolved ||
	    te_plug.cfg.v[TE_S_TRAIN].word != 0 ||
	    te_plug.cfg.v[TE_S_FAILURE_REPORT].word != 0)
		return 0;
	last = step.local_tasks && ++exited >= step.local_tasks;
	if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS ||
	    status == 0)
		goto out;
	clock_gettime(CLOCK_REALTIME, &ts);
	r.sec = ts.tv_sec;
	r.usec = (uint32_t)(ts.tv_nsec / 1000);
	spank_get_item(sp, S_TASK_GLOBAL_ID, &r.rank);
	spank_get_item(sp, S_TASK_ID, &r.local_rank);
	te_strlcpy(r.node, step.node, sizeof(r.node));
	if (WIFSIGNALED(status)) {
		r.signaled = 1;
		r.value = WTERMSIG(status);
		r.core = WCOREDUMP(status) ? 1 : 0;
	} else {
		r.value = WEXITSTATUS(status);
	}
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
		slurm_info(TE_PREFIX "rank %u failed; cannot tell srun: no job "
			   "uid", r.rank);
		goto out;
	}
	/* one line for the first report that cannot go; the step's summary
	 * (report_sender_finish) counts them all */
	if (te_failrep_sender_add(step.report_host, step.report_port,
				  step.report_token, &r, uid, gid, err,
				  sizeof(err)) < 0 && !refused++)
		slurm_info(TE_PREFIX "rank %u %s %d; could not tell srun: %s",
			   r.rank, r.signaled ? "killed by signal" :
			   "exited with code", r.value, err);
out:
	if (last)
		report_sender_finish();
	return 0;
}

int te_remote_exit(spank_t sp)
{
	(void)sp;
	/* when the node's last task was never reaped here */
	if (step.report)
		report_sender_finish();
	return 0;
}
