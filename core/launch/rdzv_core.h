/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure part of the PMIx layer: wire lines of the barrier coordinator,
 * the reports (missing ranks, version mismatch), MASTER_PORT choice, the
 * NCCL_SOCKET_IFNAME pattern syntax and the per-rank data published over
 * PMIx. No PMIx, no sockets, no I/O: everything here is unit-tested and
 * fuzzed, and treats its input as hostile (peer data, network lines).
 *
 * Coordinator protocol (TCP to rank 0's barrier coordinator; lines of at
 * most TE_COORD_LINE_MAX bytes, '\n' terminated):
 *   client -> coordinator   "TEBAR1 TOKEN arrived RANK HOST"
 *                           "TEBAR1 TOKEN status RANK"
 *                           "TEBAR1 TOKEN node RANK HOST trainenv=V nccl=V
 *                            cuda=V cudart=V ckpt=TEXT"   a node's facts
 *                                                  (launch)
 *                           "TEBAR1 TOKEN failed RANK HOST TEXT"   RANK
 *                                                  failed before the
 *                                                  barrier (launch): TEXT
 *                                                  is why
 *   coordinator -> client   "TEBAR1 done [TEXT]"   every rank arrived
 *                                                  (launch: TEXT is rank
 *                                                  0's "ADDR PORT")
 *                           "TEBAR1 fail TEXT"     rank 0 gave up: TEXT is
 *                                                  the report
 *                           "TEBAR1 reject TEXT"   every rank arrived, but
 *                                                  a launch check failed
 *                                                  (rank 0 reports it)
 *                           "TEBAR1 state TEXT"    answer to status
 *                           "TEBAR1 abort TEXT"    a rank failed before
 *                                                  the barrier: TEXT is the
 *                                                  whole report, the step
 *                                                  fails now
 * TOKEN is 32 hex characters chosen by rank 0 and published over PMIx, so
 * that only the job's own ranks are counted. */
#ifndef TE_RDZV_CORE_H
#define TE_RDZV_CORE_H

#include <stddef.h>
#include <stdint.h>

#define TE_COORD_LINE_MAX 1024
#define TE_COORD_TEXT_MAX 900
#define TE_TOKEN_LEN 32
#define TE_HOST_MAX 64
#define TE_VER_MAX 32

/* ---------------------------------------------------------------- wire */

#define TE_CKPT_TEXT_MAX 300

/* The NCCL, CUDA driver and CUDA runtime "versions" of a node without a
 * GPU: it runs none of them, so it is left out of their comparison (a job
 * on GPU nodes and CPU-only nodes of one software image is no mismatch). */
#define TE_VER_NOGPU "nogpu"

/* 1 when a component's value takes part in the version comparison. */
int te_version_compared(const char *value);

struct te_versions {
	char trainenv[TE_VER_MAX];
	char nccl[TE_VER_MAX];
	char cuda[TE_VER_MAX];	 /* the CUDA driver */
	char cudart[TE_VER_MAX]; /* the CUDA runtime (libcudart) */
	/* the protocol the node's plugin and helpers speak (core/launch/version.h);
	 * 0: not said (a node of trainenv 0.1.0, before protocols) */
	int protocol;
};

/* The largest protocol number a node's data may carry. */
#define TE_PROTOCOL_NUM_MAX 1000000

enum te_coord_req_kind {
	TE_CQ_ARRIVED,
	TE_CQ_STATUS,
	TE_CQ_NODE,
	TE_CQ_FAILED
};

/* The reason a rank gives for failing before the barrier. */
#define TE_FAIL_TEXT_MAX 600

struct te_coord_req {
	enum te_coord_req_kind kind;
	uint32_t rank;
	char host[TE_HOST_MAX];		 /* "" for status */
	struct te_versions ver;		 /* node */
	char ckpt[TE_CKPT_TEXT_MAX + 1]; /* node: "-", "ok" or a reason */
	char why[TE_FAIL_TEXT_MAX + 1];	 /* failed: printable text */
};

/* 1 when s is a host name fit for reports: 1-63 of [A-Za-z0-9._-]. */
int te_host_valid(const char *s);

/* Copies one protocol line (at most TE_COORD_LINE_MAX characters, one
 * newline at the end at most, none inside) into l and checks its first
 * word, the magic; *p is left after it. 0, or -1 for a line that is not
 * one of ours. Every reader of the coordinator's lines starts here. */
int te_coord_line_open(const char *line, char l[TE_COORD_LINE_MAX + 1],
		       const char **p);

int te_coord_req_format(char *buf, size_t len, const char *token,
			const struct te_coord_req *q);
/* Parses one line (with or without its '\n'); the token must match in
 * constant time and rank must be < nranks. 0 or -1. */
int te_coord_req_parse(const char *line, const char *token, uint32_t nranks,
		       struct te_coord_req *q);

enum te_coord_reply_kind {
	TE_CR_DONE,
	TE_CR_FAIL,
	TE_CR_STATE,
	TE_CR_REJECT,
	TE_CR_ABORT,
	/* the launch tree: rank 0's checkpoint probe ("NAME TOKEN" or
	 * "error REASON"), passed from each parent to its children; not an
	 * answer (the connection stays) */
	TE_CR_PROBE
};

struct te_coord_reply {
	enum te_coord_reply_kind kind;
	char text[TE_COORD_TEXT_MAX + 1];
};

/* text is cleaned (printable ASCII) and cut to TE_COORD_TEXT_MAX. */
int te_coord_reply_format(char *buf, size_t len, enum te_coord_reply_kind k,
			  const char *text);
int te_coord_reply_parse(const char *line, struct te_coord_reply *r);

/* What rank 0 publishes so that the others can reach the coordinator:
 * "ADDR PORT TOKEN". */
struct te_coord_info {
	char addr[64];
	uint16_t port;
	char token[TE_TOKEN_LEN + 1];
};
int te_coord_info_format(char *buf, size_t len, const struct te_coord_info *c);
int te_coord_info_parse(const char *s, struct te_coord_info *c);

/* 1 when s is exactly TE_TOKEN_LEN lower-case hex digits. */
int te_token_valid(const char *s);

/* ---------------------------------------------------------------- strangers
 * Anyone on the network can connect to the coordinator. A connection that
 * has not yet sent a line with the token lives in a pool of at most
 * TE_COORD_POOL_MAX, apart from the helpers' slots, for at most
 * TE_COORD_UNAUTH_MS; when a new connection finds the pool full, the
 * oldest one in it is dropped, so that a helper always gets in and a
 * registered helper is never pushed out. */
#define TE_COORD_POOL_MAX 64
#define TE_COORD_UNAUTH_MS 1000

enum te_coord_admit {
	TE_ADMIT,
	TE_ADMIT_EVICT,
	TE_ADMIT_REFUSE
};

/* A new connection, with nfree free slots in all and npool connections in
 * the pool: take it (TE_ADMIT), drop the pool's oldest first
 * (TE_ADMIT_EVICT), or close it (TE_ADMIT_REFUSE: every slot holds a
 * registered connection). */
enum te_coord_admit te_coord_admit(size_t nfree, size_t npool, size_t pool_max);

/* 1 when buf[0..len), what an unauthenticated connection sent so far,
 * can still begin a request line: "TEBAR1 ", 32 lower-case hex digits, a
 * space, then printable ASCII up to the newline. Only the token's shape
 * is looked at, never its value: dropping a connection at the first
 * wrong digit would tell a stranger the token digit by digit. */
int te_coord_prefix_ok(const char *buf, size_t len);

/* A helper's connection to the coordinator failed or was cut before any
 * answer: it tries again (TE_CUT_RETRY), unless every try has been
 * refused for grace_ms (nobody listens: rank 0 has left, TE_CUT_GONE).
 * refused: this try was refused; refused_since: when the current run of
 * refusals began. */
enum te_coord_cut {
	TE_CUT_RETRY,
	TE_CUT_GONE
};
enum te_coord_cut te_coord_after_cut(int refused, int64_t refused_since,
				     int64_t now, int grace_ms);

/* The pause before the next try: 10 ms after prev_ms 0, doubling up to
 * 250 ms. */
int te_coord_retry_ms(int prev_ms);

/* ---------------------------------------------------------------- reports */

/* Writes the host name of rank into host; returns 0, or -1 when unknown. */
typedef int (*te_host_fn)(void *ctx, uint32_t rank, char *host, size_t len);

/* The report every task of a step gets when rank failed before the
 * barrier: "rank 3 (node n2) failed before the barrier: WHY". */
void te_failed_report(uint32_t rank, const char *host, const char *why,
		      char *out, size_t outlen);

/* "4 of 6 ranks arrived; missing: ranks 2-3 (node n2), rank 5 (node n3)".
 * arrived[r] != 0 for the ranks that arrived; consecutive missing ranks on
 * the same host are shown as one range; the list stops before the buffer
 * is full and ends with "and N more ranks". host_fn is called only for
 * missing ranks, and at most for the first TE_MISSING_HOSTS_MAX of them. */
#define TE_MISSING_HOSTS_MAX 4096
void te_missing_summary(uint32_t total, const unsigned char *arrived,
			te_host_fn host_fn, void *ctx, char *out,
			size_t outlen);

/* ---------------------------------------------------------------- data */

/* The versions each node publishes: "trainenv=0.9.0 nccl=2.28.9
 * cuda=12.4 cudart=13.0 protocol=1" ("none" when the library cannot be
 * loaded). The parser also takes the older forms without protocol= (then
 * 0, which the formatter leaves out again) and without cudart= (then
 * "none"). The protocol comes last and stays there in every later
 * protocol: rank 0 reads it from a node of another protocol to say so. */
int te_versions_format(char *buf, size_t len, const struct te_versions *v);
int te_versions_parse(const char *s, struct te_versions *v);
/* 1 when s is a version word: 1-31 of [A-Za-z0-9._+-]. */
int te_version_word_valid(const char *s);

/* NCCL's ncclGetVersion() code as text: 22809 -> "2.28.9" (NCCL >= 2.9
 * uses major*10000 + minor*100 + patch, older major*1000 + minor*100 +
 * patch). CUDA's cuDriverGetVersion() and cudaRuntimeGetVersion():
 * 12040 -> "12.4". */
void te_nccl_version_text(int code, char *buf, size_t len);
void te_cuda_version_text(int code, char *buf, size_t len);

/* ---------------------------------------------------------------- ports */

/* Returns 1 when port can be bound now. */
typedef int (*te_port_free_fn)(void *ctx, uint16_t port);

/* Tries start, start+1, ... wrapping inside [lo, hi], at most max_tries
 * ports; returns the first free one, or 0. start outside [lo, hi] starts
 * at lo. */
uint16_t te_port_pick(uint16_t start, uint16_t lo, uint16_t hi,
		      unsigned max_tries, te_port_free_fn is_free, void *ctx);

/* PMIX_LOCAL_PEERS: "0,1,2,3" (strictly ascending is not required) into
 * at most max ranks < nranks. Returns the count, or -1 when malformed. */
int te_rank_list_parse(const char *s, uint32_t nranks, uint32_t *out,
		       size_t max);

/* NCCL_SOCKET_IFNAME syntax: a comma-separated list of prefixes; a
 * leading '^' makes it a list of excluded prefixes; a leading '=' (after
 * the optional '^') asks for exact names. 1 when name is selected. */
int te_ifname_match(const char *pattern, const char *name);

#endif
