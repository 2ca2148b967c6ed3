/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv settings: one table of every knob, the admin policy, and the one
 * precedence rule that turns policy + user options + job environment into the
 * effective value of each knob.
 *
 *   enforced admin value > user option (srun/sbatch, sbatch options inherited
 *   by steps) > value already in the job environment > admin default >
 *   built-in default
 *
 * A user value (option or environment) outside the admin's bounds is refused,
 * never clamped. Everything here is pure: no Slurm, no I/O except reading the
 * admin's policy file in te_policy_file(). */
#ifndef TE_SETTINGS_H
#define TE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#define TE_VALUE_MAX 1024 /* longest value text (paths) */
#define TE_ERR_MAX 512	  /* one error line */
#define TE_ORIGIN_MAX 160 /* "--train-x", "TORCH_...", "FILE:LINE" */
#define TE_POLICY_FILE_MAX (1024 * 1024)
#define TE_POLICY_LINE_MAX 4096
#define TE_WARN_MAX 8

enum te_setting_id {
	TE_S_TRAIN,		/* on|off: the whole plugin */
	TE_S_SIGHUP,		/* shield|ignore|default */
	TE_S_NCCL_HEARTBEAT,	/* TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC */
	TE_S_NCCL_MONITORING,	/* TORCH_NCCL_ENABLE_MONITORING */
	TE_S_NCCL_ASYNC_ERRORS, /* TORCH_NCCL_ASYNC_ERROR_HANDLING (+ legacy) */
	TE_S_NCCL_BLOCKING_WAIT, /* TORCH_NCCL_BLOCKING_WAIT (+ legacy) */
	TE_S_NCCL_DESYNC_DEBUG,	 /* TORCH_NCCL_DESYNC_DEBUG (+ legacy) */
	TE_S_NCCL_DUMP,		 /* TORCH_NCCL_DUMP_ON_TIMEOUT */
	TE_S_NCCL_TRACE_BUFFER,	 /* TORCH_NCCL_TRACE_BUFFER_SIZE */
	TE_S_NCCL_DUMP_DIR, /* TORCH_NCCL_DEBUG_INFO_TEMP_FILE=DIR/JOBID/... */
	TE_S_NCCL_DIAGNOSTICS,	/* NCCL_RUN_DIAGNOSTICS (NCCL >= 2.31) */
	TE_S_DEEPSPEED_TIMEOUT, /* DEEPSPEED_TIMEOUT (minutes) */
	TE_S_RDZV_TIMEOUT,	/* torchrun rendezvous: PET_RDZV_CONF */
	TE_S_LAUNCHER,		/* task|torchrun|auto */
	TE_S_RANK_ENV,		/* yes|no: export RANK, MASTER_ADDR, PET_* */
	TE_S_PORT_RANGE,	/* LO-HI for MASTER_PORT */
	TE_S_IGNORE_SIGNALS,	/* more signals the tasks ignore */
	TE_S_FAILURE_REPORT,	/* on|off: first-failure report in srun */
	TE_S_BIND,		/* none|numa|cores[,verbose] */
	TE_S_BIND_SMT,		/* all|one */
	TE_S_BIND_GPUS,		/* all|own: GPUs visible to a rank */
	TE_S_BIND_FAILURE,	/* warn|fail */
	TE_S_RDZV,	    /* auto|pmix|computed: where MASTER_* come from */
	TE_S_BARRIER,	    /* SECONDS|off: job-wide launch barrier */
	TE_S_VERSION_CHECK, /* warn|fail|off: NCCL/CUDA/trainenv across nodes */
	TE_S_CHECKPOINT_DIR, /* DIR checked to be one shared directory */
	TE_S_SOCKET_IFNAME, /* yes|no: NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME */
	TE_S_PREFLIGHT,	    /* off|on|verbose: GPU check before the barrier */
	TE_S_EXIT_GRACE,  /* SECONDS|off: the others' time after a first exit */
	TE_S_EXIT_ACTION, /* report|term|kill: past the exit grace */
	TE_S_STALL,	  /* SECONDS|off: a rank's heartbeat's age */
	TE_S_REQUEUE,	  /* N|off: requeue without a failed node */
	TE_S_TIME_SIGNAL, /* SIG@SECONDS|off: before the time limit */
	TE_S_SPARES,	  /* K|off: nodes that sit out, for relaunches */
	TE_S_SHRINK,	  /* yes|no: relaunch on fewer nodes, no spare left */
	TE_S_TRANSIENT,	  /* CODE,...|off: exit codes relaunched on the
			     same nodes */
	TE_S_STEP_WATCH,  /* PCT|off: a step time above the median */
	TE_S_STEP_WATCH_WINDOWS, /* K: slow windows in a row for the line */
	TE_S_STEP_WATCH_WINDOW,	 /* SECONDS: one window of the step watch */
	TE_S_STRAGGLER,		 /* PCT|off: NCCL profiler, the late node */
	TE_S_STRAGGLER_WINDOWS,	 /* K: late windows in a row to name it */
	TE_S_STRAGGLER_WINDOW,	 /* SECONDS: one window of the waits */
	TE_S_STRAGGLER_EXCLUDE,	 /* off|checkpoint: relaunch without it */
	/* admin-only keys (no user option) */
	TE_S_BIND_TOPOLOGY,	  /* admin/test: hwloc XML of this machine */
	TE_S_TOPOLOGY_CACHE,	  /* admin: DIR|off, per-boot topology cache */
	TE_S_RECORD_DIR,	  /* admin: DIR|off, the steps' JSON records */
	TE_S_BARRIER_SKEW_WARN,	  /* admin: SECONDS|off, the slow node's line */
	TE_S_REQUEUE_ON,	  /* admin: node|any, what a requeue follows */
	TE_S_REQUEUE_SIGNALS,	  /* admin: signals that name a node's fault */
	TE_S_REQUEUE_NO_PROGRESS, /* admin: N|off, restarts without progress */
	TE_S_FENCE_TREE_MIN_NODES, /* admin: auto|off|N, SLURM_PMIX_FENCE=tree */
	TE_S_LAUNCH_TREE_WIDTH,	   /* admin: K, children per helper at launch */
	TE_S_HELPER_DIR,	   /* admin only: where trainenv-rdzv lives */
	TE_S_LIB_DIR,		   /* admin only: trainenv-nccl.so */
	TE_S_TEST_HOOKS, /* admin only: honour TRAINENV_TEST_* (tests) */
	TE_S_COUNT
};

/* Named words: cfg.v[X].word holds one of these for the setting X named in
 * the comment, or TE_W_VALUE when the value is a number, a path or a list.
 * core/settings/settings.c spells each word at its name (designated initializers),
 * and tests/unit/settings/test_settings.c checks every name against its text. */
#define TE_W_VALUE (-1)
enum te_w_bool {
	TE_W_TRUE,
	TE_W_FALSE
}; /* every TE_T_BOOL */
enum te_w_onoff {
	TE_W_ON = TE_W_TRUE,
	TE_W_OFF = TE_W_FALSE
};
enum te_w_yesno {
	TE_W_YES = TE_W_TRUE,
	TE_W_NO = TE_W_FALSE
};
enum te_w_sighup { /* TE_S_SIGHUP */
	TE_W_SIGHUP_SHIELD,
	TE_W_SIGHUP_IGNORE,
	TE_W_SIGHUP_DEFAULT
};
enum te_w_async { /* TE_S_NCCL_ASYNC_ERRORS */
	TE_W_ASYNC_OFF,
	TE_W_ASYNC_TEAR_DOWN,
	TE_W_ASYNC_CLEANUP_ONLY,
	TE_W_ASYNC_SKIP_CLEANUP
};
enum te_w_launcher { /* TE_S_LAUNCHER */
	TE_W_LAUNCHER_AUTO,
	TE_W_LAUNCHER_TASK,
	TE_W_LAUNCHER_TORCHRUN
};
enum te_w_siglist {
	TE_W_SIGLIST_NONE
}; /* TE_S_IGNORE_SIGNALS,
						   TE_S_REQUEUE_SIGNALS */
enum te_w_path {
	TE_W_PATH_OFF
};		    /* TE_S_TOPOLOGY_CACHE, _RECORD_DIR */
enum te_w_barrier { /* TE_S_BARRIER */
	TE_W_BARRIER_OFF,
	TE_W_BARRIER_FIRST_COLLECTIVE
};
enum te_w_bind {
	TE_W_BIND_NONE,
	TE_W_BIND_NUMA,
	TE_W_BIND_CORES
};
enum te_m_bind {
	TE_M_BIND_VERBOSE
}; /* bit in TE_S_BIND's num */
enum te_w_bind_smt {
	TE_W_BIND_SMT_ALL,
	TE_W_BIND_SMT_ONE
};
enum te_w_bind_gpus {
	TE_W_BIND_GPUS_ALL,
	TE_W_BIND_GPUS_OWN
};
enum te_w_bind_failure {
	TE_W_BIND_FAILURE_WARN,
	TE_W_BIND_FAILURE_FAIL
};
enum te_w_rdzv {
	TE_W_RDZV_AUTO,
	TE_W_RDZV_PMIX,
	TE_W_RDZV_COMPUTED
};
enum te_w_version_check { /* TE_S_VERSION_CHECK */
	TE_W_VCHECK_WARN,
	TE_W_VCHECK_FAIL,
	TE_W_VCHECK_OFF
};
enum te_w_exit_grace {
	TE_W_EXIT_GRACE_OFF
};			/* TE_S_EXIT_GRACE */
enum te_w_exit_action { /* TE_S_EXIT_ACTION */
	TE_W_EXIT_ACTION_REPORT,
	TE_W_EXIT_ACTION_TERM,
	TE_W_EXIT_ACTION_KILL
};
enum te_w_stall {
	TE_W_STALL_OFF
}; /* TE_S_STALL */
enum te_w_step_watch {
	TE_W_STEP_WATCH_OFF
}; /* TE_S_STEP_WATCH */
enum te_w_straggler {
	TE_W_STRAGGLER_OFF
};			  /* TE_S_STRAGGLER */
enum te_w_strag_exclude { /* TE_S_STRAGGLER_EXCLUDE */
	TE_W_STRAG_EXCLUDE_OFF,
	TE_W_STRAG_EXCLUDE_CHECKPOINT
};
enum te_w_skew_warn {
	TE_W_SKEW_WARN_OFF
}; /* TE_S_BARRIER_SKEW_WARN */
enum te_w_requeue {
	TE_W_REQUEUE_OFF
}; /* TE_S_REQUEUE, TE_S_SPARES */
enum te_w_transient {
	TE_W_TRANSIENT_OFF
}; /* TE_S_TRANSIENT */
enum te_w_time_signal {
	TE_W_TIME_SIGNAL_OFF
};		       /* TE_S_TIME_SIGNAL */
enum te_w_requeue_on { /* TE_S_REQUEUE_ON */
	TE_W_REQUEUE_ON_NODE,
	TE_W_REQUEUE_ON_ANY
};
enum te_w_no_progress {
	TE_W_NO_PROGRESS_OFF
};		       /* TE_S_REQUEUE_NO_PROGRESS */
enum te_w_fence_tree { /* TE_S_FENCE_TREE_MIN_NODES */
	TE_W_FENCE_TREE_AUTO,
	TE_W_FENCE_TREE_OFF
};
enum te_w_preflight { /* TE_S_PREFLIGHT */
	TE_W_PREFLIGHT_OFF,
	TE_W_PREFLIGHT_ON,
	TE_W_PREFLIGHT_VERBOSE
};

enum te_type {
	TE_T_ENUM, /* one of words[] */
	TE_T_BOOL, /* words[0] (true) or words[1] (false); on/off/yes/no/1/0 accepted */
	TE_T_UINT,  /* decimal in [lo, hi], or one of words[] (e.g. "off") */
	TE_T_PATH,  /* an absolute path of printable characters, or one
			   of words[] (e.g. "off") */
	TE_T_RANGE, /* "LO-HI" with lo <= LO <= HI <= hi; num = LO, num2 = HI */
	TE_T_SIGLIST,  /* "none" or signal names "PIPE,TTIN"; num = bit mask */
	TE_T_SIGAT,    /* "SIG@SECONDS", SIG one of USR1 USR2 TERM INT, SECONDS
			   in [lo, hi], or one of words[]; num = SECONDS,
			   num2 = the signal's number */
	TE_T_CODELIST, /* exit codes "3,42" in [lo, hi] but the reserved
			   ones, or one of words[]; the text sorted, each
			   once; num = the lowest, num2 = the highest */
};

enum te_source {
	TE_SRC_UNSET, /* nobody set it: trainenv leaves the knob alone */
	TE_SRC_BUILTIN,
	TE_SRC_ADMIN,
	TE_SRC_ENV,
	TE_SRC_OPTION,
	TE_SRC_ENFORCED,
};

struct te_value {
	int set;		 /* 0: no value */
	char text[TE_VALUE_MAX]; /* canonical text */
	uint64_t num;		 /* TE_T_UINT: the number */
	uint64_t num2;		 /* TE_T_RANGE: the upper end */
	int word;		 /* index in words[], or -1 for a number/path */
	enum te_source src;
	char origin[TE_ORIGIN_MAX]; /* where it came from, for messages */
};

struct te_setting {
	const char *name; /* policy key; the option is --train-<name> */
	enum te_type type;
	const char *const *words;
	/* TE_T_ENUM only: modifiers that may follow the word after commas
	 * ("numa,verbose"); num holds their bit mask (bit i = mods[i]). */
	const char *const *mods;
	const char *builtin; /* built-in default text, NULL: unset */
	uint64_t lo, hi;     /* TE_T_UINT hard limits */
	const char *unit;    /* "seconds", for messages */
	/* Job environment variables that carry this knob: the first is the
	 * current name, the others legacy aliases. Read for the "environment"
	 * precedence level and written when the value comes from elsewhere. */
	const char *const *env;
	/* For TE_T_ENUM/TE_T_BOOL: the text written into env for words[i];
	 * NULL means the word itself. */
	const char *const *env_words;
	const char *arginfo; /* for --help: "SECONDS" */
	const char *help;    /* one line for --help */
	unsigned flags;
};

#define TE_F_NO_OPTION 0x1  /* admin key only, no --train- option */
#define TE_F_SHOW_UNSET 0x2 /* explain shows it even when unset */

extern const struct te_setting te_settings[TE_S_COUNT];

/* Index of the setting called name, or -1. */
int te_setting_find(const char *name);

/* The longest time a seconds setting takes: its row's .hi (barrier,
 * exit-grace, stall, time-signal, barrier-skew-warn). Code that cannot
 * link the table (the NCCL shim's barrier_proxy.c) takes it from here;
 * everything else asks te_setting_max(). */
#define TE_WEEK_S (7 * 86400)
/* The barrier row's built-in seconds, its .builtin text ("300"), for the
 * same readers; the rest ask te_setting_builtin_num(TE_S_BARRIER). */
#define TE_BARRIER_BUILTIN_S 300

/* A row's hard upper limit (.hi) and its built-in default as a number
 * (0 when it has none or it is a word): the one place they are written
 * is the row itself. */
uint64_t te_setting_max(int id);
uint64_t te_setting_builtin_num(int id);

/* The user's option name: "train" for TE_S_TRAIN, else "train-<name>". */
void te_option_name(int id, char *buf, size_t len);

/* Describes the accepted values, with the admin bounds when pol is given:
 * "ignore or default", "300 to 3600 seconds (site bounds)". */
struct te_policy;
void te_setting_accepted(int id, const struct te_policy *pol, char *buf,
			 size_t len);

/* Checks text against the setting's type and hard limits. from_env also
 * accepts the env_words forms (e.g. "1"/"0"). On success fills v (set=1,
 * canonical text); on error writes what is wrong (without naming the source,
 * which the caller knows) and returns -1. */
int te_value_parse(int id, const char *text, int from_env, struct te_value *v,
		   char *err, size_t errlen);

/* The exit codes a TE_T_CODELIST setting (--train-transient) never takes,
 * each with a meaning of its own: 75 a node failed its check before
 * training (relaunched without the node), 93 "do not restart" (both
 * core/report/recovery.h's), 126 and 127 the shell's (the command cannot
 * run, or is not there: no restart helps). 1 when code is one of them. */
int te_code_reserved(uint64_t code);
#define TE_CODES_RESERVED_TEXT "75, 93, 126 and 127"

/* "PIPE, TTIN, ..." : the signal names a TE_T_SIGLIST setting accepts. */
const char *te_siglist_names(int id);

/* Text to write into the job environment for a value (e.g. "1" for "on"). */
const char *te_value_env_text(int id, const struct te_value *v);

/* ---------------------------------------------------------------- policy */

/* "KEY=VALUE" items separated by one blank, in the order given. */
#define TE_POLICY_HEALTH_MAX 2048
struct te_policy_health {
	char items[TE_POLICY_HEALTH_MAX];
	int n;
};

struct te_policy {
	struct te_value def[TE_S_COUNT]; /* admin defaults */
	int has_min[TE_S_COUNT], has_max[TE_S_COUNT];
	uint64_t min[TE_S_COUNT], max[TE_S_COUNT];
	char min_where[TE_S_COUNT][TE_ORIGIN_MAX]; /* for messages */
	char max_where[TE_S_COUNT][TE_ORIGIN_MAX];
	int enforced[TE_S_COUNT];
	char enforce_where[TE_S_COUNT][TE_ORIGIN_MAX];
	int nfiles; /* conf= files read */
	/* node health's keys (health, health_*), as given: the health room
	 * (core/health/health_prolog.h, above this one) checks them, and
	 * the job prolog's helper reads them */
	struct te_policy_health health;
};

void te_policy_init(struct te_policy *p);

/* One "key=value" item from plugstack.conf or a policy file. where names the
 * place for messages ("plugstack.conf argument 3", "/etc/x.conf:12"). conf=
 * is accepted only when allow_conf (plugstack.conf; files do not nest).
 * Without allow_conf the item comes from a policy file, which users may be
 * unable to read: a message names the place, a known setting's name and
 * what is wrong, never the item's text. */
int te_policy_item(struct te_policy *p, const char *item, const char *where,
		   int allow_conf, char *err, size_t errlen);

/* All plugstack.conf arguments, including conf=FILE, then te_policy_finish. */
int te_policy_args(struct te_policy *p, int ac, char **av, char *err,
		   size_t errlen);

/* A policy file: one key=value per line, '#' comments, blank lines. The file
 * must be a regular file (not a symbolic link) owned by root and not
 * writable by group or others (it decides what users may do), at most
 * TE_POLICY_FILE_MAX bytes; it is checked and read through one descriptor. */
int te_policy_file(struct te_policy *p, const char *path, char *err,
		   size_t errlen);

/* The same from memory (the fuzz target); name is used in messages. */
int te_policy_buffer(struct te_policy *p, const char *buf, size_t len,
		     const char *name, char *err, size_t errlen);

/* Cross-checks once everything is read: min <= max, admin defaults within
 * the bounds, enforced knobs have a value. */
int te_policy_finish(struct te_policy *p, char *err, size_t errlen);

/* ---------------------------------------------------------------- resolve */

typedef const char *(*te_getenv_fn)(void *ctx, const char *name);

struct te_config {
	struct te_value v[TE_S_COUNT];
	int nwarn;
	char warn[TE_WARN_MAX][TE_ERR_MAX];
};

/* Applies the precedence rule. user_opt[i] is the text the user gave for the
 * option of setting i (NULL when not given); user_where[i] optionally names
 * it ("--train-x", "sbatch --train-x"), NULL means "--train-<name>".
 * getenv_fn reads the job environment. inherited (may be NULL) is the
 * configuration trainenv recorded in that environment for an enclosing job
 * or step (TRAINENV_SETTINGS): a variable holding exactly the value trainenv
 * itself set there is not a user value and does not count. Warnings (e.g. an option overridden
 * by an enforced value) go to cfg->warn. Returns -1 with one error line when
 * a user value is invalid or outside the admin bounds. */
int te_resolve(const struct te_policy *pol, const char *const *user_opt,
	       te_getenv_fn getenv_fn, void *ctx,
	       const struct te_config *inherited, struct te_config *cfg,
	       char *err, size_t errlen);

/* Checks a user-given text against type and admin bounds, for option
 * callbacks that want to fail early. */
int te_check_user_value(const struct te_policy *pol, int id, const char *text,
			char *err, size_t errlen);

/* ---------------------------------------------------------------- report */

const char *te_source_name(enum te_source s);

/* One explain line, without a trailing newline:
 *   "nccl-heartbeat       = 900        (admin default, plugstack.conf argument 2)" */
void te_explain_line(const struct te_config *cfg, int id, char *buf,
		     size_t len);

/* The effective settings as one environment value (TRAINENV_SETTINGS):
 * `trainenv env` inside a task prints the same report, and the job side
 * (trainenv-rdzv, libtrainenv) takes its settings from it. Decoding checks
 * each known item's value against its row (te_value_parse: type and hard
 * limits) and fills num, num2 and word: a value no trainenv could have
 * written is refused with the item's name. Unknown names (a newer
 * trainenv's) are skipped. */
int te_config_encode(const struct te_config *cfg, char *buf, size_t len);
int te_config_decode(struct te_config *cfg, const char *s, char *err,
		     size_t errlen);

#define TE_SETTINGS_ENV "TRAINENV_SETTINGS"

/* The launch barrier's deadline in seconds for the effective settings cfg:
 * its value when it is a number, else the site's number (site: the admin
 * policy, NULL in the tasks, which only have cfg), else the row's
 * built-in default (300). What the plugin's plan, the first-collective
 * barrier (TRAINENV_BARRIER_TIMEOUT) and libtrainenv all take. */
unsigned long te_setting_barrier_s(const struct te_config *cfg,
				   const struct te_policy *site);
/* The variable the plugin derives from it for --train-barrier=
 * first-collective, which the NCCL shim reads (pmix/nccl_preload.c). */
#define TE_BARRIER_TIMEOUT_ENV "TRAINENV_BARRIER_TIMEOUT"
/* Its longest accepted value (te_config_decode): far more than a value slot
 * (TE_VALUE_SLOT_SIZE), so readers hold it in a buffer of its own. */
#define TE_SETTINGS_ENV_MAX (256 * 1024)

/* Reads an inherited TRAINENV_SETTINGS (if any) through getenv_fn: 0, or
 * -1 when there is none or it cannot be read. */
int te_inherited_config(te_getenv_fn getenv_fn, void *ctx,
			struct te_config *out);

/* The step record's directory, from the effective settings: the steps'
 * records (report/steprecord.h) and the launch's plan read it.
 * DIR of the record: --train-nccl-dump-dir, else the site's record-dir;
 * NULL when neither is set (no record). te_record_dir_option: which of the
 * two, for a message ("--train-nccl-dump-dir", "record-dir"). */
const char *te_record_dir(const struct te_config *cfg);
const char *te_record_dir_option(const struct te_config *cfg);

#endif
