/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stragglers without code (issue 36 item 1), the pure part: each rank's
 * waits inside collectives per communicator (strag_rank.c), one node's
 * window summary line (strag_line.c) and srun's detector (strag_detect.c).
 * No NCCL, Slurm or network code: the profiler plugin, the node's sender
 * and srun's listener call these.
 *
 * The design:
 *
 * 1. Bookkeeping, per rank (te_strag_rank_*). For each collective of a
 *    communicator (NCCL's commHash) and sequence number the plugin reports
 *    how long the rank's kernels waited in it: from the rank's kernel start
 *    to the collective's end as this rank sees it, in ns, measured with
 *    this rank's own clock only. In synchronous training the last rank to
 *    arrive waits least; the others wait for it. A collective may come in
 *    several events (one per kernel channel): events with the sequence
 *    number of the one before are the same collective, and its wait is the
 *    longest of them (a collective ends with its last channel). A
 *    collective is counted when the next sequence number arrives, or at
 *    the window's end. Per communicator and window: count, sum, and a
 *    histogram of quarter octaves (a median within 13%) for the median.
 *    Bounded: TE_STRAG_COMMS communicators per rank; a new one evicts the
 *    one whose last event is oldest (its window's data is lost, and
 *    counted in `evicted`). An event costs a search of at most
 *    TE_STRAG_COMMS hashes (the last one hit is tried first), a few
 *    additions and no allocation (tests/bench/bench_straggler).
 *    Threads: calls on one struct te_strag_rank must not overlap; it holds
 *    no lock. A plugin whose events of a communicator come from one thread
 *    gives each such thread its own te_strag_rank (the data is per
 *    communicator anyway), or takes its own lock around the calls.
 *
 * 2. The window summary, one line per node and communicator, which one
 *    process per node sends to srun over the heartbeat's channel:
 *      strag 1 WINDOW NODE COMM OP N RANK:COUNT:MEAN_NS:MEDIAN_NS ...
 *    WINDOW the node's own window number (decimal, < 10^9), NODE the node
 *    name (1 to 63 of [A-Za-z0-9._-], not starting with '-' or '.'), COMM
 *    the communicator's hash (16 lowercase hex digits), OP the collective
 *    most of its calls were (te_strag_op_name()), N the number of rank
 *    fields that follow (1 to TE_STRAG_NODE_RANKS), each RANK (the rank in
 *    the communicator, < 2^24, strictly increasing), COUNT (collectives,
 *    < 10^9; 0 only with MEAN and MEDIAN 0), MEAN_NS and MEDIAN_NS
 *    (< 10^12, 1000 s). Fields are decimal digits only (no sign, no
 *    leading zero but "0"), one space apart, no trailing space or newline;
 *    the line is shorter than TE_STRAG_LINE_MAX. Anything else is refused
 *    whole, with a reason.
 *
 * 3. The detector, in srun (te_strag_detect_*). srun adds the lines it
 *    receives, then closes the window on its own clock; the nodes' WINDOW
 *    numbers only order one node's lines (a later one replaces an earlier
 *    one within srun's window; lines of the same window join, as when each
 *    process of the node sends its own ranks), so nothing compares clocks of different
 *    nodes: only each rank's own durations are compared. At the close,
 *    within each communicator, a node's wait is the mean over its ranks'
 *    collectives (sum of MEAN*COUNT over COUNT); it is late in the window
 *    when its wait is below (1 - threshold) of the median of the other
 *    nodes' waits and below it by at least min_gap_ns (short collectives
 *    all wait a few us, and noise there is not a straggler). Only a low
 *    wait counts: a node that waits longer (it came early) is never named,
 *    so noise of either sign only names a node whose own waits drop below
 *    the threshold. A node late for k windows in a row is named once (a
 *    verdict); it is named again only after a window where it was not
 *    late. A window without its line resets its row. A communicator with
 *    fewer than 2 nodes reporting names nobody.
 *    Bounded: TE_STRAG_MAX_NODES node names and TE_STRAG_MAX_COMMS
 *    communicators per detector; lines of other nodes or communicators
 *    beyond are dropped and counted (`dropped`). A communicator takes
 *    about 160 KiB when it is first seen (its nodes' state). */
#ifndef TE_STRAGGLER_H
#define TE_STRAGGLER_H

#include <stddef.h>
#include <stdint.h>

/* The collectives a line names; TE_STRAG_OP_OTHER for the rest. */
enum te_strag_op {
	TE_STRAG_OP_ALL_REDUCE,
	TE_STRAG_OP_ALL_GATHER,
	TE_STRAG_OP_REDUCE_SCATTER,
	TE_STRAG_OP_BROADCAST,
	TE_STRAG_OP_REDUCE,
	TE_STRAG_OP_ALL_TO_ALL,
	TE_STRAG_OP_SEND_RECV,
	TE_STRAG_OP_OTHER,
	TE_STRAG_OPS
};
/* "all_reduce", ...; "other" for a value out of range. */
const char *te_strag_op_name(unsigned op);
/* The op of a name, -1 if none. */
int te_strag_op_of(const char *name, size_t len);

/* ---- 1. Bookkeeping per rank ---- */

#define TE_STRAG_COMMS 16
#define TE_STRAG_BUCKETS 160 /* 4 per octave: 1 ns to 2^40 ns */

/* One communicator's window. */
struct te_strag_comm {
	uint64_t comm_hash;
	uint64_t last_used; /* the rank's event counter at its last event */
	uint64_t seq;	    /* the collective being gathered */
	uint64_t seq_wait;  /* its longest wait so far */
	int pending;	    /* seq/seq_wait hold a collective not counted */
	int closed;	    /* seq was counted at a window's end */
	int in_use;
	uint64_t count, sum_ns;
	uint32_t op_count[TE_STRAG_OPS];
	uint32_t hist[TE_STRAG_BUCKETS];
	uint8_t seq_op;
};

struct te_strag_rank {
	uint32_t rank; /* in its communicators; the plugin's to set */
	uint64_t events;
	uint64_t evicted; /* communicators evicted with data, ever */
	unsigned last_hit;
	struct te_strag_comm comm[TE_STRAG_COMMS];
};

/* One communicator's window, as taken. */
struct te_strag_stat {
	uint64_t comm_hash;
	uint64_t count;
	uint64_t mean_ns, median_ns;
	unsigned op; /* the op most of its collectives were */
};

void te_strag_rank_init(struct te_strag_rank *r, uint32_t rank);
/* One event: the rank's kernels waited wait_ns in collective seq (op) of
 * communicator comm_hash. O(1), no allocation. */
void te_strag_rank_event(struct te_strag_rank *r, uint64_t comm_hash,
			 uint64_t seq, unsigned op, uint64_t wait_ns);
/* The window's end: writes each communicator with collectives (at most
 * max) to out, starts the next window, returns how many. */
size_t te_strag_rank_take(struct te_strag_rank *r, struct te_strag_stat *out,
			  size_t max);
/* The median estimate of a histogram of count samples (the middle of the
 * bucket holding the middle sample); 0 for no sample. */
uint64_t te_strag_hist_median(const uint32_t *hist, uint64_t count);
/* The bucket of a wait. */
unsigned te_strag_bucket(uint64_t ns);

/* ---- 2. The window summary line ---- */

#define TE_STRAG_LINE_MAX 1024
#define TE_STRAG_NODE_RANKS 16
#define TE_STRAG_NODE_MAX 64 /* the name's buffer: at most 63 chars */
#define TE_STRAG_WINDOW_MAX 999999999u
#define TE_STRAG_RANK_MAX ((1u << 24) - 1)
#define TE_STRAG_COUNT_MAX 999999999u
#define TE_STRAG_NS_MAX 999999999999ull

struct te_strag_rank_sum {
	uint32_t rank;
	uint32_t count;
	uint64_t mean_ns, median_ns;
};

struct te_strag_summary {
	uint32_t window;
	char node[TE_STRAG_NODE_MAX];
	uint64_t comm_hash;
	unsigned op;
	unsigned nranks;
	struct te_strag_rank_sum ranks[TE_STRAG_NODE_RANKS];
};

/* Adds one rank's stat to s (ranks kept in increasing order; values past
 * the line's bounds are clamped to them). -1 when s is full or the rank
 * is there already or out of bounds. */
int te_strag_summary_add(struct te_strag_summary *s, uint32_t rank,
			 const struct te_strag_stat *st);
/* The line (no newline). Its length, or -1 when s breaks the format or
 * the buffer is short. */
int te_strag_line_format(const struct te_strag_summary *s, char *buf,
			 size_t len);
/* The line of s's ranks from index `from` on, as many as fit in len (a
 * node's summary cut to lines of a bounded size: lines of one node and
 * window join again in the detector). The index after the last rank
 * written, or -1 when not even one fits (or s breaks the format). */
int te_strag_line_part(const struct te_strag_summary *s, unsigned from,
		       char *buf, size_t len);
/* Parses exactly len bytes. 0, or -1 with the reason in err. */
int te_strag_line_parse(const char *line, size_t len,
			struct te_strag_summary *s, char *err, size_t errlen);
/* A node name as the line allows it. */
int te_strag_node_ok(const char *name, size_t len);

/* ---- 3. The detector ---- */

#define TE_STRAG_MAX_NODES 4096
#define TE_STRAG_MAX_COMMS 64

struct te_strag_cfg {
	double threshold;    /* 0 < t < 1: late below (1 - t) x median */
	unsigned k;	     /* windows in a row */
	unsigned window_s;   /* for the verdict's words only */
	uint64_t min_gap_ns; /* the least gap below the median that counts */
};

struct te_strag_verdict {
	char node[TE_STRAG_NODE_MAX];
	uint64_t comm_hash;
	unsigned op;
	uint32_t rank_lo, rank_hi;
	unsigned nranks;
	unsigned windows;     /* late in a row */
	unsigned window_s;    /* from the configuration */
	unsigned other_nodes; /* nodes the median is of */
	uint64_t wait_ns;     /* the node's mean wait in the last window */
	uint64_t others_ns;   /* the other nodes' median in it */
};

struct te_strag_detector;

/* NULL when out of memory or cfg is out of bounds. */
struct te_strag_detector *te_strag_detect_new(const struct te_strag_cfg *cfg);
void te_strag_detect_free(struct te_strag_detector *d);
/* One node's summary for srun's current window. 0, or -1 when dropped
 * (over the bounds, counted). */
int te_strag_detect_add(struct te_strag_detector *d,
			const struct te_strag_summary *s);
/* Closes srun's window: the nodes named now (at most max), how many. */
size_t te_strag_detect_close(struct te_strag_detector *d,
			     struct te_strag_verdict *out, size_t max);
/* Lines dropped over the bounds so far. */
uint64_t te_strag_detect_dropped(const struct te_strag_detector *d);
/* "straggler: NODE (ranks A-B) waited least ...", no newline. Its length
 * (truncated to len - 1 when the buffer is short). */
int te_strag_verdict_line(const struct te_strag_verdict *v, char *buf,
			  size_t len);

#endif
