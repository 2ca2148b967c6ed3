/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The restricted pickle reader (core/util/pickle.h): a stack machine over
 * the plain-data opcodes of protocols 2 to 5, every bound checked before
 * it is used, every other opcode refused by name. The opcodes and their
 * operands are those of CPython's Lib/pickletools.py. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/pickle.h"
#include "util/pickle_int.h"
#include "util/strutil.h"

struct pk {
	const unsigned char *p;
	size_t len, pos, at; /* at: the current opcode's offset */
	const struct te_pk_limits *lim;
	struct te_pk_doc *doc;
	te_pk_val *stack;
	size_t sp, capstack;
	size_t *marks; /* stack heights at each open MARK */
	size_t nmarks;
	te_pk_val *memo;
	size_t capmemo, nmemo; /* nmemo: distinct slots set (MEMOIZE's next) */
	char *err;
	size_t errlen;
};

void te_pk_limits_default(struct te_pk_limits *lim)
{
	lim->max_input = (size_t)64 << 20;
	lim->max_values = (size_t)4 << 20;
	lim->max_items = (size_t)8 << 20;
	lim->max_stack = (size_t)1 << 20;
	lim->max_marks = 64;
	lim->max_memo = (size_t)4 << 20;
	lim->max_string = (size_t)4 << 20;
	lim->max_depth = 32;
}

/* The opcode's name for a message; NULL for a byte no protocol defines. */
static const char *op_name(unsigned char op)
{
	static const char *const low[128] = {
		['('] = "MARK",
		['.'] = "STOP",
		['0'] = "POP",
		['1'] = "POP_MARK",
		['2'] = "DUP",
		['F'] = "FLOAT",
		['I'] = "INT",
		['J'] = "BININT",
		['K'] = "BININT1",
		['L'] = "LONG",
		['M'] = "BININT2",
		['N'] = "NONE",
		['P'] = "PERSID",
		['Q'] = "BINPERSID",
		['R'] = "REDUCE",
		['S'] = "STRING",
		['T'] = "BINSTRING",
		['U'] = "SHORT_BINSTRING",
		['V'] = "UNICODE",
		['X'] = "BINUNICODE",
		['a'] = "APPEND",
		['b'] = "BUILD",
		['c'] = "GLOBAL",
		['d'] = "DICT",
		['}'] = "EMPTY_DICT",
		['e'] = "APPENDS",
		['g'] = "GET",
		['h'] = "BINGET",
		['i'] = "INST",
		['j'] = "LONG_BINGET",
		['l'] = "LIST",
		[']'] = "EMPTY_LIST",
		['o'] = "OBJ",
		['p'] = "PUT",
		['q'] = "BINPUT",
		['r'] = "LONG_BINPUT",
		['s'] = "SETITEM",
		['t'] = "TUPLE",
		[')'] = "EMPTY_TUPLE",
		['u'] = "SETITEMS",
		['G'] = "BINFLOAT",
		['B'] = "BINBYTES",
		['C'] = "SHORT_BINBYTES",
	};
	static const char *const high[] = {
		"PROTO",
		"NEWOBJ",
		"EXT1",
		"EXT2",
		"EXT4",
		"TUPLE1",
		"TUPLE2",
		"TUPLE3",
		"NEWTRUE",
		"NEWFALSE",
		"LONG1",
		"LONG4",
		"SHORT_BINUNICODE",
		"BINUNICODE8",
		"BINBYTES8",
		"EMPTY_SET",
		"ADDITEMS",
		"FROZENSET",
		"NEWOBJ_EX",
		"STACK_GLOBAL",
		"MEMOIZE",
		"FRAME",
		"BYTEARRAY8",
		"NEXT_BUFFER",
		"READONLY_BUFFER",
	};
	if (op < 128)
		return low[op];
	if (op - 0x80u < sizeof(high) / sizeof(high[0]))
		return high[op - 0x80];
	return NULL;
}

static int fail(struct pk *k, const char *what)
{
	return te_err(k->err, k->errlen, "byte %zu: %s", k->at, what);
}

/* Why an opcode outside the plain-data set is refused. */
static int refuse(struct pk *k, unsigned char op)
{
	const char *name = op_name(op);
	const char *why = "not needed for plain data";
	char msg[160];

	if (!name)
		return te_err(k->err, k->errlen,
			      "byte %zu: unknown opcode 0x%02x", k->at, op);
	if (strchr("cRbioPQ", op) || (op >= 0x81 && op <= 0x84) || op == 0x92 ||
	    op == 0x93)
		why = "it names or calls Python code";
	te_snprintf(msg, sizeof(msg), "opcode %s (0x%02x) refused: %s", name,
		    op, why);
	return fail(k, msg);
}

/* Grows *arr (elements of size sz, *cap of them) to hold need, doubling,
 * never past max. 0, or -1. */
static int grow(void **arr, size_t *cap, size_t need, size_t sz, size_t max)
{
	size_t ncap = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	if (max > SIZE_MAX / sz)
		max = SIZE_MAX / sz;
	if (need > max)
		return -1;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : ncap * 2;
	if (ncap > max)
		ncap = max;
	q = realloc(*arr, ncap * sz);
	if (!q)
		return -1;
	*arr = q;
	*cap = ncap;
	return 0;
}

static int need(struct pk *k, size_t n)
{
	if (k->len - k->pos < n)
		return fail(k, "the pickle ends inside an operand (cut)");
	return 0;
}

static uint64_t le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static int new_val(struct pk *k, enum te_pk_kind kind, te_pk_val *out)
{
	struct te_pk_doc *d = k->doc;

	if (grow((void **)&d->vals, &d->capvals, d->nvals + 1, sizeof(*d->vals),
		 k->lim->max_values) < 0)
		return fail(k, "more values than the bound (or out of memory)");
	memset(&d->vals[d->nvals], 0, sizeof(d->vals[0]));
	d->vals[d->nvals].kind = (uint8_t)kind;
	d->vals[d->nvals].depth = kind >= TE_PK_LIST ? 1 : 0;
	*out = (te_pk_val)d->nvals++;
	return 0;
}

static int push(struct pk *k, te_pk_val v)
{
	if (grow((void **)&k->stack, &k->capstack, k->sp + 1, sizeof(*k->stack),
		 k->lim->max_stack) < 0)
		return fail(k,
			    "stack deeper than the bound (or out of memory)");
	k->stack[k->sp++] = v;
	return 0;
}

/* The stack's floor: values below the last MARK are out of reach. */
static size_t floor_of(const struct pk *k)
{
	return k->nmarks ? k->marks[k->nmarks - 1] : 0;
}

static int pop(struct pk *k, te_pk_val *v)
{
	if (k->sp <= floor_of(k))
		return fail(k, "stack underflow");
	*v = k->stack[--k->sp];
	return 0;
}

static int top(struct pk *k, te_pk_val *v)
{
	if (k->sp <= floor_of(k))
		return fail(k, "stack underflow");
	*v = k->stack[k->sp - 1];
	return 0;
}

/* Pops back to the last MARK: the values are stack[*from..k->sp) until the
 * next push. */
static int pop_mark(struct pk *k, size_t *from)
{
	if (!k->nmarks)
		return fail(k, "no MARK to pop to");
	*from = k->marks[--k->nmarks];
	return 0;
}

static int new_scalar(struct pk *k, enum te_pk_kind kind, uint64_t x,
		      uint32_t n)
{
	te_pk_val v;

	if (new_val(k, kind, &v) < 0)
		return -1;
	k->doc->vals[v].x = x;
	k->doc->vals[v].n = n;
	return push(k, v);
}

/* A length-prefixed str or bytes: width bytes of length, then the bytes. */
static int op_text(struct pk *k, enum te_pk_kind kind, unsigned width)
{
	uint64_t n;
	size_t off;

	if (need(k, width) < 0)
		return -1;
	n = le(k->p + k->pos, width);
	k->pos += width;
	if (n > k->lim->max_string || n > UINT32_MAX)
		return fail(k, "a string longer than the bound");
	if (need(k, (size_t)n) < 0)
		return -1;
	off = k->pos;
	k->pos += (size_t)n;
	return new_scalar(k, kind, off, (uint32_t)n);
}

/* An integer of n little-endian two's complement bytes (n <= 8). */
static int op_int(struct pk *k, unsigned n, int is_signed)
{
	uint64_t v;

	if (need(k, n) < 0)
		return -1;
	v = le(k->p + k->pos, n);
	if (is_signed && n && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * n);
	k->pos += n;
	return new_scalar(k, TE_PK_INT, v, 0);
}

static int op_long1(struct pk *k)
{
	unsigned n;

	if (need(k, 1) < 0)
		return -1;
	n = k->p[k->pos++];
	if (n > 8)
		return fail(k, "LONG1 integer wider than 64 bits");
	return op_int(k, n, 1);
}

static int op_binfloat(struct pk *k)
{
	uint64_t bits = 0;
	unsigned i;

	if (need(k, 8) < 0)
		return -1;
	for (i = 0; i < 8; i++) /* big-endian, as pickle writes it */
		bits = bits << 8 | k->p[k->pos + i];
	k->pos += 8;
	return new_scalar(k, TE_PK_FLOAT, bits, 0);
}

/* Scalars: 1 done, 0 not one of these opcodes, -1 error. */
static int op_scalar(struct pk *k, unsigned char op)
{
	switch (op) {
	case 'N':
		return new_scalar(k, TE_PK_NONE, 0, 0) < 0 ? -1 : 1;
	case 0x88:
	case 0x89:
		return new_scalar(k, TE_PK_BOOL, op == 0x88, 0) < 0 ? -1 : 1;
	case 'K':
		return op_int(k, 1, 0) < 0 ? -1 : 1;
	case 'M':
		return op_int(k, 2, 0) < 0 ? -1 : 1;
	case 'J':
		return op_int(k, 4, 1) < 0 ? -1 : 1;
	case 0x8a:
		return op_long1(k) < 0 ? -1 : 1;
	case 'G':
		return op_binfloat(k) < 0 ? -1 : 1;
	case 0x8c:
		return op_text(k, TE_PK_STR, 1) < 0 ? -1 : 1;
	case 'X':
		return op_text(k, TE_PK_STR, 4) < 0 ? -1 : 1;
	case 0x8d:
		return op_text(k, TE_PK_STR, 8) < 0 ? -1 : 1;
	case 'C':
		return op_text(k, TE_PK_BYTES, 1) < 0 ? -1 : 1;
	case 'B':
		return op_text(k, TE_PK_BYTES, 4) < 0 ? -1 : 1;
	case 0x8e:
		return op_text(k, TE_PK_BYTES, 8) < 0 ? -1 : 1;
	}
	return 0;
}

/* Puts v into container c (key: dicts only), keeping c's depth. */
static int add_item(struct pk *k, te_pk_val c, te_pk_val key, te_pk_val v)
{
	struct te_pk_doc *d = k->doc;
	struct te_pk_value *cv;
	uint32_t it;
	unsigned depth;

	/* item 0 stands for "none": the first item is item 1 */
	if (grow((void **)&d->items, &d->capitems,
		 (d->nitems ? d->nitems : 1) + 1, sizeof(*d->items),
		 k->lim->max_items + 1) < 0)
		return fail(k, "more items than the bound (or out of memory)");
	if (!d->nitems)
		d->nitems = 1;
	it = (uint32_t)d->nitems++;
	d->items[it].key = key;
	d->items[it].val = v;
	d->items[it].next = 0;
	cv = &d->vals[c];
	if (cv->n)
		d->items[(uint32_t)(cv->x >> 32)].next = it;
	else
		cv->x = it;
	cv->x = (cv->x & UINT32_MAX) | (uint64_t)it << 32;
	cv->n++;
	depth = (unsigned)d->vals[v].depth + 1;
	if (key != TE_PK_NOVAL && d->vals[key].depth + 1u > depth)
		depth = d->vals[key].depth + 1u;
	if (depth > k->lim->max_depth || depth > UINT16_MAX)
		return fail(k, "containers nested deeper than the bound");
	if (depth > cv->depth)
		cv->depth = (uint16_t)depth;
	return 0;
}

/* Python refuses a list or dict as a dict key (unhashable): so do we. */
static int key_ok(struct pk *k, te_pk_val key)
{
	uint8_t kind = k->doc->vals[key].kind;

	if (kind == TE_PK_LIST || kind == TE_PK_DICT)
		return fail(k, "a list or dict as a dict key");
	return 0;
}

/* The container on top of the stack, of the kind the opcode needs. */
static int target(struct pk *k, enum te_pk_kind kind, te_pk_val *c)
{
	if (top(k, c) < 0)
		return -1;
	if (k->doc->vals[*c].kind != kind)
		return fail(k, kind == TE_PK_LIST ? "APPEND to a non-list"
						  : "SETITEM to a non-dict");
	return 0;
}

static int op_appends(struct pk *k, int many)
{
	te_pk_val c, v;
	size_t from = 0, i, to;

	if (!many) {
		if (pop(k, &v) < 0 || target(k, TE_PK_LIST, &c) < 0)
			return -1;
		return add_item(k, c, TE_PK_NOVAL, v);
	}
	to = k->sp;
	if (pop_mark(k, &from) < 0)
		return -1;
	k->sp = from;
	if (target(k, TE_PK_LIST, &c) < 0)
		return -1;
	for (i = from; i < to; i++)
		if (add_item(k, c, TE_PK_NOVAL, k->stack[i]) < 0)
			return -1;
	return 0;
}

static int op_setitems(struct pk *k, int many)
{
	te_pk_val c, key, v;
	size_t from = 0, i, to;

	if (!many) {
		if (pop(k, &v) < 0 || pop(k, &key) < 0 ||
		    target(k, TE_PK_DICT, &c) < 0 || key_ok(k, key) < 0)
			return -1;
		return add_item(k, c, key, v);
	}
	to = k->sp;
	if (pop_mark(k, &from) < 0)
		return -1;
	if ((to - from) % 2)
		return fail(k, "SETITEMS with an odd number of values");
	k->sp = from;
	if (target(k, TE_PK_DICT, &c) < 0)
		return -1;
	for (i = from; i < to; i += 2)
		if (key_ok(k, k->stack[i]) < 0 ||
		    add_item(k, c, k->stack[i], k->stack[i + 1]) < 0)
			return -1;
	return 0;
}

/* TUPLE (n = -1: back to the MARK) or TUPLE1..3 (n items). */
static int op_tuple(struct pk *k, int n)
{
	te_pk_val t;
	size_t from = 0, i, to = k->sp;

	if (n < 0) {
		if (pop_mark(k, &from) < 0)
			return -1;
	} else {
		if (k->sp - floor_of(k) < (size_t)n)
			return fail(k, "stack underflow");
		from = k->sp - (size_t)n;
	}
	k->sp = from;
	if (new_val(k, TE_PK_TUPLE, &t) < 0)
		return -1;
	for (i = from; i < to; i++)
		if (add_item(k, t, TE_PK_NOVAL, k->stack[i]) < 0)
			return -1;
	return push(k, t);
}

/* Containers: 1 done, 0 not one of these opcodes, -1 error. */
static int op_container(struct pk *k, unsigned char op)
{
	te_pk_val v;

	switch (op) {
	case '}':
	case ']':
	case ')':
		if (new_val(k,
			    op == '}'	? TE_PK_DICT
			    : op == ']' ? TE_PK_LIST
					: TE_PK_TUPLE,
			    &v) < 0)
			return -1;
		return push(k, v) < 0 ? -1 : 1;
	case 'a':
	case 'e':
		return op_appends(k, op == 'e') < 0 ? -1 : 1;
	case 's':
	case 'u':
		return op_setitems(k, op == 'u') < 0 ? -1 : 1;
	case 't':
		return op_tuple(k, -1) < 0 ? -1 : 1;
	case 0x85:
	case 0x86:
	case 0x87:
		return op_tuple(k, op - 0x84) < 0 ? -1 : 1;
	}
	return 0;
}

static int memo_put(struct pk *k, uint64_t idx)
{
	te_pk_val v = TE_PK_NOVAL;
	size_t old = k->capmemo, i;

	if (top(k, &v) < 0)
		return -1;
	if (idx >= k->lim->max_memo ||
	    grow((void **)&k->memo, &k->capmemo, (size_t)idx + 1,
		 sizeof(*k->memo), k->lim->max_memo) < 0)
		return fail(k, "memo index over the bound (or out of memory)");
	for (i = old; i < k->capmemo; i++)
		k->memo[i] = TE_PK_NOVAL;
	if (k->memo[idx] == TE_PK_NOVAL)
		k->nmemo++;
	k->memo[idx] = v;
	return 0;
}

static int memo_get(struct pk *k, uint64_t idx)
{
	if (idx >= k->capmemo || k->memo[idx] == TE_PK_NOVAL)
		return fail(k, "memo index never set");
	return push(k, k->memo[idx]);
}

/* Memo opcodes: 1 done, 0 not one of these, -1 error. */
static int op_memo(struct pk *k, unsigned char op)
{
	unsigned w = op == 'q' || op == 'h' ? 1 : 4;
	uint64_t idx;

	if (op == 0x94)
		return memo_put(k, k->nmemo) < 0 ? -1 : 1;
	if (op != 'q' && op != 'r' && op != 'h' && op != 'j')
		return 0;
	if (need(k, w) < 0)
		return -1;
	idx = le(k->p + k->pos, w);
	k->pos += w;
	if (op == 'q' || op == 'r')
		return memo_put(k, idx) < 0 ? -1 : 1;
	return memo_get(k, idx) < 0 ? -1 : 1;
}

/* MARK, FRAME and STOP: 1 done, 2 STOP, 0 not one of these, -1 error. */
static int op_control(struct pk *k, unsigned char op)
{
	switch (op) {
	case '(':
		if (k->nmarks >= k->lim->max_marks)
			return fail(k, "more open MARKs than the bound");
		k->marks[k->nmarks++] = k->sp;
		return 1;
	case 0x95: /* frames only group opcodes for buffering */
		if (need(k, 8) < 0)
			return -1;
		if (le(k->p + k->pos, 8) > k->len - k->pos - 8)
			return fail(k, "FRAME longer than the pickle (cut)");
		k->pos += 8;
		return 1;
	case '.':
		if (k->nmarks || k->sp != 1)
			return fail(k, "STOP without exactly one value");
		k->doc->root = k->stack[0];
		return 2;
	}
	return 0;
}

static int run(struct pk *k)
{
	unsigned char op;
	int r;

	if (k->len < 2 || k->p[0] != 0x80 || k->p[1] < 2 || k->p[1] > 5)
		return fail(k, "not a pickle of protocol 2 to 5");
	k->doc->protocol = k->p[1];
	k->pos = 2;
	while (k->pos < k->len) {
		k->at = k->pos;
		op = k->p[k->pos++];
		r = op_control(k, op);
		if (!r)
			r = op_scalar(k, op);
		if (!r)
			r = op_container(k, op);
		if (!r)
			r = op_memo(k, op);
		if (r == 2)
			return 0;
		if (!r)
			return refuse(k, op);
		if (r < 0)
			return -1;
	}
	k->at = k->len;
	return fail(k, "the pickle ends before its STOP (cut)");
}

int te_pk_parse(const unsigned char *buf, size_t len,
		const struct te_pk_limits *lim, struct te_pk_doc *doc,
		char *err, size_t errlen)
{
	struct te_pk_limits def;
	struct pk k;
	int rc;

	if (!lim) {
		te_pk_limits_default(&def);
		lim = &def;
	}
	memset(doc, 0, sizeof(*doc));
	doc->buf = buf;
	doc->root = TE_PK_NOVAL;
	if (len > lim->max_input)
		return te_err(err, errlen, "%zu bytes: over the bound of %zu",
			      len, lim->max_input);
	memset(&k, 0, sizeof(k));
	k.p = buf;
	k.len = len;
	k.lim = lim;
	k.doc = doc;
	k.err = err;
	k.errlen = errlen;
	k.marks = calloc(lim->max_marks ? lim->max_marks : 1, sizeof(*k.marks));
	rc = k.marks ? run(&k) : te_err(err, errlen, "out of memory");
	free(k.marks);
	free(k.stack);
	free(k.memo);
	if (rc < 0)
		te_pk_free(doc);
	return rc;
}

void te_pk_free(struct te_pk_doc *doc)
{
	free(doc->vals);
	free(doc->items);
	memset(doc, 0, sizeof(*doc));
	doc->root = TE_PK_NOVAL;
}
