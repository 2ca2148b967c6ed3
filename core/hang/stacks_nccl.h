/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL's view in the hang report (issue 36 item 3), wired: what a node's
 * collector finds out from PyTorch's flight recorder and NCCL RAS, the
 * records it sends the merger beside the stacks, and the report's lines
 * and JSON fields (core/hang/stacks_nccl.c, pure), and the flight
 * recorder's dumps asked for and read on one node (core/hang/stacks_fr.c).
 *
 * The records (one line each, fields percent-encoded, "-" for ""), sent
 * by a node before its stacks' records and tagged as they are:
 *   TE-STACK1 fr rank=R nccl=0|1 has=0|1 status=ok|missing|refused|empty
 *     version=V over=N why=TEXT
 *   TE-STACK1 frpos rank=R group=G desc=D op=O seq=S state=STATE
 *   TE-STACK1 ras outcome=OUTCOME text=LINE
 *   TE-STACK1 frleft ranks=N
 * nccl: the rank's process maps libnccl (looked for only when has is 0:
 * has alone shows NCCL's view); has: its environment asks PyTorch for a
 * flight recorder and its pipe. frpos lines follow their rank's fr line.
 * ras lines come from one node only (the first of the collecting step),
 * te_ras_format's lines as they are. A node's fr and frpos records take
 * at most its share of the output (te_hn_node_share): frleft says how
 * many ranks' records it left out past it, so the stacks, sent after
 * them, are never pushed out of the output's cap by them.
 *
 * An older merger (te_stack_merge before these records) reads every line
 * that does not begin a "TE-STACK1 proc" record as a node's stray output
 * and skips that one line: these records cost it nothing. */
#ifndef TE_STACKS_NCCL_H
#define TE_STACKS_NCCL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hang/flightrec.h"
#include "util/strutil.h"

#define TE_HN_PATH 1024	     /* a path variable's value, NUL included */
#define TE_HN_RAS_ADDR 64    /* NCCL_RAS_ADDR's value, NUL included */
#define TE_HN_RAS_LINES 12   /* RAS lines a report keeps */
#define TE_HN_RAS_LINE 300   /* one RAS line, NUL included (longer: cut) */
#define TE_HN_LINE_MAX 960   /* one record line, its newline included */
#define TE_HN_NODE_MS 10000  /* a node's time for all of this, at most */
#define TE_HN_RAS_MS 4000    /* RAS's answer, at most (within the above) */
#define TE_HN_JSON_RANKS 256 /* ranks the JSON gives one by one */
/* PyTorch's default dump path (TORCH_NCCL_DEBUG_INFO_TEMP_FILE unset) */
#define TE_HN_TEMP_DEFAULT "/tmp/nccl_trace_rank_"

/* ------------------------------------------------------ the environment */

/* The variables of a rank's environment that say whether and where
 * PyTorch's flight recorder answers, read from the whole block in pieces
 * of any size (as /proc/PID/environ is read). The first entry of each
 * variable counts (as getenv). */
struct te_hn_env {
	char pipe[TE_HN_PATH];	     /* TORCH_NCCL_DEBUG_INFO_PIPE_FILE */
	char temp_fr[TE_HN_PATH];    /* TORCH_FR_DUMP_TEMP_FILE */
	char temp_nccl[TE_HN_PATH];  /* TORCH_NCCL_DEBUG_INFO_TEMP_FILE */
	char ras[TE_HN_RAS_ADDR];    /* NCCL_RAS_ADDR */
	long buf_fr, buf_nccl;	     /* TORCH_FR_BUFFER_SIZE,
				      TORCH_NCCL_TRACE_BUFFER_SIZE; -1 unset
				      or not a number */
	unsigned seen;		     /* the variables met (a bit each) */
	struct te_nul_entries split; /* the entry being read, in cur */
	char cur[TE_HN_PATH + 40];
};
void te_hn_env_init(struct te_hn_env *e);
void te_hn_env_feed(struct te_hn_env *e, const char *buf, size_t n);
/* The last entry, when the block did not end with its NUL. */
void te_hn_env_end(struct te_hn_env *e);

/* PyTorch's trace buffer: TORCH_FR_BUFFER_SIZE, else
 * TORCH_NCCL_TRACE_BUFFER_SIZE (the first one set wins, as PyTorch's
 * getCvarInt), 0 when neither is a number. */
long te_hn_env_buffer(const struct te_hn_env *e);

/* Rank's pipe (PIPE<rank>.pipe) and dump (TEMP<rank>: TORCH_FR_DUMP_TEMP_FILE,
 * else TORCH_NCCL_DEBUG_INFO_TEMP_FILE, else PyTorch's default) as the
 * rank sees them (te_fr_collect opens them in its root: te_proc_open,
 * never as "/proc/PID/root" + path, which an absolute link in a container
 * would lead out of). 0, or -1 with why (one line) when the rank has no
 * flight recorder that answers a pipe (the variable unset, the buffer set
 * to 0), its rank is unknown or a path is too long. With the buffer unset
 * (the release's default: 2000 in recent PyTorch, 0 before) the pipe's
 * presence tells: the caller looks. */
int te_hn_fr_paths(const struct te_hn_env *e, long rank, char *pipe,
		   size_t plen, char *dump, size_t dlen, char *why,
		   size_t whylen);

/* ------------------------------------------------------------- the wire */

/* The bytes a node's fr and frpos records may take, of nnodes nodes: an
 * equal share of TE_HN_NODES_RECORDS_MAX, at most TE_HN_NODE_RECORDS_MAX,
 * at least TE_HN_LINE_MAX (nnodes 0: one node). */
#define TE_HN_NODE_RECORDS_MAX (256u * 1024)
#define TE_HN_NODES_RECORDS_MAX (16u * 1024 * 1024)
size_t te_hn_node_share(unsigned long nnodes);
/* "TE-STACK1 frleft ranks=N\n" (ranks 1..TE_HN_LEFT_MAX) into out: the
 * bytes, or -1 (out too small, ranks out of range). */
#define TE_HN_LEFT_MAX 1000000
long te_hn_left_encode(char *out, size_t len, size_t ranks);
/* A node's records of its k ranks (te_hn_fr_encode of fr[i] with
 * flags[i]: 1 nccl, 2 has; a rank < 0 is skipped), handed to emit one
 * rank at a time while all of them fit share bytes; the ranks past it are
 * left out and one frleft record says how many. The ranks left out (-1
 * when out of memory: nothing emitted). */
long te_hn_fr_emit(const struct te_fr_rank *fr, const unsigned char *flags,
		   size_t k, size_t share,
		   void (*emit)(const char *rec, size_t len, void *arg),
		   void *arg);

/* One rank's flight recorder records (fr and its frpos lines) into out;
 * nccl and has as the header says. The bytes written, or -1 when out is
 * too small (out then ""). Every line is within TE_HN_LINE_MAX. */
long te_hn_fr_encode(char *out, size_t len, const struct te_fr_rank *r,
		     int nccl, int has);
/* te_ras_format's lines (text, '\n'-ended) as ras records, at most
 * TE_HN_RAS_LINES, each line cut to TE_HN_RAS_LINE - 1 bytes. outcome:
 * enum te_ras_outcome. The bytes written, or -1. */
long te_hn_ras_encode(char *out, size_t len, int outcome, const char *text);

/* What the merger keeps of the nodes' records. */
struct te_hn_view {
	struct te_fr_rank *fr; /* by rank, one each (allocated) */
	size_t nfr, cap, max;  /* max: ranks kept at most */
	size_t fr_cut;	       /* ranks past max, left out */
	size_t fr_left;	       /* ranks their nodes left out (frleft) */
	int any_nccl, any_has; /* some rank maps libnccl / has a recorder */
	int ras_outcome;       /* enum te_ras_outcome; -1: no ras record */
	size_t nras;
	char ras[TE_HN_RAS_LINES][TE_HN_RAS_LINE];
	size_t bad;	   /* lines of these kinds refused */
	char bad_why[160]; /* the first refusal's reason */
};

/* Reads the records of these kinds among all lines of buf[0..len) (the
 * demultiplexed lines of every node: other lines skipped) into v, at most
 * max ranks (duplicates of a rank: the first kept). Refuses a line (v->bad)
 * with a bad key, value, encoding or length, or a frpos without its fr.
 * 0, or -1 when out of memory (what came is kept). The caller frees with
 * te_hn_view_free. */
int te_hn_collect(const char *buf, size_t len, size_t max,
		  struct te_hn_view *v);
void te_hn_view_free(struct te_hn_view *v);

/* The words of the records: TE_HN_STATUS (enum te_fr_status: "ok", ...),
 * TE_HN_STATE (enum te_fr_state: "started", ...), TE_HN_OUTCOME (enum
 * te_ras_outcome: "answered", ...); "?" out of range. */
enum {
	TE_HN_STATUS,
	TE_HN_STATE,
	TE_HN_OUTCOME
};
const char *te_hn_word(int kind, int value);

/* ------------------------------------------------------------ the report */
/* core/hang/stacks_nccl_report.c */

/* 1 when the report says anything of NCCL: some rank maps libnccl or has
 * a flight recorder, ranks were left out (by their nodes, or past max),
 * or RAS answered (not "nothing listens"). A step without NCCL gets the
 * stacks alone. */
int te_hn_shown(const struct te_hn_view *v);
/* The report's lines above the stacks, each "trainenv: hang: NCCL RAS:
 * ..." or "trainenv: hang: flight recorder: ...", '\n'-ended: RAS's
 * lines (or one saying none came), then te_fr_report's. Nothing when not
 * te_hn_shown. The number of lines; out always terminated (cut at a
 * line's end). */
int te_hn_report_text(const struct te_hn_view *v, char *out, size_t len);
/* json: a JSON object's text ending in "}" (a newline after it allowed),
 * as te_stack_report_json writes it: when te_hn_shown, the fields
 * "nccl_ras":{"outcome":..,"lines":[..]} and
 * "flight_recorder":{"lines":[..],"ranks":[..],"ranks_left_out":N} are
 * put before its last "}" (ranks: at most TE_HN_JSON_RANKS). 0, or -1
 * when they did not fit, json not an object or out of memory (json then as
 * it was; why, when not NULL: one line "the JSON report lacks nccl_ras and
 * flight_recorder: ..." for the caller to print). */
int te_hn_report_json(const struct te_hn_view *v, char *json, size_t len,
		      char *why, size_t whylen);

/* ----------------------------------------- the dumps, on one node (I/O) */

/* One rank's dump to ask for and read (core/hang/stacks_fr.c). */
struct te_fr_ask {
	char pipe[TE_HN_PATH + 64]; /* PIPE<rank>.pipe, as the rank sees it */
	char dump[TE_HN_PATH + 64];
	int pid; /* the rank's process (its root, its cwd); 0: this one's */
	int rank;
	struct te_fr_rank *out; /* filled: read, refused or missing */
	/* private */
	int state;
	int64_t size, mtime_ns, stable_ms;
	uint64_t ino;
};
#define TE_HN_DUMP_MAX (64u * 1024 * 1024)	  /* a dump read, at most */
#define TE_HN_NODE_DUMPS_MAX (256u * 1024 * 1024) /* all of a node's */

/* Asks every rank's flight recorder for a dump at once and reads each
 * that comes, within timeout_ms in all: writes one byte into each pipe
 * (O_WRONLY|O_NONBLOCK|O_NOFOLLOW: refused unless a FIFO owned by uid;
 * no reader: missing), then waits until each dump file has changed and
 * stopped growing, and reads it (O_NOFOLLOW, a regular file owned by uid,
 * at most TE_HN_DUMP_MAX bytes, and TE_HN_NODE_DUMPS_MAX for all ranks)
 * with te_fr_extract. Paths are the ranks' own, resolved in each rank's
 * root (ask->pid). A rank that does not answer in time, or whose dump is
 * whole only once the deadline has come (the reads before took the time),
 * is te_fr_missing with why. between (may be NULL) is called once after
 * the bytes are written (the RAS query runs there, while PyTorch writes).
 * Never waits past the deadline, nor begins a read there. */
void te_fr_collect(struct te_fr_ask *ask, size_t n, uid_t uid, int timeout_ms,
		   void (*between)(void *), void *arg);
/* The same with its bounds given: total_max (0: TE_HN_NODE_DUMPS_MAX) the
 * bytes of all dumps read; clock (NULL: te_now_ms) what the deadline is
 * measured on (tests: a clock that jumps). */
struct te_fr_opts {
	int timeout_ms;
	size_t total_max;
	int64_t (*clock)(void);
	void (*between)(void *);
	void *arg;
};
void te_fr_collect_opts(struct te_fr_ask *ask, size_t n, uid_t uid,
			const struct te_fr_opts *o);

#endif
