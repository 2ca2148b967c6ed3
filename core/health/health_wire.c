/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: the text a check's child process hands its parent (the
 * runner, health_run.c): "TEHEALTH1", one line per result, "END". The
 * parent treats it as hostile: a child that was fed junk by the node, or
 * crashed half-way, must give one clear failure, never a wrong pass. */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "health/health.h"
#include "util/strutil.h"

#define WIRE_HEADER "TEHEALTH1"
#define CUT_MAX 1000000

/* One field as a word: '=' then its percent-encoding ('=' itself is
 * encoded, so an empty field is the word "="). */
static int put_field(char *buf, size_t len, const char *field)
{
	size_t used = strlen(buf);

	if (used + 2 >= len)
		return -1;
	buf[used++] = ' ';
	buf[used++] = '=';
	buf[used] = '\0';
	return te_pct_encode(buf + used, len - used, field);
}

int te_health_wire_encode(const struct te_health_set *s, char *buf, size_t len)
{
	static const char *const v[] = { "pass", "fail", "na", "error" };
	int i;

	if (te_snprintf(buf, len, "%s\n", WIRE_HEADER) < 0)
		return -1;
	for (i = 0; i < s->n; i++) {
		const struct te_health_result *r = &s->r[i];

		if (te_appendf(buf, len, "R %s", v[r->verdict % 4]) < 0 ||
		    put_field(buf, len, r->check) < 0 ||
		    put_field(buf, len, r->device) < 0 ||
		    put_field(buf, len, r->value) < 0 ||
		    put_field(buf, len, r->text) < 0 ||
		    te_appendf(buf, len, "\n") < 0)
			return -1;
	}
	if (s->cut &&
	    te_appendf(buf, len, "C %d %d\n", s->cut, s->cut_fail) < 0)
		return -1;
	return te_appendf(buf, len, "END\n");
}

struct decode_ctx {
	const char *check;
	struct te_health_set *out;
	int cut_seen; /* a set has one count of cut results */
};

/* The next word, a field: decoded into out (cut to its size). */
static int get_field(const char **p, char *out, size_t len)
{
	char word[TE_FRAMED_LINE_MAX + 1], dec[TE_FRAMED_LINE_MAX + 1];

	if (te_next_word(p, word, sizeof(word)) < 0 || word[0] != '=' ||
	    te_pct_decode(dec, sizeof(dec), word + 1, strlen(word + 1)) < 0)
		return -1;
	te_clean_text(out, len, dec, len - 1);
	return 0;
}

static int decode_cut(const char *p, struct decode_ctx *c, char *err,
		      size_t errlen)
{
	char a[16], b[16];
	uint64_t cut, cut_fail;

	if (te_next_word(&p, a, sizeof(a)) < 0 ||
	    te_next_word(&p, b, sizeof(b)) < 0 || *p ||
	    te_parse_u64(a, CUT_MAX, &cut) < 0 ||
	    te_parse_u64(b, cut, &cut_fail) < 0)
		return te_err(err, errlen, "a bad count of cut results");
	/* one C line, whose counts still fit beside what out holds: many
	 * would wrap the counts and hide a failure */
	if (c->cut_seen++)
		return te_err(err, errlen,
			      "more than one count of cut results");
	if (c->out->cut > INT_MAX - (int)cut ||
	    c->out->cut_fail > INT_MAX - (int)cut_fail)
		return te_err(err, errlen, "too many cut results");
	c->out->cut += (int)cut;
	c->out->cut_fail += (int)cut_fail;
	return 0;
}

static int decode_line(char *line, void *ctx, char *err, size_t errlen)
{
	struct decode_ctx *c = ctx;
	char tag[4], verdict[8], check[TE_HEALTH_NAME_MAX];
	char dev[TE_HEALTH_DEV_MAX], value[TE_HEALTH_VALUE_MAX];
	char text[TE_HEALTH_TEXT_MAX];
	const char *p = line;
	enum te_health_verdict v;

	if (te_next_word(&p, tag, sizeof(tag)) < 0)
		return te_err(err, errlen, "an empty line");
	if (!strcmp(tag, "C"))
		return decode_cut(p, c, err, errlen);
	if (strcmp(tag, "R") || te_next_word(&p, verdict, sizeof(verdict)) < 0)
		return te_err(err, errlen, "a line that is not a result");
	if (!strcmp(verdict, "pass"))
		v = TE_HV_PASS;
	else if (!strcmp(verdict, "fail"))
		v = TE_HV_FAIL;
	else if (!strcmp(verdict, "na"))
		v = TE_HV_NA;
	else if (!strcmp(verdict, "error"))
		v = TE_HV_ERROR;
	else
		return te_err(err, errlen, "a result with a bad verdict");
	if (get_field(&p, check, sizeof(check)) < 0 ||
	    get_field(&p, dev, sizeof(dev)) < 0 ||
	    get_field(&p, value, sizeof(value)) < 0 ||
	    get_field(&p, text, sizeof(text)) < 0 || *p)
		return te_err(err, errlen, "a result with bad fields");
	if (strcmp(check, c->check))
		return te_err(err, errlen, "a result of another check");
	te_health_add(c->out, check, dev, value, v, "%s", text);
	return 0;
}

int te_health_wire_decode(const char *buf, size_t len, const char *check,
			  struct te_health_set *out, char *err, size_t errlen)
{
	struct decode_ctx c = { check, out, 0 };
	int n = out->n, cut = out->cut, cut_fail = out->cut_fail;
	int cut_error = out->cut_error;

	if (te_framed_parse(buf, len, TE_HEALTH_WIRE_MAX, TE_FRAMED_LINE_MAX,
			    WIRE_HEADER, "the check's process", decode_line, &c,
			    err, errlen) < 0) {
		out->n = n; /* all of it or nothing */
		out->cut = cut;
		out->cut_fail = cut_fail;
		out->cut_error = cut_error;
		return -1;
	}
	return 0;
}
