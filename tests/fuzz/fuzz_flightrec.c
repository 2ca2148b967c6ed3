/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the restricted pickle reader (core/util/pickle.c) and
 * the flight recorder's extract and report (core/hang/flightrec.c). The
 * input is one rank's dump, read with the default bounds and with small
 * ones. Beyond "no crash": a refusal is one line; a document read has
 * every container's items in range and as many as it says, walked without
 * recursion; an extract keeps at most TE_FR_GROUPS groups of printable
 * names; the report of four ranks (the input, its first half, a missing
 * rank, the input again) fits 64 KiB in lines that each start with
 * "flight recorder: ". Seeds (tests/fuzz/corpus/flightrec/) are dumps
 * tests/unit/hang/fr_dumps.py writes. */
// FUZZ-MAX-LEN: 65536
// FUZZ-SOURCES: core/util/pickle.c core/util/pickle_get.c core/hang/flightrec.c core/hang/stacks.c core/hang/stacks_report.c core/util/strutil.c core/util/textbuf.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hang/flightrec.h"
#include "util/pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const char *err, size_t errlen)
{
	if (!err[0] || strlen(err) >= errlen || strchr(err, '\n'))
		abort();
}

/* Every value's items: in range, as many as te_pk_len says. */
static void walk(const struct te_pk_doc *d)
{
	size_t v, n;
	uint32_t it;

	if (te_pk_kind_of(d, d->root) > TE_PK_DICT || d->root >= d->nvals)
		abort();
	for (v = 0; v < d->nvals; v++) {
		n = 0;
		for (it = te_pk_first(d, (te_pk_val)v); it;
		     it = te_pk_next(d, it)) {
			if (te_pk_item_val(d, it) >= d->nvals ||
			    ++n > d->nitems)
				abort();
			if (te_pk_kind_of(d, (te_pk_val)v) == TE_PK_DICT &&
			    te_pk_item_key(d, it) >= d->nvals)
				abort();
		}
		if (n != te_pk_len(d, (te_pk_val)v))
			abort();
	}
}

static void parse(const uint8_t *data, size_t size,
		  const struct te_pk_limits *lim)
{
	struct te_pk_doc d;
	char err[160];

	err[0] = '\0';
	if (te_pk_parse(data, size, lim, &d, err, sizeof(err)) < 0) {
		one_line(err, sizeof(err));
		return;
	}
	walk(&d);
	te_pk_free(&d);
}

static void check_rank(const struct te_fr_rank *r)
{
	size_t i;

	if (r->npos > TE_FR_GROUPS)
		abort();
	if (r->status == TE_FR_REFUSED)
		one_line(r->why, sizeof(r->why));
	for (i = 0; i < r->npos; i++)
		if (!r->pos[i].group[0] ||
		    strlen(r->pos[i].op) >= sizeof(r->pos[i].op) ||
		    strchr(r->pos[i].group, '\n') ||
		    strchr(r->pos[i].desc, '\n'))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct te_fr_rank r[4];
	static char out[1 << 16];
	struct te_pk_limits small;
	const char *line;

	te_pk_limits_default(&small);
	small.max_values = small.max_items = 64;
	small.max_stack = 16;
	small.max_marks = 4;
	small.max_memo = 8;
	small.max_string = 32;
	small.max_depth = 4;
	parse(data, size, NULL);
	parse(data, size, &small);
	te_fr_extract(data, size, NULL, 0, &r[0]);
	te_fr_extract(data, size / 2, NULL, 1, &r[1]);
	te_fr_missing(&r[2], 2, "no dump");
	te_fr_extract(data, size, NULL, 3, &r[3]);
	check_rank(&r[0]);
	check_rank(&r[1]);
	if (te_fr_report(r, 4, out, sizeof(out)) < 0)
		abort();
	for (line = out; *line; line = strchr(line, '\n') + 1)
		if (strncmp(line, "flight recorder: ", 17) ||
		    !strchr(line, '\n'))
			abort();
	return 0;
}
