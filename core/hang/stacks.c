/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hang report's stack model, the parser of gdb's batch output
 * (py-bt and bt of all threads) and the signature that groups ranks. */
#include "config.h"

#include <string.h>

#include "hang/stacks.h"
#include "util/strutil.h"

/* ---------------------------------------------------------------- model */

void te_stack_init(struct te_proc_stack *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->rank = -1;
	ps->state = '?';
	ps->cpu_ms = -1;
	ps->since_ms = -1;
	ps->world = -1;
	ps->text_used = 1; /* text[0] is the empty string */
}

const char *te_frame_str(const struct te_proc_stack *ps, uint16_t off)
{
	return off < ps->text_used ? ps->text + off : "";
}

const char *te_stack_state_word(char state)
{
	switch (state) {
	case 'R':
		return "running";
	case 'S':
		return "sleeping";
	case 'D':
		return "in I/O (disk sleep)";
	case 'T':
		return "stopped";
	case 't':
		return "stopped by a tracer";
	case 'Z':
		return "zombie";
	case 'X':
		return "dead";
	case 'I':
		return "idle";
	case 'P':
		return "parked";
	case 'W':
		return "waking";
	case 'K':
		return "wakekill";
	default:
		return "unknown state";
	}
}

/* The offset of s[0..len) in the text, stored once (cut at
 * TE_STACK_NAME_MAX with "...", between two UTF-8 characters; control
 * bytes as '?'); -1 when the text is full. */
static int text_add(struct te_proc_stack *ps, const char *s, size_t len,
		    int *cut)
{
	char tmp[TE_STACK_NAME_MAX + 1];
	size_t i, n = len, p, k;

	if (!s || !len)
		return 0;
	if (n > TE_STACK_NAME_MAX) {
		n = TE_STACK_NAME_MAX - 3;
		/* not inside a character (at most 3 bytes follow its first) */
		for (k = 0; k < 3 && ((unsigned char)s[n] & 0xc0) == 0x80; k++)
			n--;
		*cut = 1;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		tmp[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (len > TE_STACK_NAME_MAX) {
		memcpy(tmp + n, "...", 3);
		n += 3;
	}
	tmp[n] = '\0';
	for (p = 1; p < ps->text_used; p += strlen(ps->text + p) + 1)
		if (!strcmp(ps->text + p, tmp))
			return (int)p;
	if (ps->text_used + n + 1 > TE_STACK_TEXT)
		return -1;
	p = ps->text_used;
	memcpy(ps->text + p, tmp, n + 1);
	ps->text_used = (uint16_t)(p + n + 1);
	return (int)p;
}

int te_stack_add_thread(struct te_proc_stack *ps, int lwp)
{
	struct te_thread_stack *t;

	if (ps->nthreads >= TE_STACK_THREADS) {
		if (ps->threads_cut < UINT16_MAX)
			ps->threads_cut++;
		return -1;
	}
	t = &ps->threads[ps->nthreads++];
	memset(t, 0, sizeof(*t));
	t->first = ps->nframes;
	t->lwp = lwp;
	return 0;
}

int te_stack_add_frame(struct te_proc_stack *ps, int kind, const char *func,
		       size_t funclen, const char *file, size_t filelen,
		       uint32_t line, const char *lib, size_t liblen,
		       uint64_t addr)
{
	struct te_thread_stack *t;
	struct te_frame *f;
	int cut = 0, fu, fi, li;

	if (!ps->nthreads || (kind != TE_FRAME_PY && kind != TE_FRAME_NATIVE))
		return -1;
	t = &ps->threads[ps->nthreads - 1];
	if (t->count >= TE_STACK_FRAMES || ps->nframes >= TE_STACK_FRAMES_ALL)
		return t->cut = 1, -1;
	fu = text_add(ps, func, funclen, &cut);
	fi = text_add(ps, file, filelen, &cut);
	li = text_add(ps, lib, liblen, &cut);
	if (fu < 0 || fi < 0 || li < 0)
		return t->cut = 1, -1;
	f = &ps->frames[ps->nframes++];
	f->kind = (uint8_t)kind;
	f->flags = cut ? TE_FRAME_CUT : 0;
	f->func = (uint16_t)fu;
	f->file = (uint16_t)fi;
	f->lib = (uint16_t)li;
	f->line = line;
	f->addr = addr;
	t->count++;
	return 0;
}

/* ---------------------------------------------------------------- gdb */

static int starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

static const char *memfind(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; k <= n && i <= n - k; i++)
		if (!memcmp(s + i, needle, k))
			return s + i;
	return NULL;
}

/* Decimal digits s[0..n) as a line number (1..9999999); 0 otherwise. */
static uint32_t line_number(const char *s, size_t n)
{
	uint32_t v = 0;
	size_t i;

	if (!n || n > 7)
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	return v;
}

/* "Thread 3 (Thread 0x7f.. (LWP 7632) "python3"):" -> lwp 7632 (0 when
 * absent). 1 when the line is a thread header. */
static int thread_header(const char *s, size_t n, int *lwp)
{
	const char *p;
	size_t i;

	if (!starts(s, n, "Thread ") || n < 8 || s[7] < '0' || s[7] > '9' ||
	    s[n - 1] != ':')
		return 0;
	*lwp = 0;
	p = memfind(s, n, "(LWP ");
	if (p)
		for (i = (size_t)(p - s) + 5;
		     i < n && s[i] >= '0' && s[i] <= '9' && *lwp < 100000000;
		     i++)
			*lwp = *lwp * 10 + (s[i] - '0');
	return 1;
}

/* `  File "x.py", line 3, in save_final`; 0 or -1. */
static int py_frame(struct te_proc_stack *ps, const char *s, size_t n)
{
	const char *file = s + 8, *end = s + n, *p;

	for (p = file; (p = memfind(p, (size_t)(end - p), "\", line ")); p++) {
		const char *d = p + 8, *q = d;

		while (q < end && *q >= '0' && *q <= '9')
			q++;
		if (q > d && starts(q, (size_t)(end - q), ", in ")) {
			uint32_t line = line_number(d, (size_t)(q - d));

			return te_stack_add_frame(ps, TE_FRAME_PY, q + 5,
						  (size_t)(end - q - 5), file,
						  (size_t)(p - file), line,
						  NULL, 0, 0);
		}
	}
	return -1;
}

/* `  <built-in method sleep of module object at remote 0x7f..>`: the
 * C function a Python frame called, kept without its addresses. */
static int py_builtin(struct te_proc_stack *ps, const char *s, size_t n)
{
	const char *name = s + 3;
	size_t k = n - 4, i;

	for (i = 0; i < k; i++)
		if (starts(name + i, k - i, " of ") ||
		    starts(name + i, k - i, " at "))
			break;
	return te_stack_add_frame(ps, TE_FRAME_PY, name, i, NULL, 0, 0, NULL, 0,
				  0);
}

/* The end of a parenthesised argument list starting at s[0] == '(':
 * nested brackets, quoted strings with backslash escapes. NULL when it
 * does not close within n bytes. */
static const char *args_end(const char *s, size_t n)
{
	size_t i, depth = 0;
	char quote = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (quote) {
			if (c == '\\')
				i++;
			else if (c == quote)
				quote = 0;
		} else if (c == '\'' || c == '"') {
			quote = c;
		} else if (c == '(' || c == '[' || c == '{') {
			depth++;
		} else if ((c == ')' || c == ']' || c == '}') && depth) {
			if (--depth == 0)
				return s + i + 1;
		}
	}
	return NULL;
}

/* `#0  0x00007f.. in __GI___libc_read (fd=0, ...) at ../x/read.c:26`,
 * `#2  time_sleep (self=...) at ../Modules/timemodule.c:383` (inlined),
 * `#1  0x000055.. in ?? ()`, `#4  0x.. in __libc_start_main () from
 * /lib/x86_64-linux-gnu/libc.so.6`. 0 or -1. */
static int native_frame(struct te_proc_stack *ps, const char *s, size_t n)
{
	const char *p = s + 1, *end = s + n, *name, *name_end, *rest;
	const char *file = NULL, *lib = NULL;
	size_t filelen = 0, liblen = 0;
	uint32_t line = 0;
	uint64_t addr = 0;
	int angle = 0;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	while (p < end && *p == ' ')
		p++;
	if (starts(p, (size_t)(end - p), "0x")) {
		const char *h = p + 2;

		for (; h < end && h - p < 18; h++) {
			int c = *h, v = c >= '0' && c <= '9'   ? c - '0'
					: c >= 'a' && c <= 'f' ? c - 'a' + 10
							       : -1;
			if (v < 0)
				break;
			addr = addr << 4 | (uint64_t)v;
		}
		if (!starts(h, (size_t)(end - h), " in "))
			return -1;
		p = h + 4;
	}
	name = p;
	if (p < end && *p == '<') {
		while (p < end && *p != '>')
			p++;
		p += p < end;
	} else {
		for (; p < end; p++) {
			if (*p == '<')
				angle++;
			else if (*p == '>' && angle)
				angle--;
			else if (*p == ' ' && !angle && p + 1 < end &&
				 p[1] == '(')
				break;
		}
	}
	name_end = p;
	if (name_end == name)
		return -1;
	rest = p;
	if (starts(p, (size_t)(end - p), " (")) {
		rest = args_end(p + 1, (size_t)(end - p - 1));
		if (!rest) {
			/* Unbalanced arguments: the last " at " or " from ". */
			const char *q, *last = NULL;

			for (q = p; (q = memfind(q, (size_t)(end - q), " at "));
			     q++)
				last = q;
			for (q = last ? last : p;
			     (q = memfind(q, (size_t)(end - q), " from ")); q++)
				last = q;
			rest = last ? last : end;
		}
	}
	if (starts(rest, (size_t)(end - rest), " at ")) {
		const char *c = end;

		file = rest + 4;
		while (c > file && c[-1] != ':')
			c--;
		if (c > file && (line = line_number(c, (size_t)(end - c))))
			filelen = (size_t)(c - 1 - file);
		else
			filelen = (size_t)(end - file);
	} else if (starts(rest, (size_t)(end - rest), " from ")) {
		const char *b = end;

		lib = rest + 6;
		while (b > lib && b[-1] != '/')
			b--;
		liblen = (size_t)(end - b);
		lib = b;
	}
	return te_stack_add_frame(ps, TE_FRAME_NATIVE, name,
				  (size_t)(name_end - name), file, filelen,
				  line, lib, liblen, addr);
}

struct scan {
	int kind;  /* the frames this pass keeps */
	int store; /* 0: count threads only */
	int gil;   /* the GIL holder's LWP, 0 unknown */
	int part;  /* 0: every thread; 1: gil's only; 2: all but gil's */
	unsigned flags;
	unsigned threads; /* threads with a frame of the kind */
	char denied[TE_STACK_NOTE_MAX];
};

/* One pass over gdb's output for one kind of frame. */
static void scan_pass(const char *buf, size_t len, struct te_proc_stack *ps,
		      struct scan *sc)
{
	const char *s = buf, *end = buf + len;
	int in_thread = 0, opened = 0, in_tb = 0, lwp = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = (size_t)((nl ? nl : end) - s);

		if (n && s[n - 1] == '\r')
			n--;
		if (thread_header(s, n, &lwp)) {
			in_thread = 1;
			opened = 0;
			in_tb = 0;
		} else if (starts(s, n,
				  "Traceback (most recent call first):")) {
			in_tb = 1;
		} else if (starts(s, n, "Undefined command: \"py-bt\"")) {
			sc->flags |= TE_GDB_NO_PYBT;
		} else if (starts(s, n, "[Inferior ") &&
			   memfind(s, n, ") detached]")) {
			sc->flags |= TE_GDB_DETACHED;
		} else if (starts(s, n, "ptrace: ") ||
			   starts(s, n, "Could not attach to process")) {
			sc->flags |= TE_GDB_DENIED;
			if (!sc->denied[0])
				te_clean_text(sc->denied, sizeof(sc->denied), s,
					      n);
		} else {
			int py = in_tb && n > 8 && starts(s, n, "  File \"");
			int bi = in_tb && n > 4 && starts(s, n, "  <") &&
				 s[n - 1] == '>';
			int nat = n > 1 && s[0] == '#' && s[1] >= '0' &&
				  s[1] <= '9';
			int want = sc->kind == TE_FRAME_PY ? (py || bi) : nat;

			if (sc->part && (lwp == sc->gil) != (sc->part == 1))
				want = 0; /* the other part's thread */

			/* A "#0" without a header starts a thread too. */
			if (nat && want && opened && starts(s, n, "#0 "))
				opened = 0;
			if (want && (in_thread || nat)) {
				if (!opened) {
					opened = 1;
					sc->threads++;
					if (sc->store &&
					    te_stack_add_thread(ps, lwp) < 0)
						opened = 2;
				}
				if (sc->store && opened == 1)
					(void)(py   ? py_frame(ps, s, n)
					       : bi ? py_builtin(ps, s, n)
						    : native_frame(ps, s, n));
			}
		}
		s = nl ? nl + 1 : end;
	}
}

/* The LWP of "trainenv-gil-holder LWP N" (a line trainenv-py-bt-threads
 * says first, pmix/stacks_pybt.c): the thread holding the GIL; 0 when no
 * line says it. */
static int gil_holder(const char *buf, size_t len)
{
	static const char mark[] = "trainenv-gil-holder LWP ";
	const char *s = buf, *end = buf + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = (size_t)((nl ? nl : end) - s), k = sizeof(mark) - 1;
		uint32_t v;

		if (n && s[n - 1] == '\r')
			n--;
		if (starts(s, n, mark)) {
			v = line_number(s + k, n - k);
			return (int)v;
		}
		s = nl ? nl + 1 : end;
	}
	return 0;
}

/* Which threads the bounds keep: gdb's order, except that the thread
 * holding the GIL comes first, so that neither the thread bound
 * (TE_STACK_THREADS) nor the frame bound (TE_STACK_FRAMES_ALL) cuts it
 * however many threads sleep in Python before it (a rank that hangs while
 * computing is that thread). */
static void scan_threads(const char *buf, size_t len, int gil,
			 struct te_proc_stack *ps, struct scan *sc)
{
	if (!gil) {
		scan_pass(buf, len, ps, sc);
		return;
	}
	sc->gil = gil;
	sc->part = 1;
	scan_pass(buf, len, ps, sc);
	sc->part = 2;
	scan_pass(buf, len, ps, sc);
}

/* A thread whose every frame line was malformed is not kept. */
static void drop_empty_threads(struct te_proc_stack *ps)
{
	size_t i, k = 0;

	for (i = 0; i < ps->nthreads; i++)
		if (ps->threads[i].count)
			ps->threads[k++] = ps->threads[i];
	ps->nthreads = (uint16_t)k;
}

unsigned te_stack_parse_gdb(const char *buf, size_t len, int is_python,
			    struct te_proc_stack *ps)
{
	struct scan py = { TE_FRAME_PY, 1, 0, 0, 0, 0, "" };
	struct scan nat = { TE_FRAME_NATIVE, 0, 0, 0, 0, 0, "" };
	const char *why = NULL;
	unsigned flags;
	int gil;

	ps->nthreads = ps->nframes = 0;
	ps->threads_nopy = ps->threads_cut = 0;
	ps->text_used = 1;
	if (!buf) {
		buf = "";
		len = 0;
	}
	gil = gil_holder(buf, len);
	scan_threads(buf, len, gil, ps, &py);
	nat.store = ps->nframes == 0;
	if (nat.store) {
		ps->nthreads = 0;
		ps->threads_cut = 0;
		ps->text_used = 1;
	}
	scan_threads(buf, len, gil, ps, &nat);
	drop_empty_threads(ps);
	flags = py.flags;
	if (!nat.store && nat.threads > py.threads)
		ps->threads_nopy = (uint16_t)(nat.threads - py.threads);
	if (ps->note[0])
		return flags;
	if (flags & TE_GDB_DENIED)
		return te_snprintf(ps->note, sizeof(ps->note),
				   "gdb could not attach: %s", py.denied),
		       flags;
	if (is_python && nat.store && (flags & TE_GDB_NO_PYBT))
		why = "gdb has no py-bt (python3-dbg not installed?): "
		      "native frames only";
	else if (is_python && nat.store && ps->nframes)
		why = "no Python frame found: native frames only";
	else if (!ps->nframes)
		why = "no stack in gdb's output";
	else if (!(flags & TE_GDB_DETACHED))
		why = "gdb's output ended early: the stack may be partial";
	if (why)
		te_strlcpy(ps->note, why, sizeof(ps->note));
	return flags;
}

/* ---------------------------------------------------------------- signature */

#define FNV_OFFSET 14695981039346656037ull
#define FNV_PRIME 1099511628211ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s, strlen(s) + 1);
}

static uint64_t thread_hash(const struct te_proc_stack *ps,
			    const struct te_thread_stack *t)
{
	uint64_t h = FNV_OFFSET;
	size_t i;

	for (i = t->first; i < (size_t)t->first + t->count; i++) {
		const struct te_frame *f = &ps->frames[i];
		unsigned char k = f->kind;
		unsigned char l[4] = { (unsigned char)f->line,
				       (unsigned char)(f->line >> 8),
				       (unsigned char)(f->line >> 16),
				       (unsigned char)(f->line >> 24) };

		h = fnv(h, &k, 1);
		h = fnv_str(h, te_frame_str(ps, f->func));
		h = fnv_str(h, te_frame_str(ps, f->file));
		h = fnv_str(h, te_frame_str(ps, f->lib));
		h = fnv(h, l, sizeof(l));
	}
	return h;
}

/* The threads' hashes in ascending order (order[] their indexes). */
static void thread_hashes(const struct te_proc_stack *ps, uint64_t *hs,
			  size_t *order)
{
	size_t i, j,
		n = ps->nthreads < TE_STACK_THREADS ? ps->nthreads
						    : TE_STACK_THREADS;

	for (i = 0; i < n; i++) {
		uint64_t h = thread_hash(ps, &ps->threads[i]);

		for (j = i; j > 0 && hs[j - 1] > h; j--) {
			hs[j] = hs[j - 1];
			order[j] = order[j - 1];
		}
		hs[j] = h;
		order[j] = i;
	}
}

uint64_t te_stack_hash(const struct te_proc_stack *ps)
{
	uint64_t hs[TE_STACK_THREADS], h = FNV_OFFSET;
	size_t order[TE_STACK_THREADS], i;

	thread_hashes(ps, hs, order);
	for (i = 0; i < ps->nthreads && i < TE_STACK_THREADS; i++)
		h = fnv(h, &hs[i], sizeof(hs[i]));
	return fnv_str(h, ps->note);
}

static int thread_same(const struct te_proc_stack *a,
		       const struct te_thread_stack *ta,
		       const struct te_proc_stack *b,
		       const struct te_thread_stack *tb)
{
	size_t i;

	if (ta->count != tb->count)
		return 0;
	for (i = 0; i < ta->count; i++) {
		const struct te_frame *fa = &a->frames[ta->first + i];
		const struct te_frame *fb = &b->frames[tb->first + i];

		if (fa->kind != fb->kind || fa->line != fb->line ||
		    strcmp(te_frame_str(a, fa->func),
			   te_frame_str(b, fb->func)) ||
		    strcmp(te_frame_str(a, fa->file),
			   te_frame_str(b, fb->file)) ||
		    strcmp(te_frame_str(a, fa->lib), te_frame_str(b, fb->lib)))
			return 0;
	}
	return 1;
}

int te_stack_same(const struct te_proc_stack *a, const struct te_proc_stack *b)
{
	uint64_t ha[TE_STACK_THREADS], hb[TE_STACK_THREADS];
	size_t oa[TE_STACK_THREADS], ob[TE_STACK_THREADS], i;

	if (a->nthreads != b->nthreads || a->nthreads > TE_STACK_THREADS ||
	    strcmp(a->note, b->note))
		return 0;
	thread_hashes(a, ha, oa);
	thread_hashes(b, hb, ob);
	for (i = 0; i < a->nthreads; i++)
		if (ha[i] != hb[i] ||
		    !thread_same(a, &a->threads[oa[i]], b, &b->threads[ob[i]]))
			return 0;
	return 1;
}
