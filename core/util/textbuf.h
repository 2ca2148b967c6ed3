/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An append cursor over a caller's buffer, and JSON strings written with
 * it. Reports of thousands of groups append hundreds of thousands of
 * fields: each append costs what it writes, never a walk of what is
 * already there (strlen per field made a 2,000-group report take
 * seconds). Pure. */
#ifndef TE_TEXTBUF_H
#define TE_TEXTBUF_H

#include <stddef.h>

struct te_buf {
	char *p;
	size_t len;  /* p's size; at most len - 1 bytes of text */
	size_t used; /* p[used] is the terminating NUL */
	int cut;     /* something did not fit: later appends do nothing */
};

/* An empty text in p[0..len) (len 0: every append is cut). */
void te_buf_init(struct te_buf *b, char *p, size_t len);
/* Appends; what does not fit is cut (the text stays terminated) and the
 * buffer marked cut. 0, or -1 when cut (now or before). */
__attribute__((format(printf, 2, 3))) int te_buf_printf(struct te_buf *b,
							const char *fmt, ...);
/* Back to an earlier length (a mark from b->used), not cut any more. */
void te_buf_rewind(struct te_buf *b, size_t mark);

/* s as a JSON string, quotes included, all or nothing (cut: the buffer
 * is left as it was, marked cut; -1). Valid UTF-8 is kept as it is
 * ("café" stays café); every byte of an ill-formed sequence (a stray
 * continuation byte, a cut, overlong or surrogate sequence, beyond
 * U+10FFFF) becomes U+FFFD, written "\ufffd", one per maximal ill-formed
 * part as Unicode recommends; control characters (C0, DEL and C1) are
 * escaped. The output is always valid UTF-8 and valid JSON. */
int te_buf_json_str(struct te_buf *b, const char *s);

/* Bytes of the well-formed UTF-8 character at s (1 to 4; ASCII is 1), or
 * 0 when s starts an ill-formed sequence, with *skip the bytes of its
 * maximal ill-formed part (at least 1). s is NUL-terminated (the NUL ends
 * any sequence). */
size_t te_utf8_char(const char *s, size_t *skip);

#endif
