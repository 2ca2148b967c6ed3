/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bounded relay buffer (see relaybuf.h). */
#include "config.h"

#include <string.h>

#include "util/relaybuf.h"

void te_relaybuf_init(struct te_relaybuf *b, char *mem, size_t cap)
{
	b->mem = mem;
	b->cap = cap;
	b->start = 0;
	b->len = 0;
}

char *te_relaybuf_space(struct te_relaybuf *b, size_t *n)
{
	if (b->start > 0 && b->start + b->len == b->cap) {
		/* Only when the tail is used up: a slow reader costs one
		 * move per buffer's worth, not one per write. */
		memmove(b->mem, b->mem + b->start, b->len);
		b->start = 0;
	}
	*n = b->cap - b->start - b->len;
	return b->mem + b->start + b->len;
}

void te_relaybuf_added(struct te_relaybuf *b, size_t n)
{
	size_t room = b->cap - b->start - b->len;

	b->len += n < room ? n : room;
}

const char *te_relaybuf_data(const struct te_relaybuf *b, size_t *n)
{
	*n = b->len;
	return b->mem + b->start;
}

void te_relaybuf_taken(struct te_relaybuf *b, size_t n)
{
	if (n >= b->len) {
		b->start = 0;
		b->len = 0;
		return;
	}
	b->start += n;
	b->len -= n;
}
