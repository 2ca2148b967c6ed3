/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the bounded JSON reader (core/util/jsonscan.c): the
 * scalars and their keys, escapes, what is refused, and hostile input
 * (deep nesting, long strings and keys, NUL bytes, cut text). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonscan.h"
#include "tap.h"

/* Every scalar as "a.b=TYPE:text;" (cut marked '+'). */
struct seen {
	char out[4096];
	int n;
};

static void collect(const struct te_json_item *it, void *arg)
{
	static const char types[] = "NBSS";
	struct seen *s = arg;
	size_t used = strlen(s->out);
	int k;

	for (k = 0; k < it->depth; k++)
		snprintf(s->out + strlen(s->out), sizeof(s->out) - used, "%s%s",
			 k ? "." : "", it->path[k]);
	used = strlen(s->out);
	snprintf(s->out + used, sizeof(s->out) - used, "=%c:%s%s;",
		 it->type == TE_JSON_NUM ? 'I' : types[it->type], it->text,
		 it->cut ? "+" : "");
	s->n++;
}

static int scan(const char *text, struct seen *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	return te_json_scan(text, strlen(text), collect, s, err, errlen);
}

static void valid(void)
{
	struct seen s;
	char err[128];
	static const char *const at[] = { "a", "b", NULL };
	struct te_json_item it = { .depth = 2, .path = { "a", "b" } };

	is_int(scan(" {\"a\":{\"b\":1,\"c\":[true,null,\"x\"]},\"d\":-1.5e3} ",
		    &s, err, sizeof(err)),
	       0, "an object with an array: valid");
	is_str(s.out,
	       "a.b=I:1;a.c.[]=B:true;a.c.[]=N:null;a.c.[]=S:x;d=I:-1.5e3;",
	       "each scalar with its keys, in order");
	is_int(scan("\"\\u00e9\\ud83d\\ude00\\n\\\"\\/\"", &s, err,
		    sizeof(err)),
	       0, "a string of escapes: valid");
	is_str(s.out, "=S:\xc3\xa9\xf0\x9f\x98\x80\n\"/;",
	       "escapes decoded: U+00E9, a surrogate pair, \\n, quote, slash");
	is_int(scan("\"a\\u0000b\\ud800c\"", &s, err, sizeof(err)), 0,
	       "\\u0000 and a lone surrogate: valid");
	is_str(s.out,
	       "=S:a\xef\xbf\xbd"
	       "b\xef\xbf\xbd"
	       "c;",
	       "... each read as U+FFFD (the text stays a C string)");
	is_int(scan("{}", &s, err, sizeof(err)), 0, "{} is valid");
	is_int(s.n, 0, "... with no scalar");
	ok(te_json_at(&it, at), "te_json_at: a.b is at a.b");
	it.depth = 1;
	ok(!te_json_at(&it, at), "te_json_at: a is not at a.b");
	it.depth = 2;
	it.path[1] = "bb";
	ok(!te_json_at(&it, at), "te_json_at: a.bb is not at a.b");
}

static void refused(void)
{
	static const char *const bad[] = {
		"",
		"{",
		"{\"a\"}",
		"{\"a\":}",
		"[1,]",
		"{\"a\":1,}",
		"01",
		"1.",
		"-",
		"1e",
		"tru",
		"nul",
		"\"ab",
		"\"\\x\"",
		"\"\\u12\"",
		"\"\\u12G4\"",
		"{} {}",
		"[1 2]",
		"{1:2}",
		"'a'",
		"\"a\tb\"",
		"+1",
		"[\"a\"",
		"NaN",
		"{\"a\":1 \"b\":2}",
	};
	struct seen s;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = scan(bad[i], &s, err, sizeof(err));

		ok(rc == -1 && !strncmp(err, "byte ", 5) && !strchr(err, '\n'),
		   "refused with one line: '%s' (%s)", bad[i], err);
	}
}

static void hostile(void)
{
	static char big[300000];
	struct seen s;
	char err[128];
	size_t i;

	/* 16 levels are allowed; the 17th is refused, never a deep
	 * recursion */
	for (i = 0; i < 16; i++)
		big[i] = '[';
	big[16] = '1';
	for (i = 0; i < 16; i++)
		big[17 + i] = ']';
	big[33] = '\0';
	is_int(scan(big, &s, err, sizeof(err)), 0, "16 levels: valid");
	for (i = 0; i < 200000; i++)
		big[i] = '[';
	big[i] = '\0';
	is_int(scan(big, &s, err, sizeof(err)), -1, "200,000 levels: refused");
	like(err, "nested too deep", "... nested too deep");
	big[0] = '"';
	memset(big + 1, 'x', 1000);
	big[1001] = '"';
	big[1002] = '\0';
	is_int(scan(big, &s, err, sizeof(err)), 0, "a 1,000-byte string");
	is_int((long long)strlen(s.out), 3 + TE_JSON_TEXT_MAX - 1 + 2,
	       "... kept to its first %d bytes", TE_JSON_TEXT_MAX - 1);
	ok(strstr(s.out, "+;") != NULL, "... and marked cut");
	big[0] = '{';
	big[1] = '"';
	memset(big + 2, 'k', 500);
	strcpy(big + 502, "\":1}");
	is_int(scan(big, &s, err, sizeof(err)), 0, "a 500-byte key");
	is_int((long long)strlen(s.out), TE_JSON_KEY_MAX - 1 + 5,
	       "... kept to its first %d bytes", TE_JSON_KEY_MAX - 1);
	memcpy(big, "{\"a\":1}", 7);
	big[3] = '\0';
	is_int(te_json_scan(big, 7, NULL, NULL, err, sizeof(err)), -1,
	       "a NUL byte inside: refused, not an end");
	is_int(te_json_scan("{\"a\":1}", 4, NULL, NULL, err, sizeof(err)), -1,
	       "text cut short: refused");
	is_int(te_json_scan(NULL, 0, NULL, NULL, err, sizeof(err)), -1,
	       "no text: refused");
	/* random bytes: always an answer, an error always one line */
	srand(7);
	for (i = 0; i < 2000; i++) {
		size_t n = (size_t)(rand() % 64), k;
		int rc;

		for (k = 0; k < n; k++)
			big[k] = "{}[]\",:1e-.\\u tfn\"a0"[rand() % 21];
		rc = te_json_scan(big, n, NULL, NULL, err, sizeof(err));
		if (rc != 0 && (rc != -1 || strchr(err, '\n') || !err[0]))
			break;
	}
	is_int((long long)i, 2000,
	       "2,000 random texts: each 0, or -1 with a line");
}

int main(void)
{
	valid();
	refused();
	hostile();
	return tap_done();
}
