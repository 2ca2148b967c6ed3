/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health (issue 34): a check's result, the network checks over a
 * sysfs tree, the site's and the user's choice of checks and thresholds,
 * and the runner that gives each check a child process and a bound. */
#ifndef TE_HEALTH_H
#define TE_HEALTH_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "util/textbuf.h"

/* ---------------------------------------------------------------- results */

enum te_health_verdict {
	TE_HV_PASS,
	TE_HV_FAIL,
	TE_HV_NA,    /* the check does not apply to this node: passes */
	TE_HV_ERROR, /* the check could not decide (its process could not
		      * start, gave no answer in time, or no valid one):
		      * not a pass, but no proof against the hardware
		      * either, so it never drains (a user who exhausts
		      * pids, fds or memory must not drain a node) */
};

#define TE_HEALTH_NAME_MAX 16
#define TE_HEALTH_NODE_MAX 64
#define TE_HEALTH_DEV_MAX 64
#define TE_HEALTH_VALUE_MAX 64
#define TE_HEALTH_TEXT_MAX 200

/* One line of a check's verdict: "ib", "n3", "mlx5_0 port 1", "DOWN",
 * fail, "ib mlx5_0 port 1 state DOWN (want ACTIVE)". Every field is
 * printable ASCII (anything else read from the node became '?'). */
struct te_health_result {
	char check[TE_HEALTH_NAME_MAX];
	char node[TE_HEALTH_NODE_MAX];
	char device[TE_HEALTH_DEV_MAX];
	char value[TE_HEALTH_VALUE_MAX];
	enum te_health_verdict verdict;
	char text[TE_HEALTH_TEXT_MAX];
};

/* A node's results. A check that finds more than fits (hundreds of
 * ports) is cut, but what was cut still counts: a cut failure fails. */
#define TE_HEALTH_RESULTS_MAX 64
struct te_health_set {
	char node[TE_HEALTH_NODE_MAX];
	int n;
	int cut;       /* results past the cap */
	int cut_fail;  /* ... of which failed */
	int cut_error; /* ... of which could not decide */
	struct te_health_result r[TE_HEALTH_RESULTS_MAX];
};

/* An empty set for node (cleaned, cut to fit). */
void te_health_set_init(struct te_health_set *s, const char *node);

/* Adds a result; text is a printf format. Each field is cleaned and cut
 * to its size. Past TE_HEALTH_RESULTS_MAX it only counts (cut). */
__attribute__((format(printf, 6, 7))) void
te_health_add(struct te_health_set *s, const char *check, const char *device,
	      const char *value, enum te_health_verdict v, const char *fmt,
	      ...);

/* 1 when no result (listed or cut) failed or erred, else 0. */
int te_health_set_ok(const struct te_health_set *s);
/* The number of failed or erred results, cut ones included. */
int te_health_set_failed(const struct te_health_set *s);

/* "pass", "fail", "n/a", "error". */
const char *te_health_verdict_name(enum te_health_verdict v);

/* The reason a drain would carry: "trainenv: " and the result's text. */
void te_health_reason(const struct te_health_result *r, char *buf, size_t len);

/* The table `trainenv health` prints: one line per result, "NODE CHECK
 * VERDICT TEXT" in columns, and a line for results that were cut. */
void te_health_table(const struct te_health_set *s, struct te_buf *b);
/* The same as one JSON object: {"node":..,"ok":..,"failed":..,
 * "cut":..,"results":[{"check","node","device","value","verdict",
 * "text"}...]}. -1 when b was too small (b is then marked cut). */
int te_health_json(const struct te_health_set *s, struct te_buf *b);

/* ---------------------------------------------------------------- checks */

/* What the sysfs values read as: 0 with the value, or -1 (junk). A port's
 * "state" and "phys_state" are "N: WORD\n" (WORD into word); "rate" is
 * "R Gb/sec (...)\n", R decimal with at most one fraction digit, given
 * in tenths of Gb/s; an interface's "speed" is Mb/s, -1 (unknown) or
 * missing when the link is down. */
int te_health_parse_state(const char *text, char *word, size_t len);
int te_health_parse_rate(const char *text, unsigned long *tenths);
int te_health_parse_speed(const char *text, long *mbps);

/* The InfiniBand/RoCE ports under ROOT/class/infiniband/DEV/ports/N: one
 * result per port (state ACTIVE, phys_state LinkUp, rate at least
 * min_gbps; 0: any); no device: one n/a result. root is the sysfs root
 * ("/sys"; a test's stand-in tree). Every file is read bounded, as a
 * regular file, and junk is a failure that says what was read. */
void te_health_check_ib(const char *root, unsigned min_gbps,
			struct te_health_set *out);

/* An InfiniBand/RoCE port the site lists (health_ib_ports). */
#define TE_HEALTH_IB_PORTS_MAX 16
struct te_health_ib_port {
	char dev[32];
	unsigned port;
};
/* As te_health_check_ib, but only the ports listed (n > 0): a port the
 * node does not have fails; the others (an unused second RoCE port) are
 * not read. n 0: every port, as te_health_check_ib. */
void te_health_check_ib_ports(const char *root, unsigned min_gbps,
			      const struct te_health_ib_port *ports, int n,
			      struct te_health_set *out);

/* An Ethernet interface the site lists, and its least speed (0: any). */
#define TE_HEALTH_IFNAME_MAX 16
struct te_health_eth_if {
	char name[TE_HEALTH_IFNAME_MAX];
	unsigned long min_mbps;
};
/* ROOT/class/net/IF/{operstate,speed} of each listed interface: one
 * result each (up, speed at least its least); none listed: n/a. */
void te_health_check_eth(const char *root, const struct te_health_eth_if *ifs,
			 int n, struct te_health_set *out);

/* What NVML said of one GPU, as the loader (pmix/nvml_load.c) read it:
 * each *_rc is NVML's return code of that query (0 success; 3, not
 * supported, leaves the item out). Plain numbers, so that the verdicts
 * are pure and tested without a GPU. */
#define TE_NVML_SUCCESS 0
#define TE_NVML_NOT_SUPPORTED 3
#define TE_NVML_INSUFFICIENT_SIZE 7
#define TE_HEALTH_GPU_PROCS_MAX 32
struct te_health_gpu_proc {
	unsigned pid;
	unsigned long long mem_bytes;
	long uid;      /* -1: unknown (no /proc entry) */
	char comm[16]; /* its name, cleaned */
	int mps;       /* te_health_proc_is_mps: the MPS server's binary */
};
struct te_health_gpu {
	unsigned index; /* NVML's */
	int handle_rc;	/* getting its handle */
	int ecc_rc;
	unsigned long long ecc_uncorrected; /* volatile */
	int retired_rc;
	int retired_pending;
	int remap_rc;
	unsigned remap_uncorrectable, remap_pending, remap_failed;
	int procs_rc; /* TE_NVML_INSUFFICIENT_SIZE: more than fit */
	int n_procs;
	struct te_health_gpu_proc procs[TE_HEALTH_GPU_PROCS_MAX];
	/* NVLink, read only when the site wants links up (links_want,
	 * health_nvlink; 0: not checked): links_rc is the first failing
	 * nvmlDeviceGetNvLinkState's code other than "not supported" or
	 * "invalid argument" (no such link); n_links_seen the links the
	 * GPU has, n_links_up those active, links_down a bit per link
	 * that is there but not active */
	unsigned links_want;
	int links_rc;
	unsigned n_links_seen, n_links_up;
	unsigned long links_down;
};
#define TE_NVML_INVALID_ARGUMENT 2
#define TE_HEALTH_NVLINK_MAX 18 /* NVML_NVLINK_MAX_LINKS */

/* NVML's return code in words ("not supported", "GPU is lost", ...). */
const char *te_health_nvml_rc_text(int rc);

/* One result per GPU of g[0..n) ("gpu 3 remapped rows pending", "gpu 3
 * memory held by pid 812 (uid 1001, python3, 2048 MiB), not of this
 * job"); a GPU the job has that NVML does not show (index >= visible)
 * fails as not found. A process is the job's when its uid is
 * allowed_uid; the MPS server is never foreign: mps set (its binary, not
 * its name, which any process may choose) and run by root or by
 * allowed_uid. allowed_uid TE_HEALTH_NO_JOB: no job was named (root's
 * HealthCheckProgram run), so every process may be a job's: processes
 * are not checked, and each GPU's line says so. */
#define TE_HEALTH_NO_JOB (-2L)
void te_health_gpu_results(const struct te_health_gpu *g, int n,
			   unsigned visible, long allowed_uid,
			   struct te_health_set *out);

/* The owner and name of process pid from PROC/PID/{status,comm} (PROC
 * is "/proc", or a test's tree): 0, or -1 (uid -1, comm "?"). */
int te_health_proc_owner(const char *proc, unsigned pid, long *uid, char *comm,
			 size_t len);
/* 1 when PROC/PID/exe is the MPS server: a link to a file named
 * nvidia-cuda-mps-server that is a regular file owned by root and not
 * writable by group or others; else 0 (a process's comm is its own
 * choice and proves nothing). */
int te_health_proc_is_mps(const char *proc, unsigned pid);

/* ---------------------------------------------------------------- hook */

/* The site's hook (health_hook=PATH): a command the admin wrote, run as
 * the caller (root in the prolog and in `trainenv health`) with no
 * argument, stdin /dev/null, stdout and stderr into one pipe, and only
 * PATH=/usr/sbin:/usr/bin:/sbin:/bin in its environment, inside the
 * check's child (its process group: killed with it at the bound). Exit
 * 0 passes; any other status fails with its first line as the reason. */
#define TE_HEALTH_HOOK_OUT_MAX 4096 /* bytes of its output read */
#define TE_HEALTH_HOOK_ENV_PATH "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

/* 1 when path may name a hook: absolute, printable ASCII without
 * blanks, no ".." component, shorter than TE_HEALTH_HOOK_PATH_MAX. */
int te_health_hook_path_ok(const char *path);

/* The first line of output out[0..len) that is not blank into line:
 * up to its '\n', a trailing '\r' dropped, blanks trimmed, each byte
 * that is not printable ASCII (a NUL included) made '?', cut to fit
 * size. Its length (0: no such line). Any bytes, any len. */
size_t te_health_hook_first_line(const char *out, size_t len, char *line,
				 size_t size);

/* The hook's one result (check "hook", device the path, value "exit N"
 * or "signal N") into out: exec_err, the errno its exec failed with,
 * an error; exit 0 a pass ("hook: PATH: LINE", or "hook: PATH passed");
 * another exit status a failure whose text is "hook: PATH: LINE" (LINE
 * te_health_hook_first_line's), or "hook: PATH exited with status N"
 * when it said nothing; killed by a signal: an error (it could not
 * decide). status is waitpid's. */
void te_health_hook_result(const char *path, int exec_err, int status,
			   const char *output, size_t len,
			   struct te_health_set *out);

/* Runs the hook path (health_hook_run.c) and adds its result: "": n/a
 * (no hook set); a path that is not a regular, executable file owned by
 * root that group and others may not write, in a directory alike: an
 * error saying which, not run. Waits for it without a bound of its own:
 * call it in a te_health_run check, whose bound kills the hook and what
 * it started (they stay in the check's process group). */
void te_health_check_hook(const char *path, struct te_health_set *out);

/* ---------------------------------------------------------------- policy */

enum te_health_check_id {
	TE_HC_IB,
	TE_HC_ETH,
	TE_HC_GPU,
	TE_HC_HOOK, /* the site's command (health_hook) */
	TE_HC_COUNT
};
/* Least to most severe: a failure is reported (warn), the node is left
 * out of this job (exclude), or drained for every job (drain). */
enum te_health_action {
	TE_HA_WARN,
	TE_HA_EXCLUDE,
	TE_HA_DRAIN
};

#define TE_HEALTH_ETH_MAX 8
#define TE_HEALTH_IB_RATE_MAX 100000	 /* Gb/s */
#define TE_HEALTH_ETH_SPEED_MAX 10000000 /* Mb/s */
#define TE_HEALTH_TIMEOUT_MAX 300	 /* s */
#define TE_HEALTH_TIMEOUT_DEFAULT 10	 /* s */

/* The keys given, one bit each (which a merge compares). */
enum te_health_key {
	TE_HK_CHECKS = 1u << 0,
	TE_HK_IB_RATE = 1u << 1,
	TE_HK_ETH = 1u << 2,
	TE_HK_STORAGE = 1u << 3, /* health_storage.h */
	TE_HK_STORAGE_FRACTION = 1u << 4,
	TE_HK_STORAGE_ACTION = 1u << 5,
	TE_HK_TIMEOUT = 1u << 6,
	TE_HK_USER_WEAKER = 1u << 7,
	TE_HK_NVML = 1u << 8,
	TE_HK_IB_PORTS = 1u << 9,
	TE_HK_GPU_COUNT = 1u << 10,
	TE_HK_NVLINK = 1u << 11,
	TE_HK_XID = 1u << 12,
	TE_HK_XID_FAIL = 1u << 13,
	TE_HK_STORAGE_DELAY = 1u << 14,
	TE_HK_HOOK = 1u << 15,
	/* TE_HK_ACTION_IB << TE_HC_...: one bit per check's action, room
	 * for 8 checks (bits 3 to 5 held them while there were 3) */
	TE_HK_ACTION_IB = 1u << 16,
};

#define TE_HEALTH_NVML_PATH_MAX 256
#define TE_XID_FAIL_MAX 32
#define TE_HEALTH_HOOK_PATH_MAX 256

struct te_health_policy {
	unsigned checks;      /* 1u << TE_HC_... */
	unsigned ib_min_gbps; /* 0: any rate */
	int n_eth;
	struct te_health_eth_if eth[TE_HEALTH_ETH_MAX];
	enum te_health_action action[TE_HC_COUNT];
	unsigned timeout_s;  /* each check's bound */
	int user_may_weaken; /* site only: health_user_weaker=yes */
	/* site only: health_nvml=PATH, NVML's library ("": the system's,
	 * from fixed directories; never LD_LIBRARY_PATH) */
	char nvml[TE_HEALTH_NVML_PATH_MAX];
	/* site only: health_gpu_count=N, the GPUs the node has (0: not
	 * said): fewer, or no NVML or driver, fails */
	unsigned gpu_count;
	/* site only: health_nvlink=N, the NVLink links per GPU that must
	 * be up (0: not checked) */
	unsigned nvlink;
	/* site only: health_xid=on, the gpu check counts the XIDs the
	 * kernel logged since the node's previous check; health_xid_fail=
	 * LIST, the XIDs that fail (not given: TE_XID_FAIL_DEFAULT) */
	int xid;
	int n_xid_fail;
	unsigned xid_fail[TE_XID_FAIL_MAX];
	/* site only: health_ib_ports=DEV:PORT,... (0: every port) */
	int n_ib_ports;
	struct te_health_ib_port ib_ports[TE_HEALTH_IB_PORTS_MAX];
	/* site only: health_hook=PATH, the site's command (absolute, no
	 * ".."; "": none); giving it adds "hook" to the checks */
	char hook[TE_HEALTH_HOOK_PATH_MAX];
	/* health_storage=SIZE (0: off), health_storage_fraction (in
	 * thousandths), health_storage_action (warn or exclude) and the
	 * tests' health_test_storage_delay=NODE:MS (health_storage.h) */
	uint64_t storage_bytes;
	unsigned storage_permille;
	enum te_health_action storage_action;
	char storage_delay_node[64];
	unsigned storage_delay_ms;
	unsigned given; /* enum te_health_key bits */
};

/* No check, any rate, no interface, every action warn, the default
 * bound, users may not weaken. */
void te_health_policy_init(struct te_health_policy *p);

/* The parsers' one error line, "WHERE: KEY: invalid value 'VAL';
 * accepted: ACC" (VAL quoted printable); returns -1. */
int te_health_bad_value(const char *where, const char *key, const char *val,
			const char *acc, char *err, size_t errlen);

/* One KEY=VALUE: 1 when key is a health key (applied), 0 when it is not
 * one (nothing changed: another parser's), -1 with err naming where, the
 * key and what is accepted. Keys: health=LIST (ib, eth, gpu, hook; or
 * none), health_ib_rate=GBPS, health_eth=IF[:MBPS][,IF[:MBPS]...] (or
 * none), health_ib_action, health_eth_action, health_gpu_action,
 * health_hook_action = drain | exclude | warn, health_timeout=S,
 * health_user_weaker=yes|no, health_nvml=PATH (absolute, no "..": the
 * site's NVML library), health_ib_ports=DEV:PORT[,DEV:PORT...] (the
 * ports ib checks; none: every port), health_gpu_count=N (0 to 1024:
 * the node's GPUs), health_hook=PATH|none (te_health_hook_path_ok: the
 * site's hook; a path puts "hook" in the checks, whatever health= says
 * before or after it, none takes it out). */
int te_health_policy_set(struct te_health_policy *p, const char *key,
			 const char *val, const char *where, char *err,
			 size_t errlen);

/* Items "KEY=VALUE" separated by blanks or newlines ('#' starts a
 * comment to the line's end), every key a health key; at most len bytes
 * of text. 0, or -1 with err (the first bad item). */
int te_health_policy_parse(struct te_health_policy *p, const char *text,
			   size_t len, const char *where, char *err,
			   size_t errlen);

/* The policy a job runs with: the site's, made stricter by the user's
 * (checks added, thresholds raised, interfaces added, actions raised up
 * to exclude: only the site drains). A user's key that would weaken a
 * site's choice is refused (-1, err naming the key, the site's value
 * and what the user may give) unless the site allows it
 * (health_user_weaker=yes); health_timeout, health_user_weaker,
 * health_nvml, health_ib_ports, health_gpu_count and health_hook are
 * the site's alone. */
int te_health_policy_merge(const struct te_health_policy *site,
			   const struct te_health_policy *user,
			   struct te_health_policy *out, char *err,
			   size_t errlen);

/* What a failed result does under a job's policy: merged's action for
 * its check, but `drain` only when the result fails under the SITE's own
 * checks and thresholds too (site: the site's policy the merge started
 * from; merged: te_health_policy_merge's). A result that fails only the
 * user's stricter thresholds (an ib rate "R Gb/s" or eth speed "S Mb/s"
 * value at or above the site's least), or comes from a check or an
 * interface only the user added, is capped at `exclude`: a user's
 * options never drain a node. The hook is a site check: its failure
 * drains only when the site runs it (health_hook) with
 * health_hook_action=drain. A state, junk or any other failure of a
 * site's check keeps merged's action. An error (TE_HV_ERROR: the check
 * could not decide) is capped at `exclude` too. Not a failure, or an unknown
 * check: TE_HA_WARN (nothing to do). Pure: the drain code calls it for
 * each failed result and drains only on TE_HA_DRAIN. */
enum te_health_action
te_health_action_for(const struct te_health_result *r,
		     const struct te_health_policy *site,
		     const struct te_health_policy *merged);

/* "ib", "eth", "gpu", "hook"; "drain", "exclude", "warn". */
const char *te_health_check_name(enum te_health_check_id id);
const char *te_health_action_name(enum te_health_action a);

/* ---------------------------------------------------------------- runner */

/* A check: fills out (whose node is set) with its results. It runs in a
 * child process, so it may hang or crash without harm. */
typedef void (*te_health_check_fn)(const void *arg, struct te_health_set *out);
struct te_health_check {
	const char *name; /* the results' check name */
	te_health_check_fn fn;
	const void *arg;
	/* NULL, or a lock file its child holds (flock) for its whole life:
	 * a child stuck in the kernel (a wedged GPU) keeps holding it, and
	 * a later run's child waits for it at most 4/5 of the bound, then
	 * fails with one line naming the holder's pid without running the
	 * check, so stuck checks never pile up. */
	const char *lock;
};

/* Runs every check at once, each in a child process (its own process
 * group, dying with the caller), and collects their results into out
 * (whose node names them). A check that has not answered at bound_ms is
 * killed (SIGKILL to its group) and abandoned: the caller never waits
 * past the bound, not even for the child's exit (a process stuck in the
 * kernel, as a hung NVML call is, cannot be reaped until it leaves it);
 * te_health_reap() collects such children later. A check that dies,
 * writes junk or gives no result fails with one line saying so. 0, or
 * -1 with err when no child could be started at all. Single-threaded
 * callers only: the children run fn after fork without exec (it may
 * malloc, opendir, dlopen), and a lock another thread held at the fork
 * would stay held in the child. */
int te_health_run(const struct te_health_check *checks, int n, int bound_ms,
		  struct te_health_set *out, char *err, size_t errlen);
/* Reaps, without waiting, the children te_health_run abandoned; the
 * number still not reaped. */
int te_health_reap(void);

/* The runner's wire between a check's child and its parent: the set as
 * text ("TEHEALTH1", one line per result, "END"), and back. Decoding
 * treats the text as hostile: each result must name check; the node is
 * out's, never the text's. 0, or -1 with err. At most
 * TE_HEALTH_WIRE_MAX bytes. */
#define TE_HEALTH_WIRE_MAX (TE_HEALTH_RESULTS_MAX * 2048)
int te_health_wire_encode(const struct te_health_set *s, char *buf, size_t len);
int te_health_wire_decode(const char *buf, size_t len, const char *check,
			  struct te_health_set *out, char *err, size_t errlen);

/* ---------------------------------------------------------------- drain */

/* Whether a node that failed a check drains itself, and the guards: the
 * site's switch (health_drain=on|off), and a cap on the nodes trainenv
 * drained cluster-wide within an interval (health_drain_max=N, or N% of
 * the nodes, per health_drain_interval=S), so that a bad driver rollout
 * cannot drain the cluster. Site keys only: a user's options never reach
 * them. Pure; the Slurm calls are the caller's (pmix/tool_health_drain.c). */
#define TE_DRAIN_MAX_MAX 100000
#define TE_DRAIN_INTERVAL_MAX (7 * 86400)
#define TE_DRAIN_INTERVAL_DEFAULT 3600
#define TE_DRAIN_MAX_PCT_DEFAULT 10
/* trainenv's bound on its reasons (Slurm stores longer ones; sinfo and
 * scontrol show these whole): "trainenv: " and the failing line, cut. */
#define TE_DRAIN_REASON_MAX 128
#define TE_DRAIN_PREFIX "trainenv:"

struct te_drain_policy {
	int on;		     /* health_drain=on (the default) */
	unsigned max;	     /* nodes per interval; 0: none */
	int max_is_pct;	     /* max is a percentage of the nodes */
	unsigned interval_s; /* health_drain_interval */
};

/* on, 10% of the nodes (at least 1) per 3600 s. */
void te_drain_policy_init(struct te_drain_policy *p);

/* One KEY=VALUE as te_health_policy_set: 1 (a drain key, applied), 0
 * (not one), -1 with err. health_drain=on|off, health_drain_max=N (0 to
 * 100000) or N% (1 to 100), health_drain_interval=S (1 to 604800). */
int te_drain_policy_set(struct te_drain_policy *p, const char *key,
			const char *val, const char *where, char *err,
			size_t errlen);

/* The reason a drain gives: "trainenv: " and line, printable ASCII only
 * (anything else '?'), cut to TE_DRAIN_REASON_MAX - 1 bytes and to len. */
void te_drain_reason(const char *line, char *out, size_t len);

/* A node as the controller lists it (sinfo -N -o '%N %n %T %H %E'):
 * its Slurm name, host name, state ("idle", "drained", "down*"...),
 * the reason's time (-1: none) and the reason ("" when sinfo says
 * "none"). */
#define TE_DRAIN_STATE_MAX 32
struct te_drain_node {
	char name[TE_HEALTH_NODE_MAX];
	char host[TE_HEALTH_NODE_MAX];
	char state[TE_DRAIN_STATE_MAX];
	long long reason_time;
	char reason[TE_DRAIN_REASON_MAX * 2];
};

/* Slurm's "YYYY-MM-DDTHH:MM:SS" (local time) as seconds since the epoch;
 * "Unknown" or "None": -1. 0, or -1 (junk). */
int te_drain_parse_time(const char *text, long long *t);

/* One line of that sinfo output into n: 0, or -1 (junk: fewer fields, a
 * field too long, a time that is not one). The reason is the rest of
 * the line, control bytes made '?'. */
int te_drain_parse_node(const char *line, struct te_drain_node *n);

/* The controller's nodes from that sinfo output (one line per node and
 * partition: duplicates dropped), at most max: their number, or -1 when
 * a line is junk (err says which). */
int te_drain_parse_nodes(const char *text, struct te_drain_node *nodes, int max,
			 char *err, size_t errlen);

enum te_drain_decision {
	TE_DRAIN_DO,	  /* drain it */
	TE_DRAIN_OFF,	  /* health_drain=off: warn only */
	TE_DRAIN_FOREIGN, /* drained/down/failing, another's reason: kept */
	TE_DRAIN_OURS,	  /* already drained by trainenv */
	TE_DRAIN_CAP,	  /* the cap is reached: warn only */
	TE_DRAIN_UNKNOWN, /* the controller does not list this node */
};

/* Whether node self (its Slurm name or host name), which failed a check,
 * drains, given the controller's nodes and the time now; why gets one
 * line saying what and why (naming the cap when it holds). Never a
 * resume: the only action is a drain. A node counts against the cap
 * when its reason starts "trainenv:" and was set within the interval. */
enum te_drain_decision te_drain_decide(const struct te_drain_policy *p,
				       const char *self,
				       const struct te_drain_node *nodes, int n,
				       long long now, const char *reason,
				       char *why, size_t len);
/* After self drained itself: 1 when it keeps its drain, 0 when it must
 * undo it. Nodes that failed at once (a job's prolog on every node, a
 * bad driver rollout) each read the list before the others' drains and
 * would each drain past the cap: each reads it again after its own, and
 * only the first cap of trainenv's recent drains, by reason time then
 * name (an order every node sees alike), keep theirs. */
int te_drain_keep(const struct te_drain_policy *p, const char *self,
		  const struct te_drain_node *nodes, int n, long long now);
/* The Slurm name of self among nodes (matched by name, then host name);
 * NULL when none. */
const struct te_drain_node *te_drain_find(const struct te_drain_node *nodes,
					  int n, const char *self);

/* ---------------------------------------------------------------- xid */

/* The gpu check's site keys beyond the count (health_xid.c): 1 when key
 * is one of health_nvlink=N (0 to 18), health_xid=on|off, health_xid_fail
 * =LIST|none|default (XIDs 1 to 65535, at most 32), applied; 0 when not
 * one; -1 with err. */
int te_health_gpu_key_set(struct te_health_policy *p, const char *key,
			  const char *val, const char *where, char *err,
			  size_t errlen);
/* -1 with err naming the key when a user's policy gives one of them
 * (they are the site's alone), else 0. */
int te_health_gpu_keys_user(const struct te_health_policy *user, char *err,
			    size_t errlen);

/* XIDs that fail when the site names none: hardware (double-bit ECC 48,
 * the GPU's micro-controller 61 and 62, row remapping or page retirement
 * 63 and 64, NVLink 74, fallen off the bus 79, ECC 92, 94 and 95, the GSP
 * 119 and 120). Others (13, 31, 43, 45: most often the application's
 * own fault) pass with a note. */
#define TE_XID_FAIL_DEFAULT "48,61,62,63,64,74,79,92,94,95,119,120"
/* 1 when xid fails under p (its health_xid_fail, else the default). */
int te_health_xid_fails(const struct te_health_policy *p, unsigned xid);

/* One record of the kernel's log as /dev/kmsg gives it: "PRI,SEQ,TS,
 * FLAGS[,...];MESSAGE\n" and continuation lines (" KEY=VALUE\n"). msg
 * points into the record: the message's first line, msg_len bytes. 0,
 * or -1 (junk). Any bytes, any len. */
#define TE_KMSG_RECORD_MAX 8192
struct te_kmsg_rec {
	unsigned long long seq;
	unsigned prio; /* facility << 3 | level; the kernel's: facility 0 */
	const char *msg;
	size_t msg_len;
};
int te_kmsg_parse(const char *rec, size_t len, struct te_kmsg_rec *out);

/* An XID line of the NVIDIA driver, "NVRM: Xid (PCI:0000:3b:00): 79,
 * pid=..., GPU has fallen off the bus." (the "PCI:" may be missing): 1
 * with ev, 0 when msg is not one. The rest of the line (a process's
 * name, the user's choice) is not kept. */
struct te_xid_event {
	unsigned xid;
	unsigned domain, bus, dev;
};
int te_xid_parse(const char *msg, size_t len, struct te_xid_event *ev);

/* The XIDs of each device, as counted. */
#define TE_XID_DEVS_MAX 32
#define TE_XID_CODES_MAX 12
struct te_xid_dev {
	unsigned domain, bus, dev;
	unsigned count; /* XIDs logged */
	int n_codes;	/* distinct XIDs, in the order first seen */
	int codes_cut;	/* more distinct XIDs than fit */
	unsigned codes[TE_XID_CODES_MAX];
};
struct te_xid_tally {
	int n;
	unsigned cut; /* XIDs of devices past TE_XID_DEVS_MAX */
	struct te_xid_dev dev[TE_XID_DEVS_MAX];
};

/* A read of the kernel's log against the node's watermark: the last
 * record's sequence number the previous check saw, and the boot it saw
 * it in ("TEXID1 BOOT_ID SEQ\n", te_xid_mark_text). XIDs of records
 * past the mark count; with no mark, a junk one, another boot's, or a
 * log whose records all lie before the mark (it restarted), every XID
 * since boot counts. */
#define TE_XID_BOOT_MAX 40
#define TE_XID_MARK_MAX 96
#define TE_XID_RECORDS_MAX 262144 /* read per check at most */
#define TE_XID_READ_MS 500	  /* ... and for at most this long */
struct te_xid_scan {
	char boot[TE_XID_BOOT_MAX]; /* this boot's id */
	int mark;		    /* 1: a mark of this boot was read */
	char mark_why[48];	    /* else why not: "no earlier check" */
	unsigned long long mark_seq;
	int any; /* a record was read */
	unsigned long long first_seq, last_seq;
	unsigned records, junk;
	unsigned long long lost; /* overwritten before they were read */
	int bounded;		 /* stopped at the bound: not read to its end */
	struct te_xid_tally since_mark, since_boot;
	char err[160]; /* not "": the log or the mark could not be had */
};

/* An empty scan for this boot with the mark's text (NULL: no mark). */
void te_xid_scan_init(struct te_xid_scan *s, const char *boot, const char *mark,
		      size_t len);
/* One record of the log into s; junk is counted, not kept. */
void te_xid_scan_record(struct te_xid_scan *s, const char *rec, size_t len);
/* The tally that counts: since the mark, or since boot (and why). */
const struct te_xid_tally *te_xid_scan_tally(const struct te_xid_scan *s,
					     const char **since);
/* The next mark: this boot and the last record read (none read: the
 * old mark's, or 0). */
void te_xid_mark_text(const struct te_xid_scan *s, char *buf, size_t len);

/* A GPU's PCI address as NVML gives it (nvmlDeviceGetPciInfo). */
struct te_health_gpu_pci {
	unsigned index, domain, bus, dev;
};
/* The XID results (check "gpu") into out: s->err, one error; no XID,
 * one pass naming the records read; else one result per device, named
 * "gpu N" when a GPU of gpus[0..n) is at its PCI address, else
 * "PCI:DDDD:BB:DD": a failure when one of its XIDs fails under p, else
 * a pass with the XIDs as a note. */
void te_xid_results(const struct te_xid_scan *s,
		    const struct te_health_gpu_pci *gpus, int n,
		    const struct te_health_policy *p,
		    struct te_health_set *out);

/* The I/O (health_xid_io.c), run as root in the gpu check's child.
 * te_xid_read: this boot's id (/proc/sys/kernel/random/boot_id), the
 * mark DIR/health-xid.seq (dir: "/run/trainenv" or the tool's
 * --state-dir; made 0755 when missing; the dir and the file must be
 * root's or the caller's, not writable by group or others, and not
 * links: else s->err and nothing read), then the log kmsg ("/dev/kmsg",
 * read without blocking until its end; or the tool's --kmsg, a regular
 * file of records in its format, one per line), at most
 * TE_XID_RECORDS_MAX records and TE_XID_READ_MS ms (about 2 us a
 * record: a large log_buf_len's log in well under the bound); a log not
 * read to its end is an error result (later XIDs are not seen).
 * te_xid_commit: the new mark, written to a temporary file in dir and
 * renamed over the old; 0, or -1 with err. */
#define TE_XID_KMSG "/dev/kmsg"
#define TE_XID_STATE_DIR "/run/trainenv"
#define TE_XID_MARK_FILE "health-xid.seq"
void te_xid_read(const char *kmsg, const char *dir, struct te_xid_scan *s);
int te_xid_commit(const char *dir, const struct te_xid_scan *s, char *err,
		  size_t errlen);

#endif
