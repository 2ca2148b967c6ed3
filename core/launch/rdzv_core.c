/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure part of the PMIx layer: coordinator lines, reports, port and
 * interface choices (see rdzv_core.h). */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "launch/rdzv_core.h"
#include "util/strutil.h"

#define MAGIC "TEBAR1"

/* ---------------------------------------------------------------- wire */

int te_host_valid(const char *s)
{
	return te_word_valid(s, TE_HOST_MAX, "._-");
}

int te_token_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (i >= TE_TOKEN_LEN || !((s[i] >= '0' && s[i] <= '9') ||
					   (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == TE_TOKEN_LEN;
}

int te_coord_line_open(const char *line, char l[TE_COORD_LINE_MAX + 1],
		       const char **p)
{
	size_t n = te_strnlen_cap(line, TE_COORD_LINE_MAX);
	char w[sizeof(MAGIC)];

	if (n > TE_COORD_LINE_MAX)
		return -1;
	if (n && line[n - 1] == '\n')
		n--;
	if (memchr(line, '\n', n))
		return -1;
	memcpy(l, line, n);
	l[n] = '\0';
	*p = l;
	return te_next_word(p, w, sizeof(w)) < 0 || strcmp(w, MAGIC) ? -1 : 0;
}

int te_coord_req_format(char *buf, size_t len, const char *token,
			const struct te_coord_req *q)
{
	char v[192];

	if (!te_token_valid(token))
		return -1;
	switch (q->kind) {
	case TE_CQ_ARRIVED:
		return te_host_valid(q->host)
			       ? te_snprintf(buf, len, "%s %s arrived %u %s\n",
					     MAGIC, token, q->rank, q->host)
			       : -1;
	case TE_CQ_FAILED:
		if (!te_host_valid(q->host) || !q->why[0] ||
		    strlen(q->why) > TE_FAIL_TEXT_MAX ||
		    !te_is_printable(q->why, TE_FAIL_TEXT_MAX))
			return -1;
		return te_snprintf(buf, len, "%s %s failed %u %s %s\n", MAGIC,
				   token, q->rank, q->host, q->why);
	case TE_CQ_NODE:
		if (!te_host_valid(q->host) ||
		    te_versions_format(v, sizeof(v), &q->ver) < 0 ||
		    !q->ckpt[0] || strchr(q->ckpt, '\n') ||
		    !te_is_printable(q->ckpt, TE_CKPT_TEXT_MAX))
			return -1;
		return te_snprintf(buf, len, "%s %s node %u %s %s ckpt=%s\n",
				   MAGIC, token, q->rank, q->host, v, q->ckpt);
	default:
		return te_snprintf(buf, len, "%s %s status %u\n", MAGIC, token,
				   q->rank);
	}
}

int te_coord_req_parse(const char *line, const char *token, uint32_t nranks,
		       struct te_coord_req *q)
{
	char l[TE_COORD_LINE_MAX + 1], w[40];
	const char *p = l, *ck;
	uint64_t rank;

	memset(q, 0, sizeof(*q));
	if (te_coord_line_open(line, l, &p) < 0)
		return -1;
	if (te_next_word(&p, w, sizeof(w)) < 0 ||
	    !te_token_equal(w, token, TE_TOKEN_LEN))
		return -1;
	if (te_next_word(&p, w, sizeof(w)) < 0)
		return -1;
	if (!strcmp(w, "arrived"))
		q->kind = TE_CQ_ARRIVED;
	else if (!strcmp(w, "status"))
		q->kind = TE_CQ_STATUS;
	else if (!strcmp(w, "node"))
		q->kind = TE_CQ_NODE;
	else if (!strcmp(w, "failed"))
		q->kind = TE_CQ_FAILED;
	else
		return -1;
	if (te_next_word(&p, w, sizeof(w)) < 0 ||
	    te_parse_u64(w, UINT32_MAX, &rank) < 0 || rank >= nranks)
		return -1;
	q->rank = (uint32_t)rank;
	if (q->kind == TE_CQ_STATUS)
		return *p ? -1 : 0;
	if (te_next_word(&p, q->host, sizeof(q->host)) < 0 ||
	    !te_host_valid(q->host))
		return -1;
	if (q->kind == TE_CQ_ARRIVED)
		return *p ? -1 : 0;
	if (q->kind == TE_CQ_FAILED) {
		if (!*p || strlen(p) > TE_FAIL_TEXT_MAX ||
		    !te_is_printable(p, TE_FAIL_TEXT_MAX))
			return -1;
		te_strlcpy(q->why, p, sizeof(q->why));
		return 0;
	}
	/* node: "trainenv=.. nccl=.. cuda=.. [cudart=..] ckpt=TEXT" */
	ck = strstr(p, " ckpt=");
	if (!ck || (size_t)(ck - p) >= 192)
		return -1;
	{
		char v[192];

		memcpy(v, p, (size_t)(ck - p));
		v[ck - p] = '\0';
		if (te_versions_parse(v, &q->ver) < 0)
			return -1;
	}
	ck += 6;
	if (!*ck || strlen(ck) > TE_CKPT_TEXT_MAX ||
	    !te_is_printable(ck, TE_CKPT_TEXT_MAX))
		return -1;
	te_strlcpy(q->ckpt, ck, sizeof(q->ckpt));
	return 0;
}

int te_coord_reply_format(char *buf, size_t len, enum te_coord_reply_kind k,
			  const char *text)
{
	char t[TE_COORD_TEXT_MAX + 1];

	te_clean_text(t, sizeof(t), text, (size_t)-1);
	if (k == TE_CR_DONE) /* the launch's: rank 0's MASTER_ADDR PORT */
		return t[0] ? te_snprintf(buf, len, "%s done %s\n", MAGIC, t)
			    : te_snprintf(buf, len, "%s done\n", MAGIC);
	if (!t[0])
		te_strlcpy(t, "-", sizeof(t));
	return te_snprintf(buf, len, "%s %s %s\n", MAGIC,
			   k == TE_CR_FAIL     ? "fail"
			   : k == TE_CR_REJECT ? "reject"
			   : k == TE_CR_ABORT  ? "abort"
			   : k == TE_CR_PROBE  ? "probe"
					       : "state",
			   t);
}

int te_coord_reply_parse(const char *line, struct te_coord_reply *r)
{
	char l[TE_COORD_LINE_MAX + 1], w[16];
	const char *p = l;

	memset(r, 0, sizeof(*r));
	if (te_coord_line_open(line, l, &p) < 0)
		return -1;
	if (te_next_word(&p, w, sizeof(w)) < 0)
		return -1;
	if (!strcmp(w, "done")) {
		r->kind = TE_CR_DONE;
		if (!*p)
			return 0;
	} else if (!strcmp(w, "fail"))
		r->kind = TE_CR_FAIL;
	else if (!strcmp(w, "reject"))
		r->kind = TE_CR_REJECT;
	else if (!strcmp(w, "state"))
		r->kind = TE_CR_STATE;
	else if (!strcmp(w, "abort"))
		r->kind = TE_CR_ABORT;
	else if (!strcmp(w, "probe"))
		r->kind = TE_CR_PROBE;
	else
		return -1;
	if (!*p || strlen(p) > TE_COORD_TEXT_MAX ||
	    !te_is_printable(p, TE_COORD_TEXT_MAX))
		return -1;
	te_strlcpy(r->text, p, sizeof(r->text));
	return 0;
}

int te_coord_info_format(char *buf, size_t len, const struct te_coord_info *c)
{
	if (!te_token_valid(c->token) || !c->port || !c->addr[0] ||
	    strchr(c->addr, ' '))
		return -1;
	return te_snprintf(buf, len, "%s %u %s", c->addr, (unsigned)c->port,
			   c->token);
}

int te_coord_info_parse(const char *s, struct te_coord_info *c)
{
	char w[64];
	const char *p = s;
	uint64_t port;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (te_strnlen_cap(s, 256) > 256)
		return -1;
	if (te_next_word(&p, c->addr, sizeof(c->addr)) < 0)
		return -1;
	for (i = 0; c->addr[i]; i++)
		if (!isxdigit((unsigned char)c->addr[i]) && c->addr[i] != '.' &&
		    c->addr[i] != ':')
			return -1;
	if (te_next_word(&p, w, sizeof(w)) < 0 ||
	    te_parse_u64(w, 65535, &port) < 0 || !port)
		return -1;
	c->port = (uint16_t)port;
	if (te_next_word(&p, c->token, sizeof(c->token)) < 0 ||
	    !te_token_valid(c->token))
		return -1;
	return *p ? -1 : 0;
}

/* ---------------------------------------------------------------- strangers */

enum te_coord_admit te_coord_admit(size_t nfree, size_t npool, size_t pool_max)
{
	if (npool >= pool_max)
		return TE_ADMIT_EVICT;
	if (nfree)
		return TE_ADMIT;
	return npool ? TE_ADMIT_EVICT : TE_ADMIT_REFUSE;
}

int te_coord_prefix_ok(const char *buf, size_t len)
{
	static const char head[] = MAGIC " ";
	const size_t tok = sizeof(head) - 1, sp = tok + TE_TOKEN_LEN;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (i < tok) {
			if (c != (unsigned char)head[i])
				return 0;
		} else if (i < sp) {
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				return 0;
		} else if (i == sp) {
			if (c != ' ')
				return 0;
		} else if (c == '\n') {
			return 1; /* the parser judges the whole line */
		} else if (c < 0x20 || c >= 0x7f) {
			return 0;
		}
	}
	return 1;
}

enum te_coord_cut te_coord_after_cut(int refused, int64_t refused_since,
				     int64_t now, int grace_ms)
{
	return refused && now - refused_since >= grace_ms ? TE_CUT_GONE
							  : TE_CUT_RETRY;
}

int te_coord_retry_ms(int prev_ms)
{
	if (prev_ms <= 0)
		return 10;
	return prev_ms >= 125 ? 250 : prev_ms * 2;
}

/* ---------------------------------------------------------------- reports */

void te_failed_report(uint32_t rank, const char *host, const char *why,
		      char *out, size_t outlen)
{
	char w[TE_FAIL_TEXT_MAX + 1];

	te_clean_text(w, sizeof(w), why, (size_t)-1);
	te_snprintf(out, outlen,
		    "rank %u (node %s) failed before the "
		    "barrier: %s",
		    rank, host && te_host_valid(host) ? host : "?",
		    w[0] ? w : "no reason given");
}

void te_missing_summary(uint32_t total, const unsigned char *arrived,
			te_host_fn host_fn, void *ctx, char *out, size_t outlen)
{
	uint32_t r, n_arrived = 0, n_missing, listed = 0, asked = 0;
	char host[TE_HOST_MAX], next[TE_HOST_MAX];
	int first = 1;

	if (!outlen)
		return;
	for (r = 0; r < total; r++)
		if (arrived[r])
			n_arrived++;
	n_missing = total - n_arrived;
	te_snprintf(out, outlen, "%u of %u ranks arrived", n_arrived, total);
	if (!n_missing)
		return;
	te_appendf(out, outlen, "; missing:");
	for (r = 0; r < total;) {
		uint32_t end;
		char item[160];

		if (arrived[r]) {
			r++;
			continue;
		}
		if (asked >= TE_MISSING_HOSTS_MAX || !host_fn ||
		    host_fn(ctx, r, host, sizeof(host)) < 0 ||
		    !te_host_valid(host))
			te_strlcpy(host, "?", sizeof(host));
		asked++;
		/* extend the range while the next rank is missing on the
		 * same host */
		for (end = r; end + 1 < total && !arrived[end + 1]; end++) {
			if (asked >= TE_MISSING_HOSTS_MAX || !host_fn ||
			    host_fn(ctx, end + 1, next, sizeof(next)) < 0 ||
			    !te_host_valid(next))
				te_strlcpy(next, "?", sizeof(next));
			asked++;
			if (strcmp(next, host))
				break;
		}
		if (end == r)
			te_snprintf(item, sizeof(item), "%s rank %u (node %s)",
				    first ? "" : ",", r, host);
		else
			te_snprintf(item, sizeof(item),
				    "%s ranks %u-%u (node %s)",
				    first ? "" : ",", r, end, host);
		/* keep room for the closing "and N more ranks" */
		if (strlen(out) + strlen(item) + 40 >= outlen)
			break;
		te_appendf(out, outlen, "%s", item);
		listed += end - r + 1;
		first = 0;
		r = end + 1;
	}
	if (listed < n_missing)
		te_appendf(out, outlen, "%s and %u more ranks",
			   listed ? "," : "", n_missing - listed);
}

/* ---------------------------------------------------------------- data */

int te_version_word_valid(const char *s)
{
	return te_word_valid(s, TE_VER_MAX, "._+-");
}

int te_version_compared(const char *value)
{
	return strcmp(value, TE_VER_NOGPU) != 0;
}

int te_versions_format(char *buf, size_t len, const struct te_versions *v)
{
	if (!te_version_word_valid(v->trainenv) ||
	    !te_version_word_valid(v->nccl) ||
	    !te_version_word_valid(v->cuda) ||
	    !te_version_word_valid(v->cudart) || v->protocol < 0 ||
	    v->protocol > TE_PROTOCOL_NUM_MAX)
		return -1;
	if (!v->protocol) /* the form before protocols, as it was */
		return te_snprintf(buf, len,
				   "trainenv=%s nccl=%s cuda=%s "
				   "cudart=%s",
				   v->trainenv, v->nccl, v->cuda, v->cudart);
	return te_snprintf(buf, len,
			   "trainenv=%s nccl=%s cuda=%s cudart=%s "
			   "protocol=%d",
			   v->trainenv, v->nccl, v->cuda, v->cudart,
			   v->protocol);
}

/* "protocol=N" at the end of a node's versions: N in 1..TE_PROTOCOL_NUM_MAX
 * without leading zeros (one spelling per number: the launch tree keeps
 * canonical tuples only). 0, or -1. */
static int protocol_word_parse(const char *p, int *out)
{
	long v = 0;

	if (strncmp(p, "protocol=", 9))
		return -1;
	p += 9;
	if (*p < '1' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > TE_PROTOCOL_NUM_MAX)
			return -1;
	}
	if (*p)
		return -1;
	*out = (int)v;
	return 0;
}

int te_versions_parse(const char *s, struct te_versions *v)
{
	static const char *const names[4] = { "trainenv=", "nccl=", "cuda=",
					      "cudart=" };
	char *dst[4] = { v->trainenv, v->nccl, v->cuda, v->cudart };
	const char *p = s;
	int i;

	memset(v, 0, sizeof(*v));
	if (te_strnlen_cap(s, 256) > 256 || !*s || s[strlen(s) - 1] == ' ')
		return -1;
	for (i = 0; i < 4; i++) {
		size_t nl = strlen(names[i]);
		char w[64];

		/* a node of an older trainenv does not say cudart= */
		if (i == 3 && !*p) {
			te_strlcpy(dst[i], "none", TE_VER_MAX);
			break;
		}
		if (strncmp(p, names[i], nl))
			return -1;
		p += nl;
		if (te_next_word(&p, w, sizeof(w)) < 0 ||
		    !te_version_word_valid(w))
			return -1;
		te_strlcpy(dst[i], w, TE_VER_MAX);
	}
	/* a node of trainenv 0.1.0 does not say its protocol */
	return *p ? protocol_word_parse(p, &v->protocol) : 0;
}

void te_nccl_version_text(int code, char *buf, size_t len)
{
	int major, minor, patch;

	if (code <= 0) {
		te_strlcpy(buf, "none", len);
		return;
	}
	if (code >= 20900) {
		major = code / 10000;
		minor = (code % 10000) / 100;
		patch = code % 100;
	} else {
		major = code / 1000;
		minor = (code % 1000) / 100;
		patch = code % 100;
	}
	te_snprintf(buf, len, "%d.%d.%d", major, minor, patch);
}

void te_cuda_version_text(int code, char *buf, size_t len)
{
	if (code <= 0) {
		te_strlcpy(buf, "none", len);
		return;
	}
	te_snprintf(buf, len, "%d.%d", code / 1000, (code % 1000) / 10);
}

/* ---------------------------------------------------------------- ports */

uint16_t te_port_pick(uint16_t start, uint16_t lo, uint16_t hi,
		      unsigned max_tries, te_port_free_fn is_free, void *ctx)
{
	uint32_t range, i, p;

	if (lo == 0 || hi < lo)
		return 0;
	if (start < lo || start > hi)
		start = lo;
	range = (uint32_t)(hi - lo) + 1;
	if (max_tries > range)
		max_tries = range;
	for (i = 0; i < max_tries; i++) {
		p = lo + ((uint32_t)(start - lo) + i) % range;
		if (is_free(ctx, (uint16_t)p))
			return (uint16_t)p;
	}
	return 0;
}

int te_rank_list_parse(const char *s, uint32_t nranks, uint32_t *out,
		       size_t max)
{
	size_t n = 0;

	if (!s || !*s)
		return -1;
	for (;;) {
		char num[16];
		size_t l = 0;
		uint64_t v;

		while (s[l] && s[l] != ',')
			l++;
		if (l == 0 || l >= sizeof(num) || n >= max)
			return -1;
		memcpy(num, s, l);
		num[l] = '\0';
		if (te_parse_u64(num, UINT32_MAX, &v) < 0 || v >= nranks)
			return -1;
		out[n++] = (uint32_t)v;
		if (!s[l])
			break;
		s += l + 1;
	}
	return (int)n;
}

int te_ifname_match(const char *pattern, const char *name)
{
	int exclude = 0, exact = 0, hit = 0;
	const char *p = pattern;

	if (!pattern || !*pattern)
		return 1;
	if (*p == '^') {
		exclude = 1;
		p++;
	}
	if (*p == '=') {
		exact = 1;
		p++;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		size_t l = end ? (size_t)(end - p) : strlen(p);

		if (l > 0 && (exact ? strlen(name) == l && !strncmp(name, p, l)
				    : !strncmp(name, p, l)))
			hit = 1;
		if (!end)
			break;
		p = end + 1;
	}
	return exclude ? !hit : hit;
}
