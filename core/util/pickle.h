/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A restricted pickle reader for hostile bytes (PyTorch's flight recorder
 * dumps, written by the user's process): plain data only. It is a bounded
 * stack machine over the opcodes of protocols 2 to 5 that build dicts,
 * lists, tuples, integers, floats, strings, bytes, None and booleans, with
 * the memo. Every opcode that names, imports or calls Python code (GLOBAL,
 * STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ(_EX), PERSID, BINPERSID,
 * EXT1/2/4) and every other one is refused with a reason, never executed:
 * nothing here can run code, whatever the bytes. Input size, stack, marks,
 * values, container items, string length, memo index and nesting are
 * bounded; nothing recurses. Strings are not copied: they point into the
 * caller's buffer, which must outlive the document. Pure. */
#ifndef TE_PICKLE_H
#define TE_PICKLE_H

#include <stddef.h>
#include <stdint.h>

enum te_pk_kind {
	TE_PK_NONE,
	TE_PK_BOOL,
	TE_PK_INT,
	TE_PK_FLOAT,
	TE_PK_STR,   /* unicode: UTF-8 as Python wrote it (not checked) */
	TE_PK_BYTES, /* bytes */
	TE_PK_LIST,
	TE_PK_TUPLE,
	TE_PK_DICT,
};

/* The bounds; te_pk_limits_default's are sized for a flight recorder dump
 * of 20,000 entries with stack frames. */
struct te_pk_limits {
	size_t max_input;   /* bytes of the whole pickle */
	size_t max_values;  /* values made (each opcode makes at most one) */
	size_t max_items;   /* items put into lists, tuples and dicts */
	size_t max_stack;   /* values on the stack at once */
	size_t max_marks;   /* MARKs open at once */
	size_t max_memo;    /* a memo index is below this */
	size_t max_string;  /* bytes of one string or bytes value */
	unsigned max_depth; /* containers nested in each other */
};
void te_pk_limits_default(struct te_pk_limits *lim);

/* A value's index in the document; TE_PK_NOVAL: none (a key not found). */
typedef uint32_t te_pk_val;
#define TE_PK_NOVAL UINT32_MAX

struct te_pk_value; /* private (core/util/pickle.c) */
struct te_pk_item;

struct te_pk_doc {
	const unsigned char *buf; /* the caller's bytes (strings point here) */
	struct te_pk_value *vals;
	struct te_pk_item *items;
	size_t nvals, nitems, capvals, capitems;
	te_pk_val root;
	int protocol;
};

/* Reads buf[0..len) up to its STOP (bytes after it are not read). 0 with
 * doc filled (free it with te_pk_free), or -1 with doc empty and err one
 * line ("byte 12: opcode GLOBAL (0x63) refused: it imports code"). lim
 * NULL: the defaults. */
int te_pk_parse(const unsigned char *buf, size_t len,
		const struct te_pk_limits *lim, struct te_pk_doc *doc,
		char *err, size_t errlen);
void te_pk_free(struct te_pk_doc *doc);

/* TE_PK_NONE for TE_PK_NOVAL or an index out of range. */
enum te_pk_kind te_pk_kind_of(const struct te_pk_doc *doc, te_pk_val v);
/* 0 with *out, or -1 when v is not an int (a bool is not one). */
int te_pk_int(const struct te_pk_doc *doc, te_pk_val v, int64_t *out);
/* 0 with *out for a float, or an int as a double; -1 otherwise. */
int te_pk_float(const struct te_pk_doc *doc, te_pk_val v, double *out);
/* 0 with *out (0 or 1), or -1 when v is not a bool. */
int te_pk_bool(const struct te_pk_doc *doc, te_pk_val v, int *out);
/* A str or bytes value's bytes (not terminated; may hold NULs): 0 with
 * *s and *n, or -1 when v is neither. */
int te_pk_bytes(const struct te_pk_doc *doc, te_pk_val v, const char **s,
		size_t *n);
/* 1 when v is a str equal to the terminated text want. */
int te_pk_str_is(const struct te_pk_doc *doc, te_pk_val v, const char *want);
/* The items of a list, tuple or dict (0 for anything else). */
size_t te_pk_len(const struct te_pk_doc *doc, te_pk_val v);
/* dict[key] for a str key (the last one set, as Python keeps it), or
 * TE_PK_NOVAL when v is not a dict or has no such key. */
te_pk_val te_pk_get(const struct te_pk_doc *doc, te_pk_val dict,
		    const char *key);

/* Walking a container's items in order without recursion:
 *   for (it = te_pk_first(d, v); it; it = te_pk_next(d, it))
 *           use te_pk_item_val(d, it) (and te_pk_item_key for a dict).
 * An iterator is 0 at the end. */
uint32_t te_pk_first(const struct te_pk_doc *doc, te_pk_val container);
uint32_t te_pk_next(const struct te_pk_doc *doc, uint32_t it);
te_pk_val te_pk_item_val(const struct te_pk_doc *doc, uint32_t it);
te_pk_val te_pk_item_key(const struct te_pk_doc *doc, uint32_t it);

#endif
