/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hang report's line format between a node's stack collector and the
 * login-side merger (core/hang/stacks.h): the encoder and its strict decoder.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hang/stacks.h"
#include "util/strutil.h"
#include "util/textbuf.h"

#define ENC_MAX (3 * TE_STACK_NOTE_MAX + 1)

/* s percent-encoded, "-" for "" (and "%2D" for a lone "-"). */
static const char *enc(char *out, size_t len, const char *s)
{
	if (!s[0])
		return "-";
	if (!strcmp(s, "-"))
		return "%2D";
	if (te_pct_encode(out, len, s) < 0)
		return "-"; /* cannot happen: out fits 3 x the bound */
	return out;
}

/* enc() of s, at most TE_STACK_WIRE_FIELD_MAX bytes: a longer encoding
 * (a name of many bytes that are escaped: C++ punctuation, non-ASCII) is
 * of a shorter prefix of s, cut at a character's start, with "..." after
 * it; so that every line of a record fits one of slurmstepd's output
 * messages with its tag (te_stack_wire_tag). */
static const char *enc_field(char *out, size_t len, const char *s)
{
	char cut[TE_STACK_NAME_MAX + 4];
	size_t i, acc = 0, keep = 0;

	if (te_pct_encoded_len(s) <= TE_STACK_WIRE_FIELD_MAX)
		return enc(out, len, s);
	/* the cut name with its "..." stays within the name's bound too */
	for (i = 0; s[i] && i < TE_STACK_NAME_MAX - 3; i++) {
		acc += te_pct_encoded_len((char[]){ s[i], 0 });
		if (acc + 3 > TE_STACK_WIRE_FIELD_MAX)
			break;
		/* a UTF-8 continuation byte is no place to cut before */
		if (((unsigned char)s[i + 1] & 0xc0) != 0x80)
			keep = i + 1;
	}
	memcpy(cut, s, keep);
	memcpy(cut + keep, "...", 4);
	return enc(out, len, cut);
}

static char wire_state(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? c : '?';
}

/* The record with at most tmax threads of at most kmax frames each (the
 * innermost: frames are most recent first), note as given, tcut_more more
 * threads counted as cut. 0, or -1 when it does not fit. */
static int encode(struct te_buf *b, const struct te_proc_stack *ps,
		  const char *note_in, size_t tmax, size_t kmax)
{
	char a[ENC_MAX], c[ENC_MAX], d[ENC_MAX], note[TE_STACK_NOTE_MAX],
		wchan[TE_STACK_WCHAN_MAX];
	size_t i, j,
		nt = ps->nthreads < TE_STACK_THREADS ? ps->nthreads
						     : TE_STACK_THREADS;
	unsigned tcut = ps->threads_cut + (unsigned)(nt > tmax ? nt - tmax : 0);

	te_buf_rewind(b, 0);
	/* The decoder refuses control bytes: a collector's note or a wchan
	 * that holds one goes with '?' instead. */
	te_clean_text(note, sizeof(note), note_in, SIZE_MAX);
	te_clean_text(wchan, sizeof(wchan), ps->wchan, SIZE_MAX);
	te_buf_printf(b,
		      TE_STACK_WIRE_MAGIC
		      " proc rank=%d pid=%d node=%s "
		      "state=%c cpu_ms=%lld since_ms=%lld wchan=%s nopy=%u "
		      "tcut=%u note=%s world=%d\n",
		      ps->rank, ps->pid, enc(a, sizeof(a), ps->node),
		      wire_state(ps->state), (long long)ps->cpu_ms,
		      (long long)ps->since_ms, enc(c, sizeof(c), wchan),
		      (unsigned)ps->threads_nopy,
		      tcut < UINT16_MAX ? tcut : UINT16_MAX,
		      enc(d, sizeof(d), note), ps->world >= 0 ? ps->world : -1);
	for (i = 0; i < nt && i < tmax && !b->cut; i++) {
		const struct te_thread_stack *t = &ps->threads[i];

		te_buf_printf(b, "thread lwp=%d cut=%d\n", t->lwp,
			      t->cut || t->count > kmax ? 1 : 0);
		for (j = 0; j < t->count && j < kmax &&
			    t->first + j < TE_STACK_FRAMES_ALL && !b->cut;
		     j++) {
			const struct te_frame *f = &ps->frames[t->first + j];

			if (f->kind == TE_FRAME_PY)
				te_buf_printf(
					b, "frame py %u %s %s %u\n",
					(unsigned)f->line,
					enc_field(a, sizeof(a),
						  te_frame_str(ps, f->func)),
					enc_field(c, sizeof(c),
						  te_frame_str(ps, f->file)),
					(unsigned)f->flags);
			else
				te_buf_printf(
					b,
					"frame native %llx %u %s %s "
					"%s %u\n",
					(unsigned long long)f->addr,
					(unsigned)f->line,
					enc_field(a, sizeof(a),
						  te_frame_str(ps, f->func)),
					enc_field(c, sizeof(c),
						  te_frame_str(ps, f->file)),
					enc_field(d, sizeof(d),
						  te_frame_str(ps, f->lib)),
					(unsigned)f->flags);
		}
	}
	te_buf_printf(b, "end\n");
	return b->cut ? -1 : 0;
}

#define CUT_NOTE "stack cut to fit its record (outermost frames first)"

int te_stack_wire_encode(char *buf, size_t len, const struct te_proc_stack *ps)
{
	char note[TE_STACK_NOTE_MAX];
	size_t nt = ps->nthreads < TE_STACK_THREADS ? ps->nthreads
						    : TE_STACK_THREADS,
	       deepest = 0, lo, hi, i;
	struct te_buf b;

	te_buf_init(&b, buf, len);
	if (encode(&b, ps, ps->note, nt, TE_STACK_FRAMES_ALL) == 0)
		return 0;
	/* Too big: never dropped. The note says so (after the collector's
	 * own, when both fit). */
	if (!ps->note[0])
		te_strlcpy(note, CUT_NOTE, sizeof(note));
	else if (te_snprintf(note, sizeof(note), "%s; %s", ps->note, CUT_NOTE) <
		 0)
		te_strlcpy(note, ps->note, sizeof(note));
	for (i = 0; i < nt; i++)
		if (ps->threads[i].count > deepest)
			deepest = ps->threads[i].count;
	if (deepest && encode(&b, ps, note, nt, 1) == 0) {
		/* the most frames per thread that fit: fits(lo), not hi */
		for (lo = 1, hi = deepest; hi - lo > 1;) {
			size_t mid = lo + (hi - lo) / 2;

			if (encode(&b, ps, note, nt, mid) == 0)
				lo = mid;
			else
				hi = mid;
		}
		return encode(&b, ps, note, nt, lo) == 0 ? 1 : -1;
	}
	/* not one frame of every thread: the innermost frame of the first
	 * threads that fit (the others counted as cut), else only lines */
	for (i = nt; deepest && i-- > 1;)
		if (encode(&b, ps, note, i, 1) == 0)
			return 1;
	for (i = nt + 1; i-- > 0;)
		if (encode(&b, ps, note, i, 0) == 0)
			return 1;
	te_buf_rewind(&b, 0);
	return -1;
}

/* ---------------------------------------------------------------- decoder */

struct dec {
	int lineno;
	char *err;
	size_t errlen;
};

/* A decimal in [lo, hi] (lo may be -1: "-1" is read too). */
static int dec_num(struct dec *d, const char *s, long long lo, long long hi,
		   const char *what, long long *out)
{
	uint64_t v;

	if (lo < 0 && !strcmp(s, "-1"))
		return *out = -1, 0;
	if (te_parse_u64(s, (uint64_t)hi, &v) < 0 || (long long)v < lo)
		return te_err(d->err, d->errlen,
			      "line %d: %s is not a number "
			      "in %lld..%lld",
			      d->lineno, what, lo, hi);
	*out = (long long)v;
	return 0;
}

/* "key=VALUE" with the expected key; *val points into tok. */
static int dec_key(struct dec *d, char *tok, const char *key, char **val)
{
	size_t k = strlen(key);

	if (!tok || strncmp(tok, key, k) || tok[k] != '=')
		return te_err(d->err, d->errlen,
			      "line %d: expected %s=", d->lineno, key);
	*val = tok + k + 1;
	return 0;
}

/* A percent-encoded field ("-" is "") of at most max bytes, no control
 * byte; with ascii (node, wchan, note: what the encoder cleans) printable
 * ASCII only. */
static int dec_str_as(struct dec *d, const char *s, char *out, size_t size,
		      size_t max, const char *what, int ascii)
{
	size_t i;

	if (!strcmp(s, "-"))
		return out[0] = '\0', 0;
	if (strlen(s) > 3 * max || te_pct_decode(out, size, s, strlen(s)) < 0)
		return te_err(d->err, d->errlen,
			      "line %d: %s: bad %%-escape, NUL "
			      "byte or over %zu bytes",
			      d->lineno, what, max);
	if (strlen(out) > max)
		return te_err(d->err, d->errlen, "line %d: %s over %zu bytes",
			      d->lineno, what, max);
	for (i = 0; out[i]; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			return te_err(d->err, d->errlen,
				      "line %d: control byte "
				      "in %s",
				      d->lineno, what);
	if (ascii && !te_is_printable(out, max))
		return te_err(d->err, d->errlen,
			      "line %d: %s is not printable "
			      "ASCII",
			      d->lineno, what);
	return 0;
}

static int dec_str(struct dec *d, const char *s, char *out, size_t size,
		   size_t max, const char *what)
{
	return dec_str_as(d, s, out, size, max, what, 0);
}

#define TOK_MAX 13

/* Splits line at single spaces; -1 for empty words or too many. */
static int split(struct dec *d, char *line, char **tok)
{
	int n = 0, i;
	char *p = line;

	for (;;) {
		char *sp = strchr(p, ' ');

		if (n == TOK_MAX)
			return te_err(d->err, d->errlen,
				      "line %d: more than %d "
				      "words",
				      d->lineno, TOK_MAX);
		if (sp == p || !*p)
			return te_err(d->err, d->errlen, "line %d: empty word",
				      d->lineno);
		tok[n++] = p;
		if (!sp)
			break;
		*sp = '\0';
		p = sp + 1;
	}
	for (i = n; i < TOK_MAX; i++)
		tok[i] = NULL;
	return n;
}

static int dec_proc(struct dec *d, char **tok, int n, struct te_proc_stack *ps)
{
	static const char *const keys[] = { "rank",  "pid",    "node",
					    "state", "cpu_ms", "since_ms",
					    "wchan", "nopy",   "tcut",
					    "note" };
	char *v[10];
	long long x;
	int i;

	if (n < 2 || strcmp(tok[0], TE_STACK_WIRE_MAGIC) ||
	    strcmp(tok[1], "proc"))
		return te_err(d->err, d->errlen,
			      "line 1: not a \"%s proc\" "
			      "line",
			      TE_STACK_WIRE_MAGIC);
	if (n != 12 && n != 13)
		return te_err(d->err, d->errlen,
			      "line 1: %d words, want 12 "
			      "or 13",
			      n);
	for (i = 0; i < 10; i++)
		if (dec_key(d, tok[i + 2], keys[i], &v[i]) < 0)
			return -1;
	if (dec_num(d, v[0], -1, INT_MAX, "rank", &x) < 0)
		return -1;
	ps->rank = (int)x;
	if (dec_num(d, v[1], 0, INT_MAX, "pid", &x) < 0)
		return -1;
	ps->pid = (int)x;
	if (dec_str_as(d, v[2], ps->node, sizeof(ps->node),
		       sizeof(ps->node) - 1, "node", 1) < 0)
		return -1;
	if (ps->node[0] && !te_word_valid(ps->node, sizeof(ps->node), "-_."))
		return te_err(d->err, d->errlen,
			      "line 1: node is not a host "
			      "name");
	if (strlen(v[3]) != 1 || wire_state(v[3][0]) != v[3][0])
		return te_err(d->err, d->errlen,
			      "line 1: state is not one "
			      "letter or '?'");
	ps->state = v[3][0];
	if (dec_num(d, v[4], -1, 1000000000000000LL, "cpu_ms", &x) < 0)
		return -1;
	ps->cpu_ms = x;
	if (dec_num(d, v[5], -1, 1000000000000000LL, "since_ms", &x) < 0)
		return -1;
	ps->since_ms = x;
	if (dec_str_as(d, v[6], ps->wchan, sizeof(ps->wchan),
		       sizeof(ps->wchan) - 1, "wchan", 1) < 0)
		return -1;
	if (dec_num(d, v[7], 0, UINT16_MAX, "nopy", &x) < 0)
		return -1;
	ps->threads_nopy = (uint16_t)x;
	if (dec_num(d, v[8], 0, UINT16_MAX, "tcut", &x) < 0)
		return -1;
	ps->threads_cut = (uint16_t)x;
	if (dec_str_as(d, v[9], ps->note, sizeof(ps->note),
		       sizeof(ps->note) - 1, "note", 1) < 0)
		return -1;
	if (n == 13) {
		if (dec_key(d, tok[12], "world", &v[0]) < 0 ||
		    dec_num(d, v[0], -1, INT_MAX, "world", &x) < 0)
			return -1;
		ps->world = (int)x;
	}
	return 0;
}

static int dec_frame(struct dec *d, char **tok, int n, struct te_proc_stack *ps)
{
	char fn[TE_STACK_NAME_MAX + 1], fi[TE_STACK_NAME_MAX + 1],
		li[TE_STACK_NAME_MAX + 1];
	int py = n >= 2 && !strcmp(tok[1], "py");
	unsigned long long addr = 0;
	long long line = 0, flags = 0;
	char **t = tok + 2;
	struct te_thread_stack *th;

	if (!py && (n < 2 || strcmp(tok[1], "native")))
		return te_err(d->err, d->errlen,
			      "line %d: a frame is py or "
			      "native",
			      d->lineno);
	if (n != (py ? 6 : 8))
		return te_err(d->err, d->errlen, "line %d: %d words, want %d",
			      d->lineno, n, py ? 6 : 8);
	if (!ps->nthreads)
		return te_err(d->err, d->errlen,
			      "line %d: a frame before any "
			      "thread",
			      d->lineno);
	th = &ps->threads[ps->nthreads - 1];
	if (th->count >= TE_STACK_FRAMES || ps->nframes >= TE_STACK_FRAMES_ALL)
		return te_err(d->err, d->errlen,
			      "line %d: too many frames (at "
			      "most %d a thread, %d a process)",
			      d->lineno, TE_STACK_FRAMES, TE_STACK_FRAMES_ALL);
	if (!py) {
		size_t k = strlen(*t), i;

		if (!k || k > 16)
			return te_err(d->err, d->errlen, "line %d: bad address",
				      d->lineno);
		for (i = 0; i < k; i++) {
			char c = (*t)[i];
			int v = c >= '0' && c <= '9'   ? c - '0'
				: c >= 'a' && c <= 'f' ? c - 'a' + 10
						       : -1;

			if (v < 0)
				return te_err(d->err, d->errlen,
					      "line %d: bad "
					      "address",
					      d->lineno);
			addr = addr << 4 | (unsigned)v;
		}
		t++;
	}
	if (dec_num(d, t[0], 0, 9999999, "line", &line) < 0 ||
	    dec_str(d, t[1], fn, sizeof(fn), TE_STACK_NAME_MAX, "function") <
		    0 ||
	    dec_str(d, t[2], fi, sizeof(fi), TE_STACK_NAME_MAX, "file") < 0)
		return -1;
	li[0] = '\0';
	if (!py &&
	    dec_str(d, t[3], li, sizeof(li), TE_STACK_NAME_MAX, "library") < 0)
		return -1;
	if (dec_num(d, t[py ? 3 : 4], 0, TE_FRAME_CUT, "flags", &flags) < 0)
		return -1;
	if (te_stack_add_frame(ps, py ? TE_FRAME_PY : TE_FRAME_NATIVE, fn,
			       strlen(fn), fi, strlen(fi), (uint32_t)line, li,
			       strlen(li), addr) < 0)
		return te_err(d->err, d->errlen,
			      "line %d: over %d bytes of text", d->lineno,
			      TE_STACK_TEXT);
	ps->frames[ps->nframes - 1].flags = (uint8_t)flags;
	return 0;
}

static int dec_thread(struct dec *d, char **tok, int n,
		      struct te_proc_stack *ps)
{
	char *v;
	long long lwp = 0, cut = 0;

	if (n != 3)
		return te_err(d->err, d->errlen, "line %d: %d words, want 3",
			      d->lineno, n);
	if (ps->nthreads >= TE_STACK_THREADS)
		return te_err(d->err, d->errlen,
			      "line %d: more than %d threads", d->lineno,
			      TE_STACK_THREADS);
	if (dec_key(d, tok[1], "lwp", &v) < 0 ||
	    dec_num(d, v, 0, INT_MAX, "lwp", &lwp) < 0 ||
	    dec_key(d, tok[2], "cut", &v) < 0 ||
	    dec_num(d, v, 0, 1, "cut", &cut) < 0)
		return -1;
	te_stack_add_thread(ps, (int)lwp);
	ps->threads[ps->nthreads - 1].cut = (uint8_t)cut;
	return 0;
}

int te_stack_wire_decode(const char *buf, size_t len, size_t *used,
			 struct te_proc_stack *ps, char *err, size_t errlen)
{
	struct dec d = { 0, err, errlen };
	char line[TE_STACK_WIRE_LINE_MAX + 1], *tok[TOK_MAX];
	size_t pos = 0;

	te_stack_init(ps);
	*used = 0;
	if (!buf)
		len = 0;
	for (;;) {
		size_t avail = len - pos, k;
		const char *nl;
		int n;

		d.lineno++;
		nl = avail ? memchr(buf + pos, '\n',
				    avail < TE_STACK_WIRE_LINE_MAX + 1
					    ? avail
					    : TE_STACK_WIRE_LINE_MAX + 1)
			   : NULL;
		if (!nl && avail > TE_STACK_WIRE_LINE_MAX)
			return te_err(err, errlen, "line %d: over %d bytes",
				      d.lineno, TE_STACK_WIRE_LINE_MAX);
		if (!nl)
			return te_err(err, errlen,
				      "line %d: the record stops "
				      "before its \"end\" line",
				      d.lineno);
		k = (size_t)(nl - (buf + pos));
		if (memchr(buf + pos, '\0', k))
			return te_err(err, errlen, "line %d: NUL byte",
				      d.lineno);
		memcpy(line, buf + pos, k);
		line[k] = '\0';
		pos += k + 1;
		n = split(&d, line, tok);
		if (n < 0)
			return -1;
		if (d.lineno == 1) {
			if (dec_proc(&d, tok, n, ps) < 0)
				return -1;
		} else if (!strcmp(tok[0], "end")) {
			if (n != 1)
				return te_err(err, errlen,
					      "line %d: text after "
					      "\"end\"",
					      d.lineno);
			*used = pos;
			return 0;
		} else if (!strcmp(tok[0], "thread")) {
			if (dec_thread(&d, tok, n, ps) < 0)
				return -1;
		} else if (!strcmp(tok[0], "frame")) {
			if (dec_frame(&d, tok, n, ps) < 0)
				return -1;
		} else {
			return te_err(err, errlen, "line %d: unknown line",
				      d.lineno);
		}
	}
}

/* ------------------------------------------------------------- the tags */

long te_stack_wire_tag(char *out, size_t cap, const char *rec, size_t len,
		       unsigned tag)
{
	size_t pos = 0, o = 0;
	char t[16];
	int tl;

	if (tag > TE_STACK_WIRE_TAG_MAX)
		return -1;
	tl = snprintf(t, sizeof(t), "@%u ", tag);
	while (pos < len) {
		const char *nl = memchr(rec + pos, '\n', len - pos);
		size_t k = nl ? (size_t)(nl - (rec + pos)) + 1 : len - pos;

		if (k > TE_STACK_WIRE_SEND_MAX || o + (size_t)tl + k + 1 > cap)
			return -1;
		memcpy(out + o, t, (size_t)tl);
		memcpy(out + o + (size_t)tl, rec + pos, k);
		o += (size_t)tl + k;
		if (!nl)
			out[o++] = '\n';
		pos += k;
	}
	if (o >= cap)
		return -1;
	out[o] = '\0';
	return (long)o;
}

struct tagged_line {
	uint32_t tag;
	uint32_t len;	 /* without the tag */
	size_t off, seq; /* where it starts (after the tag), arrival */
};

static int by_tag(const void *a, const void *b)
{
	const struct tagged_line *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "@TAG " at p (n bytes on its line): the tag, and its length in *skip. */
static int line_tag(const char *p, size_t n, uint32_t *tag, size_t *skip)
{
	uint64_t v = 0;
	size_t i = 1;

	if (n < 3 || p[0] != '@')
		return -1;
	while (i < n && i < 9 && p[i] >= '0' && p[i] <= '9')
		v = v * 10 + (uint64_t)(p[i++] - '0');
	if (i == 1 || i >= n || p[i] != ' ' || v > TE_STACK_WIRE_TAG_MAX ||
	    (p[1] == '0' && i > 2))
		return -1;
	*tag = (uint32_t)v;
	*skip = i + 1;
	return 0;
}

long te_stack_demux(const char *in, size_t len, char **out)
{
	struct tagged_line *l = NULL;
	size_t n = 0, cap = 0, pos = 0, o = 0, i;
	char *buf;

	*out = NULL;
	while (pos < len) {
		const char *nl = memchr(in + pos, '\n', len - pos);
		size_t k = nl ? (size_t)(nl - (in + pos)) + 1 : len - pos, skip;
		uint32_t tag;

		/* a last line without its newline was cut: not whole */
		if (nl && k - 1 <= UINT32_MAX &&
		    line_tag(in + pos, k, &tag, &skip) == 0) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct tagged_line *g =
					realloc(l, nc * sizeof(*l));

				if (!g) {
					free(l);
					return -1;
				}
				l = g;
				cap = nc;
			}
			l[n].tag = tag;
			l[n].off = pos + skip;
			l[n].len = (uint32_t)(k - skip);
			l[n].seq = n;
			n++;
		}
		pos += k;
	}
	buf = malloc(len + 1);
	if (!buf) {
		free(l);
		return -1;
	}
	if (n)
		qsort(l, n, sizeof(*l), by_tag);
	for (i = 0; i < n; i++) {
		memcpy(buf + o, in + l[i].off, l[i].len);
		o += l[i].len;
	}
	buf[o] = '\0';
	free(l);
	*out = buf;
	return (long)o;
}

long te_stack_merge(const char *buf, size_t len, unsigned ntasks,
		    unsigned nnodes, struct te_proc_stack **procs,
		    int *left_out)
{
	long n = 0, ceiling = (long)nnodes * TE_STACK_NODE_RANKS, limit;
	size_t off = 0, cap = 0;
	char err[160];

	/* what the step's tasks can stand for (Slurm's counts), never what
	 * a record claims */
	if (ntasks && (long)ntasks * TE_STACK_TASK_WORKERS < ceiling)
		ceiling = (long)ntasks * TE_STACK_TASK_WORKERS;
	limit = ntasks && ntasks < ceiling ? (long)ntasks : ceiling;
	*left_out = 0;
	while (off < len) {
		size_t used = 0;
		const char *nl;

		if (n >= (long)cap) {
			/* one slot past the limit: the record that says more
			 * came than the step has ranks */
			size_t nc = cap ? cap * 2 : 64;
			struct te_proc_stack *p;

			nc = nc < (size_t)limit + 1 ? nc : (size_t)limit + 1;
			p = realloc(*procs, nc * sizeof(*p));
			if (!p) {
				*left_out = 1; /* keep what came */
				break;
			}
			*procs = p;
			cap = nc;
		}
		if (te_stack_wire_decode(buf + off, len - off, &used,
					 &(*procs)[n], err, sizeof(err)) == 0) {
			int w = (*procs)[n].world;

			off += used;
			if (w > limit)
				limit = w < ceiling ? w : ceiling;
			if (n == limit) {
				*left_out = 1;
				break;
			}
			n++;
			continue;
		}
		/* not a record: skip the line (a node's stray output) */
		nl = memchr(buf + off, '\n', len - off);
		off = nl ? (size_t)(nl - buf) + 1 : len;
	}
	return n;
}
