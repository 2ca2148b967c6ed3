/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PyTorch's flight recorder dumps (core/hang/flightrec.h): each rank's last
 * collective per process group, read with the restricted pickle reader,
 * and the report's lines that name the ranks not where most are. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hang/flightrec.h"
#include "hang/stacks.h"
#include "util/pickle.h"
#include "util/strutil.h"
#include "util/textbuf.h"

/* A str value into dst as printable ASCII ("" when v is not a str). */
static void copy_str(const struct te_pk_doc *d, te_pk_val v, char *dst,
		     size_t size)
{
	const char *s;
	size_t n;

	dst[0] = '\0';
	if (te_pk_kind_of(d, v) == TE_PK_STR && te_pk_bytes(d, v, &s, &n) == 0)
		te_clean_text(dst, size, s, n);
}

/* The entry's group: process_group's (name, description), a plain name,
 * or the pg_id of dumps before version 2. -1 when there is none. */
static int entry_group(const struct te_pk_doc *d, te_pk_val e,
		       struct te_fr_pos *p)
{
	te_pk_val g = te_pk_get(d, e, "process_group");
	uint32_t it = te_pk_first(d, g);
	int64_t id;

	p->desc[0] = '\0';
	if (te_pk_kind_of(d, g) == TE_PK_TUPLE ||
	    te_pk_kind_of(d, g) == TE_PK_LIST) {
		copy_str(d, te_pk_item_val(d, it), p->group, sizeof(p->group));
		copy_str(d, te_pk_item_val(d, te_pk_next(d, it)), p->desc,
			 sizeof(p->desc));
	} else {
		copy_str(d, g, p->group, sizeof(p->group));
	}
	if (p->group[0])
		return 0;
	if (te_pk_int(d, te_pk_get(d, e, "pg_id"), &id) < 0)
		return -1;
	te_snprintf(p->group, sizeof(p->group), "%lld", (long long)id);
	return 0;
}

/* One entry into p; -1 when it says nothing about a collective. */
static int entry_pos(const struct te_pk_doc *d, te_pk_val e,
		     struct te_fr_pos *p)
{
	static const char *const states[] = { "", "scheduled", "started",
					      "completed" };
	te_pk_val v;
	char name[TE_FR_OP + 16];
	const char *colon;
	int p2p = 0;
	unsigned i;

	if (te_pk_kind_of(d, e) != TE_PK_DICT ||
	    te_pk_len(d, e) > TE_FR_ENTRY_KEYS)
		return -1;
	if (te_pk_bool(d, te_pk_get(d, e, "is_p2p"), &p2p) == 0 && p2p)
		return -1;
	v = te_pk_get(d, e, "collective_seq_id");
	if (v == TE_PK_NOVAL)
		v = te_pk_get(d, e, "seq_id"); /* version 1.x */
	if (te_pk_int(d, v, &p->seq) < 0 || entry_group(d, e, p) < 0)
		return -1;
	copy_str(d, te_pk_get(d, e, "profiling_name"), name, sizeof(name));
	colon = strchr(name, ':'); /* "nccl:all_reduce" */
	te_strlcpy(p->op, colon ? colon + 1 : name, sizeof(p->op));
	if (!p->op[0])
		te_strlcpy(p->op, "collective", sizeof(p->op));
	v = te_pk_get(d, e, "state");
	p->state = TE_FR_UNKNOWN;
	for (i = 1; i < sizeof(states) / sizeof(states[0]); i++)
		if (te_pk_str_is(d, v, states[i]))
			p->state = (enum te_fr_state)i;
	return 0;
}

/* Keeps p as its group's position when it is that group's latest. */
static void keep_pos(struct te_fr_rank *out, const struct te_fr_pos *p)
{
	size_t i;

	for (i = 0; i < out->npos; i++)
		if (!strcmp(out->pos[i].group, p->group))
			break;
	if (i == out->npos) {
		if (out->npos == TE_FR_GROUPS) {
			out->groups_over++;
			return;
		}
		out->npos++;
	} else if (p->seq < out->pos[i].seq) {
		return; /* same seq: the later entry (coalesced ops) wins */
	}
	out->pos[i] = *p;
}

static void read_doc(const struct te_pk_doc *d, struct te_fr_rank *out)
{
	te_pk_val root = d->root, entries;
	struct te_fr_pos p;
	int64_t r;
	uint32_t it;
	size_t skip;

	copy_str(d, te_pk_get(d, root, "version"), out->version,
		 sizeof(out->version));
	if (out->rank < 0 &&
	    te_pk_int(d, te_pk_get(d, root, "rank"), &r) == 0 && r >= 0 &&
	    r <= INT32_MAX)
		out->rank = (int)r;
	entries = te_pk_get(d, root, "entries");
	it = te_pk_first(d, entries);
	for (skip = te_pk_len(d, entries); skip > TE_FR_ENTRIES; skip--)
		it = te_pk_next(d, it); /* the latest are the ones that tell */
	for (; it; it = te_pk_next(d, it)) {
		memset(&p, 0, sizeof(p));
		if (entry_pos(d, te_pk_item_val(d, it), &p) == 0)
			keep_pos(out, &p);
	}
	out->status = out->npos || out->groups_over ? TE_FR_OK : TE_FR_EMPTY;
}

int te_fr_extract(const unsigned char *buf, size_t len,
		  const struct te_pk_limits *lim, int rank,
		  struct te_fr_rank *out)
{
	struct te_pk_doc doc;

	memset(out, 0, sizeof(*out));
	out->rank = rank;
	if (te_pk_parse(buf, len, lim, &doc, out->why, sizeof(out->why)) < 0) {
		out->status = TE_FR_REFUSED;
		return -1;
	}
	if (te_pk_kind_of(&doc, doc.root) != TE_PK_DICT) {
		te_pk_free(&doc);
		out->status = TE_FR_REFUSED;
		te_strlcpy(out->why, "not a flight recorder dump (no dict)",
			   sizeof(out->why));
		return -1;
	}
	read_doc(&doc, out);
	te_pk_free(&doc);
	return 0;
}

void te_fr_missing(struct te_fr_rank *out, int rank, const char *why)
{
	memset(out, 0, sizeof(*out));
	out->rank = rank;
	out->status = TE_FR_MISSING;
	te_clean_text(out->why, sizeof(out->why), why ? why : "no dump",
		      sizeof(out->why));
}

/* ---------------------------------------------------------------- report */

struct at {
	int rank;
	const struct te_fr_pos *p;
};

/* Sorted by place (seq, op, state), then rank. */
static int cmp_at(const void *a, const void *b)
{
	const struct at *x = a, *y = b;
	int c;

	if (x->p->seq != y->p->seq)
		return x->p->seq < y->p->seq ? -1 : 1;
	c = strcmp(x->p->op, y->p->op);
	if (c)
		return c;
	if (x->p->state != y->p->state)
		return x->p->state < y->p->state ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int same_place(const struct at *x, const struct at *y)
{
	return x->p->seq == y->p->seq && x->p->state == y->p->state &&
	       !strcmp(x->p->op, y->p->op);
}

static const char *state_note(enum te_fr_state s)
{
	return s == TE_FR_SCHEDULED   ? " (not started)"
	       : s == TE_FR_COMPLETED ? " (completed)"
				      : "";
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* "rank 4" or "ranks 4,6-7" for ranks[0..n) (sorted here). */
static void rank_words(int *ranks, size_t n, char *buf, size_t len)
{
	char list[256];

	qsort(ranks, n, sizeof(*ranks), cmp_int);
	te_ranks_format(list, sizeof(list), ranks, n);
	te_snprintf(buf, len, "%s %s", n == 1 ? "rank" : "ranks", list);
}

/* The ranks of the run at[from..to) as rank_words says them. */
static void run_ranks(const struct at *at, size_t from, size_t to, int *scratch,
		      char *buf, size_t len)
{
	size_t i;

	for (i = from; i < to; i++)
		scratch[i - from] = at[i].rank;
	rank_words(scratch, to - from, buf, len);
}

static size_t run_end(const struct at *at, size_t from, size_t n)
{
	size_t j = from + 1;

	while (j < n && same_place(&at[from], &at[j]))
		j++;
	return j;
}

/* The most common place's first index (ties: the later place, so that
 * of two ranks the one behind is named). */
static size_t majority(const struct at *at, size_t n, size_t *count)
{
	size_t i, j, best = 0;

	*count = 0;
	for (i = 0; i < n; i = j) {
		j = run_end(at, i, n);
		if (j - i >= *count) {
			*count = j - i;
			best = i;
		}
	}
	return best;
}

static void group_label(const struct te_fr_pos *p, char *buf, size_t len)
{
	if (p->desc[0] && strcmp(p->desc, p->group))
		te_snprintf(buf, len, "group %s (%s)", p->group, p->desc);
	else
		te_snprintf(buf, len, "group %s", p->group);
}

/* at[0..n): one group's ranks, sorted by place. */
static void group_line(struct te_buf *b, const struct at *at, size_t n,
		       int *scratch)
{
	size_t cnt, maj = majority(at, n, &cnt), i, j, shown = 0, rest = 0;
	const struct te_fr_pos *m = at[maj].p;
	char label[2 * TE_FR_NAME + 16], who[300];
	int same_op = 1;

	group_label(m, label, sizeof(label));
	if (cnt == n) {
		if (n > 1)
			te_snprintf(who, sizeof(who), "all %zu ranks", n);
		else
			run_ranks(at, 0, n, scratch, who, sizeof(who));
		te_buf_printf(b, "flight recorder: %s of %s %s at %s #%lld%s\n",
			      who, label, n > 1 ? "are" : "is", m->op,
			      (long long)m->seq, state_note(m->state));
		return;
	}
	te_buf_printf(b, "flight recorder: ");
	for (i = 0; i < n; i = j) {
		j = run_end(at, i, n);
		if (i == maj)
			continue;
		if (shown == 4) {
			rest += j - i;
			continue;
		}
		same_op &= !strcmp(at[i].p->op, m->op);
		run_ranks(at, i, j, scratch, who, sizeof(who));
		te_buf_printf(b, "%s%s %sat %s #%lld%s", shown ? ", " : "", who,
			      shown	  ? ""
			      : j - i > 1 ? "are "
					  : "is ",
			      at[i].p->op, (long long)at[i].p->seq,
			      state_note(at[i].p->state));
		shown++;
	}
	if (rest)
		te_buf_printf(b, ", %zu more rank%s elsewhere", rest,
			      rest > 1 ? "s" : "");
	if (cnt > 1)
		te_snprintf(who, sizeof(who), "all others");
	else
		run_ranks(at, maj, maj + 1, scratch, who, sizeof(who));
	te_buf_printf(b, " of %s, %s at %s%s#%lld%s\n", label, who,
		      same_op ? "" : m->op, same_op ? "" : " ",
		      (long long)m->seq, state_note(m->state));
}

/* The ranks of status s into scratch; how many. */
static size_t with_status(const struct te_fr_rank *r, size_t n,
			  enum te_fr_status s, int *scratch, size_t *first)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (r[i].status == s) {
			if (!k)
				*first = i;
			scratch[k++] = r[i].rank;
		}
	return k;
}

/* One line for the ranks without a readable dump, if any. */
static void tail_line(struct te_buf *b, const struct te_fr_rank *r, size_t n,
		      int *scratch)
{
	static const char *const lead[] = {
		[TE_FR_MISSING] = "no dump from",
		[TE_FR_REFUSED] = "dump of",
		[TE_FR_EMPTY] = "no collectives in the dump of",
	};
	static const enum te_fr_status order[] = { TE_FR_MISSING, TE_FR_REFUSED,
						   TE_FR_EMPTY };
	char who[300], part[600];
	size_t i, k, first = 0, parts = 0;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		k = with_status(r, n, order[i], scratch, &first);
		if (!k)
			continue;
		rank_words(scratch, k, who, sizeof(who));
		if (order[i] == TE_FR_EMPTY)
			te_snprintf(part, sizeof(part), "%s %s", lead[order[i]],
				    who);
		else
			te_snprintf(part, sizeof(part), "%s %s%s (%s)",
				    lead[order[i]], who,
				    order[i] == TE_FR_REFUSED ? " refused" : "",
				    r[first].why);
		te_buf_printf(b, "%s%s",
			      parts++ ? "; " : "flight recorder: ", part);
	}
	for (i = k = 0; i < n; i++)
		if (r[i].status == TE_FR_OK && r[i].groups_over)
			scratch[k++] = r[i].rank;
	if (k) {
		rank_words(scratch, k, who, sizeof(who));
		te_buf_printf(
			b,
			"%smore than %d groups in the dump of %s: the others left out",
			parts++ ? "; " : "flight recorder: ", TE_FR_GROUPS,
			who);
	}
	if (parts)
		te_buf_printf(b, "\n");
}

/* The groups of all ranks' dumps in the order first seen: their first
 * position (name and description). How many (at most max). */
static size_t all_groups(const struct te_fr_rank *r, size_t n,
			 const struct te_fr_pos **g, size_t max,
			 size_t *dropped)
{
	size_t i, j, k, ng = 0;

	*dropped = 0;
	for (i = 0; i < n; i++)
		for (j = 0; r[i].status == TE_FR_OK && j < r[i].npos; j++) {
			for (k = 0; k < ng; k++)
				if (!strcmp(g[k]->group, r[i].pos[j].group))
					break;
			if (k < ng)
				continue;
			if (ng == max)
				(*dropped)++;
			else
				g[ng++] = &r[i].pos[j];
		}
	return ng;
}

/* Each rank's position in group name into at; how many. */
static size_t group_ranks(const struct te_fr_rank *r, size_t n,
			  const char *name, struct at *at)
{
	size_t i, j, k = 0;

	for (i = 0; i < n; i++)
		for (j = 0; r[i].status == TE_FR_OK && j < r[i].npos; j++)
			if (!strcmp(r[i].pos[j].group, name)) {
				at[k].rank = r[i].rank;
				at[k++].p = &r[i].pos[j];
				break;
			}
	return k;
}

int te_fr_report(const struct te_fr_rank *ranks, size_t n, char *out,
		 size_t outlen)
{
	const struct te_fr_pos *groups[TE_FR_REPORT_GROUPS];
	struct te_buf b;
	struct at *at;
	int *scratch;
	size_t ng, g, k, cnt, dropped;
	int pass;

	te_buf_init(&b, out, outlen);
	at = calloc(n ? n : 1, sizeof(*at));
	scratch = calloc(n ? n : 1, sizeof(*scratch));
	if (!at || !scratch) {
		free(at);
		free(scratch);
		te_buf_printf(&b, "flight recorder: out of memory\n");
		return -1;
	}
	ng = all_groups(ranks, n, groups, TE_FR_REPORT_GROUPS, &dropped);
	for (pass = 0; pass < 2; pass++) /* the groups that disagree first */
		for (g = 0; g < ng; g++) {
			k = group_ranks(ranks, n, groups[g]->group, at);
			qsort(at, k, sizeof(*at), cmp_at);
			majority(at, k, &cnt);
			if ((cnt < k) == !pass)
				group_line(&b, at, k, scratch);
		}
	if (dropped)
		te_buf_printf(&b,
			      "flight recorder: more than %d groups: the "
			      "others not shown\n",
			      TE_FR_REPORT_GROUPS);
	tail_line(&b, ranks, n, scratch);
	if (!n || (!ng && !b.used))
		te_buf_printf(&b, "flight recorder: no dump to read\n");
	free(at);
	free(scratch);
	return b.cut ? -1 : 0;
}
