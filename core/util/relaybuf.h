/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bounded byte buffer between a reader and a writer that never block (the
 * hang-up shield's relay of srun's output): space is taken at the tail,
 * data leaves from the head, and when it is full the reader stops reading,
 * which holds the producer back (backpressure) instead of growing or
 * dropping. Pure functions over caller-owned memory. */
#ifndef TE_RELAYBUF_H
#define TE_RELAYBUF_H

#include <stddef.h>

struct te_relaybuf {
	char *mem;
	size_t cap;
	size_t start; /* first byte not yet written out */
	size_t len;   /* bytes held */
};

void te_relaybuf_init(struct te_relaybuf *b, char *mem, size_t cap);

/* Contiguous free space at the tail (moving the held bytes to the front
 * when that makes room); *n is 0 when the buffer is full. */
char *te_relaybuf_space(struct te_relaybuf *b, size_t *n);

/* n bytes were written into the space te_relaybuf_space gave. */
void te_relaybuf_added(struct te_relaybuf *b, size_t n);

/* The held bytes, oldest first; *n is 0 when empty. */
const char *te_relaybuf_data(const struct te_relaybuf *b, size_t *n);

/* n of the held bytes went out (n larger than held drops everything). */
void te_relaybuf_taken(struct te_relaybuf *b, size_t n);

#endif
