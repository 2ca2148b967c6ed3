/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: goodput's reader of users' step records and its sum
 * (core/report/goodput.c). The input, in a buffer of exactly its size, is
 * read as one record; split at 0xff bytes it is several records of one
 * job, summed up and written as text. Beyond "no crash": an error is one
 * line, a record read has start <= barrier <= end, every share is >= 0
 * and wall = training + initialisation + lost + other exactly. */
// FUZZ-MAX-LEN: 65536
// FUZZ-SOURCES: core/util/jsonscan.c core/report/goodput.c core/util/strutil.c core/util/textbuf.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/goodput.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STEPS 32

static void one_line(const char *err, size_t errlen)
{
	if (!err[0] || strlen(err) >= errlen || strchr(err, '\n'))
		abort();
}

static void check_step(const struct te_gp_step *s)
{
	if (s->start_ms > s->barrier_ms || s->barrier_ms > s->end_ms ||
	    s->verdict > TE_GP_STOP || strlen(s->without) >= sizeof(s->without))
		abort();
}

static void sum_up(struct te_gp_step *steps, size_t n)
{
	static char out[64 * 1024];
	struct te_gp_summary sum;

	if (te_gp_summarize(steps, n, &sum) < 0) {
		if (n)
			abort();
		return;
	}
	if (sum.train_ms < 0 || sum.init_ms < 0 || sum.lost_ms < 0 ||
	    sum.other_ms < 0 || sum.nsteps != n ||
	    sum.train_ms + sum.init_ms + sum.lost_ms + sum.other_ms !=
		    sum.wall_ms)
		abort();
	te_gp_text(steps, n, &sum, out, sizeof(out));
	if (strlen(out) >= sizeof(out))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct te_gp_step steps[STEPS];
	size_t from = 0, i, n = 0;
	char err[160];
	char *text;

	if (size == 0 || size > 65536)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data, size);
	err[0] = '\0';
	if (te_gp_record_parse(text, size, &steps[0], err, sizeof(err)) < 0)
		one_line(err, sizeof(err));
	else
		check_step(&steps[0]);
	for (i = 0; i <= size && n < STEPS; i++) {
		if (i < size && data[i] != 0xff)
			continue;
		err[0] = '\0';
		if (te_gp_record_parse(text + from, i - from, &steps[n], err,
				       sizeof(err)) == 0)
			check_step(&steps[n++]);
		else
			one_line(err, sizeof(err));
		from = i + 1;
	}
	sum_up(steps, n);
	free(text);
	return 0;
}
