/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The memory of bad nodes (issue 34, item 4; `trainenv nodes`): which
 * nodes the step records (steprecord.h) name as the first failure of
 * several jobs of several users. Pure: the tool (pmix/tool_nodes.c) reads
 * the files and gives each record with its file's owner.
 *
 * Records are written by users, so every one is hostile text: it is read
 * with the bounded JSON reader (util/jsonscan.h), and a user may forge any
 * field. The user of a record is therefore its file's owner, never a field
 * of it; a (job, user) counts once however many records (steps) say it;
 * and a node is named only when the first failures on it came from at
 * least min_users distinct users. */
#ifndef TE_NODE_MEMORY_H
#define TE_NODE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "util/textbuf.h"

#define TE_NM_NODE_MAX 64	      /* a node name's bytes, NUL included */
#define TE_NM_RECORD_MAX (256 * 1024) /* srun writes no larger record */
#define TE_NM_REC_NODES 3	      /* nodes one record can name */
#define TE_NM_JOB_NODES 16	      /* nodes kept per (job, user) */
#define TE_NM_FUTURE_S 86400	      /* an end later than now + this: forged */
#define TE_NM_LAST_MAX 1000	      /* --last at most */

/* What one record says. The nodes a job ran on, as far as the record
 * names them: the first failure's node and the launch's first and last
 * node (the record has no node list). */
struct te_nm_record {
	uint32_t job;
	int64_t end;
	char first[TE_NM_NODE_MAX]; /* the first failure's node; "" none */
	int64_t first_time;	    /* its time (seconds) */
	char nodes[TE_NM_REC_NODES][TE_NM_NODE_MAX];
	int nnodes;
};

/* Reads one record (s[0..n), at most TE_NM_RECORD_MAX bytes): 0, or -1
 * with one line in err (not JSON, not a step record, a field of the wrong
 * type, a node name that is not one). */
int te_nm_record_parse(const char *s, size_t n, struct te_nm_record *r,
		       char *err, size_t errlen);

/* One (job, user): its records merged. */
struct te_nm_job {
	uint32_t uid, job;
	int64_t end;
	char first[TE_NM_NODE_MAX];
	int64_t first_time;
	char nodes[TE_NM_JOB_NODES][TE_NM_NODE_MAX];
	int nnodes;
};

/* The records added so far, in the caller's array of cap. */
struct te_nm {
	struct te_nm_job *jobs;
	size_t njobs, cap;
};

void te_nm_init(struct te_nm *m, struct te_nm_job *jobs, size_t cap);
/* Adds record r of user uid (its file's owner); now: the wall clock. 0;
 * 1 when left out because its end is more than TE_NM_FUTURE_S ahead of now
 * (it would stay among every node's newest jobs); -1 when m is full. */
int te_nm_add(struct te_nm *m, uint32_t uid, const struct te_nm_record *r,
	      int64_t now);

struct te_nm_opts {
	unsigned min_users;    /* distinct users of the failures, >= 1 */
	unsigned last;	       /* the newest jobs seen on a node, 1..1000 */
	unsigned min_failures; /* first failures among them, >= 1 */
};

/* A node's verdict over its newest jobs. */
struct te_nm_node {
	char node[TE_NM_NODE_MAX];
	unsigned jobs;	   /* jobs seen on it, at most opts.last */
	unsigned failures; /* of them, those whose first failure it was */
	unsigned users;	   /* distinct users of those failures */
};

/* Merges each (job, user)'s records (the earliest first failure, the
 * latest end, the union of nodes) and judges each node over its newest
 * opts->last jobs (by end). The implicated nodes (failures >=
 * min_failures and users >= min_users) go to out[0..max), worst first
 * (more users, then more failures, then fewer jobs, then by name).
 * Returns how many are implicated (may be more than max), or -1 when
 * memory ran out. Reorders m->jobs. */
long te_nm_judge(struct te_nm *m, const struct te_nm_opts *o,
		 struct te_nm_node *out, size_t max);

/* "n17: first failure in 4 of the last 10 jobs on it, 3 users". */
void te_nm_line(const struct te_nm_node *n, char *buf, size_t len);
/* {"node":"n17","failures":4,"jobs":10,"users":3} appended; 0 or -1. */
int te_nm_json(const struct te_nm_node *n, struct te_buf *b);

/* 1 when s is a node name as trainenv takes one: 1 to 63 bytes of
 * letters, digits, '.', '_' and '-'. */
int te_nm_node_name_ok(const char *s);

#endif
