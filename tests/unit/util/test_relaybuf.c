/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hang-up shield's bounded relay buffer: it holds at most its capacity,
 * keeps the bytes in order across partial writes and wrap-around, and says
 * "full" (the shield then stops reading from srun) instead of growing. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "util/relaybuf.h"
#include "tap.h"

/* Copies up to want bytes in (as a read would), returns how many fit. */
static size_t put(struct te_relaybuf *b, const char *s, size_t want)
{
	size_t n;
	char *p = te_relaybuf_space(b, &n);

	if (n > want)
		n = want;
	memcpy(p, s, n);
	te_relaybuf_added(b, n);
	return n;
}

/* Takes up to want bytes out (as a partial write would) into out. */
static size_t get(struct te_relaybuf *b, char *out, size_t want)
{
	size_t n;
	const char *p = te_relaybuf_data(b, &n);

	if (n > want)
		n = want;
	memcpy(out, p, n);
	te_relaybuf_taken(b, n);
	return n;
}

static void test_basics(void)
{
	char mem[8], out[16];
	struct te_relaybuf b;
	size_t n;

	te_relaybuf_init(&b, mem, sizeof(mem));
	te_relaybuf_data(&b, &n);
	is_int((int)n, 0, "a new buffer is empty");
	te_relaybuf_space(&b, &n);
	is_int((int)n, 8, "and has its whole capacity free");
	is_int((int)put(&b, "abcdefghij", 10), 8, "only the capacity fits");
	te_relaybuf_space(&b, &n);
	is_int((int)n, 0, "full: no space (the shield stops reading)");
	is_int((int)get(&b, out, 3), 3, "a partial write takes 3");
	out[3] = '\0';
	is_str(out, "abc", "oldest bytes first");
	te_relaybuf_space(&b, &n);
	is_int((int)n, 3,
	       "the written-out bytes are free again (moved to the front)");
	is_int((int)put(&b, "XYZW", 4), 3, "3 more fit");
	n = get(&b, out, sizeof(out));
	out[n] = '\0';
	is_str(out, "defghXYZ", "order kept across the move");
	te_relaybuf_space(&b, &n);
	is_int((int)n, 8, "empty again: whole capacity");
	te_relaybuf_added(&b, 100);
	te_relaybuf_data(&b, &n);
	is_int((int)n, 8, "added beyond the space is clamped to the capacity");
	te_relaybuf_taken(&b, 100);
	te_relaybuf_data(&b, &n);
	is_int((int)n, 0, "taken beyond what is held empties it");
}

/* A long stream through a small buffer in uneven pieces: what comes out is
 * exactly what went in, and the buffer never holds more than its capacity. */
static void test_stream(void)
{
	enum {
		CAP = 37,
		TOTAL = 100000
	};
	char mem[CAP], chunk[64];
	char *in = malloc(TOTAL), *out = malloc(TOTAL);
	size_t wrote = 0, read = 0, held, max_held = 0;
	struct te_relaybuf b;
	unsigned seed = 7;

	if (!in || !out) {
		ok(0, "memory");
		free(in);
		free(out);
		return;
	}
	for (size_t i = 0; i < TOTAL; i++)
		in[i] = (char)(i * 31 + i / 97);
	te_relaybuf_init(&b, mem, sizeof(mem));
	while (read < TOTAL) {
		size_t want;

		seed = seed * 1103515245 + 12345;
		want = (seed >> 16) % 50;
		if (wrote < TOTAL)
			wrote += put(&b, in + wrote,
				     want < TOTAL - wrote ? want
							  : TOTAL - wrote);
		te_relaybuf_data(&b, &held);
		if (held > max_held)
			max_held = held;
		seed = seed * 1103515245 + 12345;
		want = (seed >> 16) % 45;
		if (want > sizeof(chunk))
			want = sizeof(chunk);
		want = get(&b, chunk, want);
		memcpy(out + read, chunk, want);
		read += want;
	}
	ok(!memcmp(in, out, TOTAL),
	   "100000 bytes through a 37-byte buffer arrive in order");
	ok(max_held <= CAP, "never more than the capacity held (%zu)",
	   max_held);
	free(in);
	free(out);
}

int main(void)
{
	test_basics();
	test_stream();
	return tap_done();
}
