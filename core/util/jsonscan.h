/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bounded JSON reader for hostile text (records users write): one pass
 * over the bytes, calling back for every scalar with the keys that lead to
 * it. Nothing is allocated; nesting, keys and strings are bounded; any
 * input, however long or broken, ends in 0 or -1 with one line saying
 * where. Pure. */
#ifndef TE_JSONSCAN_H
#define TE_JSONSCAN_H

#include <stddef.h>

#define TE_JSON_DEPTH 16     /* objects and arrays nested at most */
#define TE_JSON_KEY_MAX 64   /* a key's bytes kept, NUL included */
#define TE_JSON_TEXT_MAX 256 /* a scalar's bytes kept, NUL included */

enum te_json_type {
	TE_JSON_NULL,
	TE_JSON_BOOL,
	TE_JSON_NUM,
	TE_JSON_STR,
};

/* One scalar. path[0..depth) are the keys from the top (an array's
 * element has the key "[]"); depth 0 is a scalar at the top. text: a
 * string decoded (escapes resolved, \u0000 and lone surrogates as
 * U+FFFD), a number as written, "true"/"false" or "null"; cut: it was
 * longer than TE_JSON_TEXT_MAX - 1 bytes and is cut there (a key longer
 * than TE_JSON_KEY_MAX - 1 is cut too, so it never equals a short one). */
struct te_json_item {
	int depth;
	const char *path[TE_JSON_DEPTH];
	enum te_json_type type;
	const char *text;
	int cut;
};

typedef void (*te_json_visit_fn)(const struct te_json_item *it, void *arg);

/* Reads s[0..n) (NUL bytes are errors, not ends) as one JSON value with
 * white space around it, calling visit (may be NULL) for each scalar in
 * order. 0 when it is valid JSON; -1 otherwise, err then one line ("byte
 * 12: expected ':'"): what visit saw so far must then be discarded. */
int te_json_scan(const char *s, size_t n, te_json_visit_fn visit, void *arg,
		 char *err, size_t errlen);

/* 1 when it->path is exactly the keys given (NULL-terminated list). */
int te_json_at(const struct te_json_item *it, const char *const *keys);

#endif
