/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small, strict string helpers shared by every side (strutil.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/strutil.h"

size_t te_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

static int te_vsnprintf(char *dst, size_t size, const char *fmt, va_list ap)
{
	int n;

	if (!size)
		return -1;
	n = vsnprintf(dst, size, fmt, ap);
	if (n < 0) {
		dst[0] = '\0';
		return -1;
	}
	return (size_t)n < size ? 0 : -1;
}

int te_snprintf(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = te_vsnprintf(dst, size, fmt, ap);
	va_end(ap);
	return rc;
}

int te_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	te_vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void te_clean_text(char *dst, size_t size, const char *s, size_t max)
{
	size_t i, n = 0;

	if (!size)
		return;
	for (i = 0; s && n < max && s[i] && n + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	dst[n] = '\0';
}

int te_token_equal(const char *a, const char *b, size_t len)
{
	unsigned char d = 0;
	size_t i;

	if (!a || !b || strnlen(a, len + 1) != len ||
	    strnlen(b, len + 1) != len)
		return 0;
	for (i = 0; i < len; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

int te_appendf(char *dst, size_t size, const char *fmt, ...)
{
	size_t len = strnlen(dst, size);
	va_list ap;
	int rc;

	if (len >= size)
		return -1;
	va_start(ap, fmt);
	rc = te_vsnprintf(dst + len, size - len, fmt, ap);
	va_end(ap);
	return rc;
}

int te_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!s || !*s)
		return -1;
	for (i = 0; s[i]; i++) {
		unsigned d;

		if (i >= 19 || s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned)(s[i] - '0');
		v = v * 10 + d; /* 19 digits cannot overflow 64 bits */
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

char *te_value_slot(void)
{
	static char ring[TE_VALUE_SLOTS][TE_VALUE_SLOT_SIZE];
	static unsigned next;

	return ring[next++ % TE_VALUE_SLOTS];
}

size_t te_strnlen_cap(const char *s, size_t max)
{
	return strnlen(s, max + 1);
}

int te_is_printable(const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= max || c < 0x20 || c > 0x7e)
			return 0;
	}
	return 1;
}

void te_quote(char *dst, size_t size, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	if (!size)
		return;
	if (!s) {
		te_strlcpy(dst, "(null)", size);
		return;
	}
	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t need = (c < 0x20 || c > 0x7e || c == '\\') ? 4 : 1;

		if (o + need + 4 > size) { /* room for "..." and NUL */
			if (o + 4 <= size) {
				memcpy(dst + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (need == 1) {
			dst[o++] = (char)c;
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		}
	}
	dst[o < size ? o : size - 1] = '\0';
}

static int te_pct_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("._/-,+@", c) != NULL;
}

size_t te_pct_encoded_len(const char *src)
{
	size_t n = 0;

	for (; *src; src++)
		n += te_pct_plain((unsigned char)*src) ? 1 : 3;
	return n;
}

int te_pct_encode(char *dst, size_t size, const char *src)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *src; src++) {
		unsigned char c = (unsigned char)*src;

		if (te_pct_plain(c) && c) {
			if (o + 1 >= size)
				return -1;
			dst[o++] = (char)c;
		} else {
			if (o + 3 >= size)
				return -1;
			dst[o++] = '%';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		}
	}
	if (o >= size)
		return -1;
	dst[o] = '\0';
	return 0;
}

static int te_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int te_pct_decode(char *dst, size_t size, const char *src, size_t srclen)
{
	size_t o = 0, i;

	for (i = 0; i < srclen; i++) {
		int c = (unsigned char)src[i];

		if (c == '\0')
			return -1;
		if (c == '%') {
			int hi, lo;

			if (i + 2 >= srclen)
				return -1;
			hi = te_hexval(src[i + 1]);
			lo = te_hexval(src[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = hi * 16 + lo;
			if (c == 0)
				return -1;
			i += 2;
		}
		if (o + 1 >= size)
			return -1;
		dst[o++] = (char)c;
	}
	if (o >= size)
		return -1;
	dst[o] = '\0';
	return 0;
}

int te_next_word(const char **p, char *out, size_t outlen)
{
	size_t n = 0;

	while (**p && **p != ' ' && **p != '\n') {
		if (n + 1 >= outlen)
			return -1;
		out[n++] = *(*p)++;
	}
	out[n] = '\0';
	if (**p == ' ')
		(*p)++;
	return n ? 0 : -1;
}

int te_word_valid(const char *s, size_t max, const char *extra)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i + 1 >= max)
			return 0;
		if (!isalnum(c) && !strchr(extra, c))
			return 0;
	}
	return i > 0;
}

void te_node_name_from(const char *host, char *out, size_t len)
{
	size_t n = host ? strcspn(host, ".") : 0;

	if (len == 0)
		return;
	if (n > 0 && n < len && n < 256) {
		memcpy(out, host, n);
		out[n] = '\0';
		if (te_word_valid(out, len, "-_"))
			return;
	}
	te_strlcpy(out, "unknown", len);
}

void te_node_name(char *out, size_t len)
{
	char host[256];

	if (gethostname(host, sizeof(host)) < 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	te_node_name_from(host, out, len);
}

int te_write_all(int fd, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

int te_replace_file(const char *path, const char *tmp, const char *text)
{
	char name[PATH_MAX];
	int fd, rc, e;

	/* a fresh name beside path, made with O_EXCL (mkostemp): in a
	 * shared sticky directory, what another user made at a name we
	 * would use (a link, a file of theirs) is never followed nor in the
	 * way */
	if (te_snprintf(name, sizeof(name), "%s.XXXXXX", tmp) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = te_write_all(fd, text, strlen(text));
	if (close(fd) < 0)
		rc = -1;
	if (rc == 0 && rename(name, path) == 0)
		return 0;
	e = errno;
	unlink(name);
	errno = e;
	return -1;
}

char *te_trim(char *s)
{
	size_t len;
	char *p = s;

	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	len = strlen(p);
	while (len &&
	       (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
		len--;
	memmove(s, p, len);
	s[len] = '\0';
	return s;
}

int te_framed_parse(const char *buf, size_t len, size_t max_len,
		    size_t line_max, const char *header, const char *who,
		    te_framed_line_fn line_fn, void *ctx, char *err,
		    size_t errlen)
{
	char line[TE_FRAMED_LINE_MAX + 1];
	size_t pos = 0;
	int lineno = 0, ended = 0;

	if (line_max > TE_FRAMED_LINE_MAX)
		line_max = TE_FRAMED_LINE_MAX;
	if (len > max_len)
		return te_err(err, errlen, "output longer than %zu bytes",
			      max_len);
	if (len == 0)
		return te_err(err, errlen, "no output");
	if (memchr(buf, '\0', len))
		return te_err(err, errlen, "NUL byte in the output");
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t ll;

		if (!nl)
			return te_err(err, errlen, "line %d is not terminated",
				      lineno + 1);
		ll = (size_t)(nl - (buf + pos));
		lineno++;
		if (ll > line_max)
			return te_err(err, errlen,
				      "line %d is longer than %zu "
				      "characters",
				      lineno, line_max);
		memcpy(line, buf + pos, ll);
		line[ll] = '\0';
		pos += ll + 1;
		if (ended)
			return te_err(err, errlen, "text after END");
		if (lineno == 1) {
			if (strcmp(line, header)) {
				char q[64];

				te_quote(q, sizeof(q), line);
				return te_err(err, errlen, "bad header '%s'",
					      q);
			}
			continue;
		}
		if (!strcmp(line, "END")) {
			ended = 1;
			continue;
		}
		if (line_fn(line, ctx, err, errlen) < 0)
			return -1;
	}
	if (!ended)
		return te_err(err, errlen,
			      "the output ends without END (%s "
			      "stopped half-way)",
			      who);
	return 0;
}

int te_list_has(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && strncmp(p, word, n) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

const char *te_list_next(const char *p, char *item, size_t len)
{
	const char *end;
	size_t n;

	if (!p || !*p)
		return NULL;
	end = strchr(p, ',');
	n = end ? (size_t)(end - p) : strlen(p);
	if (n < len) {
		memcpy(item, p, n);
		item[n] = '\0';
	} else if (len) {
		item[0] = '\0';
	}
	return end ? end + 1 : p + n;
}

void te_nul_entries_feed(struct te_nul_entries *st, char *cur, size_t cap,
			 const char *buf, size_t n, te_nul_entry_fn fn,
			 void *ctx)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i] == '\0') {
			if (!st->too_long)
				fn(ctx, cur, st->len);
			st->len = 0;
			st->too_long = 0;
		} else if (st->len < cap) {
			cur[st->len++] = buf[i];
		} else {
			st->too_long = 1;
		}
	}
}

void te_nul_entries_end(struct te_nul_entries *st, const char *cur,
			te_nul_entry_fn fn, void *ctx)
{
	if (st->len && !st->too_long)
		fn(ctx, cur, st->len);
	st->len = 0;
	st->too_long = 0;
}
