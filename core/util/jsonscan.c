/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bounded JSON reader (jsonscan.h): recursive descent, its depth
 * capped, every copy bounded. */
#include "config.h"

#include <string.h>

#include "util/jsonscan.h"
#include "util/strutil.h"

struct scan {
	const char *s;
	size_t n, i;
	te_json_visit_fn visit;
	void *arg;
	char keys[TE_JSON_DEPTH][TE_JSON_KEY_MAX];
	struct te_json_item it;
	char text[TE_JSON_TEXT_MAX];
	char *err;
	size_t errlen;
};

static int fail(struct scan *sc, const char *what)
{
	return te_err(sc->err, sc->errlen, "byte %zu: %s", sc->i, what);
}

static void skip_space(struct scan *sc)
{
	while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
				 sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
		sc->i++;
}

/* Appends a byte to out[0..max) at *o; past the end it only marks cut. */
static void put(char *out, size_t max, size_t *o, int *cut, unsigned char c)
{
	if (*o + 1 < max)
		out[(*o)++] = (char)c;
	else
		*cut = 1;
}

static void put_utf8(char *out, size_t max, size_t *o, int *cut, unsigned cp)
{
	if (cp < 0x80) {
		put(out, max, o, cut, cp);
	} else if (cp < 0x800) {
		put(out, max, o, cut, 0xc0 | (cp >> 6));
		put(out, max, o, cut, 0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		put(out, max, o, cut, 0xe0 | (cp >> 12));
		put(out, max, o, cut, 0x80 | ((cp >> 6) & 0x3f));
		put(out, max, o, cut, 0x80 | (cp & 0x3f));
	} else {
		put(out, max, o, cut, 0xf0 | (cp >> 18));
		put(out, max, o, cut, 0x80 | ((cp >> 12) & 0x3f));
		put(out, max, o, cut, 0x80 | ((cp >> 6) & 0x3f));
		put(out, max, o, cut, 0x80 | (cp & 0x3f));
	}
}

static int hex4(struct scan *sc, unsigned *cp)
{
	size_t k;

	*cp = 0;
	if (sc->n - sc->i < 4)
		return fail(sc, "\\u cut short");
	for (k = 0; k < 4; k++) {
		char c = sc->s[sc->i++];

		*cp <<= 4;
		if (c >= '0' && c <= '9')
			*cp |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*cp |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*cp |= (unsigned)(c - 'A' + 10);
		else
			return fail(sc, "\\u needs 4 hex digits");
	}
	return 0;
}

/* After "\u": one code point, a surrogate pair joined; a lone surrogate
 * or U+0000 is U+FFFD (the text stays a C string). */
static int unicode_escape(struct scan *sc, unsigned *cp)
{
	unsigned lo;

	if (hex4(sc, cp) < 0)
		return -1;
	if (*cp >= 0xd800 && *cp < 0xdc00 && sc->n - sc->i >= 6 &&
	    sc->s[sc->i] == '\\' && sc->s[sc->i + 1] == 'u') {
		size_t at = sc->i;

		sc->i += 2;
		if (hex4(sc, &lo) < 0)
			return -1;
		if (lo >= 0xdc00 && lo < 0xe000) {
			*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
			return 0;
		}
		sc->i = at; /* the second escape stands on its own */
	}
	if (*cp == 0 || (*cp >= 0xd800 && *cp < 0xe000))
		*cp = 0xfffd;
	return 0;
}

/* A string at sc->i (its quote), decoded into out[0..max). */
static int string(struct scan *sc, char *out, size_t max, int *cut)
{
	size_t o = 0;
	unsigned cp;

	*cut = 0;
	sc->i++;
	for (;;) {
		unsigned char c;

		if (sc->i >= sc->n)
			return fail(sc, "string not closed");
		c = (unsigned char)sc->s[sc->i++];
		if (c == '"')
			break;
		if (c < 0x20)
			return fail(sc, "control character in a string");
		if (c != '\\') {
			put(out, max, &o, cut, c);
			continue;
		}
		if (sc->i >= sc->n)
			return fail(sc, "string not closed");
		c = (unsigned char)sc->s[sc->i++];
		switch (c) {
		case '"':
		case '\\':
		case '/':
			put(out, max, &o, cut, c);
			break;
		case 'b':
			put(out, max, &o, cut, '\b');
			break;
		case 'f':
			put(out, max, &o, cut, '\f');
			break;
		case 'n':
			put(out, max, &o, cut, '\n');
			break;
		case 'r':
			put(out, max, &o, cut, '\r');
			break;
		case 't':
			put(out, max, &o, cut, '\t');
			break;
		case 'u':
			if (unicode_escape(sc, &cp) < 0)
				return -1;
			put_utf8(out, max, &o, cut, cp);
			break;
		default:
			sc->i--;
			return fail(sc, "unknown escape in a string");
		}
	}
	out[o] = '\0';
	return 0;
}

static size_t digits(struct scan *sc)
{
	size_t from = sc->i;

	while (sc->i < sc->n && sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9')
		sc->i++;
	return sc->i - from;
}

/* A number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int number(struct scan *sc, size_t *len)
{
	size_t from = sc->i;

	if (sc->i < sc->n && sc->s[sc->i] == '-')
		sc->i++;
	if (sc->i < sc->n && sc->s[sc->i] == '0')
		sc->i++;
	else if (!digits(sc))
		return fail(sc, "expected a value");
	if (sc->i < sc->n && sc->s[sc->i] == '.') {
		sc->i++;
		if (!digits(sc))
			return fail(sc, "expected digits after '.'");
	}
	if (sc->i < sc->n && (sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E')) {
		sc->i++;
		if (sc->i < sc->n &&
		    (sc->s[sc->i] == '+' || sc->s[sc->i] == '-'))
			sc->i++;
		if (!digits(sc))
			return fail(sc, "expected digits in an exponent");
	}
	*len = sc->i - from;
	return 0;
}

static int word(struct scan *sc, const char *w)
{
	size_t len = strlen(w);

	if (sc->n - sc->i < len || memcmp(sc->s + sc->i, w, len) != 0)
		return fail(sc, "expected a value");
	sc->i += len;
	return 0;
}

static void emit(struct scan *sc, int depth, enum te_json_type type, int cut)
{
	int k;

	if (!sc->visit)
		return;
	sc->it.depth = depth;
	for (k = 0; k < depth; k++)
		sc->it.path[k] = sc->keys[k];
	sc->it.type = type;
	sc->it.text = sc->text;
	sc->it.cut = cut;
	sc->visit(&sc->it, sc->arg);
}

static int value(struct scan *sc, int depth);

/* An object or array at sc->i; its members' keys go to keys[depth]. */
static int container(struct scan *sc, int depth)
{
	char close = sc->s[sc->i] == '{' ? '}' : ']';
	int cut, first = 1;

	if (depth >= TE_JSON_DEPTH)
		return fail(sc, "nested too deep");
	sc->i++;
	for (;;) {
		skip_space(sc);
		if (sc->i < sc->n && sc->s[sc->i] == close && first) {
			sc->i++;
			return 0;
		}
		if (close == '}') {
			if (sc->i >= sc->n || sc->s[sc->i] != '"')
				return fail(sc, "expected a key");
			if (string(sc, sc->keys[depth], TE_JSON_KEY_MAX, &cut))
				return -1;
			skip_space(sc);
			if (sc->i >= sc->n || sc->s[sc->i] != ':')
				return fail(sc, "expected ':'");
			sc->i++;
		} else {
			te_strlcpy(sc->keys[depth], "[]", TE_JSON_KEY_MAX);
		}
		if (value(sc, depth + 1) < 0)
			return -1;
		first = 0;
		skip_space(sc);
		if (sc->i < sc->n && sc->s[sc->i] == ',') {
			sc->i++;
			continue;
		}
		if (sc->i < sc->n && sc->s[sc->i] == close) {
			sc->i++;
			return 0;
		}
		return fail(sc, close == '}' ? "expected ',' or '}'"
					     : "expected ',' or ']'");
	}
}

/* A value at sc->i whose keys are keys[0..depth). */
static int value(struct scan *sc, int depth)
{
	size_t len;
	int cut;

	skip_space(sc);
	if (sc->i >= sc->n)
		return fail(sc, "expected a value");
	switch (sc->s[sc->i]) {
	case '{':
	case '[':
		return container(sc, depth);
	case '"':
		if (string(sc, sc->text, sizeof(sc->text), &cut) < 0)
			return -1;
		emit(sc, depth, TE_JSON_STR, cut);
		return 0;
	case 't':
	case 'f':
	case 'n': {
		const char *w = sc->s[sc->i] == 't'   ? "true"
				: sc->s[sc->i] == 'f' ? "false"
						      : "null";

		if (word(sc, w) < 0)
			return -1;
		te_strlcpy(sc->text, w, sizeof(sc->text));
		emit(sc, depth, w[0] == 'n' ? TE_JSON_NULL : TE_JSON_BOOL, 0);
		return 0;
	}
	}
	len = 0;
	if (number(sc, &len) < 0)
		return -1;
	cut = len >= sizeof(sc->text);
	memcpy(sc->text, sc->s + sc->i - len, cut ? sizeof(sc->text) - 1 : len);
	sc->text[cut ? sizeof(sc->text) - 1 : len] = '\0';
	emit(sc, depth, TE_JSON_NUM, cut);
	return 0;
}

int te_json_scan(const char *s, size_t n, te_json_visit_fn visit, void *arg,
		 char *err, size_t errlen)
{
	static const struct scan zero;
	struct scan sc = zero;

	sc.s = s;
	sc.n = s ? n : 0;
	sc.visit = visit;
	sc.arg = arg;
	sc.err = err;
	sc.errlen = errlen;
	if (errlen)
		err[0] = '\0';
	if (value(&sc, 0) < 0)
		return -1;
	skip_space(&sc);
	if (sc.i != sc.n)
		return fail(&sc, "text after the value");
	return 0;
}

int te_json_at(const struct te_json_item *it, const char *const *keys)
{
	int k;

	for (k = 0; k < it->depth; k++)
		if (!keys[k] || strcmp(it->path[k], keys[k]) != 0)
			return 0;
	return keys[k] == NULL;
}
