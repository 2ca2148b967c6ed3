/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: the results of the checks, and how they print (the table
 * and the JSON of `trainenv health`, a drain's reason). Pure. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "health/health.h"
#include "util/strutil.h"

void te_health_set_init(struct te_health_set *s, const char *node)
{
	memset(s, 0, sizeof(*s));
	te_clean_text(s->node, sizeof(s->node), node ? node : "unknown",
		      sizeof(s->node) - 1);
}

void te_health_add(struct te_health_set *s, const char *check,
		   const char *device, const char *value,
		   enum te_health_verdict v, const char *fmt, ...)
{
	struct te_health_result *r;
	char text[TE_HEALTH_TEXT_MAX * 2];
	va_list ap;

	if (v != TE_HV_PASS && v != TE_HV_NA && v != TE_HV_ERROR)
		v = TE_HV_FAIL;
	if (s->n >= TE_HEALTH_RESULTS_MAX) {
		s->cut++;
		if (v == TE_HV_FAIL)
			s->cut_fail++;
		if (v == TE_HV_ERROR)
			s->cut_error++;
		return;
	}
	r = &s->r[s->n++];
	memset(r, 0, sizeof(*r));
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	te_clean_text(r->check, sizeof(r->check), check, sizeof(r->check) - 1);
	te_clean_text(r->node, sizeof(r->node), s->node, sizeof(r->node) - 1);
	te_clean_text(r->device, sizeof(r->device), device,
		      sizeof(r->device) - 1);
	te_clean_text(r->value, sizeof(r->value), value, sizeof(r->value) - 1);
	te_clean_text(r->text, sizeof(r->text), text, sizeof(r->text) - 1);
	r->verdict = v;
}

int te_health_set_failed(const struct te_health_set *s)
{
	int i, n = s->cut_fail + s->cut_error;

	for (i = 0; i < s->n; i++)
		if (s->r[i].verdict == TE_HV_FAIL ||
		    s->r[i].verdict == TE_HV_ERROR)
			n++;
	return n;
}

int te_health_set_ok(const struct te_health_set *s)
{
	return te_health_set_failed(s) == 0;
}

const char *te_health_verdict_name(enum te_health_verdict v)
{
	switch (v) {
	case TE_HV_PASS:
		return "pass";
	case TE_HV_NA:
		return "n/a";
	case TE_HV_ERROR:
		return "error";
	default:
		return "fail";
	}
}

void te_health_reason(const struct te_health_result *r, char *buf, size_t len)
{
	te_snprintf(buf, len, "trainenv: %s", r->text);
}

void te_health_table(const struct te_health_set *s, struct te_buf *b)
{
	int i;

	te_buf_printf(b, "%-16s %-6s %-7s %s\n", "NODE", "CHECK", "VERDICT",
		      "RESULT");
	for (i = 0; i < s->n; i++)
		te_buf_printf(b, "%-16s %-6s %-7s %s\n", s->r[i].node,
			      s->r[i].check,
			      te_health_verdict_name(s->r[i].verdict),
			      s->r[i].text);
	if (s->cut)
		te_buf_printf(b,
			      "%-16s %-6s %-7s %d more results not listed "
			      "(%d of them failed)\n",
			      s->node, "-",
			      s->cut_fail    ? "fail"
			      : s->cut_error ? "error"
					     : "pass",
			      s->cut, s->cut_fail + s->cut_error);
}

static void json_field(struct te_buf *b, const char *name, const char *val,
		       int comma)
{
	te_buf_printf(b, "%s\"%s\":", comma ? "," : "", name);
	te_buf_json_str(b, val);
}

int te_health_json(const struct te_health_set *s, struct te_buf *b)
{
	int i;

	te_buf_printf(b, "{");
	json_field(b, "node", s->node, 0);
	te_buf_printf(b, ",\"ok\":%s,\"failed\":%d,\"cut\":%d,\"results\":[",
		      te_health_set_ok(s) ? "true" : "false",
		      te_health_set_failed(s), s->cut);
	for (i = 0; i < s->n; i++) {
		const struct te_health_result *r = &s->r[i];

		te_buf_printf(b, "%s{", i ? "," : "");
		json_field(b, "check", r->check, 0);
		json_field(b, "node", r->node, 1);
		json_field(b, "device", r->device, 1);
		json_field(b, "value", r->value, 1);
		json_field(b, "verdict", te_health_verdict_name(r->verdict), 1);
		json_field(b, "text", r->text, 1);
		te_buf_printf(b, "}");
	}
	te_buf_printf(b, "]}\n");
	return b->cut ? -1 : 0;
}

/* "WHERE: KEY: invalid value 'VAL'; accepted: ACC" */
int te_health_bad_value(const char *where, const char *key, const char *val,
			const char *acc, char *err, size_t errlen)
{
	char q[64];

	te_quote(q, sizeof(q), val);
	return te_err(err, errlen, "%s: %s: invalid value '%s'; accepted: %s",
		      where, key, q, acc);
}
