/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An append cursor and JSON strings (textbuf.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/textbuf.h"

void te_buf_init(struct te_buf *b, char *p, size_t len)
{
	b->p = p;
	b->len = len;
	b->used = 0;
	b->cut = len == 0;
	if (len)
		p[0] = '\0';
}

int te_buf_printf(struct te_buf *b, const char *fmt, ...)
{
	size_t room;
	va_list ap;
	int n;

	if (b->cut)
		return -1;
	room = b->len - b->used;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->used, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->p[b->used] = '\0';
		b->cut = 1;
		return -1;
	}
	if ((size_t)n >= room) {
		b->used = b->len - 1; /* vsnprintf wrote what fits */
		b->cut = 1;
		return -1;
	}
	b->used += (size_t)n;
	return 0;
}

void te_buf_rewind(struct te_buf *b, size_t mark)
{
	if (mark >= b->len)
		return;
	b->used = mark;
	b->p[mark] = '\0';
	b->cut = 0;
}

size_t te_utf8_char(const char *s, size_t *skip)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80)
		return *skip = 1, 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		lo = c == 0xe0 ? 0xa0 : 0x80; /* overlong */
		hi = c == 0xed ? 0x9f : 0xbf; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		lo = c == 0xf0 ? 0x90 : 0x80; /* overlong */
		hi = c == 0xf4 ? 0x8f : 0xbf; /* past U+10FFFF */
	} else {
		return *skip = 1, 0; /* 80-C1, F5-FF */
	}
	for (i = 1; i <= need; i++) {
		if (p[i] < lo || p[i] > hi) /* the NUL too */
			return *skip = i, 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return *skip = need + 1, need + 1;
}

int te_buf_json_str(struct te_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = b->used, mark = b->used, k, skip;
	const char *p = s ? s : "";

#define ROOM(n)                        \
	do {                           \
		if (o + (n) >= b->len) \
			goto cut;      \
	} while (0)
	if (b->cut)
		return -1;
	ROOM(1);
	b->p[o++] = '"';
	while (*p) {
		unsigned char c = (unsigned char)*p;

		k = te_utf8_char(p, &skip);
		if (!k) {
			ROOM(6);
			memcpy(b->p + o, "\\ufffd", 6);
			o += 6;
		} else if (c == '"' || c == '\\') {
			ROOM(2);
			b->p[o++] = '\\';
			b->p[o++] = (char)c;
		} else if (c == '\n') {
			ROOM(2);
			b->p[o++] = '\\';
			b->p[o++] = 'n';
		} else if (c < 0x20 || c == 0x7f ||
			   (c == 0xc2 && (unsigned char)p[1] < 0xa0)) {
			/* C0, DEL, C1 (U+0080-U+009F: a terminal may act on
			 * them when the record is printed) */
			unsigned u = c == 0xc2 ? (unsigned char)p[1] : c;

			ROOM(6);
			memcpy(b->p + o, "\\u00", 4);
			b->p[o + 4] = hex[u >> 4];
			b->p[o + 5] = hex[u & 15];
			o += 6;
		} else {
			ROOM(k);
			memcpy(b->p + o, p, k);
			o += k;
		}
		p += skip;
	}
	ROOM(1);
	b->p[o++] = '"';
#undef ROOM
	b->p[o] = '\0';
	b->used = o;
	return 0;
cut:
	b->p[mark] = '\0';
	b->used = mark;
	b->cut = 1;
	return -1;
}
