#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "settings.h"
#include "strutil.h"

static const char *const w_onoff[] = { "on", "off", NULL };
static const char *const w_yesno[] = { "yes", "no", NULL };
static const char *const env_bool[] = { "1", "0", NULL };
static const char *const w_sighup[] = { "shield", "ignore", "default", NULL };
static const char *const w_async[] = {
	"off", "tear-down", "cleanup-only", "skip-cleanup", NULL
};
static const char *const env_async[] = { "0", "1", "2", "3", NULL };
static const char *const w_launcher[] = { "auto", "task", "torchrun", NULL };
static const char *const w_none[] = { "none", NULL };
static const char *const w_off[] = { "off", NULL };
static const char *const w_barrier[] = { "off", "first-collective", NULL };
static const char *const w_bind[] = { "none", "numa", "cores", NULL };
static const char *const m_bind[] = { "verbose", NULL };
static const char *const w_smt[] = { "all", "one", NULL };
static const char *const w_bindgpus[] = { "all", "own", NULL };
static const char *const w_warnfail[] = { "warn", "fail", NULL };
static const char *const w_rdzv[] = { "auto", "pmix", "computed", NULL };
static const char *const w_vcheck[] = { "warn", "fail", "off", NULL };
static const char *const w_preflight[] = { "off", "on", "verbose", NULL };

static const char *const env_heartbeat[] = {
	"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", NULL
};
static const char *const env_monitoring[] = {
	"TORCH_NCCL_ENABLE_MONITORING", NULL
};
static const char *const env_async_names[] = {
	"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING", NULL
};
static const char *const env_blocking[] = {
	"TORCH_NCCL_BLOCKING_WAIT", "NCCL_BLOCKING_WAIT", NULL
};
static const char *const env_desync[] = {
	"TORCH_NCCL_DESYNC_DEBUG", "NCCL_DESYNC_DEBUG", NULL
};
static const char *const env_dump[] = { "TORCH_NCCL_DUMP_ON_TIMEOUT", NULL };
static const char *const env_trace[] = { "TORCH_NCCL_TRACE_BUFFER_SIZE", NULL };
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
		.help = "flight recorder dumps go to DIR/JOBID/ "
			"(TORCH_NCCL_DEBUG_INFO_TEMP_FILE)",
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
		.lo = 1, .hi = 7 * 86400, .unit = "seconds",
		.builtin = "300", .arginfo = "SECONDS|off|first-collective",
		.help = "hold every task at launch until all ranks have "
			"arrived, at most SECONDS; on timeout every task fails "
			"naming the missing ranks and nodes; off: no barrier, "
			"ranks only wait for rank 0's data; first-collective: "
			"the barrier runs in each process right before its "
			"first NCCL communicator (deadline: the site's barrier "
			"seconds, else 300) (needs PMIx)",
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
	[TE_S_LIB_DIR] = {
		.name = "lib-dir", .type = TE_T_PATH,
		.builtin = TE_LIBDIR, .arginfo = "DIR",
		.help = "directory of libtrainenv and the NCCL preload library "
			"trainenv-nccl.so (site policy only)",
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
		te_strlcpy(buf, "none, or a comma-separated list of PIPE, TTIN, "
			   "TTOU, XFSZ, WINCH, URG", len);
		return;
	case TE_T_UINT:
		if (pol && pol->has_min[id] && pol->min[id] > lo) {
			lo = pol->min[id];
			bounded = 1;
		}
		if (pol && pol->has_max[id] && pol->max[id] < hi) {
			hi = pol->max[id];
			bounded = 1;
		}
		te_snprintf(buf, len, "%llu to %llu%s%s%s",
			    (unsigned long long)lo, (unsigned long long)hi,
			    s->unit ? " " : "", s->unit ? s->unit : "",
			    bounded ? " (site bounds)" : "");
		if (s->words) {
			char w[128];

			words_join(s->words, " or ", w, sizeof(w));
			te_appendf(buf, len, ", or %s", w);
		}
		return;
	}
}

static int word_index(const char *const *w, const char *text)
{
	int i;

	for (i = 0; w && w[i]; i++)
		if (strcmp(w[i], text) == 0)
			return i;
	return -1;
}

static int bool_parse(const char *text)
{
	static const char *const yes[] = { "on", "yes", "true", "1", NULL };
	static const char *const no[] = { "off", "no", "false", "0", NULL };
	int i;

	for (i = 0; yes[i]; i++)
		if (strcasecmp(text, yes[i]) == 0)
			return 1;
	for (i = 0; no[i]; i++)
		if (strcasecmp(text, no[i]) == 0)
			return 0;
	return -1;
}

static void set_word(const struct te_setting *s, struct te_value *v, int w)
{
	v->set = 1;
	v->word = w;
	v->num = 0;
	te_strlcpy(v->text, s->words[w], sizeof(v->text));
}

/* "word,mod,mod": each modifier at most once; canonical order is the
 * table's. */
static int enum_mods_parse(const struct te_setting *s, const char *text,
			   struct te_value *v)
{
	char buf[128], *save = NULL, *tok;
	uint64_t mask = 0;
	int w, i;

	if (te_strlcpy(buf, text, sizeof(buf)) >= sizeof(buf))
		return -1;
	tok = strtok_r(buf, ",", &save);
	if (!tok || (w = word_index(s->words, tok)) < 0 || text[0] == ',')
		return -1;
	while ((tok = strtok_r(NULL, ",", &save))) {
		int m = word_index(s->mods, tok);

		if (m < 0 || (mask & (1ULL << m)))
			return -1;
		mask |= 1ULL << m;
	}
	if (strstr(text, ",,") || text[strlen(text) - 1] == ',')
		return -1;
	set_word(s, v, w);
	v->num = mask;
	for (i = 0; s->mods[i]; i++)
		if (mask & (1ULL << i))
			te_appendf(v->text, sizeof(v->text), ",%s", s->mods[i]);
	return 0;
}

static int range_parse(const struct te_setting *s, const char *text,
		       struct te_value *v)
{
	char lo[24], hi[24];
	const char *dash = strchr(text, '-');
	uint64_t a, b;
	size_t l;

	if (!dash || (l = (size_t)(dash - text)) >= sizeof(lo) ||
	    strlen(dash + 1) >= sizeof(hi))
		return -1;
	memcpy(lo, text, l);
	lo[l] = '\0';
	te_strlcpy(hi, dash + 1, sizeof(hi));
	if (te_parse_u64(lo, s->hi, &a) < 0 || te_parse_u64(hi, s->hi, &b) < 0 ||
	    a < s->lo || a > b)
		return -1;
	v->set = 1;
	v->num = a;
	v->num2 = b;
	te_snprintf(v->text, sizeof(v->text), "%llu-%llu",
		    (unsigned long long)a, (unsigned long long)b);
	return 0;
}

/* Signals a task may be told to start with ignored. SIGUSR1/SIGUSR2 are
 * refused on purpose: PyTorch Lightning and submitit install their requeue
 * and checkpoint handlers only when the signal is not already ignored. */
static const struct {
	const char *name;
	int num;
} ignorable[] = {
	{ "PIPE", SIGPIPE }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "XFSZ", SIGXFSZ }, { "WINCH", SIGWINCH }, { "URG", SIGURG },
};

static int siglist_parse(const char *text, struct te_value *v, char *err,
			 size_t errlen)
{
	char buf[256], *save = NULL, *tok, q[64];
	uint64_t mask = 0;

	if (te_strlcpy(buf, text, sizeof(buf)) >= sizeof(buf)) {
		te_snprintf(err, errlen, "signal list too long");
		return -1;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const char *n = tok;
		size_t i;
		int found = 0;

		if (strncasecmp(n, "SIG", 3) == 0)
			n += 3;
		for (i = 0; i < sizeof(ignorable) / sizeof(ignorable[0]); i++)
			if (strcasecmp(n, ignorable[i].name) == 0) {
				mask |= 1ULL << ignorable[i].num;
				found = 1;
			}
		if (found)
			continue;
		te_quote(q, sizeof(q), tok);
		if (!strcasecmp(n, "USR1") || !strcasecmp(n, "USR2"))
			te_snprintf(err, errlen, "'%s' may not be ignored: "
				    "PyTorch Lightning and submitit skip their "
				    "requeue and checkpoint handlers when "
				    "SIGUSR1/SIGUSR2 start ignored", q);
		else if (!strcasecmp(n, "HUP"))
			te_snprintf(err, errlen, "'%s': use sighup=ignore", q);
		else
			te_snprintf(err, errlen, "'%s' is not a signal tasks "
				    "may ignore; accepted: none, or a "
				    "comma-separated list of PIPE, TTIN, TTOU, "
				    "XFSZ, WINCH, URG", q);
		return -1;
	}
	if (!mask) {
		te_snprintf(err, errlen, "empty signal list; accepted: none, "
			    "or a comma-separated list of PIPE, TTIN, TTOU, "
			    "XFSZ, WINCH, URG");
		return -1;
	}
	v->set = 1;
	v->word = -1;
	v->num = mask;
	v->text[0] = '\0';
	for (size_t i = 0; i < sizeof(ignorable) / sizeof(ignorable[0]); i++)
		if (mask & (1ULL << ignorable[i].num))
			te_appendf(v->text, sizeof(v->text), "%s%s",
				   v->text[0] ? "," : "", ignorable[i].name);
	return 0;
}

/* pol (may be NULL) only shapes the "accepted:" text of an error, so that a
 * user is told the site's bounds, not the hard limits. */
static int value_parse(int id, const char *text, int from_env,
		       const struct te_policy *pol, struct te_value *v,
		       char *err, size_t errlen)
{
	const struct te_setting *s = &te_settings[id];
	char acc[256];
	size_t len;
	uint64_t n;
	int w;

	memset(v, 0, sizeof(*v));
	v->word = -1;
	te_setting_accepted(id, pol, acc, sizeof(acc));
	if (!text) {
		te_snprintf(err, errlen, "a value is required; accepted: %s",
			    acc);
		return -1;
	}
	len = te_strnlen_cap(text, TE_VALUE_MAX - 1);
	if (len == 0) {
		te_snprintf(err, errlen, "empty value; accepted: %s", acc);
		return -1;
	}
	if (len > TE_VALUE_MAX - 1) {
		te_snprintf(err, errlen, "value longer than %d characters; "
			    "accepted: %s", TE_VALUE_MAX - 1, acc);
		return -1;
	}
	if (!te_is_printable(text, TE_VALUE_MAX)) {
		te_snprintf(err, errlen, "value contains control or non-ASCII "
			    "characters; accepted: %s", acc);
		return -1;
	}

	if (from_env && s->env_words && (w = word_index(s->env_words, text)) >= 0) {
		set_word(s, v, w);
		return 0;
	}
	switch (s->type) {
	case TE_T_ENUM:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		if (s->mods && enum_mods_parse(s, text, v) == 0)
			return 0;
		break;
	case TE_T_BOOL:
		if ((w = bool_parse(text)) >= 0) {
			set_word(s, v, w ? 0 : 1);
			return 0;
		}
		break;
	case TE_T_UINT:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		if (te_parse_u64(text, UINT64_MAX, &n) == 0 && n >= s->lo &&
		    n <= s->hi) {
			v->set = 1;
			v->num = n;
			te_snprintf(v->text, sizeof(v->text), "%llu",
				    (unsigned long long)n);
			return 0;
		}
		break;
	case TE_T_PATH:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		if (text[0] == '/') {
			v->set = 1;
			te_strlcpy(v->text, text, sizeof(v->text));
			return 0;
		}
		break;
	case TE_T_RANGE:
		if (range_parse(s, text, v) == 0)
			return 0;
		break;
	case TE_T_SIGLIST:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		return siglist_parse(text, v, err, errlen);
	}
	{
		char q[96];

		te_quote(q, sizeof(q), text);
		te_snprintf(err, errlen, "invalid value '%s'; accepted: %s", q,
			    acc);
	}
	return -1;
}

int te_value_parse(int id, const char *text, int from_env, struct te_value *v,
		   char *err, size_t errlen)
{
	return value_parse(id, text, from_env, NULL, v, err, errlen);
}

const char *te_value_env_text(int id, const struct te_value *v)
{
	const struct te_setting *s = &te_settings[id];

	if (v->word >= 0 && s->env_words)
		return s->env_words[v->word];
	return v->text;
}

/* Bounds apply to numbers only: a special word ("off") is not a number. */
static int check_bounds(const struct te_policy *pol, int id,
			const struct te_value *v, char *err, size_t errlen)
{
	char acc[256];

	if (!pol || te_settings[id].type != TE_T_UINT || v->word >= 0)
		return 0;
	if ((pol->has_min[id] && v->num < pol->min[id]) ||
	    (pol->has_max[id] && v->num > pol->max[id])) {
		te_setting_accepted(id, pol, acc, sizeof(acc));
		te_snprintf(err, errlen, "%s is %s the site %s; accepted: %s",
			    v->text,
			    pol->has_min[id] && v->num < pol->min[id] ?
				    "below" : "above",
			    pol->has_min[id] && v->num < pol->min[id] ?
				    "minimum" : "maximum",
			    acc);
		return -1;
	}
	return 0;
}

int te_check_user_value(const struct te_policy *pol, int id, const char *text,
			char *err, size_t errlen)
{
	struct te_value v;

	if (value_parse(id, text, 0, pol, &v, err, errlen) < 0)
		return -1;
	return check_bounds(pol, id, &v, err, errlen);
}

/* ---------------------------------------------------------------- policy */

void te_policy_init(struct te_policy *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < TE_S_COUNT; i++)
		p->def[i].word = -1;
}

static void known_keys(char *buf, size_t len)
{
	int i;

	buf[0] = '\0';
	for (i = 0; i < TE_S_COUNT; i++)
		te_appendf(buf, len, "%s, ", te_settings[i].name);
	te_appendf(buf, len, "NAME.min, NAME.max, enforce, conf");
}

static int enforce_list(struct te_policy *p, const char *list,
			const char *where, int echo, char *err, size_t errlen)
{
	char buf[TE_POLICY_LINE_MAX];
	char *save = NULL, *tok;

	if (te_strlcpy(buf, list, sizeof(buf)) >= sizeof(buf)) {
		te_snprintf(err, errlen, "%s: enforce= list too long", where);
		return -1;
	}
	if (!buf[0]) {
		te_snprintf(err, errlen, "%s: enforce= needs a list of "
			    "setting names", where);
		return -1;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int id = te_setting_find(te_trim(tok));

		if (id < 0) {
			char q[64], keys[512];

			known_keys(keys, sizeof(keys));
			if (!echo) {
				te_snprintf(err, errlen, "%s: enforce=: unknown "
					    "setting name; accepted: %s", where,
					    keys);
				return -1;
			}
			te_quote(q, sizeof(q), tok);
			te_snprintf(err, errlen, "%s: enforce=: unknown setting "
				    "'%s'; accepted: %s", where, q, keys);
			return -1;
		}
		p->enforced[id] = 1;
		te_strlcpy(p->enforce_where[id], where,
			   sizeof(p->enforce_where[id]));
	}
	return 0;
}

int te_policy_item(struct te_policy *p, const char *item, const char *where,
		   int allow_conf, char *err, size_t errlen)
{
	char key[128], q[96], msg[TE_ERR_MAX];
	const char *eq = strchr(item, '=');
	const char *val;
	size_t klen;
	int id;
	/* A policy file's text is never repeated in a message: the file may
	 * be one users cannot read (messages reach the job's output). Only
	 * names of known settings and validated values are shown. */
	int echo = allow_conf;

	te_quote(q, sizeof(q), item);
	if (!eq || eq == item) {
		if (!echo)
			te_snprintf(err, errlen, "%s: not key=value", where);
		else
			te_snprintf(err, errlen, "%s: '%s' is not key=value",
				    where, q);
		return -1;
	}
	klen = (size_t)(eq - item);
	if (klen >= sizeof(key)) {
		if (!echo)
			te_snprintf(err, errlen, "%s: key too long", where);
		else
			te_snprintf(err, errlen, "%s: key too long in '%s'",
				    where, q);
		return -1;
	}
	memcpy(key, item, klen);
	key[klen] = '\0';
	te_trim(key);
	val = eq + 1;
	while (*val == ' ' || *val == '\t')
		val++;

	if (strcmp(key, "enforce") == 0)
		return enforce_list(p, val, where, echo, err, errlen);
	if (strcmp(key, "conf") == 0) {
		if (!allow_conf) {
			te_snprintf(err, errlen, "%s: conf= is only accepted "
				    "in plugstack.conf (policy files do not "
				    "nest)", where);
			return -1;
		}
		return te_policy_file(p, val, err, errlen);
	}

	{
		char *dot = strrchr(key, '.');
		int is_min = 0, is_max = 0;

		if (dot && strcmp(dot, ".min") == 0)
			is_min = 1;
		else if (dot && strcmp(dot, ".max") == 0)
			is_max = 1;
		if (is_min || is_max)
			*dot = '\0';
		id = te_setting_find(key);
		if (id < 0) {
			char keys[512], qk[96];

			known_keys(keys, sizeof(keys));
			if (!echo) {
				te_snprintf(err, errlen, "%s: unknown key; "
					    "accepted: %s", where, keys);
				return -1;
			}
			te_quote(qk, sizeof(qk), key);
			te_snprintf(err, errlen, "%s: unknown key '%s%s'; "
				    "accepted: %s", where, qk,
				    is_min ? ".min" : is_max ? ".max" : "",
				    keys);
			return -1;
		}
		if (is_min || is_max) {
			uint64_t n;

			if (te_settings[id].type != TE_T_UINT) {
				te_snprintf(err, errlen, "%s: %s.%s: only "
					    "numeric settings have bounds",
					    where, key, is_min ? "min" : "max");
				return -1;
			}
			if (te_parse_u64(val, te_settings[id].hi, &n) < 0 ||
			    n < te_settings[id].lo) {
				char qv[96] = "", quoted[90];

				if (echo) {
					te_quote(quoted, sizeof(quoted), val);
					te_snprintf(qv, sizeof(qv), " '%s'",
						    quoted);
				}
				te_snprintf(err, errlen, "%s: %s.%s: invalid "
					    "bound%s; accepted: %llu to %llu",
					    where, key, is_min ? "min" : "max", qv,
					    (unsigned long long)te_settings[id].lo,
					    (unsigned long long)te_settings[id].hi);
				return -1;
			}
			if (is_min) {
				p->has_min[id] = 1;
				p->min[id] = n;
				te_strlcpy(p->min_where[id], where,
					   sizeof(p->min_where[id]));
			} else {
				p->has_max[id] = 1;
				p->max[id] = n;
				te_strlcpy(p->max_where[id], where,
					   sizeof(p->max_where[id]));
			}
			return 0;
		}
	}
	if (te_value_parse(id, val, 0, &p->def[id], msg, sizeof(msg)) < 0) {
		if (!echo) {
			te_setting_accepted(id, NULL, msg, sizeof(msg));
			te_snprintf(err, errlen, "%s: %s: invalid value; "
				    "accepted: %s", where, key, msg);
			return -1;
		}
		te_snprintf(err, errlen, "%s: %s: %s", where, key, msg);
		return -1;
	}
	p->def[id].src = TE_SRC_ADMIN;
	te_strlcpy(p->def[id].origin, where, sizeof(p->def[id].origin));
	return 0;
}

int te_policy_args(struct te_policy *p, int ac, char **av, char *err,
		   size_t errlen)
{
	int i;

	for (i = 0; i < ac; i++) {
		char where[64];

		if (!av[i])
			continue;
		te_snprintf(where, sizeof(where), "plugstack.conf argument %d",
			    i + 1);
		if (te_strnlen_cap(av[i], TE_POLICY_LINE_MAX) >
		    TE_POLICY_LINE_MAX) {
			te_snprintf(err, errlen, "%s: longer than %d "
				    "characters", where, TE_POLICY_LINE_MAX);
			return -1;
		}
		if (te_policy_item(p, av[i], where, 1, err, errlen) < 0)
			return -1;
	}
	return te_policy_finish(p, err, errlen);
}

int te_policy_buffer(struct te_policy *p, const char *buf, size_t len,
		     const char *name, char *err, size_t errlen)
{
	char line[TE_POLICY_LINE_MAX + 1];
	size_t pos = 0;
	unsigned lineno = 0;

	while (pos < len) {
		size_t end = pos, ll;
		char where[TE_ORIGIN_MAX], *l, *hash;

		while (end < len && buf[end] != '\n')
			end++;
		ll = end - pos;
		lineno++;
		te_snprintf(where, sizeof(where), "%.*s:%u", 120, name, lineno);
		if (ll > TE_POLICY_LINE_MAX) {
			te_snprintf(err, errlen, "%s: line longer than %d "
				    "characters", where, TE_POLICY_LINE_MAX);
			return -1;
		}
		memcpy(line, buf + pos, ll);
		line[ll] = '\0';
		pos = end + 1;
		if (memchr(buf + (pos - ll - 1), '\0', ll)) {
			te_snprintf(err, errlen, "%s: NUL byte: not a text "
				    "file", where);
			return -1;
		}
		/* '#' starts a comment at the start of a line or after a
		 * blank, so values may still contain '#'. */
		for (hash = line; (hash = strchr(hash, '#')); hash++)
			if (hash == line || hash[-1] == ' ' || hash[-1] == '\t') {
				*hash = '\0';
				break;
			}
		l = te_trim(line);
		if (!*l)
			continue;
		if (!te_is_printable(l, TE_POLICY_LINE_MAX)) {
			te_snprintf(err, errlen, "%s: control or non-ASCII "
				    "characters", where);
			return -1;
		}
		if (te_policy_item(p, l, where, 0, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int te_policy_file(struct te_policy *p, const char *path, char *err,
		   size_t errlen)
{
	struct stat st;
	char *buf = NULL, q[128];
	size_t got = 0;
	int fd, rc = -1;

	te_quote(q, sizeof(q), path);
	if (path[0] != '/') {
		te_snprintf(err, errlen, "conf=%s: the policy file must be an "
			    "absolute path", q);
		return -1;
	}
	/* Not through a link: whoever may change the link would choose
	 * what root reads as the site policy. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
		  O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP) {
		te_snprintf(err, errlen, "conf=%s: is a symbolic link; the "
			    "policy file must be named by its own path", q);
		return -1;
	}
	if (fd < 0) {
		te_snprintf(err, errlen, "conf=%s: cannot open the policy "
			    "file: %s", q, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		te_snprintf(err, errlen, "conf=%s: %s", q, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		te_snprintf(err, errlen, "conf=%s: not a regular file", q);
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		te_snprintf(err, errlen, "conf=%s: owned by uid %u; the policy "
			    "file must be owned by root", q,
			    (unsigned)st.st_uid);
		goto out;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		te_snprintf(err, errlen, "conf=%s: writable by group or "
			    "others (mode %04o); users could change the site "
			    "policy: chmod go-w", q,
			    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_size > TE_POLICY_FILE_MAX) {
		te_snprintf(err, errlen, "conf=%s: %lld bytes, larger than "
			    "the %d byte limit for a policy file", q,
			    (long long)st.st_size, TE_POLICY_FILE_MAX);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		te_snprintf(err, errlen, "conf=%s: out of memory", q);
		goto out;
	}
	while (got <= (size_t)st.st_size) {	/* read one byte past: growth */
		ssize_t n = read(fd, buf + got, (size_t)st.st_size + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			te_snprintf(err, errlen, "conf=%s: read: %s", q,
				    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > (size_t)st.st_size) {
		te_snprintf(err, errlen, "conf=%s: the file grew while being "
			    "read", q);
		goto out;
	}
	p->nfiles++;
	rc = te_policy_buffer(p, buf, got, path, err, errlen);
out:
	free(buf);
	close(fd);
	return rc;
}

int te_policy_finish(struct te_policy *p, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < TE_S_COUNT; i++) {
		const char *name = te_settings[i].name;
		char msg[TE_ERR_MAX];

		if (p->has_min[i] && p->has_max[i] && p->min[i] > p->max[i]) {
			te_snprintf(err, errlen, "%s: %s.min=%llu is greater "
				    "than %s.max=%llu (%s)", p->min_where[i],
				    name, (unsigned long long)p->min[i], name,
				    (unsigned long long)p->max[i],
				    p->max_where[i]);
			return -1;
		}
		if (p->def[i].set &&
		    check_bounds(p, i, &p->def[i], msg, sizeof(msg)) < 0) {
			te_snprintf(err, errlen, "%s: %s=%s: the site default "
				    "is outside the site bounds (%s)",
				    p->def[i].origin, name, p->def[i].text, msg);
			return -1;
		}
		if (p->enforced[i] && !p->def[i].set &&
		    !te_settings[i].builtin) {
			te_snprintf(err, errlen, "%s: enforce=%s needs a value: "
				    "add %s=VALUE", p->enforce_where[i], name,
				    name);
			return -1;
		}
		if (p->enforced[i] && !p->def[i].set) {
			struct te_value *v = &p->def[i];

			if (te_value_parse(i, te_settings[i].builtin, 0, v, msg,
					   sizeof(msg)) < 0) {
				te_snprintf(err, errlen, "%s: built-in %s: %s",
					    p->enforce_where[i], name, msg);
				return -1;
			}
			v->src = TE_SRC_BUILTIN;
			te_strlcpy(v->origin, "built-in", sizeof(v->origin));
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- resolve */

static void add_warning(struct te_config *cfg, const char *msg)
{
	if (cfg->nwarn < TE_WARN_MAX)
		te_strlcpy(cfg->warn[cfg->nwarn++], msg, TE_ERR_MAX);
}

/* 1 when val is what an enclosing trainenv wrote for setting id.
 * TRAINENV_SETTINGS is in the user's hands: a value outside this site's
 * bounds was never trainenv's, whatever it claims, and stays the user's
 * (and is refused as such). */
static int set_by_trainenv(const struct te_policy *pol,
			   const struct te_config *inherited, int id,
			   const char *val)
{
	const struct te_value *iv;
	struct te_value tmp;
	char msg[TE_ERR_MAX];

	if (!inherited)
		return 0;
	iv = &inherited->v[id];
	if (!iv->set || iv->src == TE_SRC_ENV || iv->src == TE_SRC_UNSET)
		return 0;
	if (te_value_parse(id, iv->text, 0, &tmp, msg, sizeof(msg)) < 0 ||
	    check_bounds(pol, id, &tmp, msg, sizeof(msg)) < 0)
		return 0;
	return strcmp(te_value_env_text(id, &tmp), val) == 0;
}

int te_resolve(const struct te_policy *pol, const char *const *user_opt,
	       te_getenv_fn getenv_fn, void *ctx,
	       const struct te_config *inherited, struct te_config *cfg,
	       char *err, size_t errlen)
{
	int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < TE_S_COUNT; i++) {
		const struct te_setting *s = &te_settings[i];
		struct te_value *v = &cfg->v[i];
		const char *opt = user_opt ? user_opt[i] : NULL;
		char optname[64], msg[TE_ERR_MAX];
		int e;

		te_option_name(i, optname, sizeof(optname));
		v->word = -1;

		if (pol->enforced[i]) {
			*v = pol->def[i];
			v->src = TE_SRC_ENFORCED;
			if (opt) {
				struct te_value u;

				if (te_value_parse(i, opt, 0, &u, msg,
						   sizeof(msg)) < 0 ||
				    strcmp(u.text, v->text) != 0) {
					char q[96];

					te_quote(q, sizeof(q), opt);
					te_snprintf(msg, sizeof(msg),
						    "--%s=%s ignored: the site "
						    "enforces %s=%s", optname,
						    q, s->name, v->text);
					add_warning(cfg, msg);
				}
			}
			continue;
		}
		if (opt) {
			if (value_parse(i, opt, 0, pol, v, msg, sizeof(msg)) < 0 ||
			    check_bounds(pol, i, v, msg, sizeof(msg)) < 0) {
				te_snprintf(err, errlen, "--%s: %s", optname,
					    msg);
				return -1;
			}
			v->src = TE_SRC_OPTION;
			te_snprintf(v->origin, sizeof(v->origin), "--%s",
				    optname);
			continue;
		}
		for (e = 0; s->env && s->env[e] && getenv_fn; e++) {
			const char *val = getenv_fn(ctx, s->env[e]);

			if (!val || set_by_trainenv(pol, inherited, i, val))
				continue;
			if (value_parse(i, val, 1, pol, v, msg, sizeof(msg)) < 0 ||
			    check_bounds(pol, i, v, msg, sizeof(msg)) < 0) {
				te_snprintf(err, errlen, "%s in the job "
					    "environment (setting %s): %s",
					    s->env[e], s->name, msg);
				return -1;
			}
			v->src = TE_SRC_ENV;
			te_strlcpy(v->origin, s->env[e], sizeof(v->origin));
			break;
		}
		if (v->set)
			continue;
		if (pol->def[i].set) {
			*v = pol->def[i];
			continue;
		}
		if (s->builtin) {
			if (te_value_parse(i, s->builtin, 0, v, msg,
					   sizeof(msg)) < 0) {
				te_snprintf(err, errlen, "built-in %s: %s",
					    s->name, msg);
				return -1;
			}
			v->src = TE_SRC_BUILTIN;
			te_strlcpy(v->origin, "built-in", sizeof(v->origin));
			continue;
		}
		memset(v, 0, sizeof(*v));
		v->word = -1;
		v->src = TE_SRC_UNSET;
	}
	return 0;
}

/* ---------------------------------------------------------------- report */

const char *te_source_name(enum te_source s)
{
	switch (s) {
	case TE_SRC_UNSET:
		return "not set";
	case TE_SRC_BUILTIN:
		return "built-in";
	case TE_SRC_ADMIN:
		return "admin default";
	case TE_SRC_ENV:
		return "environment";
	case TE_SRC_OPTION:
		return "option";
	case TE_SRC_ENFORCED:
		return "enforced";
	}
	return "?";
}

void te_explain_line(const struct te_config *cfg, int id, char *buf,
		     size_t len)
{
	const struct te_value *v = &cfg->v[id];
	char q[TE_VALUE_MAX + 64], o[TE_ORIGIN_MAX + 8];

	te_quote(q, sizeof(q), v->set ? v->text : "(unset)");
	o[0] = '\0';
	if (v->src == TE_SRC_UNSET)
		te_strlcpy(o, "trainenv leaves it alone", sizeof(o));
	else if (v->src != TE_SRC_BUILTIN && v->origin[0])
		te_quote(o, sizeof(o), v->origin);
	te_snprintf(buf, len, "%-26s = %-12s (%s%s%s)", te_settings[id].name, q,
		    te_source_name(v->src), o[0] ? ": " : "", o);
}

/* Encoded form: space separated "name:source:value:origin" items with the
 * value and origin percent-encoded. */
int te_config_encode(const struct te_config *cfg, char *buf, size_t len)
{
	int i;

	if (!len)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < TE_S_COUNT; i++) {
		const struct te_value *v = &cfg->v[i];
		char val[3 * TE_VALUE_MAX + 1], org[3 * TE_ORIGIN_MAX + 1];

		if (te_pct_encode(val, sizeof(val), v->set ? v->text : "") < 0 ||
		    te_pct_encode(org, sizeof(org), v->origin) < 0)
			return -1;
		if (te_appendf(buf, len, "%s%s:%d:%s:%s", i ? " " : "",
			       te_settings[i].name, (int)v->src, val, org) < 0)
			return -1;
	}
	return 0;
}

/* Splits [s, end) at its first three ':' into four fields. */
static int split4(const char *s, const char *end, const char *f[4],
		  size_t flen[4])
{
	int nf = 0;

	f[0] = s;
	for (const char *c = s; c < end; c++) {
		if (*c != ':')
			continue;
		if (nf == 3)
			return -1;
		flen[nf] = (size_t)(c - f[nf]);
		f[++nf] = c + 1;
	}
	if (nf != 3)
		return -1;
	flen[3] = (size_t)(end - f[3]);
	return 0;
}

int te_config_decode(struct te_config *cfg, const char *s, char *err,
		     size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < TE_S_COUNT; i++)
		cfg->v[i].word = -1;
	if (te_strnlen_cap(s, 256 * 1024) > 256 * 1024) {
		te_snprintf(err, errlen, "%s is too long", TE_SETTINGS_ENV);
		return -1;
	}
	while (*s) {
		const char *end = strchr(s, ' '), *f[4];
		size_t flen[4];
		char name[64], num[8];
		uint64_t src;
		int id;

		if (!end)
			end = s + strlen(s);
		if (split4(s, end, f, flen) < 0 || flen[0] == 0 ||
		    flen[0] >= sizeof(name) || flen[1] == 0 ||
		    flen[1] >= sizeof(num)) {
			te_snprintf(err, errlen, "%s: malformed item",
				    TE_SETTINGS_ENV);
			return -1;
		}
		memcpy(name, f[0], flen[0]);
		name[flen[0]] = '\0';
		memcpy(num, f[1], flen[1]);
		num[flen[1]] = '\0';
		if (te_parse_u64(num, TE_SRC_ENFORCED, &src) < 0) {
			te_snprintf(err, errlen, "%s: bad source in item '%s'",
				    TE_SETTINGS_ENV, name);
			return -1;
		}
		id = te_setting_find(name);
		if (id >= 0) {	/* unknown names: from a newer trainenv */
			struct te_value *v = &cfg->v[id];

			if (te_pct_decode(v->text, sizeof(v->text), f[2],
					  flen[2]) < 0 ||
			    te_pct_decode(v->origin, sizeof(v->origin), f[3],
					  flen[3]) < 0) {
				te_snprintf(err, errlen, "%s: bad encoding in "
					    "item '%s'", TE_SETTINGS_ENV, name);
				return -1;
			}
			v->src = (enum te_source)src;
			v->set = v->src != TE_SRC_UNSET;
		}
		s = *end ? end + 1 : end;
	}
	return 0;
}

int te_inherited_config(te_getenv_fn getenv_fn, void *ctx,
			struct te_config *out)
{
	const char *s = getenv_fn(ctx, TE_SETTINGS_ENV);
	char err[TE_ERR_MAX];

	if (!s || te_config_decode(out, s, err, sizeof(err)) < 0)
		return -1;
	return 0;
}
