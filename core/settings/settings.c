/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv settings: the table of every knob (names, types, words, limits,
 * environment variables, --help text) and how its accepted values read. */
#include "config.h"

#include <string.h>

#include "settings/settings.h"
#include "util/strutil.h"

/* A number macro as the row's .builtin text */
#define TE_NUM_TEXT_(n) #n
#define TE_NUM_TEXT(n) TE_NUM_TEXT_(n)

/* Each word at its name (core/settings/settings.h): code compares cfg.v[X].word with
 * these names, never with positions. */
static const char *const w_onoff[] = {
	[TE_W_ON] = "on", [TE_W_OFF] = "off", NULL
};
static const char *const w_yesno[] = {
	[TE_W_YES] = "yes", [TE_W_NO] = "no", NULL
};
static const char *const env_bool[] = {
	[TE_W_TRUE] = "1", [TE_W_FALSE] = "0", NULL
};
static const char *const w_sighup[] = { [TE_W_SIGHUP_SHIELD] = "shield",
					[TE_W_SIGHUP_IGNORE] = "ignore",
					[TE_W_SIGHUP_DEFAULT] = "default",
					NULL };
static const char *const w_async[] = {
	[TE_W_ASYNC_OFF] = "off",
	[TE_W_ASYNC_TEAR_DOWN] = "tear-down",
	[TE_W_ASYNC_CLEANUP_ONLY] = "cleanup-only",
	[TE_W_ASYNC_SKIP_CLEANUP] = "skip-cleanup",
	NULL
};
static const char *const env_async[] = { [TE_W_ASYNC_OFF] = "0",
					 [TE_W_ASYNC_TEAR_DOWN] = "1",
					 [TE_W_ASYNC_CLEANUP_ONLY] = "2",
					 [TE_W_ASYNC_SKIP_CLEANUP] = "3",
					 NULL };
static const char *const w_launcher[] = { [TE_W_LAUNCHER_AUTO] = "auto",
					  [TE_W_LAUNCHER_TASK] = "task",
					  [TE_W_LAUNCHER_TORCHRUN] = "torchrun",
					  NULL };
static const char *const w_none[] = { [TE_W_SIGLIST_NONE] = "none", NULL };
static const char *const w_off[] = { [TE_W_PATH_OFF] = "off", NULL };
static const char *const w_barrier[] = { [TE_W_BARRIER_OFF] = "off",
					 [TE_W_BARRIER_FIRST_COLLECTIVE] =
						 "first-collective",
					 NULL };
static const char *const w_bind[] = { [TE_W_BIND_NONE] = "none",
				      [TE_W_BIND_NUMA] = "numa",
				      [TE_W_BIND_CORES] = "cores",
				      NULL };
static const char *const m_bind[] = { [TE_M_BIND_VERBOSE] = "verbose", NULL };
static const char *const w_smt[] = {
	[TE_W_BIND_SMT_ALL] = "all", [TE_W_BIND_SMT_ONE] = "one", NULL
};
static const char *const w_bindgpus[] = {
	[TE_W_BIND_GPUS_ALL] = "all", [TE_W_BIND_GPUS_OWN] = "own", NULL
};
static const char *const w_warnfail[] = {
	[TE_W_BIND_FAILURE_WARN] = "warn", [TE_W_BIND_FAILURE_FAIL] = "fail", NULL
};
static const char *const w_rdzv[] = { [TE_W_RDZV_AUTO] = "auto",
				      [TE_W_RDZV_PMIX] = "pmix",
				      [TE_W_RDZV_COMPUTED] = "computed",
				      NULL };
static const char *const w_vcheck[] = { [TE_W_VCHECK_WARN] = "warn",
					[TE_W_VCHECK_FAIL] = "fail",
					[TE_W_VCHECK_OFF] = "off",
					NULL };
static const char *const w_exit_grace[] = { [TE_W_EXIT_GRACE_OFF] = "off",
					    NULL };
static const char *const w_exit_action[] = { [TE_W_EXIT_ACTION_REPORT] =
						     "report",
					     [TE_W_EXIT_ACTION_TERM] = "term",
					     [TE_W_EXIT_ACTION_KILL] = "kill",
					     NULL };
static const char *const w_stall[] = { [TE_W_STALL_OFF] = "off", NULL };
static const char *const w_skew_warn[] = { [TE_W_SKEW_WARN_OFF] = "off", NULL };
static const char *const w_fence_tree[] = {
	[TE_W_FENCE_TREE_AUTO] = "auto", [TE_W_FENCE_TREE_OFF] = "off", NULL
};
static const char *const env_stall[] = { "TRAINENV_STALL", NULL };
static const char *const w_step_watch[] = { [TE_W_STEP_WATCH_OFF] = "off",
					    NULL };
static const char *const env_step_watch[] = { "TRAINENV_STEP_WATCH", NULL };
static const char *const env_step_windows[] = { "TRAINENV_STEP_WATCH_WINDOWS",
						NULL };
static const char *const env_step_window[] = { "TRAINENV_STEP_WATCH_WINDOW",
					       NULL };
static const char *const w_straggler[] = { [TE_W_STRAGGLER_OFF] = "off", NULL };
static const char *const env_straggler[] = { "TRAINENV_STRAGGLER", NULL };
static const char *const env_strag_windows[] = { "TRAINENV_STRAGGLER_WINDOWS",
						 NULL };
static const char *const env_strag_window[] = { "TRAINENV_STRAGGLER_WINDOW",
						NULL };
static const char *const w_strag_exclude[] = { [TE_W_STRAG_EXCLUDE_OFF] = "off",
					       [TE_W_STRAG_EXCLUDE_CHECKPOINT] =
						       "checkpoint",
					       NULL };
static const char *const w_requeue[] = { [TE_W_REQUEUE_OFF] = "off", NULL };
static const char *const w_transient[] = { [TE_W_TRANSIENT_OFF] = "off", NULL };
static const char *const w_time_signal[] = { [TE_W_TIME_SIGNAL_OFF] = "off",
					     NULL };
static const char *const w_requeue_on[] = {
	[TE_W_REQUEUE_ON_NODE] = "node", [TE_W_REQUEUE_ON_ANY] = "any", NULL
};
static const char *const w_no_progress[] = { [TE_W_NO_PROGRESS_OFF] = "off",
					     NULL };
static const char *const w_preflight[] = { [TE_W_PREFLIGHT_OFF] = "off",
					   [TE_W_PREFLIGHT_ON] = "on",
					   [TE_W_PREFLIGHT_VERBOSE] = "verbose",
					   NULL };

static const char *const env_heartbeat[] = { "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC",
					     NULL };
static const char *const env_monitoring[] = { "TORCH_NCCL_ENABLE_MONITORING",
					      NULL };
static const char *const env_async_names[] = {
	"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING", NULL
};
static const char *const env_blocking[] = { "TORCH_NCCL_BLOCKING_WAIT",
					    "NCCL_BLOCKING_WAIT", NULL };
static const char *const env_desync[] = { "TORCH_NCCL_DESYNC_DEBUG",
					  "NCCL_DESYNC_DEBUG", NULL };
static const char *const env_dump[] = { "TORCH_NCCL_DUMP_ON_TIMEOUT", NULL };
static const char *const env_trace[] = { "TORCH_NCCL_TRACE_BUFFER_SIZE", NULL };
static const char *const env_diagnostics[] = { "NCCL_RUN_DIAGNOSTICS", NULL };
static const char *const env_deepspeed[] = { "DEEPSPEED_TIMEOUT", NULL };

const struct te_setting te_settings[TE_S_COUNT] = {
	[TE_S_TRAIN] = {
		.name = "train", .type = TE_T_BOOL, .words = w_onoff,
		.builtin = "on", .arginfo = "on|off|help",
		.help = "turn trainenv on or off for this job/step "
			"(help: list all trainenv options)",
	},
	[TE_S_SIGHUP] = {
		.name = "sighup", .type = TE_T_ENUM, .words = w_sighup,
		.builtin = "shield", .arginfo = "shield|ignore|default",
		.help = "shield: the step survives the hang-up of the "
			"submitting terminal, the tasks' signals are left as "
			"Slurm sets them; ignore: shield, and tasks start "
			"with SIGHUP ignored; default: Slurm's behaviour",
	},
	[TE_S_NCCL_HEARTBEAT] = {
		.name = "nccl-heartbeat", .type = TE_T_UINT,
		.lo = 1, .hi = 31 * 86400, .unit = "seconds",
		.env = env_heartbeat, .arginfo = "SECONDS",
		.help = "PyTorch NCCL watchdog heartbeat timeout "
			"(TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC)",
		.flags = TE_F_SHOW_UNSET,
	},
	[TE_S_NCCL_MONITORING] = {
		.name = "nccl-monitoring", .type = TE_T_BOOL, .words = w_onoff,
		.env = env_monitoring, .env_words = env_bool,
		.arginfo = "on|off",
		.help = "PyTorch NCCL heartbeat monitor thread "
			"(TORCH_NCCL_ENABLE_MONITORING)",
	},
	[TE_S_NCCL_ASYNC_ERRORS] = {
		.name = "nccl-async-errors", .type = TE_T_ENUM,
		.words = w_async, .env = env_async_names,
		.env_words = env_async,
		.arginfo = "off|tear-down|cleanup-only|skip-cleanup",
		.help = "what PyTorch does when a NCCL collective fails or "
			"times out (TORCH_NCCL_ASYNC_ERROR_HANDLING 0-3; torch "
			"< 2.2 knows off and tear-down)",
	},
	[TE_S_NCCL_BLOCKING_WAIT] = {
		.name = "nccl-blocking-wait", .type = TE_T_BOOL,
		.words = w_onoff, .env = env_blocking, .env_words = env_bool,
		.arginfo = "on|off",
		.help = "collectives block the calling thread until done or "
			"timed out (TORCH_NCCL_BLOCKING_WAIT)",
	},
	[TE_S_NCCL_DESYNC_DEBUG] = {
		.name = "nccl-desync-debug", .type = TE_T_BOOL,
		.words = w_onoff, .env = env_desync, .env_words = env_bool,
		.arginfo = "on|off",
		.help = "on a timeout, report which rank is out of step "
			"(TORCH_NCCL_DESYNC_DEBUG)",
	},
	[TE_S_NCCL_DUMP] = {
		.name = "nccl-dump-on-timeout", .type = TE_T_BOOL,
		.words = w_onoff, .env = env_dump, .env_words = env_bool,
		.arginfo = "on|off",
		.help = "write the NCCL flight recorder on a watchdog timeout "
			"(TORCH_NCCL_DUMP_ON_TIMEOUT)",
	},
	[TE_S_NCCL_TRACE_BUFFER] = {
		.name = "nccl-trace-buffer", .type = TE_T_UINT,
		.lo = 0, .hi = 1000000, .unit = "entries",
		.env = env_trace, .arginfo = "ENTRIES",
		.help = "NCCL flight recorder size, 0 turns it off "
			"(TORCH_NCCL_TRACE_BUFFER_SIZE)",
	},
	[TE_S_NCCL_DUMP_DIR] = {
		.name = "nccl-dump-dir", .type = TE_T_PATH, .arginfo = "DIR",
		.help = "flight recorder dumps go to DIR/UID/JOBID/ "
			"(TORCH_NCCL_DEBUG_INFO_TEMP_FILE)",
	},
	[TE_S_NCCL_DIAGNOSTICS] = {
		.name = "nccl-diagnostics", .type = TE_T_BOOL,
		.words = w_onoff, .env = env_diagnostics,
		.env_words = env_bool, .arginfo = "on|off",
		.help = "NCCL >= 2.31 checks the paths it will use at every "
			"communicator init and prints 'NCCL DIAG' lines; it "
			"never fails the init (NCCL_RUN_DIAGNOSTICS)",
	},
	[TE_S_DEEPSPEED_TIMEOUT] = {
		.name = "deepspeed-timeout", .type = TE_T_UINT,
		.lo = 1, .hi = 44640, .unit = "minutes",
		.env = env_deepspeed, .arginfo = "MINUTES",
		.help = "DeepSpeed's process group timeout (DEEPSPEED_TIMEOUT)",
	},
	[TE_S_RDZV_TIMEOUT] = {
		.name = "rdzv-timeout", .type = TE_T_UINT,
		.lo = 1, .hi = 31 * 86400, .unit = "seconds",
		.arginfo = "SECONDS",
		.help = "how long torchrun waits for all nodes to join "
			"(PET_RDZV_CONF timeout and join_timeout)",
	},
	[TE_S_LAUNCHER] = {
		.name = "launcher", .type = TE_T_ENUM, .words = w_launcher,
		.builtin = "auto", .arginfo = "auto|task|torchrun",
		.help = "task: one task per rank (RANK, WORLD_SIZE, ...); "
			"torchrun: one launcher per node (PET_*); auto: decide "
			"from the command and the GPUs",
	},
	[TE_S_RANK_ENV] = {
		.name = "rank-env", .type = TE_T_BOOL, .words = w_yesno,
		.builtin = "yes", .arginfo = "yes|no",
		.help = "export the rank environment (RANK, MASTER_ADDR, "
			"PET_*, ...); no: export none of it",
	},
	[TE_S_PORT_RANGE] = {
		.name = "port-range", .type = TE_T_RANGE,
		.lo = 1024, .hi = 65535, .builtin = "20000-29999",
		.arginfo = "LO-HI",
		.help = "ports MASTER_PORT is chosen from",
	},
	[TE_S_IGNORE_SIGNALS] = {
		.name = "ignore-signals", .type = TE_T_SIGLIST,
		.words = w_none, .builtin = "none", .arginfo = "none|SIG,...",
		.help = "more signals the tasks start with ignored (PIPE, "
			"TTIN, TTOU, XFSZ, WINCH, URG); never USR1 or USR2",
	},
	[TE_S_FAILURE_REPORT] = {
		.name = "failure-report", .type = TE_T_BOOL, .words = w_onoff,
		.builtin = "on", .arginfo = "on|off",
		.help = "srun names the first task that failed: rank, node, "
			"exit code or signal, time",
	},
	[TE_S_BIND] = {
		.name = "bind", .type = TE_T_ENUM, .words = w_bind,
		.mods = m_bind, .builtin = "none",
		.arginfo = "none|numa|cores[,verbose]",
		.help = "bind each rank's CPUs and memory next to its GPU: "
			"numa: the GPU's NUMA node; cores: cores of that node "
			"split between its ranks; verbose: print each binding",
	},
	[TE_S_BIND_SMT] = {
		.name = "bind-smt", .type = TE_T_ENUM, .words = w_smt,
		.builtin = "all", .arginfo = "all|one",
		.help = "hardware threads of each bound core: all, or one "
			"per core",
	},
	[TE_S_BIND_GPUS] = {
		.name = "bind-gpus", .type = TE_T_ENUM, .words = w_bindgpus,
		.builtin = "all", .arginfo = "all|own",
		.help = "GPUs a rank sees: all of the step's (keeps CUDA IPC "
			"and NCCL P2P), or only its own (CUDA_VISIBLE_DEVICES)",
	},
	[TE_S_BIND_FAILURE] = {
		.name = "bind-failure", .type = TE_T_ENUM, .words = w_warnfail,
		.builtin = "warn", .arginfo = "warn|fail",
		.help = "a rank that cannot be bound as asked: warn and run "
			"unbound, or fail the task",
	},
	[TE_S_BIND_TOPOLOGY] = {
		.name = "bind-topology", .type = TE_T_PATH, .arginfo = "FILE",
		.help = "for tests: an hwloc XML export of this very machine "
			"(e.g. with added GPUs) used instead of discovery",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_TOPOLOGY_CACHE] = {
		.name = "topology-cache", .type = TE_T_PATH, .words = w_off,
		.builtin = "/run/trainenv", .arginfo = "DIR|off",
		.help = "root-owned directory where the node's hwloc topology "
			"is kept from the first step after a boot",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_RDZV] = {
		.name = "rdzv", .type = TE_T_ENUM, .words = w_rdzv,
		.builtin = "auto", .arginfo = "auto|pmix|computed",
		.help = "pmix: ranks exchange MASTER_ADDR/MASTER_PORT over PMIx "
			"(srun --mpi=pmix); computed: from Slurm's node list, "
			"no exchange; auto: pmix when the step has PMIx",
	},
	[TE_S_BARRIER] = {
		.name = "barrier", .type = TE_T_UINT, .words = w_barrier,
		.lo = 1, .hi = TE_WEEK_S, .unit = "seconds",
		.builtin = TE_NUM_TEXT(TE_BARRIER_BUILTIN_S),
		.arginfo = "SECONDS|off|first-collective",
		.help = "hold every task at launch until all ranks have "
			"arrived, at most SECONDS; on timeout every task fails "
			"naming the missing ranks and nodes; off: no barrier, "
			"ranks only wait for rank 0's data; first-collective: "
			"the barrier runs in each process right before its "
			"first NCCL communicator (deadline: the site's barrier "
			"seconds, else " TE_NUM_TEXT(TE_BARRIER_BUILTIN_S)
			") (needs PMIx)",
	},
	[TE_S_VERSION_CHECK] = {
		.name = "version-check", .type = TE_T_ENUM, .words = w_vcheck,
		.builtin = "warn", .arginfo = "warn|fail|off",
		.help = "compare the trainenv, NCCL and CUDA driver versions "
			"of all nodes at launch; report a mismatch once, naming "
			"the nodes (needs PMIx)",
	},
	[TE_S_CHECKPOINT_DIR] = {
		.name = "checkpoint-dir", .type = TE_T_PATH, .arginfo = "DIR",
		.help = "check at launch that DIR is one shared directory "
			"writable from every node, fail naming the nodes that "
			"do not see it, export TRAINENV_CHECKPOINT_DIR (needs "
			"PMIx)",
	},
	[TE_S_SOCKET_IFNAME] = {
		.name = "socket-ifname", .type = TE_T_BOOL, .words = w_yesno,
		.builtin = "no", .arginfo = "yes|no",
		.help = "export NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME: the "
			"interface that carries the route to MASTER_ADDR",
	},
	[TE_S_PREFLIGHT] = {
		.name = "preflight", .type = TE_T_ENUM, .words = w_preflight,
		.builtin = "off", .arginfo = "off|on|verbose",
		.help = "before the barrier each rank checks its GPU with the "
			"CUDA runtime (context, a small allocation and memset, "
			"free memory); a failure names node, rank, GPU and CUDA "
			"error and fails the step; verbose: print each rank's "
			"result",
	},
	[TE_S_EXIT_GRACE] = {
		.name = "exit-grace", .type = TE_T_UINT, .words = w_exit_grace,
		.lo = 1, .hi = TE_WEEK_S, .unit = "seconds",
		.builtin = "off", .arginfo = "SECONDS|off",
		.help = "once a task of the step has ended, the others have "
			"SECONDS to end; then srun names every rank still "
			"running, its node, state and stack (Python frames "
			"when it runs Python), and ends the step per "
			"exit-action",
	},
	[TE_S_EXIT_ACTION] = {
		.name = "exit-action", .type = TE_T_ENUM, .words = w_exit_action,
		.builtin = "term", .arginfo = "report|term|kill",
		.help = "past the exit grace: report only; term: then end the "
			"step (SIGTERM, SIGKILL 10 s later if it still runs); "
			"kill: then SIGKILL at once",
	},
	[TE_S_STALL] = {
		.name = "stall", .type = TE_T_UINT, .words = w_stall,
		.lo = 1, .hi = TE_WEEK_S, .unit = "seconds",
		.env = env_stall, .arginfo = "SECONDS|off",
		.help = "a rank that calls trainenv.heartbeat() (or "
			"trainenv_heartbeat()) in its training loop and then "
			"stops calling it for SECONDS triggers the hang report "
			"and the exit-action, as exit-grace does",
	},
	[TE_S_REQUEUE] = {
		.name = "requeue", .type = TE_T_UINT, .words = w_requeue,
		.lo = 1, .hi = 1000, .unit = "restarts", .builtin = "off",
		.arginfo = "N|off",
		.help = "batch jobs: when a step fails because of a node (GPU "
			"pre-flight, a node lost, a rank killed by a signal the "
			"site lists, a hang past exit-grace), requeue the job "
			"without that node, at most N times",
	},
	[TE_S_TIME_SIGNAL] = {
		.name = "time-signal", .type = TE_T_SIGAT,
		.words = w_time_signal, .lo = 1, .hi = TE_WEEK_S,
		.unit = "seconds", .builtin = "off",
		.arginfo = "SIG@SECONDS|off",
		.help = "every task gets SIG (USR1, USR2, TERM or INT) SECONDS "
			"before the job's time limit, e.g. to save a checkpoint; "
			"the job's own --signal wins unless enforced",
	},
	[TE_S_SPARES] = {
		.name = "spares", .type = TE_T_UINT, .words = w_requeue,
		.lo = 1, .hi = 64, .unit = "nodes", .builtin = "off",
		.arginfo = "K|off",
		.help = "sbatch, salloc: K nodes of the allocation sit out of "
			"the steps as spares (a step without a node count runs "
			"on the others); when a step fails because of a node, "
			"srun starts it again at once in the same allocation "
			"without that node, a spare in its place (restarts "
			"count against --train-requeue N, else K); implies "
			"--no-kill where given in the #SBATCH lines",
	},
	[TE_S_SHRINK] = {
		.name = "shrink", .type = TE_T_BOOL, .words = w_yesno,
		.builtin = "no", .arginfo = "yes|no",
		.help = "with --train-spares: when no spare is left, a step "
			"that failed because of a node starts again on the "
			"nodes left (the same tasks per node, a smaller "
			"WORLD_SIZE) instead of the requeue",
	},
	[TE_S_TRANSIENT] = {
		.name = "transient", .type = TE_T_CODELIST,
		.words = w_transient, .lo = 1, .hi = 255,
		.builtin = "off", .arginfo = "CODE[,CODE...]|off",
		.help = "exit codes that name a transient fault: a step whose "
			"failed ranks all exited with one of them starts again "
			"at once on the same nodes (no spare needed; restarts "
			"count against --train-requeue N, else K spares, else "
			"1); never 75, 93, 126 or 127",
	},
	[TE_S_STEP_WATCH] = {
		.name = "step-watch", .type = TE_T_UINT, .words = w_step_watch,
		.lo = 1, .hi = 10000, .unit = "percent", .builtin = "50",
		.env = env_step_watch, .arginfo = "PCT|off",
		.help = "a job that calls trainenv.heartbeat() once per step: "
			"rank 0's mean step time above its own median by more "
			"than PCT% for step-watch-windows windows in a row is "
			"said in one line",
	},
	[TE_S_STEP_WATCH_WINDOWS] = {
		.name = "step-watch-windows", .type = TE_T_UINT, .lo = 1,
		.hi = 100, .unit = "windows", .builtin = "3",
		.env = env_step_windows, .arginfo = "K",
		.help = "the step watch: slow windows in a row before the line "
			"(a checkpoint or an evaluation spikes one)",
	},
	[TE_S_STEP_WATCH_WINDOW] = {
		.name = "step-watch-window", .type = TE_T_UINT, .lo = 1,
		.hi = 3600, .unit = "seconds", .builtin = "60",
		.env = env_step_window, .arginfo = "SECONDS",
		.help = "the step watch: the length of one window",
	},
	[TE_S_STRAGGLER] = {
		.name = "straggler", .type = TE_T_UINT, .words = w_straggler,
		.lo = 1, .hi = 99, .unit = "percent", .builtin = "off",
		.env = env_straggler, .arginfo = "PCT|off",
		.help = "trainenv's NCCL profiler plugin in every rank "
			"(NCCL_PROFILER_PLUGIN, unless the job sets its own): "
			"a node whose ranks wait in a communicator's "
			"collectives less than (100-PCT)% of the other nodes' "
			"median for straggler-windows windows in a row is named "
			"in one line (it arrives last: the others wait for it)",
	},
	[TE_S_STRAGGLER_WINDOWS] = {
		.name = "straggler-windows", .type = TE_T_UINT, .lo = 1,
		.hi = 100, .unit = "windows", .builtin = "5",
		.env = env_strag_windows, .arginfo = "K",
		.help = "stragglers: late windows in a row before a node is "
			"named",
	},
	[TE_S_STRAGGLER_WINDOW] = {
		.name = "straggler-window", .type = TE_T_UINT, .lo = 1,
		.hi = 3600, .unit = "seconds", .builtin = "60",
		.env = env_strag_window, .arginfo = "SECONDS",
		.help = "stragglers: the length of one window (each node "
			"sends srun its ranks' waits once a window)",
	},
	[TE_S_STRAGGLER_EXCLUDE] = {
		.name = "straggler-exclude", .type = TE_T_ENUM,
		.words = w_strag_exclude, .builtin = "off",
		.arginfo = "off|checkpoint",
		.help = "checkpoint: a node named as a straggler is left out "
			"at the job's next checkpoint (a new file in "
			"checkpoint-dir): srun ends the step and starts it "
			"again without the node, a spare in its place "
			"(--train-spares); where it cannot, srun says why in "
			"one line",
	},
	[TE_S_LIB_DIR] = {
		.name = "lib-dir", .type = TE_T_PATH,
		.builtin = TE_PKGLIBDIR, .arginfo = "DIR",
		.help = "directory of the NCCL preload library "
			"trainenv-nccl.so (site policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_RECORD_DIR] = {
		.name = "record-dir", .type = TE_T_PATH, .words = w_off,
		.arginfo = "DIR|off",
		.help = "srun writes each step's record (settings, failures, "
			"hang reports; JSON) into DIR/UID/JOBID/ as the user, when "
			"--train-nccl-dump-dir does not name a directory "
			"(site policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_BARRIER_SKEW_WARN] = {
		.name = "barrier-skew-warn", .type = TE_T_UINT,
		.words = w_skew_warn, .lo = 1, .hi = TE_WEEK_S,
		.unit = "seconds", .builtin = "10", .arginfo = "SECONDS|off",
		.help = "when the launch barrier passes and its last node came "
			"SECONDS or more after the first, rank 0's task names "
			"that node and the delay in one line (always with "
			"--train-explain; site policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_REQUEUE_ON] = {
		.name = "requeue-on", .type = TE_T_ENUM, .words = w_requeue_on,
		.builtin = "node", .arginfo = "node|any",
		.help = "what --train-requeue follows: node: failures trainenv "
			"attributes to a node; any: also a program's own error "
			"exit (site policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_REQUEUE_SIGNALS] = {
		.name = "requeue-signals", .type = TE_T_SIGLIST,
		.words = w_none, .builtin = "BUS", .arginfo = "none|SIG,...",
		.help = "a rank killed by one of these signals counts as its "
			"node's fault for --train-requeue (BUS, SEGV, ILL, FPE, "
			"ABRT, SYS, KILL; site policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_REQUEUE_NO_PROGRESS] = {
		.name = "requeue-no-progress", .type = TE_T_UINT,
		.words = w_no_progress, .lo = 1, .hi = 1000,
		.unit = "restarts", .builtin = "2", .arginfo = "N|off",
		.help = "with --train-checkpoint-dir, stop requeueing after N "
			"restarts in a row whose newest checkpoint did not "
			"change (the job then ends with exit code 93; site "
			"policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_FENCE_TREE_MIN_NODES] = {
		.name = "fence-tree-min-nodes", .type = TE_T_UINT,
		.words = w_fence_tree, .lo = 1, .hi = 65535, .unit = "nodes",
		.builtin = "auto", .arginfo = "auto|off|NODES",
		.help = "srun sets SLURM_PMIX_FENCE=tree for a step of at "
			"least this many nodes, ring below; auto: Slurm's "
			"TreeWidth, under which the tree fence is no job-wide "
			"barrier (a smaller value is raised to it); off: "
			"always ring (site policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_LAUNCH_TREE_WIDTH] = {
		.name = "launch-tree-width", .type = TE_T_UINT,
		.lo = 2, .hi = 1024, .unit = "children",
		.builtin = "16", .arginfo = "K",
		.help = "the launch rendezvous runs as a tree over the step's "
			"nodes, rank 0's node at its root: each node's helper "
			"talks to its parent and to at most K children (site "
			"policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_HELPER_DIR] = {
		.name = "helper-dir", .type = TE_T_PATH,
		.builtin = TE_PKGLIBEXECDIR, .arginfo = "DIR",
		.help = "directory of the helpers trainenv-rdzv and "
			"trainenv-preflight (site policy only)",
		.flags = TE_F_NO_OPTION,
	},
	[TE_S_TEST_HOOKS] = {
		.name = "test-hooks", .type = TE_T_BOOL, .words = w_onoff,
		.builtin = "off", .arginfo = "on|off",
		.help = "honour the TRAINENV_TEST_* variables that simulate "
			"late, failed or mismatched nodes; for trainenv's own "
			"tests, never in production (site policy only)",
		.flags = TE_F_NO_OPTION,
	},
};

int te_setting_find(const char *name)
{
	int i;

	for (i = 0; i < TE_S_COUNT; i++)
		if (strcmp(te_settings[i].name, name) == 0)
			return i;
	return -1;
}

uint64_t te_setting_max(int id)
{
	return id >= 0 && id < TE_S_COUNT ? te_settings[id].hi : 0;
}

uint64_t te_setting_builtin_num(int id)
{
	uint64_t n;

	if (id < 0 || id >= TE_S_COUNT || !te_settings[id].builtin ||
	    te_parse_u64(te_settings[id].builtin, UINT64_MAX, &n) < 0)
		return 0;
	return n;
}

void te_option_name(int id, char *buf, size_t len)
{
	if (id == TE_S_TRAIN)
		te_strlcpy(buf, "train", len);
	else
		te_snprintf(buf, len, "train-%s", te_settings[id].name);
}

static void words_join(const char *const *w, const char *last_sep, char *buf,
		       size_t len)
{
	int n, i;

	buf[0] = '\0';
	for (n = 0; w && w[n]; n++)
		;
	for (i = 0; i < n; i++)
		te_appendf(buf, len, "%s%s",
			   i == 0 ? "" : (i == n - 1 ? last_sep : ", "), w[i]);
}

/* The signals a TE_T_SIGLIST setting accepts, as its help and errors name
 * them (value.c's tables hold the numbers). */
const char *te_siglist_names(int id)
{
	return id == TE_S_REQUEUE_SIGNALS
		       ? "BUS, SEGV, ILL, FPE, ABRT, SYS, KILL"
		       : "PIPE, TTIN, TTOU, XFSZ, WINCH, URG";
}

void te_setting_accepted(int id, const struct te_policy *pol, char *buf,
			 size_t len)
{
	const struct te_setting *s = &te_settings[id];
	uint64_t lo = s->lo, hi = s->hi;
	int bounded = 0;

	switch (s->type) {
	case TE_T_ENUM:
	case TE_T_BOOL:
		words_join(s->words, " or ", buf, len);
		if (s->mods) {
			char m[128];

			words_join(s->mods, " or ", m, sizeof(m));
			te_appendf(buf, len, ", optionally followed by ,%s", m);
		}
		return;
	case TE_T_PATH:
		te_strlcpy(buf, "an absolute path", len);
		if (s->words) {
			char w[128];

			words_join(s->words, " or ", w, sizeof(w));
			te_appendf(buf, len, ", or %s", w);
		}
		return;
	case TE_T_RANGE:
		te_snprintf(buf, len, "LO-HI with %llu <= LO <= HI <= %llu",
			    (unsigned long long)lo, (unsigned long long)hi);
		return;
	case TE_T_SIGLIST:
		te_snprintf(buf, len, "none, or a comma-separated list of %s",
			    te_siglist_names(id));
		return;
	case TE_T_SIGAT:
	case TE_T_UINT:
	case TE_T_CODELIST:
		if (pol && pol->has_min[id] && pol->min[id] > lo) {
			lo = pol->min[id];
			bounded = 1;
		}
		if (pol && pol->has_max[id] && pol->max[id] < hi) {
			hi = pol->max[id];
			bounded = 1;
		}
		te_snprintf(buf, len, "%s%llu to %llu%s%s%s%s",
			    s->type == TE_T_SIGAT
				    ? "SIG@SECONDS with SIG one "
				      "of USR1, USR2, TERM, INT and SECONDS "
			    : s->type == TE_T_CODELIST
				    ? "a comma-separated list of exit codes "
				    : "",
			    (unsigned long long)lo, (unsigned long long)hi,
			    s->unit ? " " : "", s->unit ? s->unit : "",
			    s->type == TE_T_CODELIST
				    ? " but " TE_CODES_RESERVED_TEXT
				    : "",
			    bounded ? " (site bounds)" : "");
		if (s->words) {
			char w[128];

			words_join(s->words, " or ", w, sizeof(w));
			te_appendf(buf, len, ", or %s", w);
		}
		return;
	}
}
