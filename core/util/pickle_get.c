/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a document of the restricted pickle reader (core/util/pickle.h):
 * every index is checked, so a reader given any index reads nothing out of
 * bounds. */
#include "config.h"

#include <string.h>

#include "util/pickle.h"
#include "util/pickle_int.h"

static const struct te_pk_value *val(const struct te_pk_doc *doc, te_pk_val v)
{
	return v < doc->nvals ? &doc->vals[v] : NULL;
}

enum te_pk_kind te_pk_kind_of(const struct te_pk_doc *doc, te_pk_val v)
{
	const struct te_pk_value *p = val(doc, v);

	return p ? (enum te_pk_kind)p->kind : TE_PK_NONE;
}

int te_pk_int(const struct te_pk_doc *doc, te_pk_val v, int64_t *out)
{
	const struct te_pk_value *p = val(doc, v);

	if (!p || p->kind != TE_PK_INT)
		return -1;
	*out = (int64_t)p->x;
	return 0;
}

int te_pk_float(const struct te_pk_doc *doc, te_pk_val v, double *out)
{
	const struct te_pk_value *p = val(doc, v);

	if (p && p->kind == TE_PK_INT) {
		*out = (double)(int64_t)p->x;
		return 0;
	}
	if (!p || p->kind != TE_PK_FLOAT)
		return -1;
	memcpy(out, &p->x, sizeof(*out));
	return 0;
}

int te_pk_bool(const struct te_pk_doc *doc, te_pk_val v, int *out)
{
	const struct te_pk_value *p = val(doc, v);

	if (!p || p->kind != TE_PK_BOOL)
		return -1;
	*out = p->x != 0;
	return 0;
}

int te_pk_bytes(const struct te_pk_doc *doc, te_pk_val v, const char **s,
		size_t *n)
{
	const struct te_pk_value *p = val(doc, v);

	if (!p || (p->kind != TE_PK_STR && p->kind != TE_PK_BYTES))
		return -1;
	*s = (const char *)doc->buf + p->x;
	*n = p->n;
	return 0;
}

int te_pk_str_is(const struct te_pk_doc *doc, te_pk_val v, const char *want)
{
	const struct te_pk_value *p = val(doc, v);
	size_t n = strlen(want);

	return p && p->kind == TE_PK_STR && p->n == n &&
	       memcmp(doc->buf + p->x, want, n) == 0;
}

size_t te_pk_len(const struct te_pk_doc *doc, te_pk_val v)
{
	const struct te_pk_value *p = val(doc, v);

	return p && p->kind >= TE_PK_LIST ? p->n : 0;
}

uint32_t te_pk_first(const struct te_pk_doc *doc, te_pk_val container)
{
	const struct te_pk_value *p = val(doc, container);

	return p && p->kind >= TE_PK_LIST && p->n ? (uint32_t)p->x : 0;
}

uint32_t te_pk_next(const struct te_pk_doc *doc, uint32_t it)
{
	return it && it < doc->nitems ? doc->items[it].next : 0;
}

te_pk_val te_pk_item_val(const struct te_pk_doc *doc, uint32_t it)
{
	return it && it < doc->nitems ? doc->items[it].val : TE_PK_NOVAL;
}

te_pk_val te_pk_item_key(const struct te_pk_doc *doc, uint32_t it)
{
	return it && it < doc->nitems ? doc->items[it].key : TE_PK_NOVAL;
}

te_pk_val te_pk_get(const struct te_pk_doc *doc, te_pk_val dict,
		    const char *key)
{
	te_pk_val found = TE_PK_NOVAL;
	uint32_t it;

	if (te_pk_kind_of(doc, dict) != TE_PK_DICT)
		return TE_PK_NOVAL;
	for (it = te_pk_first(doc, dict); it; it = te_pk_next(doc, it))
		if (te_pk_str_is(doc, te_pk_item_key(doc, it), key))
			found = te_pk_item_val(doc, it);
	return found;
}
