/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The srun side of trainenv.so: refuse bad values before anything is
 * allocated, shield the step from the terminal's hang-up, explain the
 * settings, and print the first-failure report. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "container/apptainer_env.h"
#include "health/health_storage.h"
#include "report/dumpdir.h"
#include "srun/exportenv.h"
#include "srun_exitwatch.h"
#include "failrep_net.h"
#include "srun_hangup.h"
#include "srun.h"
#include "state.h"
#include "srun/portrange.h"
#include "slurm_compat.h"
#include "srun_fence.h"
#include "srun_relaunch.h"
#include "srun/srunargs.h"
#include "launch/rankenv.h"
#include "util/strutil.h"
#include "report/steprecord.h"
#include "util/sysutil.h"
#include "submit.h"
#include "srun_recovery.h"
#include "srun_progress.h"
#include "srun_straggler.h"
#include "srun_strag_exclude.h"

static int post_opt_done, user_init_done;
/* srun --external-launcher (23.11+): the step's tasks are an MPI
 * launcher's daemons (mpirun, hydra), which start the ranks themselves;
 * srun --async (26.05+): srun launches the step and leaves. */
static int external_launcher, async_launch;
/* the step, for its record at srun's end */
static struct {
	int have;
	uint32_t job, step;
	int64_t start, start_ms;
} rec;

/* srun's wall clock in ms, for the record */
static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --train-exit-grace or --train-stall asks for srun's exit watchdog. */
static int exit_watch_wanted(void)
{
	const struct te_value *g = &te_plug.cfg.v[TE_S_EXIT_GRACE];
	const struct te_value *st = &te_plug.cfg.v[TE_S_STALL];

	return (g->set && g->word == TE_W_VALUE && g->num) ||
	       (st->set && st->word == TE_W_VALUE && st->num);
}

/* --train-requeue asks srun to requeue the job after a node's fault. */
static int requeue_wanted(void)
{
	const struct te_value *rq = &te_plug.cfg.v[TE_S_REQUEUE];

	return rq->set && rq->word == TE_W_VALUE;
}

/* trainenv ignores signals for the tasks (--train-sighup=ignore,
 * --train-ignore-signals). */
static int ignores_signals(void)
{
	const struct te_config *c = &te_plug.cfg;

	return c->v[TE_S_SIGHUP].word == TE_W_SIGHUP_IGNORE ||
	       (c->v[TE_S_IGNORE_SIGNALS].word == TE_W_VALUE &&
		c->v[TE_S_IGNORE_SIGNALS].num);
}

/* srun apptainer|singularity exec ...: what trainenv cannot do there,
 * said once. Apptainer's starter sets every signal to its default before
 * it runs the program (seen with Debian's apptainer 1.4.5), so what
 * trainenv ignores for the task is not ignored there; the image holds no
 * trainenv-nccl.so and no PMIx client, so the first-collective barrier is
 * not offered (the tasks get no preload, slurmstepd.c). A command that
 * runs Apptainer itself (a script) is not looked into. */
static void apptainer_note(int argc, char **argv)
{
	int i = te_srun_command(argc, argv);
	const char *prog, *slash;

	if (i < 0 || !te_appt_command(argv[i]))
		return;
	slash = strrchr(argv[i], '/');
	prog = slash ? slash + 1 : argv[i];
	if (ignores_signals())
		fprintf(stderr,
			TE_PREFIX
			"note: srun %s: Apptainer starts the "
			"program with every signal at its default, so the "
			"signals trainenv ignores for the tasks "
			"(--train-sighup=ignore, --train-ignore-signals) are "
			"not ignored there; srun's own hang-up shield still "
			"holds\n",
			prog);
	if (te_plug.cfg.v[TE_S_BARRIER].word == TE_W_BARRIER_FIRST_COLLECTIVE)
		fprintf(stderr,
			TE_PREFIX
			"note: srun %s: "
			"--train-barrier=first-collective does not run in an "
			"Apptainer container (the image has no trainenv-nccl.so "
			"and no PMIx client for it): no barrier runs; "
			"--train-barrier=SECONDS runs it on the nodes before "
			"the program starts\n",
			prog);
}

/* Slurm's own OCI containers (srun --container=BUNDLE, or the
 * SLURM_CONTAINER it reads, with oci.conf): what trainenv can do there,
 * said once. Slurm before 23.02 writes the container's config.json, its
 * environment included, before any plugin runs (slurmstepd's
 * setup_container), so nothing a plugin sets reaches the program; later
 * releases write it per task after task_init. The OCI runtime passes the
 * program no inherited descriptor, so the barrier proxy of a pyxis
 * container (stepd_container.c) cannot serve it, and the bundle holds no
 * trainenv-nccl.so: first-collective is not offered there (the step's
 * tasks get no preload, slurmstepd.c). */
static void oci_container_note(int argc, char **argv)
{
	const char *env = getenv("SLURM_CONTAINER");
	const struct te_config *c = &te_plug.cfg;

	if (!te_srun_asks(argc, argv, "container") && !(env && *env))
		return;
	/* the runtime starts the program with every signal at its default
	 * (crun, runc: the OCI process starts afresh) */
	if (ignores_signals())
		fprintf(stderr, TE_PREFIX
			"note: srun --container: the OCI "
			"runtime starts the program with every signal at its "
			"default, so the signals trainenv ignores for the tasks "
			"(--train-sighup=ignore, --train-ignore-signals) are "
			"not ignored there; srun's own hang-up shield still "
			"holds\n");
	/* crun since 1.9.2 (on entering the container's cgroup; 1.28 even
	 * with cgroups off, seen on Debian sid) and newer runc (1.3.6) reset
	 * the affinity they start the program with: the CPUs trainenv bound
	 * the task to are gone there (an external launcher's daemons are
	 * not bound) */
	if (c->v[TE_S_BIND].word != TE_W_BIND_NONE && !external_launcher)
		fprintf(stderr,
			TE_PREFIX
			"note: srun --container: "
			"--train-bind binds each task before the OCI runtime "
			"starts, and a runtime that resets the CPU affinity "
			"of the program it starts (crun since 1.9.2, newer "
			"runc) leaves the rank on all the CPUs of the "
			"container's cpuset%s\n",
			TE_SLURM_AT_LEAST(23, 2)
				? " (TRAINENV_BIND still names the CPUs trainenv chose)"
				: "");
#if !TE_SLURM_AT_LEAST(23, 2)
	fprintf(stderr,
		TE_PREFIX
		"warning: srun --container: Slurm %d.%02d "
		"writes the OCI container's environment "
		"before any plugin runs, so nothing trainenv sets for the tasks "
		"(rank variables, MASTER_ADDR and MASTER_PORT, timeouts, "
		"TRAINENV_*) reaches the program in the container; Slurm 23.02 "
		"and later pass it (or use pyxis)\n",
		SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
		SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
#else
	if (c->v[TE_S_BARRIER].word == TE_W_BARRIER_FIRST_COLLECTIVE)
		fprintf(stderr, TE_PREFIX
			"note: srun --container: "
			"--train-barrier=first-collective does not run in an "
			"OCI container (the runtime gives the program no "
			"descriptor of trainenv's barrier helper, and the "
			"bundle has no trainenv-nccl.so): no barrier runs; "
			"--train-barrier=SECONDS runs it on the nodes before "
			"the program starts\n");
#endif
}

/* The step's kind from srun's own options (or the variable srun reads for
 * --external-launcher), told to the step, and what it changes said once:
 * an external launcher's tasks are no ranks, so trainenv gives them no rank
 * environment, binding, rendezvous or reports (the ranks the daemons start
 * inherit the timeout policy); --async leaves before local_user_init, where
 * srun's side of the reports, watchdog, requeue and record starts. */
static void step_kind(spank_t sp)
{
	const struct te_config *c = &te_plug.cfg;
	char **argv = NULL;
	int argc = te_srun_argv(&argv);

	external_launcher = te_srun_asks(argc, argv, "external-launcher");
#if TE_SLURM_AT_LEAST(23, 11)
	if (getenv("SLURM_EXTERNAL_LAUNCHER"))
		external_launcher = 1;
#endif
	async_launch = te_srun_asks(argc, argv, "async");
	/* never inherited from an enclosing step: srun alone says */
	if (!external_launcher) {
		spank_unsetenv(sp, TE_STEP_KIND_ENV);
		unsetenv(TE_STEP_KIND_ENV);
	} else if (spank_setenv(sp, TE_STEP_KIND_ENV, TE_STEP_KIND_EXTERNAL,
				1) != ESPANK_SUCCESS) {
		setenv(TE_STEP_KIND_ENV, TE_STEP_KIND_EXTERNAL, 1);
	}
	if (!te_submit_train_on())
		return;
	oci_container_note(argc, argv);
	apptainer_note(argc, argv);
	if (external_launcher &&
	    (te_plug.explain || exit_watch_wanted() || requeue_wanted()))
		fprintf(stderr, TE_PREFIX
			"note: srun --external-launcher: "
			"this step's tasks are an MPI launcher's daemons, not "
			"ranks; trainenv gives them its timeout and signal "
			"policy only (no rank environment, binding, "
			"rendezvous, failure report, exit watchdog or "
			"requeue)\n");
	else if (async_launch &&
		 (c->v[TE_S_FAILURE_REPORT].word == TE_W_ON ||
		  exit_watch_wanted() || requeue_wanted() || te_record_dir(c)))
		fprintf(stderr, TE_PREFIX
			"note: srun --async does not stay "
			"with the step: its first-failure report, exit "
			"watchdog, requeue and step record are off (the step "
			"runs with the rest of trainenv's settings)\n");
}

void te_srun_init(void)
{
	te_relaunch_srun_early();
}

/* --train-spares on an srun that makes its own allocation: no node of it
 * can sit out (the step takes them all) and the job ends with the step. */
static void spares_notice(void)
{
	if (!te_submit_train_on() || !te_relaunch_spares() ||
	    getenv("SLURM_JOB_ID"))
		return;
	fprintf(stderr,
		TE_PREFIX "note: --train-spares is for sbatch and salloc: "
			  "this srun makes its own allocation, so no node "
			  "sits out and a failed step is not started again\n");
}

int te_srun_post_opt(spank_t sp)
{
	char err[TE_ERR_MAX];

	/* Called once per component of a heterogeneous step. */
	if (post_opt_done++)
		return 0;
	te_relaunch_srun_restore();
	if (te_submit_resolve() < 0)
		return -1;
	step_kind(sp);
	spares_notice();
	/* shield (0) and ignore (1) shield srun; default (2) is Slurm's */
	if (!te_submit_train_on() ||
	    te_plug.cfg.v[TE_S_SIGHUP].word == TE_W_SIGHUP_DEFAULT) {
		te_relaunch_no_shield("srun runs without its hang-up shield "
				      "(--train-sighup=default), which "
				      "would start it again");
		return 0;
	}
	if (async_launch)
		return 0; /* srun leaves at once: nothing to shield */
	if (te_hangup_is_pty()) {
		te_relaunch_no_shield("an interactive --pty step is not "
				      "started again");
		return 0; /* an interactive shell ends with its terminal */
	}
	if (!getenv("SLURM_JOB_ID"))
		te_relaunch_no_shield("this srun makes its own allocation, "
				      "which ends with the step");
	te_hangup_relaunch_wanted = te_relaunch_on() &&
				    getenv("SLURM_JOB_ID") != NULL;
	/* Must happen before srun starts its signal thread, which turns
	 * SIGHUP into SIGKILL for every task. */
	if (te_hangup_shield(err, sizeof(err)) < 0) {
		fprintf(stderr,
			TE_PREFIX "warning: the step is not protected "
				  "from the terminal's hang-up: %s\n",
			err);
		te_relaunch_no_shield("srun's hang-up shield could not be "
				      "set up");
	}
	return 0;
}

static void explain_launcher(spank_t sp)
{
	uint32_t ntasks = 0, nnodes = 0;
	char **argv = NULL, why[160];
	int argc = 0;
	enum te_launch mode;

	spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks);
	spank_get_item(sp, S_JOB_NNODES, &nnodes);
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS)
		argc = 0;
	mode = te_launcher_decide(te_plug.cfg.v[TE_S_LAUNCHER].word, argc, argv,
				  ntasks, nnodes, 0, why, sizeof(why));
	fprintf(stderr,
		TE_PREFIX "launch style: %s (%s%s); %u tasks on %u "
			  "nodes; rank environment %s\n",
		mode == TE_LAUNCH_TASK ? "task" : "torchrun", why,
		mode == TE_LAUNCH_TASK && ntasks == nnodes &&
				te_plug.cfg.v[TE_S_LAUNCHER].word ==
					TE_W_LAUNCHER_AUTO
			? "; torchrun on nodes where the task has several GPUs"
			: "",
		ntasks, nnodes,
		te_plug.cfg.v[TE_S_RANK_ENV].word == TE_W_YES ? "exported"
							      : "not exported");
}

/* srun's own arguments: its command line (/proc/self/cmdline) without
 * argv[0] and without the command, whose length S_JOB_ARGV gives. Only
 * known from user_init on. Returns the count, or -1 when the command
 * line does not end with the command (then nothing is known). */
#define CMDLINE_MAX (1024 * 1024)
static int srun_own_args(spank_t sp, char **buf, char ***args)
{
	char **argv = NULL, *b, **a;
	int argc = 0, n = 0, i;
	ssize_t got;

	*buf = NULL;
	*args = NULL;
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS ||
	    argc < 1)
		return -1;
	b = malloc(CMDLINE_MAX);
	got = b ? te_read_small("/proc/self/cmdline", b, CMDLINE_MAX,
				TE_READ_WHOLE)
		: -1;
	if (got <= 0) {
		free(b);
		return -1;
	}
	for (size_t k = 0; k < (size_t)got; k++)
		n += b[k] == '\0';
	a = calloc((size_t)n + 1, sizeof(*a));
	if (!a) {
		free(b);
		return -1;
	}
	for (size_t k = 0, j = 0; k < (size_t)got && j < (size_t)n; j++) {
		a[j] = b + k;
		k += strlen(b + k) + 1;
	}
	if (n - 1 < argc)
		goto fail;
	for (i = 0; i < argc; i++)
		if (!argv[i] || strcmp(a[n - argc + i], argv[i]) != 0)
			goto fail;
	*buf = b;
	*args = a;
	return n - 1 - argc;
fail:
	free(a);
	free(b);
	return -1;
}

/* The settings were resolved (before allocation) from srun's environment;
 * the tasks get the environment srun's --export list gives them. Resolve
 * again with that one so that --train-explain and the nodes agree. */
static int resolve_for_export(spank_t sp)
{
	char *buf, **args;
	const char *spec;
	int n, rc;

	n = srun_own_args(sp, &buf, &args);
	spec = n > 0 ? te_export_from_args(n, args + 1) : NULL;
	if (!spec)
		spec = getenv("SRUN_EXPORT_ENV");
	if (!spec)
		spec = getenv("SLURM_EXPORT_ENV");
	rc = spec ? te_submit_resolve_export(spec, 1) : 0;
	free(args);
	free(buf);
	return rc;
}

/* The PMIx layer needs srun's PMIx plugin (srun --mpi=pmix, or
 * MpiDefault=pmix): srun knows its MPI type by now (SLURM_MPI_TYPE). Says
 * once, here, what cannot run without it, instead of once per task.
 * Returns -1 only when the user insists on --train-rdzv=pmix. */
static int pmix_notice(void)
{
	const struct te_config *c = &te_plug.cfg;
	const char *mpi = getenv("SLURM_MPI_TYPE");
	const struct te_value *b = &c->v[TE_S_BARRIER];
	const struct te_value *ck = &c->v[TE_S_CHECKPOINT_DIR];
	char what[TE_VALUE_MAX + 96] = "";

	if (mpi && !strncmp(mpi, "pmix", 4))
		return 0;
	if (c->v[TE_S_RDZV].word == TE_W_RDZV_COMPUTED) /* nothing expected */
		return 0;
	if (c->v[TE_S_RDZV].word == TE_W_RDZV_PMIX) {
		fprintf(stderr,
			TE_PREFIX
			"error: --train-rdzv=pmix needs PMIx, "
			"but this step's MPI type is '%s': run srun --mpi=pmix "
			"(or set MpiDefault=pmix in slurm.conf)\n",
			mpi ? mpi : "none");
		return -1;
	}
	/* the built-in barrier applies under PMIx only: no need to say */
	if (b->set && b->word != TE_W_BARRIER_OFF && b->src != TE_SRC_BUILTIN)
		te_appendf(what, sizeof(what), "--train-barrier=%s cannot run",
			   b->text);
	if (c->v[TE_S_VERSION_CHECK].word == TE_W_VCHECK_FAIL)
		te_appendf(what, sizeof(what),
			   "%s--train-version-check=fail "
			   "cannot run",
			   what[0] ? "; " : "");
	if (ck->set)
		te_appendf(what, sizeof(what),
			   "%sthe checkpoint directory is "
			   "exported without the shared-storage check",
			   what[0] ? "; " : "");
	if (!what[0])
		return 0;
	fprintf(stderr,
		TE_PREFIX
		"warning: the barrier is unavailable: this "
		"step has no PMIx (MPI type '%s'): %s; the tasks start as they "
		"come, with the computed MASTER_ADDR/MASTER_PORT. Fix: srun "
		"--mpi=pmix (or MpiDefault=pmix in slurm.conf)\n",
		mpi ? mpi : "none", what);
	return 0;
}

/* The storage check (health_storage) runs in the checkpoint directory:
 * a step without one is told, in one line, that it does not run. */
static void storage_notice(void)
{
	struct te_storage_opts so;

	te_storage_opts_for(te_plug.policy_ok ? te_plug.pol.health.items : "",
			    te_plug.health_opt, NULL, &so);
	if (so.bytes && !te_plug.cfg.v[TE_S_CHECKPOINT_DIR].set)
		fprintf(stderr,
			TE_PREFIX "warning: the storage check (health_storage) "
				  "is on, but this step has no checkpoint "
				  "directory: it does not run; give "
				  "--train-checkpoint-dir=DIR\n");
}

/* SrunPortRange as srun itself uses it: 0..0 when the site sets none.
 * From srun's loaded configuration (its Include files, or slurmctld's
 * when configless, whose file is under /run/slurm/conf); only where that
 * cannot be found, from the slurm.conf file srun reads (SLURM_CONF or the
 * default, Include lines not followed), whose value may be unusable (said
 * once: the report then listens on any port, as before). */
#define TE_SLURM_CONF_DEFAULT "/etc/slurm/slurm.conf"
static void srun_port_range(uint16_t *lo, uint16_t *hi)
{
	const slurm_conf_t *own = te_srun_slurm_conf();
	const char *path = getenv("SLURM_CONF");
	char val[64], err[TE_ERR_MAX], *text;
	ssize_t got;
	int found;

	*lo = *hi = 0;
	if (own) {
		if (own->srun_port_range && own->srun_port_range[0] &&
		    own->srun_port_range[0] <= own->srun_port_range[1]) {
			*lo = own->srun_port_range[0];
			*hi = own->srun_port_range[1];
		}
		return;
	}
	if (!path || !path[0])
		path = TE_SLURM_CONF_DEFAULT;
	/* missing (configless): srun's own ports are as free */
	text = malloc(TE_SLURMCONF_MAX + 1);
	got = text ? te_read_small(path, text, TE_SLURMCONF_MAX + 1,
				   TE_READ_WHOLE)
		   : -1;
	if (got < 0) {
		free(text);
		return;
	}
	found = te_slurmconf_value(text, (size_t)got, "SrunPortRange", val,
				   sizeof(val));
	free(text);
	if (found == 0)
		return;
	if (found < 0)
		te_snprintf(err, sizeof(err), "SrunPortRange: value too long");
	if (found < 0 ||
	    te_port_range_parse(val, lo, hi, err, sizeof(err)) < 0) {
		fprintf(stderr,
			TE_PREFIX "warning: %s (in %s): the first-failure "
				  "report listens on any free port\n",
			err, path);
		*lo = *hi = 0;
	}
}

/* --train-exit-grace=SECONDS or --train-stall=SECONDS: 1 when srun's exit
 * watchdog is armed. */
static int exit_watch_arm(spank_t sp)
{
	const struct te_value *g = &te_plug.cfg.v[TE_S_EXIT_GRACE];
	const struct te_value *st = &te_plug.cfg.v[TE_S_STALL];
	const struct te_value *a = &te_plug.cfg.v[TE_S_EXIT_ACTION];
	char helper[TE_VALUE_MAX + 32];
	uint32_t job = 0, step = 0;
	unsigned grace = g->set && g->word == TE_W_VALUE ? (unsigned)g->num : 0;
	unsigned stall = st->set && st->word == TE_W_VALUE ? (unsigned)st->num
							   : 0;

	if (!exit_watch_wanted())
		return 0; /* off */
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    te_helper_path(TE_STACKS_HELPER, helper, sizeof(helper)) < 0 ||
	    te_exitwatch_arm(job, step, grace, stall, a->set ? a->text : "term",
			     helper, te_record_dir(&te_plug.cfg)) < 0) {
		fprintf(stderr, TE_PREFIX
			"warning: no exit watchdog "
			"(--train-exit-grace, --train-stall) for this step: "
			"the step's ids are unknown\n");
		return 0;
	}
	return 1;
}

int te_srun_user_init(spank_t sp)
{
	char env[64], err[TE_ERR_MAX];
	struct te_fence_choice fence;
	uint16_t lo, hi;
	int failrep, watch, fence_set, recovery = 0, strag, argc;
	char **argv = NULL;

	if (user_init_done++ || !te_plug.resolved)
		return 0;
	if (resolve_for_export(sp) < 0)
		return -1;
	/* Slurm's default (mixed) runs its tree algorithm for a fence without
	 * data, which is no job-wide barrier on fewer nodes than TreeWidth,
	 * and mixing the two algorithms made later clients' fences fail now
	 * and then (docs/pmix.md): one algorithm for every fence of the
	 * step, the tree where it is a barrier, the ring elsewhere. */
	fence_set = te_submit_train_on() &&
		    te_plug.cfg.v[TE_S_RDZV].word != TE_W_RDZV_COMPUTED &&
		    te_srun_fence(sp, &fence) == 0;
	if (te_plug.explain) {
		te_submit_explain("step");
		if (te_submit_train_on())
			explain_launcher(sp);
		if (fence_set)
			fprintf(stderr, TE_PREFIX "fence: %s\n", fence.why);
	}
	if (te_submit_train_on() && pmix_notice() < 0)
		return -1;
	if (te_submit_train_on())
		storage_notice();
	if (!te_submit_train_on() || external_launcher)
		return 0;
	rec.have = spank_get_item(sp, S_JOB_ID, &rec.job) == ESPANK_SUCCESS &&
		   spank_get_item(sp, S_JOB_STEPID, &rec.step) ==
			   ESPANK_SUCCESS;
	rec.start = time(NULL);
	rec.start_ms = wall_ms();
	failrep = te_plug.cfg.v[TE_S_FAILURE_REPORT].word == TE_W_ON;
	watch = exit_watch_arm(sp);
	if (rec.have)
		recovery = te_recovery_srun_init(sp, rec.job, rec.step);
	argc = te_srun_argv(&argv);
	strag = te_srun_strag_start(argc, argv);
	if (strag && rec.have) { /* --train-straggler-exclude's facts */
		struct te_strag_excl_facts xf;

		te_relaunch_excl_facts(&xf);
		te_srun_strag_excl_init(rec.job, rec.step, &xf);
	}
	/* the record also wants rank 0's launch timeline, sent over it;
	 * --train-requeue the failures, --train-time-signal the timer,
	 * --train-straggler the ranks' waits */
	if (!failrep && !watch && !recovery && !strag &&
	    !te_record_dir(&te_plug.cfg))
		return 0;
	srun_port_range(&lo, &hi);
	if (te_failrep_listen(lo, hi, failrep, env, sizeof(env), err,
			      sizeof(err)) < 0) {
		fprintf(stderr, TE_PREFIX "warning: no %s for this step: %s\n",
			failrep	   ? "first-failure report"
			: watch	   ? "exit watchdog (--train-exit-grace, "
				     "--train-stall)"
			: recovery ? "--train-requeue or "
				     "--train-time-signal"
				   : "launch timeline in the step's "
				     "record",
			err);
		return 0;
	}
	/* srun copies its environment into the job's after this callback */
	if (spank_setenv(sp, TE_FAILREP_ENV, env, 1) != ESPANK_SUCCESS)
		setenv(TE_FAILREP_ENV, env, 1);
	/* the lines beyond the first release's this srun reads */
	if (spank_setenv(sp, TE_FAILREP_KINDS_ENV, TE_FAILREP_KINDS_READ, 1) !=
	    ESPANK_SUCCESS)
		setenv(TE_FAILREP_KINDS_ENV, TE_FAILREP_KINDS_READ, 1);
	return 0;
}

/* For the goodput: the job's start, and at a restart verdict the newest
 * checkpoint (--train-checkpoint-dir, read as the user, bounded in entries
 * and in time), after
 * which the training is done again. */
static void record_goodput_facts(struct te_step_record *r)
{
	const struct te_value *ck = &te_plug.cfg.v[TE_S_CHECKPOINT_DIR];
	int64_t ns;

	r->job_start_sec = te_recovery_job_start();
	if (!r->restart || !ck->set || ck->word != TE_W_VALUE)
		return;
	ns = te_progress_newest_bounded(ck->text, TE_PROGRESS_SCAN_MS);
	if (ns < 0)
		return; /* not readable: not known */
	r->checkpoint_dir = ck->text;
	r->checkpoint_ms = ns / 1000000;
}

static void write_record(const char *restart, const char *restart_why)
{
	static char json[256 * 1024];
	const char *dir = te_record_dir(&te_plug.cfg);
	struct te_step_record r = { .job = rec.job,
				    .step = rec.step,
				    .cfg = &te_plug.cfg,
				    .start_sec = rec.start,
				    .end_sec = time(NULL),
				    .start_ms = rec.start_ms,
				    .end_ms = wall_ms(),
				    .restart = restart,
				    .restart_why = restart_why };
	struct te_failrep first;
	struct te_launch_skew launch;
	char name[32], job[16], hang[48], why[TE_VALUE_MAX + 200],
		path[TE_DUMP_DIR_PATH_MAX];
	int dfd, fd;
	ssize_t n;

	if (!rec.have || !dir)
		return;
	r.nfailed = (unsigned)te_failrep_failed(&first);
	r.first = r.nfailed ? &first : NULL;
	r.watchdog = te_exitwatch_fired();
	r.launch = te_failrep_launch(&launch, &r.launch_passed_ms) ? &launch
								   : NULL;
	r.nhealth = (unsigned)te_failrep_health(&r.health);
	r.step_time = te_failrep_steptime();
	r.straggler = te_srun_strag_last();
	r.strag_excluded = te_srun_strag_excl_node(NULL, &r.strag_excluded_dir);
	record_goodput_facts(&r);
	te_step_record_name(hang, sizeof(hang), rec.step, 1);
	r.hang_report = r.watchdog ? hang : NULL;
	te_step_record_name(name, sizeof(name), rec.step, 0);
	te_snprintf(job, sizeof(job), "%u", rec.job);
	if (te_step_record_json(json, sizeof(json), &r) < 0)
		return;
	dfd = te_dump_dir_open(dir, job, getuid(), path, sizeof(path), why,
			       sizeof(why));
	if (dfd < 0) {
		fprintf(stderr,
			TE_PREFIX "warning: no record of this step: "
				  "%s: %s\n",
			te_record_dir_option(&te_plug.cfg), why);
		return;
	}
	if (why[0]) /* DIR/UID another user's: whose, and what is used */
		fprintf(stderr, TE_PREFIX "warning: %s: %s\n",
			te_record_dir_option(&te_plug.cfg), why);
	/* the directory is the user's own and others cannot write there */
	fd = openat(dfd, name,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	n = fd >= 0 ? write(fd, json, strlen(json)) : -1;
	if (n != (ssize_t)strlen(json))
		fprintf(stderr,
			TE_PREFIX "warning: no record of this step: "
				  "%s/%s: %s\n",
			path, name, fd < 0 ? strerror(errno) : "short write");
	if (fd >= 0)
		close(fd);
	close(dfd);
}

int te_srun_exit(spank_t sp)
{
	const char *verdict, *why;

	te_failrep_finish(500);
	te_srun_strag_excl_stop(); /* before the step's end is decided */
	verdict = te_recovery_srun_decide(&why);
	write_record(verdict, why);
	if (rec.have)
		te_relaunch_srun_goodput(rec.job, te_record_dir(&te_plug.cfg),
					 verdict);
	te_recovery_srun_act();
	return 0;
}
