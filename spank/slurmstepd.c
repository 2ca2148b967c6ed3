/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The slurmstepd side of trainenv.so: resolve the settings once per step from the node's policy, the
 * options srun passed and the job environment, then prepare every task just
 * before exec. Nothing here may fail the step in a way that drains the node:
 * errors are remembered and fail the tasks, with the reason on the tasks'
 * stderr (which reaches srun) and in the slurmd log. The features it runs
 * per task have their own files: binding (stepd_bind.c), the GPU pre-flight
 * (stepd_preflight.c), the launch rendezvous (stepd_rdzv.c, stepd_rdzv_client.c),
 * the failure report's sender (stepd_failrep_send.c), containers
 * (stepd_container.c, stepd_apptainer.c), the worker watcher
 * (stepd_watch.c); they share the step's state and helpers
 * (stepd_step.c), which calls none of them back. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "container/apptainer_env.h"
#include "report/dumpdir.h"
#include "report/recovery.h"
#include "launch/preflight_proto.h"
#include "launch/rankenv.h"
#include "slurm_compat.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "launch/version.h"

#include "failrep_net.h"
#include "slurmstepd.h"
#include "stepd_apptainer.h"
#include "stepd_bind.h"
#include "stepd_container.h"
#include "stepd_health.h"
#include "stepd_preflight.h"
#include "stepd_rdzv.h"
#include "stepd_straggler.h"
#include "stepd_hangenv.h"
#include "stepd_step.h"
#include "stepd_watch.h"

#define TE_CHECKPOINT_ENV "TRAINENV_CHECKPOINT_DIR"

static int task_fail(spank_t sp);

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
	te_stepd_resolve(sp);
	te_stepd_gather(sp);
	done = 1;
	if (te_plug.resolved && te_plug.cfg.v[TE_S_TRAIN].word == TE_W_ON &&
	    !te_step.batch) {
		te_stepd_gpu_env(sp, &e, bufs);
		te_bindstep_init(&te_plug.cfg, te_step.local_tasks, &e);
	}
}

int te_stepd_post_opt(spank_t sp)
{
	step_setup(sp);
	return 0;
}

int te_stepd_user_init(spank_t sp)
{
	step_setup(sp);
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
	te_stepd_gpu_env(sp, &e, bufs);
	rc = te_bindstep_task(local_id, global_id, &e,
			      te_plug.cfg.v[TE_S_BIND_GPUS].word ==
				      TE_W_BIND_GPUS_OWN,
			      (b->num & (1u << TE_M_BIND_VERBOSE)) != 0, &out);
	if (out.verbose[0])
		fprintf(stderr, TE_PREFIX "%s\n", out.verbose);
	if (rc < 0 &&
	    te_plug.cfg.v[TE_S_BIND_FAILURE].word == TE_W_BIND_FAILURE_FAIL) {
		te_strlcpy(te_stepd_err, out.msg, sizeof(te_stepd_err));
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
			spank_setenv(sp, "CUDA_VISIBLE_DEVICES", out.visible,
				     1);
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

		if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS)
			return te_err(te_stepd_err, sizeof(te_stepd_err),
				      "cannot set %s: %s", s->env[e],
				      spank_strerror(rc));
	}
	return 0;
}

static int task_fail(spank_t sp)
{
	/* slurm_info() goes to the slurmd log only (slurm_error() from a task
	 * would also reach the task's stderr: the user would read it twice);
	 * the task's stderr is what the user sees in srun's output. */
	slurm_info(TE_PREFIX "error: %s", te_stepd_err);
	fprintf(stderr, TE_PREFIX "error: %s\n", te_stepd_err);
	fflush(stderr);
	return -1;
}

__attribute__((format(printf, 2, 3))) static void
task_warn(uint32_t local_id, const char *fmt, ...)
{
	va_list ap;

	if (local_id != 0) /* once per node is enough */
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
		.job_id = te_step.job_id,
		.step_id = te_step.step_id,
		.nnodes = te_step.nnodes,
		.node_id = te_step.node_id,
		.ntasks = te_step.ntasks,
		.local_tasks = te_step.local_tasks,
		.local_id = local_id,
		.global_id = global_id,
		.master_addr = te_step.master_addr[0] ? te_step.master_addr
						      : NULL,
	};
	const struct te_value *range = &te_plug.cfg.v[TE_S_PORT_RANGE];
	const struct te_value *rdzv = &te_plug.cfg.v[TE_S_RDZV_TIMEOUT];
	const char *inh_list = te_stepd_getenv(sp, TE_RANK_VARS_ENV);
	char inh[TE_VALUE_MAX + 2], set_list[512] = "", why[160], launch[200];
	char task[128];
	struct te_envlist e;
	enum te_launch mode;
	int gpus, i;

	te_strlcpy(inh, inh_list ? inh_list : "", sizeof(inh));
	gpus = te_devlist_count(te_stepd_getenv(sp, "CUDA_VISIBLE_DEVICES"));
	f.gpus = gpus > 0 ? (uint32_t)gpus : 0;
	f.master_port = te_master_port(te_step.job_id, te_step.step_id,
				       (uint16_t)range->num,
				       (uint16_t)range->num2);
	if (rr && rr->master_addr[0] && rr->master_port) {
		f.master_addr = rr->master_addr;
		f.master_port = rr->master_port;
	}
	f.rdzv_timeout = rdzv->set ? rdzv->num : 0;
	mode = te_launcher_decide(te_plug.cfg.v[TE_S_LAUNCHER].word,
				  te_step.argc, te_step.argv, te_step.ntasks,
				  te_step.nnodes, f.gpus, why, sizeof(why));
	te_snprintf(launch, sizeof(launch), "%s (%s)",
		    mode == TE_LAUNCH_TASK ? "task" : "torchrun", why);
	spank_setenv(sp, TE_LAUNCHER_ENV, launch, 1);
	te_step.torchrun = mode == TE_LAUNCH_TORCHRUN;
	/* the hang report's way to this task's processes where Slurm's
	 * variables are dropped (apptainer exec --cleanenv) */
	te_snprintf(task, sizeof(task), "%u %u %u %s", te_step.job_id,
		    te_step.step_id, global_id,
		    te_step.slurm_node[0] ? te_step.slurm_node : te_step.node);
	spank_setenv(sp, TE_TASK_ENV, task, 1);
	if (rr && rr->ifname[0]) {
		set_rank_var(sp, inh, "NCCL_SOCKET_IFNAME", rr->ifname,
			     set_list, sizeof(set_list));
		set_rank_var(sp, inh, "GLOO_SOCKET_IFNAME", rr->ifname,
			     set_list, sizeof(set_list));
	}
	if (te_plug.cfg.v[TE_S_RANK_ENV].word ==
	    TE_W_YES) { /* else rank-env=no */
		if (!f.master_addr)
			task_warn(local_id, "MASTER_ADDR not set: %s",
				  te_step.master_note);
		if (te_rank_env(&f, mode, &e) == 0)
			for (i = 0; i < e.n; i++)
				set_rank_var(sp, inh, e.name[i], e.value[i],
					     set_list, sizeof(set_list));
	}
	spank_setenv(sp, TE_RANK_VARS_ENV, set_list, 1);
}

/* DIR/UID/JOBID for the flight recorder dumps (core/report/dumpdir.h). task_init
 * runs as the job user: the directories are made with the user's rights,
 * never root's, and used only when DIR's path and the levels below pass
 * te_dump_dir_open's checks; otherwise the task runs without
 * TORCH_NCCL_DEBUG_INFO_TEMP_FILE, warned. */
static void export_dump_dir(spank_t sp, uint32_t local_id, char *dir,
			    size_t dirlen)
{
	const struct te_value *d = &te_plug.cfg.v[TE_S_NCCL_DUMP_DIR];
	char file[TE_DUMP_DIR_PATH_MAX + 32], name[16],
		why[TE_DUMP_DIR_PATH_MAX + 200];
	uid_t uid;
	int dfd;

	dir[0] = '\0';
	if (!d->set)
		return;
	if (te_snprintf(name, sizeof(name), "%u", te_step.job_id) < 0)
		return;
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
		uid = geteuid();
	dfd = te_dump_dir_open(d->text, name, uid, file, sizeof(file), why,
			       sizeof(why));
	if (dfd < 0) {
		task_warn(local_id, "--train-nccl-dump-dir: %s%s", why,
			  dfd == -1 ? "; no flight recorder dumps there" : "");
		return;
	}
	close(dfd);
	if (why[0]) /* DIR/UID another user's: whose, and what is used */
		task_warn(local_id, "--train-nccl-dump-dir: %s", why);
	te_strlcpy(dir, file, dirlen); /* the flight recorder's pipe's too */
	if (te_appendf(file, sizeof(file), "/nccl_trace_rank_") < 0)
		return;
	spank_setenv(sp, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", file,
		     d->src == TE_SRC_ENFORCED);
}

/* Root, in the task before any plugin's task_init. */
int te_stepd_task_init_priv(spank_t sp)
{
	(void)sp;
	te_stepd_container_note();
	return 0;
}

/* What every task gets, trainenv on or off: the effective settings and the
 * protocol, and no task id of an enclosing step's. */
static void export_settings(spank_t sp)
{
	static char
		enc[TE_S_COUNT * (3 * TE_VALUE_MAX + 3 * TE_ORIGIN_MAX + 80)];

	/* trainenv-rdzv takes its settings from it: never leave the job's
	 * own in its place */
	if (te_config_encode(&te_plug.cfg, enc, sizeof(enc)) == 0)
		spank_setenv(sp, TE_SETTINGS_ENV, enc, 1);
	else
		spank_unsetenv(sp, TE_SETTINGS_ENV);
	/* what libtrainenv compares at trainenv_init (core/launch/version.h) */
	{
		char proto[12];

		te_snprintf(proto, sizeof(proto), "%d", te_protocol_version());
		spank_setenv(sp, TE_PROTOCOL_ENV, proto, 1);
	}
	/* one inherited from an enclosing trainenv task (srun or sbatch run
	 * by a rank) names that task: only a rank of this step gets its own
	 * (export_rank_env) */
	spank_unsetenv(sp, TE_TASK_ENV);
	spank_unsetenv(sp, "APPTAINERENV_" TE_TASK_ENV);
	spank_unsetenv(sp, "SINGULARITYENV_" TE_TASK_ENV);
}

/* --train-sighup and --train-ignore-signals: 0, or -1 with te_stepd_err
 * saying why. */
static int set_signals(void)
{
	uint64_t mask;
	int i;

	/* slurmstepd resets signal dispositions after task_init_privileged,
	 * so this is the place; SIG_IGN survives execve. Only sighup=ignore
	 * (1) touches SIGHUP: the built-in shield leaves the tasks' signals
	 * as Slurm sets them. */
	if (te_plug.cfg.v[TE_S_SIGHUP].word == TE_W_SIGHUP_IGNORE &&
	    signal(SIGHUP, SIG_IGN) == SIG_ERR) {
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "cannot ignore SIGHUP: %s", strerror(errno));
		return -1;
	}
	mask = te_plug.cfg.v[TE_S_IGNORE_SIGNALS].word == TE_W_VALUE
		       ? te_plug.cfg.v[TE_S_IGNORE_SIGNALS].num
		       : 0;
	for (i = 1; i < 64; i++)
		if ((mask & (1ULL << i)) && i != SIGUSR1 && i != SIGUSR2)
			signal(i, SIG_IGN);
	return 0;
}

/* A rank's binding, pre-flight and rendezvous: 1 (rr holds the
 * rendezvous' results) or 0 (none: the computed one), or -1 when the task
 * fails (said). A pre-flight that finds the node at fault ends the task's
 * process here. */
static int rank_launch(spank_t sp, uint32_t local_id, uint32_t global_id,
		       struct te_rdzv_result *rr)
{
	char pf_line[TE_PF_LINE_MAX], pf_why[TE_PF_LINE_MAX];
	int have, quiet, pf, node_verdict;

	/* Bound first: the rendezvous helper and the pre-flight
	 * then start on the rank's CPUs too. */
	if (bind_task(sp, local_id, global_id) < 0)
		return -1;
	/* a node the job prolog's health checks kept out: no pre-flight */
	pf = te_stepd_health_verdict(pf_line, sizeof(pf_line), pf_why,
				     sizeof(pf_why));
	/* the user's own checks (--train-health), as the user */
	if (pf == 0)
		pf = te_stepd_health_user(pf_line, sizeof(pf_line), pf_why,
					  sizeof(pf_why));
	node_verdict = pf < 0;
	if (pf == 0)
		pf = te_stepd_preflight(sp, local_id, global_id, pf_line,
					sizeof(pf_line), pf_why,
					sizeof(pf_why));
	have = te_stepd_rendezvous(sp, local_id, global_id, rr, &quiet,
				   pf < 0 ? pf_why : NULL);
	if (pf < 0) {
		te_strlcpy(te_stepd_err, pf_line, sizeof(te_stepd_err));
		/* a check that could not be started is no fault of
		 * the node: the task fails as for any other
		 * configuration error */
		if (pf == -2)
			return task_fail(sp);
		/* the prolog's verdict is the node's, not the task's: one
		 * line per node in srun's output, from its first task */
		if (node_verdict && local_id != 0)
			slurm_info(TE_PREFIX "error: %s", te_stepd_err);
		else
			task_fail(sp);
		/* the node's fault, not the program's: a code of its
		 * own that --train-requeue (srun) and users can tell
		 * apart (this is the task's process, before exec) */
		_exit(TE_EXIT_NODE_FAULT);
	}
	if (have < 0 && quiet) {
		/* rank 0 prints the job-wide report: only the node's
		 * log hears from the others */
		slurm_info(TE_PREFIX "%s", te_stepd_err);
		return -1;
	}
	if (have < 0) {
		task_fail(sp);
		if (te_stepd_end_step) /* another protocol: said */
			te_stepd_end_step_now();
		return -1;
	}
	return have;
}

/* A rank of the step (not a batch script's task): launched, then its
 * environment. 0, or -1 when the task fails (said). */
static int rank_prepare(spank_t sp, uint32_t local_id, uint32_t global_id,
			int pyxis, const char *dump_dir)
{
	static struct te_rdzv_result rr;
	const struct te_value *ckpt = &te_plug.cfg.v[TE_S_CHECKPOINT_DIR];
	int have, first_coll = te_plug.cfg.v[TE_S_BARRIER].word ==
			       TE_W_BARRIER_FIRST_COLLECTIVE;

	have = rank_launch(sp, local_id, global_id, &rr);
	if (have < 0)
		return -1;
	export_rank_env(sp, local_id, global_id, have ? &rr : NULL);
	if (te_step.torchrun && te_plug.cfg.v[TE_S_EXIT_GRACE].set &&
	    te_plug.cfg.v[TE_S_EXIT_GRACE].word == TE_W_VALUE)
		te_stepd_watch_workers(sp);
	if (have && rr.checkpoint_dir[0])
		spank_setenv(sp, TE_CHECKPOINT_ENV, rr.checkpoint_dir, 1);
	else if (!have && ckpt->set) /* not verified: srun said so */
		spank_setenv(sp, TE_CHECKPOINT_ENV, ckpt->text, 1);
	/* A later PMIx client of this rank (MPI_Init, the barrier
	 * tool) needs the hash store: docs/design.md section 3. */
	if (have)
		spank_setenv(sp, "PMIX_MCA_gds", "hash", 0);
	/* not in Slurm's OCI containers nor under Apptainer: srun
	 * said why (srun.c) */
	if (first_coll && te_stepd_has_pmix(sp) && !te_stepd_oci_step(sp) &&
	    !te_appt_command(te_step.argc > 0 ? te_step.argv[0] : NULL) &&
	    te_stepd_preload_nccl_barrier(sp) < 0)
		return task_fail(sp);
	te_stepd_straggler_env(
		sp, te_stepd_oci_step(sp) ||
			    te_appt_command(te_step.argc > 0 ? te_step.argv[0]
							     : NULL));
	/* NCCL RAS, the flight recorder's pipe */
	te_stepd_hang_env(sp, pyxis, dump_dir);
	/* in a container the barrier runs on the node, by proxy;
	 * torchrun's workers are ranks of their own, not the
	 * task's (docs/pmix.md) */
	if (have > 0 && !te_step.torchrun && pyxis &&
	    te_stepd_container_proxy(sp, first_coll) < 0 && first_coll)
		return task_fail(sp);
	return 0;
}

int te_stepd_task_init(spank_t sp)
{
	uint32_t local_id = 0, global_id = 0;
	char dump_dir[TE_DUMP_DIR_PATH_MAX];
	int i, pyxis;

	te_stepd_resolve(sp);
	te_stepd_gather(sp);
	if (te_stepd_err[0])
		return task_fail(sp);

	export_settings(sp);
	if (te_plug.cfg.v[TE_S_TRAIN].word != TE_W_ON)
		return 0; /* --train=off */
	if (te_stepd_container_check() < 0)
		return task_fail(sp);
	spank_get_item(sp, S_TASK_ID, &local_id);
	spank_get_item(sp, S_TASK_GLOBAL_ID, &global_id);
	pyxis = te_stepd_container_coming(sp);

	if (set_signals() < 0)
		return task_fail(sp);
	for (i = 0; i < TE_S_COUNT; i++)
		if (export_knob(sp, i) < 0)
			return task_fail(sp);
	export_dump_dir(sp, local_id, dump_dir, sizeof(dump_dir));
	if (!te_step.batch &&
	    rank_prepare(sp, local_id, global_id, pyxis, dump_dir) < 0)
		return -1;
	/* Apptainer's copies of what trainenv set (spank/stepd_apptainer.c) */
	te_stepd_apptainer_env(sp, local_id);
	/* last: the check compares the program's environment with all of
	 * the above */
	if (pyxis)
		te_stepd_container_watch(sp, local_id, global_id);
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
				     "delivered to srun: %s",
			   lost, lost == 1 ? "" : "s", te_step.job_id,
			   te_step.step_id, err);
}

/* A task that failed as a node fault on a node the job prolog's health
 * checks left out: the verdict follows the exit (once per node), for
 * srun's record of the step, when srun reads such lines. */
static void send_health_verdict(const struct te_failrep *exit, uid_t uid,
				gid_t gid)
{
	static int sent;
	struct te_failrep h = *exit;
	char err[TE_ERR_MAX];

	if (sent || !te_step.report_health || exit->signaled ||
	    exit->value != TE_EXIT_NODE_FAULT ||
	    !te_stepd_health_reason(h.text, sizeof(h.text)))
		return;
	sent = 1;
	h.health = 1;
	h.value = h.core = 0;
	if (te_failrep_sender_add(te_step.report_host, te_step.report_port,
				  te_step.report_token, &h, uid, gid, err,
				  sizeof(err)) < 0)
		slurm_info(TE_PREFIX "node %s: could not tell srun the job "
				     "prolog's verdict: %s",
			   h.node, err);
}

/* Never waits on the network: the line goes to the step's sender. Only the
 * node's last task to exit lets the sender finish (bounded, once per step):
 * Slurm kills the step's processes right after it. A failed task is
 * reported (failure-report); with exit-grace the node's first exit is too,
 * whatever its status, for srun's exit watchdog. */
int te_stepd_task_exit(spank_t sp)
{
	static uint32_t exited, refused, sent;
	struct te_failrep r = { 0 };
	struct timespec ts;
	int status = 0, last, failrep, watch, requeue;
	uid_t uid;
	gid_t gid;
	char err[TE_ERR_MAX];

	failrep = te_plug.cfg.v[TE_S_FAILURE_REPORT].word == TE_W_ON;
	watch = te_plug.cfg.v[TE_S_EXIT_GRACE].set &&
		te_plug.cfg.v[TE_S_EXIT_GRACE].word == TE_W_VALUE;
	/* --train-requeue blames a node from the failures srun hears of */
	requeue = te_plug.cfg.v[TE_S_REQUEUE].set &&
		  te_plug.cfg.v[TE_S_REQUEUE].word == TE_W_VALUE;
	if (!te_step.report || !te_plug.resolved ||
	    te_plug.cfg.v[TE_S_TRAIN].word != TE_W_ON ||
	    (!failrep && !watch && !requeue))
		return 0;
	last = te_step.local_tasks && ++exited >= te_step.local_tasks;
	if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
		goto out;
	if (!(status != 0 && (failrep || requeue)) && !(watch && !sent))
		goto out;
	sent++;
	clock_gettime(CLOCK_REALTIME, &ts);
	r.sec = ts.tv_sec;
	r.usec = (uint32_t)(ts.tv_nsec / 1000);
	spank_get_item(sp, S_TASK_GLOBAL_ID, &r.rank);
	spank_get_item(sp, S_TASK_ID, &r.local_rank);
	te_strlcpy(r.node, te_step.node, sizeof(r.node));
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
				     "uid",
			   r.rank);
		goto out;
	}
	/* one line for the first report that cannot go; the step's summary
	 * (report_sender_finish) counts them all */
	if (te_failrep_sender_add(te_step.report_host, te_step.report_port,
				  te_step.report_token, &r, uid, gid, err,
				  sizeof(err)) < 0 &&
	    !refused++)
		slurm_info(TE_PREFIX "rank %u %s %d; could not tell srun: %s",
			   r.rank,
			   r.signaled ? "killed by signal" : "exited with code",
			   r.value, err);
	/* after the exit: an srun that does not read health lines after all
	 * (the kinds variable inherited from elsewhere) drops the connection
	 * at it, and the exit must have been read by then */
	send_health_verdict(&r, uid, gid);
out:
	if (last)
		report_sender_finish();
	return 0;
}

int te_stepd_exit(spank_t sp)
{
	(void)sp;
	/* when the node's last task was never reaped here */
	if (te_step.report)
		report_sender_finish();
	return 0;
}
