/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch timeline: when each node's ranks reached the launch barrier,
 * which node came last and by how much, and the one line that names it.
 * Rank 0's coordinator notes every rank's first arrival; once the barrier
 * passes the skew decides whether its task prints
 *   "barrier: 24 ranks on 3 nodes; the last, n3, arrived 20.3 s after the
 *    first"
 * (always with --train-explain, else past the site's barrier-skew-warn),
 * and the same facts go into the step's record. Pure: no clock, no I/O;
 * the caller passes the times. */
#ifndef TE_LAUNCH_TIMELINE_H
#define TE_LAUNCH_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TE_TIMELINE_HOST_MAX 64

/* One node: the arrival of its first and of its last rank (ms, the
 * caller's clock). A node has arrived when its last rank has. */
struct te_timeline_node {
	char host[TE_TIMELINE_HOST_MAX]; /* "" marks a free slot */
	int64_t first_ms, last_ms;
	uint32_t nranks;
};

/* An open-addressing table keyed by host: one note costs O(1) whatever
 * the number of nodes. */
struct te_timeline {
	struct te_timeline_node *slot;
	size_t cap; /* a power of two, or 0 */
	size_t nnodes;
	uint32_t nranks;
};

/* What the barrier's passing shows. */
struct te_launch_skew {
	uint32_t nranks;
	uint32_t nnodes;
	char first[TE_TIMELINE_HOST_MAX]; /* the node that arrived first */
	char last[TE_TIMELINE_HOST_MAX];  /* ... and last */
	int64_t skew_ms; /* last node's arrival - first node's */
};

void te_timeline_init(struct te_timeline *t);
void te_timeline_free(struct te_timeline *t);

/* One rank of host arrived at now_ms; the caller notes each rank once.
 * host: 1-63 of [A-Za-z0-9._-] (anything else is noted as "?"). 0, or -1
 * when out of memory (the timeline then misses that rank). */
int te_timeline_note(struct te_timeline *t, const char *host, int64_t now_ms);

/* The skew over the nodes noted so far (zeros when none). Ties go to the
 * host name that sorts first, so the line does not depend on the table's
 * order. */
void te_timeline_skew(const struct te_timeline *t, struct te_launch_skew *s);

/* Whether rank 0's task prints the line: warn_ms < 0: never (off); 0:
 * always (--train-explain); else when the skew is at least warn_ms. Only
 * a barrier over more than one node says anything. */
int te_launch_skew_say(const struct te_launch_skew *s, long warn_ms);

/* "barrier: 24 ranks on 3 nodes; the last, n3, arrived 20.3 s after the
 * first" (seconds with one decimal; "within 0.1 s" wording when smaller). */
void te_launch_skew_line(const struct te_launch_skew *s, char *out, size_t len);

/* The wire form between the helper and the plugin (core/launch/rdzv_proto.h's
 * LAUNCH key) and the failure report's channel: "RANKS NODES SKEW_MS
 * FIRST LAST". 0, or -1 (format: does not fit; parse: not that shape). */
int te_launch_skew_format(const struct te_launch_skew *s, char *buf,
			  size_t len);
int te_launch_skew_parse(const char *text, struct te_launch_skew *s);

/* The largest skew the wire carries: a week. */
#define TE_LAUNCH_SKEW_MAX_MS (7LL * 86400 * 1000)

#endif
