/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL RAS in the hang report, the pure part (core/hang/ras.h): the
 * request, the reader of RAS's text reply, the report's lines, the
 * per-step address. No I/O. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "hang/ras.h"
#include "util/strutil.h"

int te_ras_request(char *out, size_t outlen, int timeout_s)
{
	if (timeout_s < 1)
		timeout_s = 1; /* RAS reads 0 as "no timeout" */
	if (timeout_s > 3600)
		timeout_s = 3600;
	return te_snprintf(out, outlen,
			   "CLIENT PROTOCOL 2\nTIMEOUT %d\nVERBOSE STATUS\n",
			   timeout_s);
}

/* ---- reading the reply ---- */

enum section {
	S_PRE,
	S_COMMS,
	S_TABLE,
	S_ERRORS,
	S_WARNINGS
};

struct reader {
	struct te_ras_status *st;
	enum section sec;
	struct te_ras_block *blk; /* the block being read, or NULL */
	char what[TE_RAS_TEXT];	  /* what the next "Rank R -- ..." is */
};

/* A decimal of at most 9 digits at *p (then *p past it): 0, or -1 (no
 * digit, or more than 9: a number no RAS prints). */
static int num(const char **p, long *out)
{
	const char *s = *p;
	long v = 0;
	int n = 0;

	while (*s >= '0' && *s <= '9') {
		if (++n > 9)
			return -1;
		v = v * 10 + (*s++ - '0');
	}
	if (!n)
		return -1;
	*out = v;
	*p = s;
	return 0;
}

/* s starts with word: the rest, else NULL. */
static const char *after(const char *s, const char *word)
{
	size_t n = strlen(word);

	return strncmp(s, word, n) == 0 ? s + n : NULL;
}

static void copy(char *dst, size_t size, const char *s, size_t n)
{
	te_clean_text(dst, size, s, n < size - 1 ? n : size - 1);
}

static struct te_ras_block *block_new(struct reader *r, enum te_ras_kind k)
{
	struct te_ras_status *st = r->st;
	struct te_ras_block *b;

	if (st->nblocks >= TE_RAS_BLOCKS) {
		st->blocks_cut = 1;
		return NULL;
	}
	b = &st->blocks[st->nblocks++];
	memset(b, 0, sizeof(*b));
	b->kind = k;
	b->nranks = b->count = -1;
	return b;
}

static struct te_ras_who *who_new(struct te_ras_block *b, long rank)
{
	struct te_ras_who *w;

	if (b->nwho >= TE_RAS_NAMED) {
		b->who_cut = 1;
		return NULL;
	}
	w = &b->who[b->nwho++];
	memset(w, 0, sizeof(*w));
	w->rank = rank;
	w->pid = -1;
	return w;
}

/* "GPU G managed by process P on node H" or "[process information not
 * found]" into w. */
static void who_where(struct te_ras_who *w, const char *s)
{
	const char *m = strstr(s, " managed by process "), *p, *n;

	s = after(s, "GPU ");
	if (!s || !m || m < s)
		return;
	copy(w->gpu, sizeof(w->gpu), s, (size_t)(m - s));
	p = m + strlen(" managed by process ");
	if (num(&p, &w->pid) < 0)
		w->pid = -1;
	n = strstr(p, " on node ");
	if (n)
		copy(w->node, sizeof(w->node), n + 9, strlen(n + 9));
}

/* "Process P on node H managing GPU[s] G" */
static void process_line(struct reader *r, const char *s)
{
	struct te_ras_who *w = who_new(r->blk, -1);
	const char *n, *g;

	if (!w)
		return;
	if (num(&s, &w->pid) < 0)
		w->pid = -1;
	n = after(s, " on node ");
	g = n ? strstr(n, " managing GPU") : NULL;
	if (n && g) {
		copy(w->node, sizeof(w->node), n, (size_t)(g - n));
		g += strlen(" managing GPU");
		if (*g == 's')
			g++;
		if (*g == ' ')
			g++;
		copy(w->gpu, sizeof(w->gpu), g, strlen(g));
	}
	te_strlcpy(w->what,
		   r->blk->kind == TE_RAS_PROC_DEAD ? "dead" : "silent",
		   sizeof(w->what));
}

/* "Rank R -- ..." or "Rank R <what> -- ..." */
static void rank_line(struct reader *r, const char *s)
{
	struct te_ras_who *w;
	const char *dash;
	long rank;

	if (num(&s, &rank) < 0)
		return;
	dash = strstr(s, " -- ");
	if (!dash || !(w = who_new(r->blk, rank)))
		return;
	if (dash > s && *s == ' ')
		copy(w->what, sizeof(w->what), s + 1, (size_t)(dash - s - 1));
	else
		te_strlcpy(w->what, r->what, sizeof(w->what));
	if (w->what[0] == 'h' && after(w->what, "has ")) /* "has status S" */
		memmove(w->what, w->what + 4, strlen(w->what + 4) + 1);
	who_where(w, dash + 4);
}

/* "The missing rank[s]: 3,5,9" (2.24, 2.25) */
static void missing_list(struct reader *r, const char *s)
{
	struct te_ras_who *w;
	long rank;

	while (*s) {
		while (*s == ' ' || *s == ',')
			s++;
		if (num(&s, &rank) < 0)
			return;
		if (!(w = who_new(r->blk, rank)))
			return;
		te_strlcpy(w->what, "missing", sizeof(w->what));
	}
}

/* "N ranks have/reported X": what the Rank lines after it are. */
static int group_line(struct reader *r, const char *s)
{
	const char *p = s, *t;
	long n;

	if (num(&p, &n) < 0 || !(p = after(p, " ranks ")))
		return 0;
	if ((t = after(p, "have not launched any operations")))
		te_strlcpy(r->what, "launched no operations", sizeof(r->what));
	else if ((t = after(p, "have ")))
		copy(r->what, sizeof(r->what), t, strlen(t));
	else if (after(p, "reported "))
		copy(r->what, sizeof(r->what), p, strlen(p));
	else
		return 0;
	return 1;
}

/* An indented line of a block. */
static void detail(struct reader *r, const char *s)
{
	struct te_ras_block *b = r->blk;
	const char *p;
	long n;

	if ((p = after(s, "Missing communicator data from ")) &&
	    num(&p, &n) == 0)
		b->count = n;
	else if ((p = after(s, "Encountered ")) && num(&p, &n) == 0)
		b->count = n;
	else if (b->kind == TE_RAS_PROC_DEAD && (p = s, num(&p, &n) == 0) &&
		 after(p, " job process"))
		b->count = n;
	else if ((p = after(s, "Process ")))
		process_line(r, p);
	else if ((p = after(s, "Rank ")))
		rank_line(r, p);
	else if ((p = after(s, "The missing rank")))
		missing_list(r, strchr(p, ':') ? strchr(p, ':') + 1 : "");
	else if ((p = after(s, "Communicator ranks have ")))
		copy(b->note, sizeof(b->note), p, strlen(p));
	else if ((p = strstr(s, " error")) &&
		 (after(s, "Initialization") || after(s, "Asynchronous"))) {
		const char *on = strstr(p, " on ");

		if (on && (on += 4, num(&on, &n) == 0))
			b->count = (b->count < 0 ? 0 : b->count) + n;
		te_strlcpy(r->what,
			   s[0] == 'I' ? "initialization error"
				       : "asynchronous error",
			   sizeof(r->what));
	} else
		(void)group_line(r, s);
}

/* "#g-c (hash) KIND" */
static void comm_head(struct reader *r, const char *s)
{
	const char *sp = strchr(s, ' '), *o, *c;
	enum te_ras_kind k;

	if (!sp || sp[1] != '(' || !(c = strchr(sp, ')')))
		return;
	o = c + 1;
	if (strcmp(o, " INCOMPLETE") == 0)
		k = TE_RAS_COMM_MISSING;
	else if (strcmp(o, " ERROR") == 0)
		k = TE_RAS_COMM_ERROR;
	else if (strcmp(o, " MISMATCH") == 0)
		k = TE_RAS_COMM_MISMATCH;
	else
		return;
	if (!(r->blk = block_new(r, k)))
		return;
	copy(r->blk->comm, sizeof(r->blk->comm), s, (size_t)(sp - s));
	copy(r->blk->hash, sizeof(r->blk->hash), sp + 2, (size_t)(c - sp - 2));
	te_strlcpy(r->what, k == TE_RAS_COMM_MISSING ? "missing" : "",
		   sizeof(r->what));
}

/* A row of the communicators' table: 8 words. */
static void table_row(struct reader *r, const char *s)
{
	struct te_ras_status *st = r->st;
	struct te_ras_group g;
	char rpn[16];

	memset(&g, 0, sizeof(g));
	if (sscanf(s, "%ld %ld %ld %15s %ld %ld %15s %31s", &g.index, &g.comms,
		   &g.nodes, rpn, &g.ranks_per_comm, &g.ranks_in_group,
		   g.status, g.errors) != 8 ||
	    g.comms < 0 || g.nodes < 0 || g.ranks_per_comm < 0 ||
	    g.ranks_in_group < 0) { /* counts, never below 0 */
		r->sec = S_COMMS;
		return;
	}
	if (st->ngroups >= TE_RAS_GROUPS) {
		st->groups_cut = 1;
		return;
	}
	te_clean_text(g.status, sizeof(g.status), g.status, sizeof(g.status));
	te_clean_text(g.errors, sizeof(g.errors), g.errors, sizeof(g.errors));
	st->groups[st->ngroups++] = g;
}

static void line(struct reader *r, const char *s)
{
	struct te_ras_status *st = r->st;
	const char *p;
	long n;

	if (r->sec == S_TABLE && s[0] == ' ' && strncmp(s, "    #", 5)) {
		table_row(r, s);
		return;
	}
	if (s[0] == ' ' && s[1] == ' ' && r->blk &&
	    (r->sec == S_ERRORS || r->sec == S_WARNINGS)) {
		detail(r, s + 2);
		return;
	}
	r->blk = s[0] ? NULL : r->blk;
	if ((p = after(s, "SERVER PROTOCOL ")) && !st->answered) {
		st->answered = 1;
		st->protocol = num(&p, &n) == 0 ? (int)n : -1;
	} else if ((p = after(s, "ERROR: ")) && !st->refused[0])
		copy(st->refused, sizeof(st->refused), s, strlen(s));
	else if ((p = after(s, "NCCL version ")) && !st->version[0])
		copy(st->version, sizeof(st->version), p, strcspn(p, " "));
	else if (after(s, "Communicators..."))
		r->sec = S_COMMS;
	else if (after(s, "Group ") && strstr(s, "Comms"))
		st->table = 1, r->sec = S_TABLE;
	else if (after(s, "No communicator data collected!"))
		st->table = st->no_comms = 1;
	else if (strcmp(s, "Errors") == 0)
		r->sec = S_ERRORS;
	else if (strcmp(s, "Warnings") == 0)
		r->sec = S_WARNINGS, st->finished = 1;
	else if (s[0] == '{' && r->sec == S_PRE)
		st->json = 1;
	else if (r->sec == S_ERRORS || r->sec == S_WARNINGS) {
		if (strcmp(s, "INCOMPLETE") == 0)
			r->blk = block_new(r, TE_RAS_PROC_MISSING);
		else if (strcmp(s, "DEAD") == 0)
			r->blk = block_new(r, TE_RAS_PROC_DEAD);
		else if (strcmp(s, "TIMEOUT") == 0)
			r->blk = block_new(r, TE_RAS_TIMEOUTS);
		else if (s[0] == '#')
			comm_head(r, s);
	}
}

/* Each block's communicator size: its group's ranks per comm ("#g-c"). */
static void sizes(struct te_ras_status *st)
{
	size_t i, j;

	for (i = 0; i < st->nblocks; i++) {
		const char *p = st->blocks[i].comm + 1;
		long g;

		if (st->blocks[i].comm[0] != '#' || num(&p, &g) < 0)
			continue;
		for (j = 0; j < st->ngroups; j++)
			if (st->groups[j].index == g)
				st->blocks[i].nranks =
					st->groups[j].ranks_per_comm;
	}
}

void te_ras_parse(const char *buf, size_t len, struct te_ras_status *st)
{
	enum te_ras_outcome outcome = st->outcome;
	int err = st->err;
	struct reader r;
	char l[TE_RAS_LINE];
	size_t i = 0, n, k, j;

	memset(st, 0, sizeof(*st));
	st->outcome = outcome;
	st->err = err;
	if (len > TE_RAS_REPLY_MAX) {
		len = TE_RAS_REPLY_MAX;
		st->capped = 1;
	}
	memset(&r, 0, sizeof(r));
	r.st = st;
	while (buf && i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);

		n = nl ? (size_t)(nl - (buf + i)) : len - i;
		k = n < sizeof(l) - 1 ? n : sizeof(l) - 1;
		memcpy(l, buf + i, k);
		if (k && l[k - 1] == '\r')
			k--;
		l[k] = 0;
		for (j = 0; j < k; j++)
			if ((unsigned char)l[j] < 0x20 ||
			    (unsigned char)l[j] > 0x7e)
				l[j] = '?';
		line(&r, l);
		i += n + 1;
	}
	sizes(st);
}

/* ---- the report's lines ---- */

struct out {
	char *p;
	size_t len, used, last; /* last: where the last line written starts */
	size_t lines, max, left;
};

__attribute__((format(printf, 2, 3))) static void emit(struct out *o,
						       const char *fmt, ...)
{
	char l[640];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(l, sizeof(l) - 1, fmt, ap);
	va_end(ap);
	n = strlen(l);
	l[n++] = '\n';
	l[n] = 0;
	if (o->left || o->lines >= o->max || o->used + n >= o->len) {
		/* the last line written makes room for "N more left out" */
		if (!o->left && o->lines) {
			o->used = o->last;
			o->p[o->used] = 0;
			o->lines--;
			o->left++;
		}
		o->left++;
		return;
	}
	o->last = o->used;
	memcpy(o->p + o->used, l, n + 1);
	o->used += n;
	o->lines++;
}

/* " (GPU 5, process 1234 on node 10.0.0.2)" or "" */
static const char *where(const struct te_ras_who *w, char *buf, size_t len)
{
	char pid[24] = "";

	if (w->pid >= 0)
		te_snprintf(pid, sizeof(pid), "process %ld", w->pid);
	te_snprintf(buf, len, " (%s%s%s%s%s%s)", w->gpu[0] ? "GPU " : "",
		    w->gpu, w->gpu[0] && (pid[0] || w->node[0]) ? ", " : "",
		    pid, w->node[0] ? " on node " : "", w->node);
	if (strcmp(buf, " ()") == 0)
		buf[0] = 0;
	return buf;
}

static void proc_block(struct out *o, const struct te_ras_block *b)
{
	int dead = b->kind == TE_RAS_PROC_DEAD;
	size_t i;

	for (i = 0; i < b->nwho; i++)
		emit(o, "NCCL RAS: process %ld on node %s%s%s%s", b->who[i].pid,
		     b->who[i].node[0] ? b->who[i].node : "?",
		     b->who[i].gpu[0] ? " (GPU " : "", b->who[i].gpu,
		     dead ? (b->who[i].gpu[0]
				     ? ") is considered dead (RAS cannot reach it)"
				     : " is considered dead (RAS cannot reach it)")
			  : (b->who[i].gpu[0] ? ") sent no communicator data"
					      : " sent no communicator data"));
	if (!b->nwho && b->count > 0)
		emit(o, "NCCL RAS: %ld job process%s %s (RAS did not name %s)",
		     b->count, b->count > 1 ? "es" : "",
		     dead ? "considered dead" : "sent no communicator data",
		     b->count > 1 ? "them" : "it");
	if (b->who_cut)
		emit(o, "NCCL RAS: %ld job processes in all", b->count);
}

static void comm_block(struct out *o, const struct te_ras_block *b)
{
	char head[96], wb[160];
	size_t i;

	if (b->nranks >= 0)
		te_snprintf(head, sizeof(head), "communicator %s (%ld ranks)",
			    b->hash, b->nranks);
	else
		te_snprintf(head, sizeof(head), "communicator %s", b->hash);
	for (i = 0; i < b->nwho; i++)
		emit(o, "NCCL RAS: %s: rank %ld %s%s", head, b->who[i].rank,
		     b->who[i].what[0] ? b->who[i].what : "named",
		     where(&b->who[i], wb, sizeof(wb)));
	if (!b->nwho && b->kind == TE_RAS_COMM_MISMATCH)
		emit(o, "NCCL RAS: %s: ranks have %s", head,
		     b->note[0] ? b->note : "different views");
	else if (!b->nwho && b->count > 0)
		emit(o, "NCCL RAS: %s: %ld rank%s %s (RAS did not name %s)",
		     head, b->count, b->count > 1 ? "s" : "",
		     b->kind == TE_RAS_COMM_MISSING ? "missing" : "with errors",
		     b->count > 1 ? "them" : "it");
	if (b->who_cut)
		emit(o,
		     "NCCL RAS: %s: more ranks named than shown (%ld in all)",
		     head, b->count);
}

/* One line when there is no problem to name. */
static void summary(struct out *o, const struct te_ras_status *st,
		    const char *ver)
{
	long comms = 0;
	size_t i, bad = 0;

	if (st->no_comms) {
		emit(o, "NCCL RAS%s: no communicators", ver);
		return;
	}
	for (i = 0; i < st->ngroups; i++) {
		/* a hostile reply's counts (up to LONG_MAX each): saturated */
		comms = st->groups[i].comms > LONG_MAX - comms
				? LONG_MAX
				: comms + st->groups[i].comms;
		bad += strcmp(st->groups[i].errors, "OK") != 0;
	}
	if (!bad) {
		emit(o,
		     "NCCL RAS%s: %ld communicator%s, every rank answered, no errors",
		     ver, comms, comms == 1 ? "" : "s");
		return;
	}
	for (i = 0; i < st->ngroups; i++)
		if (strcmp(st->groups[i].errors, "OK"))
			emit(o,
			     "NCCL RAS%s: %ld communicator%s of %ld ranks: %s, %s",
			     ver, st->groups[i].comms,
			     st->groups[i].comms == 1 ? "" : "s",
			     st->groups[i].ranks_per_comm, st->groups[i].status,
			     st->groups[i].errors);
}

static int unanswered(struct out *o, const struct te_ras_status *st,
		      const char *addr)
{
	switch (st->outcome) {
	case TE_RAS_NOT_LOOPBACK:
		if (st->err == EINVAL)
			emit(o,
			     "NCCL RAS: not asked: %s names a host, not a numeric address (no name is looked up: DNS has no deadline; localhost, 127.x.x.x and [::1] are asked)",
			     addr);
		else
			emit(o,
			     "NCCL RAS: not asked: %s is not a loopback address",
			     addr);
		return 1;
	case TE_RAS_ABSENT:
		emit(o,
		     "NCCL RAS: no answer at %s (nothing listens: RAS off, NCCL older than 2.24 or not started, or the port taken)",
		     addr);
		return 1;
	case TE_RAS_SILENT:
		emit(o,
		     "NCCL RAS: connected to %s, not a byte before the deadline",
		     addr);
		return 1;
	case TE_RAS_FAILED:
		if (!st->answered) {
			emit(o, "NCCL RAS: could not ask %s: %s", addr,
			     strerror(st->err));
			return 1;
		}
		return 0;
	default:
		break;
	}
	if (!st->answered) {
		emit(o,
		     st->json ? "NCCL RAS: the reply at %s was JSON, not read"
			      : "NCCL RAS: what answered at %s is not NCCL RAS",
		     addr);
		return 1;
	}
	return 0;
}

int te_ras_format(const struct te_ras_status *st, const char *addr,
		  size_t max_lines, char *out, size_t outlen)
{
	struct out o = { .p = out, .len = outlen, .max = max_lines };
	char ver[40] = "";
	size_t i;

	if (!out || !outlen)
		return 0;
	out[0] = 0;
	if (!max_lines)
		return 0;
	if (!addr)
		addr = "?";
	if (unanswered(&o, st, addr))
		goto done;
	if (st->version[0])
		te_snprintf(ver, sizeof(ver), " (NCCL %s)", st->version);
	if (!st->table)
		emit(&o,
		     "NCCL RAS%s: answered at %s but %s before it had the communicators' data%s%s",
		     ver, addr,
		     st->outcome == TE_RAS_DEADLINE ? "the deadline came"
						    : "the reply ended",
		     st->refused[0] ? ": " : "", st->refused);
	for (i = 0; i < st->nblocks; i++) {
		const struct te_ras_block *b = &st->blocks[i];

		if (b->kind == TE_RAS_PROC_MISSING ||
		    b->kind == TE_RAS_PROC_DEAD)
			proc_block(&o, b);
		else if (b->kind == TE_RAS_TIMEOUTS)
			emit(&o,
			     "NCCL RAS: %ld communication timeout%s while RAS gathered data (a process may be stuck)",
			     b->count, b->count == 1 ? "" : "s");
		else
			comm_block(&o, b);
	}
	if (st->blocks_cut)
		emit(&o, "NCCL RAS: more problems than the %d shown",
		     TE_RAS_BLOCKS);
	if (st->table && !st->nblocks)
		summary(&o, st, ver);
	if (st->table && (st->outcome != TE_RAS_ANSWERED || st->capped))
		emit(&o, "NCCL RAS: the reply was cut (%s): it may say more",
		     st->capped || st->outcome == TE_RAS_CAPPED
			     ? "at 256 KiB"
			     : "by the deadline");
done:
	if (o.left && o.used + 48 < o.len) {
		te_snprintf(o.p + o.used, o.len - o.used,
			    "NCCL RAS: %zu more line%s left out\n", o.left,
			    o.left == 1 ? "" : "s");
		o.lines++;
	}
	return (int)o.lines;
}

/* ---- the step's address ---- */

int te_ras_addr_pick(uint32_t job, uint32_t step, unsigned port_lo,
		     unsigned port_hi, char *out, size_t outlen)
{
	uint32_t v;
	unsigned port;

	if (!port_lo && !port_hi) {
		port_lo = TE_RAS_PORT_LO;
		port_hi = TE_RAS_PORT_HI;
	}
	if (!port_lo || port_hi > 65535 || port_lo > port_hi)
		return -1;
	v = 2 + job % 16777213u; /* 2 .. 0xfffffe */
	port = port_lo + step % (port_hi - port_lo + 1);
	return te_snprintf(out, outlen, "127.%u.%u.%u:%u", (v >> 16) & 255,
			   (v >> 8) & 255, v & 255, port);
}

int te_ras_addr_split(const char *addr, char *host, size_t hostlen,
		      uint16_t *port)
{
	const char *colon, *h = addr;
	size_t hl;
	uint64_t p;
	unsigned char a[16];

	if (!addr || !hostlen)
		return -1;
	host[0] = 0;
	if (addr[0] == '[') {
		const char *rb = strchr(addr, ']');

		if (!rb || rb[1] != ':')
			return -1;
		h = addr + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || strchr(addr, ':') != colon)
			return -1;
		hl = (size_t)(colon - addr);
	}
	if (hl == 0 || hl >= hostlen || hl >= 64 ||
	    te_parse_u64(colon + 1, 65535, &p) < 0 || p == 0)
		return -1;
	memcpy(host, h, hl);
	host[hl] = 0;
	*port = (uint16_t)p;
	if (strcmp(host, "localhost") == 0)
		return 0;
	if (addr[0] == '[') {
		if (inet_pton(AF_INET6, host, a) != 1)
			return -2;
		return memcmp(a, &in6addr_loopback, 16) == 0 ? 0 : -1;
	}
	if (inet_pton(AF_INET, host, a) != 1)
		return -2;
	return a[0] == 127 ? 0 : -1;
}
