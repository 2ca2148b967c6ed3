/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL's view in the hang report (core/hang/stacks_nccl.h): the report's
 * lines above the stacks and its JSON fields, from what the merger kept
 * of the nodes' records. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hang/flightrec.h"
#include "hang/ras.h"
#include "hang/stacks_nccl.h"
#include "util/strutil.h"
#include "util/textbuf.h"

int te_hn_shown(const struct te_hn_view *v)
{
	/* ranks left out count too: a node whose every rank's record was
	 * over its share sends only its frleft line */
	return v->any_nccl || v->any_has || v->fr_left || v->fr_cut ||
	       (v->ras_outcome >= 0 && v->ras_outcome != TE_RAS_ABSENT);
}

/* The nodes' frleft counts, at most the ranks the merger could still
 * have kept: a node may claim ranks it also sent (only the job's own
 * collectors write these lines), never more than max in all. */
static size_t fr_left(const struct te_hn_view *v)
{
	size_t room = v->max > v->nfr ? v->max - v->nfr : 0;

	return v->fr_left < room ? v->fr_left : room;
}

#define FR_TEXT_MAX (64 * 1024)

/* te_fr_report's lines (allocated; NULL when out of memory). */
static char *fr_lines(const struct te_hn_view *v)
{
	char *t = malloc(FR_TEXT_MAX);

	if (t)
		te_fr_report(v->fr, v->nfr, t, FR_TEXT_MAX);
	return t;
}

/* One whole line appended, or nothing (b stays as it was). 1 or 0. */
static int add_line(struct te_buf *b, const char *what, const char *s, size_t n)
{
	size_t mark = b->used;

	if (te_buf_printf(b, "trainenv: hang: %s%.*s\n", what, (int)n, s) == 0)
		return 1;
	te_buf_rewind(b, mark);
	b->cut = 1;
	return 0;
}

int te_hn_report_text(const struct te_hn_view *v, char *out, size_t len)
{
	static const char no_ras[] =
		"not asked (the first node of the step sent no answer)";
	char more[96];
	struct te_buf b;
	char *fr, *p;
	size_t i;
	int lines = 0;

	te_buf_init(&b, out, len);
	if (!te_hn_shown(v))
		return 0;
	for (i = 0; i < v->nras; i++)
		lines += add_line(&b, "", v->ras[i], strlen(v->ras[i]));
	if (v->ras_outcome < 0)
		lines += add_line(&b, "NCCL RAS: ", no_ras, strlen(no_ras));
	fr = fr_lines(v);
	for (p = fr; p && *p;) {
		size_t k = strcspn(p, "\n");

		lines += add_line(&b, "", p, k);
		p += k + (p[k] == '\n');
	}
	free(fr);
	if (v->fr_cut) {
		te_snprintf(more, sizeof(more),
			    "%zu more rank%s than the step has, left out",
			    v->fr_cut, v->fr_cut == 1 ? "" : "s");
		lines += add_line(&b, "flight recorder: ", more, strlen(more));
	}
	if (fr_left(v)) {
		te_snprintf(more, sizeof(more),
			    "%zu rank%s left out by their nodes (over a node's "
			    "share of the output)",
			    fr_left(v), fr_left(v) == 1 ? "" : "s");
		lines += add_line(&b, "flight recorder: ", more, strlen(more));
	}
	return lines;
}

/* The lines of text (each '\n'-ended) as a JSON array of strings. */
static void json_lines(struct te_buf *b, const char *text)
{
	char line[TE_HN_RAS_LINE * 2];
	int first = 1;

	te_buf_printf(b, "[");
	while (text && *text) {
		size_t k = strcspn(text, "\n");

		te_snprintf(line, sizeof(line), "%.*s", (int)k, text);
		te_buf_printf(b, "%s", first ? "" : ",");
		te_buf_json_str(b, line);
		first = 0;
		text += k + (text[k] == '\n');
	}
	te_buf_printf(b, "]");
}

static void json_rank(struct te_buf *b, const struct te_fr_rank *r)
{
	size_t j;

	te_buf_printf(b, "{\"rank\":%d,\"status\":\"%s\",\"version\":", r->rank,
		      te_hn_word(TE_HN_STATUS, (int)r->status));
	te_buf_json_str(b, r->version);
	te_buf_printf(b, ",\"why\":");
	te_buf_json_str(b, r->why);
	te_buf_printf(b, ",\"groups\":[");
	for (j = 0; j < r->npos; j++) {
		const struct te_fr_pos *p = &r->pos[j];

		te_buf_printf(b, "%s{\"group\":", j ? "," : "");
		te_buf_json_str(b, p->group);
		te_buf_printf(b, ",\"desc\":");
		te_buf_json_str(b, p->desc);
		te_buf_printf(b, ",\"op\":");
		te_buf_json_str(b, p->op);
		te_buf_printf(b, ",\"seq\":%lld,\"state\":\"%s\"}",
			      (long long)p->seq,
			      te_hn_word(TE_HN_STATE, (int)p->state));
	}
	te_buf_printf(b, "]}");
}

/* The two fields, ",\"nccl_ras\":...,\"flight_recorder\":...", into b. */
static void json_fields(struct te_buf *b, const struct te_hn_view *v)
{
	char ras[TE_HN_RAS_LINES * TE_HN_RAS_LINE];
	char *fr = fr_lines(v);
	size_t i, n = v->nfr < TE_HN_JSON_RANKS ? v->nfr : TE_HN_JSON_RANKS;

	ras[0] = '\0';
	for (i = 0; i < v->nras; i++)
		te_appendf(ras, sizeof(ras), "%s\n", v->ras[i]);
	te_buf_printf(b, ",\"nccl_ras\":{\"outcome\":");
	if (v->ras_outcome < 0)
		te_buf_printf(b, "null");
	else
		te_buf_printf(b, "\"%s\"",
			      te_hn_word(TE_HN_OUTCOME, v->ras_outcome));
	te_buf_printf(b, ",\"lines\":");
	json_lines(b, ras);
	te_buf_printf(b, "},\"flight_recorder\":{\"lines\":");
	json_lines(b, fr ? fr : "flight recorder: out of memory\n");
	free(fr);
	te_buf_printf(b, ",\"ranks\":[");
	for (i = 0; i < n; i++) {
		te_buf_printf(b, "%s", i ? "," : "");
		json_rank(b, &v->fr[i]);
	}
	te_buf_printf(b, "],\"ranks_left_out\":%zu}",
		      v->nfr - n + v->fr_cut + fr_left(v));
}

int te_hn_report_json(const struct te_hn_view *v, char *json, size_t len,
		      char *why, size_t whylen)
{
	static const char lacks[] = "the JSON report lacks nccl_ras and "
				    "flight_recorder";
	size_t end = json ? strnlen(json, len) : 0, tail;
	struct te_buf b;
	char *add;
	size_t cap = 64 * 1024 + TE_HN_JSON_RANKS * 8192;

	if (why && whylen)
		why[0] = '\0';
	if (!json || !te_hn_shown(v))
		return 0;
	if (end == len)
		return te_err(why, whylen, "%s: the report is not terminated",
			      lacks);
	while (end && (json[end - 1] == '\n' || json[end - 1] == ' '))
		end--;
	if (!end || json[end - 1] != '}')
		return te_err(why, whylen, "%s: the report is no object",
			      lacks);
	tail = strnlen(json, len) - end + 1; /* "}" and what followed */
	add = malloc(cap);
	if (!add)
		return te_err(why, whylen, "%s: out of memory", lacks);
	te_buf_init(&b, add, cap);
	json_fields(&b, v);
	if (b.cut || end - 1 + b.used + tail + 1 > len) {
		free(add);
		return te_err(why, whylen,
			      "%s: they did not fit (%zu bytes more, %zu "
			      "left of %zu)",
			      lacks, b.used, len - (end + tail), len);
	}
	memmove(json + end - 1 + b.used, json + end - 1, tail + 1);
	memcpy(json + end - 1, add, b.used);
	free(add);
	return 0;
}
