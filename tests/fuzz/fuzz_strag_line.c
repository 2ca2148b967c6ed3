/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the stragglers' window summary line's parser
 * (core/straggler/strag_line.c; srun reads the line from the network).
 * Beyond "no crash": a refused line has a one-line reason and an empty
 * summary; a taken one is inside every bound, is written back to exactly
 * the same bytes, and srun's detector takes it. */
// FUZZ-MAX-LEN: 2048
// FUZZ-SOURCES: core/straggler/strag_line.c core/straggler/strag_rank.c core/straggler/strag_detect.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "straggler/straggler.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_taken(const struct te_strag_summary *s, const char *text,
			size_t size)
{
	static struct te_strag_detector *d;
	static unsigned long taken;
	uint64_t dropped;
	static const struct te_strag_cfg cfg = { 0.5, 2, 60, 0 };
	struct te_strag_verdict v[4];
	char back[TE_STRAG_LINE_MAX];
	unsigned i;
	int n;

	if (size >= TE_STRAG_LINE_MAX || s->nranks < 1 ||
	    s->nranks > TE_STRAG_NODE_RANKS || s->op >= TE_STRAG_OPS ||
	    !te_strag_node_ok(s->node, strlen(s->node)))
		abort();
	for (i = 0; i < s->nranks; i++)
		if (s->ranks[i].mean_ns > TE_STRAG_NS_MAX ||
		    (i && s->ranks[i].rank <= s->ranks[i - 1].rank))
			abort();
	n = te_strag_line_format(s, back, sizeof(back));
	if (n < 0 || (size_t)n != size || memcmp(back, text, size))
		abort();
	if (++taken % 8192 == 0) { /* a fresh one now and then */
		te_strag_detect_free(d);
		d = NULL;
	}
	if (!d)
		d = te_strag_detect_new(&cfg);
	if (!d)
		abort();
	dropped = te_strag_detect_dropped(d);
	/* refused only over its bounds (4096 nodes, 64 communicators), and
	 * then counted */
	if (te_strag_detect_add(d, s) < 0 &&
	    te_strag_detect_dropped(d) != dropped + 1)
		abort();
	n = (int)te_strag_detect_close(d, v, 4);
	for (i = 0; i < (unsigned)n; i++)
		if (te_strag_verdict_line(&v[i], back, sizeof(back)) <= 0 ||
		    strchr(back, '\n'))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct te_strag_summary s;
	char err[128];
	char *text;
	size_t i;

	text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	err[0] = '\0';
	if (te_strag_line_parse(text, size, &s, err, sizeof(err)) < 0) {
		if (!err[0] || strchr(err, '\n') || s.nranks)
			abort();
	} else
		check_taken(&s, text, size);
	for (i = 0; i < sizeof(s.node) && s.node[i]; i++)
		;
	if (i == sizeof(s.node))
		abort();
	free(text);
	return 0;
}
