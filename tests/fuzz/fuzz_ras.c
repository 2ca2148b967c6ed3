/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the reader of NCCL RAS's reply (core/hang/ras.c; the
 * bytes come from whatever listens on the step's loopback port). The
 * first byte picks the outcome the reader is told the query had; the rest
 * is the reply. Beyond "no crash": every count is within its bound and
 * every kept text terminated and printable; the report has at most the
 * lines asked, each "NCCL RAS: ..." or "NCCL RAS (NCCL ...): ...", ended
 * by '\n', in the buffer given; a small buffer gives whole lines. Seeds
 * (tests/fuzz/corpus/ras/) are replies as NCCL 2.24 to 2.30 write them. */
// FUZZ-MAX-LEN: 65536
// FUZZ-SOURCES: core/hang/ras.c core/util/strutil.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hang/ras.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct te_ras_status st;
static char out[16384], small[300];

static void text_ok(const char *s, size_t size)
{
	const char *e = memchr(s, 0, size);

	if (!e)
		abort();
	for (; s < e; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			abort();
}

static void lines_ok(const char *o, size_t max, int n)
{
	int seen = 0;

	while (*o) {
		const char *nl = strchr(o, '\n');

		if (!nl || strncmp(o, "NCCL RAS", 8))
			abort();
		o = nl + 1;
		seen++;
	}
	if (seen != n || (size_t)n > max)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i, j;
	int n;

	if (size < 1)
		return 0;
	memset(&st, 0, sizeof(st));
	st.outcome = (enum te_ras_outcome)(data[0] % (TE_RAS_FAILED + 1));
	st.err = data[0];
	te_ras_parse((const char *)data + 1, size - 1, &st);
	if (st.nblocks > TE_RAS_BLOCKS || st.ngroups > TE_RAS_GROUPS)
		abort();
	text_ok(st.version, sizeof(st.version));
	text_ok(st.refused, sizeof(st.refused));
	for (i = 0; i < st.ngroups; i++) {
		text_ok(st.groups[i].status, sizeof(st.groups[i].status));
		text_ok(st.groups[i].errors, sizeof(st.groups[i].errors));
	}
	for (i = 0; i < st.nblocks; i++) {
		const struct te_ras_block *b = &st.blocks[i];

		if (b->nwho > TE_RAS_NAMED || b->kind > TE_RAS_TIMEOUTS)
			abort();
		text_ok(b->comm, sizeof(b->comm));
		text_ok(b->hash, sizeof(b->hash));
		text_ok(b->note, sizeof(b->note));
		for (j = 0; j < b->nwho; j++) {
			text_ok(b->who[j].node, sizeof(b->who[j].node));
			text_ok(b->who[j].gpu, sizeof(b->who[j].gpu));
			text_ok(b->who[j].what, sizeof(b->who[j].what));
			if (b->who[j].rank < -1 || b->who[j].pid < -1)
				abort();
		}
	}
	n = te_ras_format(&st, "127.0.0.2:28100", 12, out, sizeof(out));
	lines_ok(out, 12, n);
	n = te_ras_format(&st, "127.0.0.2:28100", 3, small, sizeof(small));
	lines_ok(small, 3, n);
	return 0;
}
