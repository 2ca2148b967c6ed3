/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL's view in the hang report (core/hang/stacks_nccl.h), the pure part:
 * a rank's flight recorder variables, the records between the nodes and
 * the merger, and the report's lines and JSON fields. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hang/flightrec.h"
#include "hang/ras.h"
#include "hang/stacks_nccl.h"
#include "util/strutil.h"
#include "util/textbuf.h"

#define MAGIC "TE-STACK1 "

/* ------------------------------------------------------ the environment */

enum {
	V_PIPE,
	V_TEMP_FR,
	V_TEMP_NCCL,
	V_RAS,
	V_BUF_FR,
	V_BUF_NCCL,
	V_N
};
static const char *const var_names[V_N] = {
	[V_PIPE] = "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=",
	[V_TEMP_FR] = "TORCH_FR_DUMP_TEMP_FILE=",
	[V_TEMP_NCCL] = "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=",
	[V_RAS] = "NCCL_RAS_ADDR=",
	[V_BUF_FR] = "TORCH_FR_BUFFER_SIZE=",
	[V_BUF_NCCL] = "TORCH_NCCL_TRACE_BUFFER_SIZE=",
};

void te_hn_env_init(struct te_hn_env *e)
{
	memset(e, 0, sizeof(*e));
	e->buf_fr = e->buf_nccl = -1;
}

static void set_str(char *dst, size_t size, const char *v, size_t n)
{
	if (n < size && !memchr(v, '\0', n)) {
		memcpy(dst, v, n);
		dst[n] = '\0';
	}
}

static long num_value(const char *v, size_t n)
{
	char b[24];
	uint64_t x;

	if (n == 0 || n >= sizeof(b))
		return -1;
	memcpy(b, v, n);
	b[n] = '\0';
	return te_parse_u64(b, 0x7fffffff, &x) == 0 ? (long)x : -1;
}

/* One entry of the block: the first of each variable counts. */
static void pick(void *ctx, const char *entry, size_t len)
{
	struct te_hn_env *e = ctx;
	int i;

	for (i = 0; i < V_N; i++) {
		size_t k = strlen(var_names[i]);
		const char *v = entry + k;
		size_t n = len - k;

		if (len < k || memcmp(entry, var_names[i], k))
			continue;
		if (e->seen & (1u << i))
			return;
		e->seen |= 1u << i;
		if (i == V_PIPE)
			set_str(e->pipe, sizeof(e->pipe), v, n);
		else if (i == V_TEMP_FR)
			set_str(e->temp_fr, sizeof(e->temp_fr), v, n);
		else if (i == V_TEMP_NCCL)
			set_str(e->temp_nccl, sizeof(e->temp_nccl), v, n);
		else if (i == V_RAS)
			set_str(e->ras, sizeof(e->ras), v, n);
		else if (i == V_BUF_FR)
			e->buf_fr = num_value(v, n);
		else
			e->buf_nccl = num_value(v, n);
		return;
	}
}

void te_hn_env_feed(struct te_hn_env *e, const char *buf, size_t n)
{
	te_nul_entries_feed(&e->split, e->cur, sizeof(e->cur), buf, n, pick, e);
}

void te_hn_env_end(struct te_hn_env *e)
{
	te_nul_entries_end(&e->split, e->cur, pick, e);
}

long te_hn_env_buffer(const struct te_hn_env *e)
{
	long v = e->seen & (1u << V_BUF_FR) ? e->buf_fr : e->buf_nccl;

	return v > 0 ? v : 0;
}

int te_hn_fr_paths(const struct te_hn_env *e, long rank, char *pipe,
		   size_t plen, char *dump, size_t dlen, char *why,
		   size_t whylen)
{
	const char *temp = e->temp_fr[0]     ? e->temp_fr
			   : e->temp_nccl[0] ? e->temp_nccl
					     : TE_HN_TEMP_DEFAULT;

	pipe[0] = dump[0] = '\0';
	if (!e->pipe[0])
		return te_err(why, whylen,
			      "no flight recorder pipe "
			      "(TORCH_NCCL_DEBUG_INFO_PIPE_FILE %s)",
			      e->seen & (1u << V_PIPE) ? "is empty or too long"
						       : "is not set");
	/* unset: the release's default, 2000 in recent PyTorch (0 before):
	 * the pipe's presence tells (the caller looks) */
	if ((e->seen & (1u << V_BUF_FR | 1u << V_BUF_NCCL)) &&
	    te_hn_env_buffer(e) <= 0)
		return te_err(why, whylen,
			      "no flight recorder "
			      "(TORCH_NCCL_TRACE_BUFFER_SIZE is 0)");
	if (rank < 0 || rank > 0x7fffffff)
		return te_err(why, whylen, "its rank is unknown");
	if (te_snprintf(pipe, plen, "%s%ld.pipe", e->pipe, rank) < 0)
		return pipe[0] = '\0',
		       te_err(why, whylen, "its pipe's path is too long");
	if (te_snprintf(dump, dlen, "%s%ld", temp, rank) < 0)
		return pipe[0] = dump[0] = '\0',
		       te_err(why, whylen, "its dump's path is too long");
	return 0;
}

/* ------------------------------------------------------------- the wire */

static const char *const status_words[] = {
	[TE_FR_OK] = "ok",
	[TE_FR_MISSING] = "missing",
	[TE_FR_REFUSED] = "refused",
	[TE_FR_EMPTY] = "empty",
};
static const char *const state_words[] = {
	[TE_FR_UNKNOWN] = "unknown",
	[TE_FR_SCHEDULED] = "scheduled",
	[TE_FR_STARTED] = "started",
	[TE_FR_COMPLETED] = "completed",
};
static const char *const outcome_words[] = {
	[TE_RAS_ANSWERED] = "answered", [TE_RAS_DEADLINE] = "deadline",
	[TE_RAS_SILENT] = "silent",	[TE_RAS_ABSENT] = "absent",
	[TE_RAS_CAPPED] = "capped",	[TE_RAS_NOT_LOOPBACK] = "not_loopback",
	[TE_RAS_FAILED] = "failed",
};
#define NWORDS(a) (sizeof(a) / sizeof(a[0]))

/* s (printable ASCII, cleaned here) percent-encoded: "-" for "", "%2D"
 * for "-". Fits out (3 x size). */
static const char *enc(char *out, size_t len, const char *s, size_t max)
{
	char clean[TE_HN_RAS_LINE];

	te_clean_text(clean, sizeof(clean) < max + 1 ? sizeof(clean) : max + 1,
		      s, max);
	if (!clean[0])
		return "-";
	if (!strcmp(clean, "-"))
		return "%2D";
	return te_pct_encode(out, len, clean) == 0 ? out : "-";
}

long te_hn_fr_encode(char *out, size_t len, const struct te_fr_rank *r,
		     int nccl, int has)
{
	char a[3 * TE_HN_RAS_LINE], b[3 * TE_HN_RAS_LINE], c[3 * TE_FR_OP];
	struct te_buf t;
	size_t i, np = r->npos < TE_FR_GROUPS ? r->npos : TE_FR_GROUPS;
	unsigned st = (unsigned)r->status < NWORDS(status_words)
			      ? (unsigned)r->status
			      : TE_FR_MISSING;

	te_buf_init(&t, out, len);
	te_buf_printf(&t,
		      MAGIC "fr rank=%d nccl=%d has=%d status=%s version=%s "
			    "over=%zu why=%s\n",
		      r->rank, !!nccl, !!has, status_words[st],
		      enc(a, sizeof(a), r->version, sizeof(r->version) - 1),
		      r->groups_over,
		      enc(b, sizeof(b), r->why, sizeof(r->why) - 1));
	for (i = 0; st == TE_FR_OK && i < np; i++) {
		const struct te_fr_pos *p = &r->pos[i];
		unsigned s = (unsigned)p->state < NWORDS(state_words)
				     ? (unsigned)p->state
				     : TE_FR_UNKNOWN;

		te_buf_printf(&t,
			      MAGIC "frpos rank=%d group=%s desc=%s op=%s "
				    "seq=%lld state=%s\n",
			      r->rank,
			      enc(a, sizeof(a), p->group, TE_FR_NAME - 1),
			      enc(b, sizeof(b), p->desc, TE_FR_NAME - 1),
			      enc(c, sizeof(c), p->op, TE_FR_OP - 1),
			      (long long)p->seq, state_words[s]);
	}
	if (t.cut || r->rank < 0) {
		if (len)
			out[0] = '\0';
		return -1;
	}
	return (long)t.used;
}

size_t te_hn_node_share(unsigned long nnodes)
{
	size_t share = TE_HN_NODES_RECORDS_MAX / (nnodes ? nnodes : 1);

	return share > TE_HN_NODE_RECORDS_MAX ? TE_HN_NODE_RECORDS_MAX
	       : share < TE_HN_LINE_MAX	      ? TE_HN_LINE_MAX
					      : share;
}

long te_hn_left_encode(char *out, size_t len, size_t ranks)
{
	if (!ranks || ranks > TE_HN_LEFT_MAX ||
	    te_snprintf(out, len, MAGIC "frleft ranks=%zu\n", ranks) < 0) {
		if (len)
			out[0] = '\0';
		return -1;
	}
	return (long)strlen(out);
}

long te_hn_fr_emit(const struct te_fr_rank *fr, const unsigned char *flags,
		   size_t k, size_t share,
		   void (*emit)(const char *rec, size_t len, void *arg),
		   void *arg)
{
	const size_t cap = (TE_FR_GROUPS + 1) * TE_HN_LINE_MAX;
	char *rec = malloc(cap);
	size_t i, used = 0, left = 0;
	long n;

	if (!rec)
		return -1;
	for (i = 0; i < k; i++) {
		if (fr[i].rank < 0 ||
		    (n = te_hn_fr_encode(rec, cap, &fr[i], flags[i] & 1,
					 flags[i] & 2)) <= 0)
			continue;
		if (used + (size_t)n > share) {
			left++;
			continue;
		}
		used += (size_t)n;
		emit(rec, (size_t)n, arg);
	}
	if (left && (n = te_hn_left_encode(rec, cap, left)) > 0)
		emit(rec, (size_t)n, arg);
	free(rec);
	return (long)left;
}

long te_hn_ras_encode(char *out, size_t len, int outcome, const char *text)
{
	char line[TE_HN_RAS_LINE], e[3 * TE_HN_RAS_LINE];
	struct te_buf t;
	size_t n = 0;
	unsigned oc = outcome >= 0 && (unsigned)outcome < NWORDS(outcome_words)
			      ? (unsigned)outcome
			      : TE_RAS_FAILED;

	te_buf_init(&t, out, len);
	while (text && *text && n < TE_HN_RAS_LINES) {
		size_t k = strcspn(text, "\n");

		te_clean_text(line, sizeof(line), text, k);
		te_buf_printf(&t, MAGIC "ras outcome=%s text=%s\n",
			      outcome_words[oc],
			      enc(e, sizeof(e), line, sizeof(line) - 1));
		text += k + (text[k] == '\n');
		n++;
	}
	if (t.cut) {
		if (len)
			out[0] = '\0';
		return -1;
	}
	return (long)t.used;
}

/* ------------------------------------------------------ the merger's side */

#define WORDS_MAX 9

/* Splits a line (NUL-terminated, a copy) at single spaces: the words after
 * the magic and the kind, each "key=value" with the keys given; their
 * values into val. 0, or -1. */
static int fields(char *line, const char *const *keys, size_t nkeys, char **val)
{
	char *w[WORDS_MAX], *p = line;
	size_t n = 0, i;

	for (;;) {
		char *sp = strchr(p, ' ');

		if (n == WORDS_MAX)
			return -1;
		w[n++] = p;
		if (!sp)
			break;
		*sp = '\0';
		p = sp + 1;
	}
	if (n != nkeys + 2)
		return -1;
	for (i = 0; i < nkeys; i++) {
		size_t k = strlen(keys[i]);

		if (strncmp(w[i + 2], keys[i], k) || w[i + 2][k] != '=')
			return -1;
		val[i] = w[i + 2] + k + 1;
	}
	return 0;
}

/* A percent-encoded printable text ("-": "") of at most size - 1 bytes. */
static int dec_text(const char *s, char *out, size_t size)
{
	if (!strcmp(s, "-"))
		return out[0] = '\0', 0;
	if (strlen(s) > 3 * size || te_pct_decode(out, size, s, strlen(s)) < 0)
		return -1;
	return te_is_printable(out, size - 1) ? 0 : -1;
}

static int dec_word(const char *s, const char *const *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (words[i] && !strcmp(s, words[i]))
			return (int)i;
	return -1;
}

static int dec_int(const char *s, long long lo, long long hi, long long *out)
{
	uint64_t v;
	int neg = s[0] == '-';

	if (te_parse_u64(s + neg, (uint64_t)INT64_MAX, &v) < 0)
		return -1;
	*out = neg ? -(long long)v : (long long)v;
	return *out >= lo && *out <= hi ? 0 : -1;
}

static int grow(struct te_hn_view *v)
{
	size_t nc = v->cap ? v->cap * 2 : 64;
	struct te_fr_rank *p;

	if (nc > v->max)
		nc = v->max;
	p = realloc(v->fr, nc * sizeof(*p));
	if (!p)
		return -1;
	v->fr = p;
	v->cap = nc;
	return 0;
}

/* An fr line's words into a new rank (1), or 0 when past the bound,
 * -1 refused, -2 out of memory. */
static int dec_fr(char *line, struct te_hn_view *v)
{
	static const char *const keys[] = { "rank",    "nccl", "has", "status",
					    "version", "over", "why" };
	char *val[7];
	long long rank, nccl, has, over;
	int st;
	struct te_fr_rank *r;

	if (fields(line, keys, 7, val) < 0 ||
	    dec_int(val[0], 0, 0x7fffffff, &rank) < 0 ||
	    dec_int(val[1], 0, 1, &nccl) < 0 ||
	    dec_int(val[2], 0, 1, &has) < 0 ||
	    (st = dec_word(val[3], status_words, NWORDS(status_words))) < 0 ||
	    dec_int(val[5], 0, 1000000000, &over) < 0)
		return -1;
	if (v->nfr == v->max)
		return v->fr_cut++, 0;
	if (v->nfr == v->cap && grow(v) < 0)
		return -2;
	r = &v->fr[v->nfr];
	memset(r, 0, sizeof(*r));
	if (dec_text(val[4], r->version, sizeof(r->version)) < 0 ||
	    dec_text(val[6], r->why, sizeof(r->why)) < 0)
		return -1;
	r->rank = (int)rank;
	r->status = (enum te_fr_status)st;
	r->groups_over = (size_t)over;
	v->any_nccl |= (int)nccl;
	v->any_has |= (int)has;
	v->nfr++;
	return 1;
}

/* A frpos line onto the last rank (cur, NULL: none may follow). */
static int dec_frpos(char *line, struct te_fr_rank *cur)
{
	static const char *const keys[] = { "rank", "group", "desc",
					    "op",   "seq",   "state" };
	char *val[6];
	long long rank, seq;
	struct te_fr_pos *p;
	int s;

	if (fields(line, keys, 6, val) < 0 ||
	    dec_int(val[0], 0, 0x7fffffff, &rank) < 0 ||
	    dec_int(val[4], -1, INT64_MAX, &seq) < 0 ||
	    (s = dec_word(val[5], state_words, NWORDS(state_words))) < 0)
		return -1;
	if (!cur || cur->rank != rank || cur->status != TE_FR_OK ||
	    cur->npos == TE_FR_GROUPS)
		return -1;
	p = &cur->pos[cur->npos];
	if (dec_text(val[1], p->group, sizeof(p->group)) < 0 ||
	    dec_text(val[2], p->desc, sizeof(p->desc)) < 0 ||
	    dec_text(val[3], p->op, sizeof(p->op)) < 0 || !p->group[0])
		return -1;
	p->seq = seq;
	p->state = (enum te_fr_state)s;
	cur->npos++;
	return 0;
}

static int dec_ras(char *line, struct te_hn_view *v)
{
	static const char *const keys[] = { "outcome", "text" };
	char *val[2], text[TE_HN_RAS_LINE];
	int oc;

	if (fields(line, keys, 2, val) < 0 ||
	    (oc = dec_word(val[0], outcome_words, NWORDS(outcome_words))) < 0 ||
	    dec_text(val[1], text, sizeof(text)) < 0 || !text[0])
		return -1;
	if (v->nras == TE_HN_RAS_LINES)
		return 0;
	if (v->ras_outcome < 0)
		v->ras_outcome = oc;
	memcpy(v->ras[v->nras++], text, sizeof(text));
	return 0;
}

/* A frleft line: its ranks added (the sum at most v->max). */
static int dec_left(char *line, struct te_hn_view *v)
{
	static const char *const keys[] = { "ranks" };
	char *val[1];
	long long n;

	if (fields(line, keys, 1, val) < 0 ||
	    dec_int(val[0], 1, TE_HN_LEFT_MAX, &n) < 0)
		return -1;
	v->fr_left += (size_t)n;
	if (v->fr_left > v->max)
		v->fr_left = v->max;
	return 0;
}

static void refuse(struct te_hn_view *v, const char *why, size_t lineno)
{
	if (!v->bad++)
		te_snprintf(v->bad_why, sizeof(v->bad_why), "line %zu: %s",
			    lineno, why);
}

struct rank_at {
	int rank;
	size_t at;
};

static int by_rank_at(const void *a, const void *b)
{
	const struct rank_at *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* One rank each (the first that came), ordered by rank. 0 or -1. */
static int dedupe(struct te_hn_view *v)
{
	struct rank_at *ra;
	struct te_fr_rank *out;
	size_t i, k = 0;

	if (v->nfr < 2)
		return 0;
	ra = malloc(v->nfr * sizeof(*ra));
	out = malloc(v->nfr * sizeof(*out));
	if (!ra || !out) {
		free(ra);
		free(out);
		return -1;
	}
	for (i = 0; i < v->nfr; i++) {
		ra[i].rank = v->fr[i].rank;
		ra[i].at = i;
	}
	qsort(ra, v->nfr, sizeof(*ra), by_rank_at);
	for (i = 0; i < v->nfr; i++)
		if (!i || ra[i].rank != ra[i - 1].rank)
			out[k++] = v->fr[ra[i].at];
	free(ra);
	free(v->fr);
	v->fr = out;
	v->cap = v->nfr;
	v->nfr = k;
	return 0;
}

int te_hn_collect(const char *buf, size_t len, size_t max, struct te_hn_view *v)
{
	static const char kfr[] = MAGIC "fr ", kpos[] = MAGIC "frpos ",
			  kras[] = MAGIC "ras ", kleft[] = MAGIC "frleft ";
	char line[TE_HN_LINE_MAX + 1];
	struct te_fr_rank *cur = NULL;
	size_t pos = 0, lineno = 0;
	int rc = 0, skip = 0; /* skip: the last fr was past the bound */

	memset(v, 0, sizeof(*v));
	v->ras_outcome = -1;
	v->max = max;
	while (buf && pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t k = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		int kind;

		lineno++;
		kind = k >= sizeof(kpos) - 1 && !memcmp(buf + pos, kpos,
							sizeof(kpos) - 1)
			       ? 2
		       : k >= sizeof(kfr) - 1 &&
				       !memcmp(buf + pos, kfr, sizeof(kfr) - 1)
			       ? 1
		       : k >= sizeof(kras) - 1 && !memcmp(buf + pos, kras,
							  sizeof(kras) - 1)
			       ? 3
		       : k >= sizeof(kleft) - 1 && !memcmp(buf + pos, kleft,
							   sizeof(kleft) - 1)
			       ? 4
			       : 0;
		if (kind && (k >= sizeof(line) || memchr(buf + pos, 0, k))) {
			refuse(v, "over-long line or NUL byte", lineno);
			if (kind == 1)
				cur = NULL;
		} else if (kind) {
			int r;

			memcpy(line, buf + pos, k);
			line[k] = '\0';
			if (kind == 1) {
				r = dec_fr(line, v);
				if (r == -2) {
					rc = -1;
					break;
				}
				cur = r == 1 ? &v->fr[v->nfr - 1] : NULL;
				skip = r == 0;
			} else if (kind == 2 && skip) {
				r = 0;
			} else {
				r = kind == 2	? dec_frpos(line, cur)
				    : kind == 3 ? dec_ras(line, v)
						: dec_left(line, v);
			}
			if (r == -1)
				refuse(v, "not a record of its kind", lineno);
		}
		pos += k + 1;
	}
	if (dedupe(v) < 0)
		rc = -1;
	return rc;
}

void te_hn_view_free(struct te_hn_view *v)
{
	free(v->fr);
	v->fr = NULL;
	v->nfr = v->cap = 0;
}

const char *te_hn_word(int kind, int value)
{
	const char *const *w = kind == TE_HN_STATUS  ? status_words
			       : kind == TE_HN_STATE ? state_words
						     : outcome_words;
	size_t n = kind == TE_HN_STATUS	 ? NWORDS(status_words)
		   : kind == TE_HN_STATE ? NWORDS(state_words)
					 : NWORDS(outcome_words);

	return value >= 0 && (size_t)value < n && w[value] ? w[value] : "?";
}
