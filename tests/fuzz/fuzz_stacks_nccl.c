/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: NCCL's view in the hang report (core/hang/stacks_nccl.c):
 * the merger's reader of the nodes' fr, frpos, ras and frleft records
 * (bytes from the nodes, which run as the job's user, through srun), and
 * the reader of a rank's environment (its /proc/PID/environ), fed in
 * pieces. The first byte picks the bound on ranks and the piece size.
 * Beyond "no crash": counts within their bounds, every kept text
 * terminated and printable, ranks unique and ordered, the report whole
 * lines each "trainenv: hang: ", the JSON's fields inside the object or
 * not at all (and when not, a reason that says the JSON lacks them).
 * Seeds (tests/fuzz/corpus/stacks_nccl/) are records as the node writes
 * them. */
// FUZZ-MAX-LEN: 16384
// FUZZ-SOURCES: core/hang/stacks_nccl.c core/hang/stacks_nccl_report.c core/util/pickle.c core/util/pickle_get.c core/hang/flightrec.c core/hang/stacks.c core/hang/stacks_report.c core/util/strutil.c core/util/textbuf.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hang/stacks_nccl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char out[1 << 16], json[1 << 18];
static struct te_hn_env env;

static void text_ok(const char *s, size_t size)
{
	const char *e = memchr(s, 0, size);

	if (!e)
		abort();
	for (; s < e; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			abort();
}

static void view_ok(const struct te_hn_view *v)
{
	size_t i, j;

	if (v->nfr > v->max || v->fr_left > v->max ||
	    v->nras > TE_HN_RAS_LINES || v->ras_outcome < -1 ||
	    v->ras_outcome > 6)
		abort();
	for (i = 0; i < v->nfr; i++) {
		const struct te_fr_rank *r = &v->fr[i];

		if (r->npos > TE_FR_GROUPS || r->rank < 0 ||
		    (i && r->rank <= v->fr[i - 1].rank))
			abort();
		text_ok(r->version, sizeof(r->version));
		text_ok(r->why, sizeof(r->why));
		for (j = 0; j < r->npos; j++) {
			text_ok(r->pos[j].group, TE_FR_NAME);
			text_ok(r->pos[j].desc, TE_FR_NAME);
			text_ok(r->pos[j].op, TE_FR_OP);
		}
	}
	for (i = 0; i < v->nras; i++)
		text_ok(v->ras[i], TE_HN_RAS_LINE);
}

static void report_ok(const struct te_hn_view *v)
{
	const char *p = out;
	int n = te_hn_report_text(v, out, sizeof(out)), seen = 0;
	static const char obj[] = "{\"groups\":[],\"more_groups\":0}\n";
	size_t l;
	char why[200];

	while (*p) {
		const char *nl = strchr(p, '\n');

		if (!nl || strncmp(p, "trainenv: hang: ", 16))
			abort();
		p = nl + 1;
		seen++;
	}
	if (seen != n || (!te_hn_shown(v) && n))
		abort();
	memcpy(json, obj, sizeof(obj));
	if (te_hn_report_json(v, json, sizeof(json), why, sizeof(why)) < 0 &&
	    (strcmp(json, obj) || strncmp(why, "the JSON report lacks ", 22)))
		abort();
	l = strlen(json);
	if (strncmp(json, obj, sizeof(obj) - 3) || l < 2 ||
	    strcmp(json + l - 2, "}\n"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct te_hn_view v;
	size_t piece, i;

	if (size < 1)
		return 0;
	piece = 1 + data[0] % 17;
	te_hn_collect((const char *)data + 1, size - 1, data[0] % 40, &v);
	view_ok(&v);
	report_ok(&v);
	te_hn_view_free(&v);
	te_hn_env_init(&env);
	for (i = 1; i < size; i += piece)
		te_hn_env_feed(&env, (const char *)data + i,
			       size - i < piece ? size - i : piece);
	te_hn_env_end(&env);
	if (!memchr(env.pipe, 0, sizeof(env.pipe)) ||
	    !memchr(env.ras, 0, sizeof(env.ras)) || te_hn_env_buffer(&env) < 0)
		abort();
	return 0;
}
