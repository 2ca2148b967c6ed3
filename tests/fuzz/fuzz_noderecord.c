/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the memory of bad nodes' readers of users' step
 * records (core/util/jsonscan.c, core/report/node_memory.c). The input,
 * in a buffer of exactly its size (no terminator to lean on), is read as
 * JSON and as one record; split at 0xff bytes it is several records of
 * three users, judged with options from its first byte. Beyond "no
 * crash": every scalar's keys and text stay within their bounds, an error
 * is one line, a record names only valid nodes, and a verdict never counts
 * more users than failures, failures than jobs, or jobs than --last. */
// FUZZ-MAX-LEN: 65536
// FUZZ-SOURCES: core/util/jsonscan.c core/report/node_memory.c core/util/strutil.c core/util/textbuf.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/node_memory.h"
#include "util/jsonscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void bounded(const struct te_json_item *it, void *arg)
{
	int k;

	(void)arg;
	if (it->depth < 0 || it->depth > TE_JSON_DEPTH ||
	    strlen(it->text) >= TE_JSON_TEXT_MAX)
		abort();
	for (k = 0; k < it->depth; k++)
		if (strlen(it->path[k]) >= TE_JSON_KEY_MAX)
			abort();
}

static void one_line(const char *err, size_t errlen)
{
	if (!err[0] || strlen(err) >= errlen || strchr(err, '\n'))
		abort();
}

static void check_record(const struct te_nm_record *r)
{
	int k;

	if (r->job == 0 || r->nnodes < 0 || r->nnodes > TE_NM_REC_NODES ||
	    (r->first[0] && !te_nm_node_name_ok(r->first)))
		abort();
	for (k = 0; k < r->nnodes; k++)
		if (!te_nm_node_name_ok(r->nodes[k]))
			abort();
}

static void judge(const uint8_t *data, size_t size, char *text)
{
	static struct te_nm_job jobs[16];
	struct te_nm_node out[8];
	struct te_nm_record r;
	struct te_nm m;
	struct te_nm_opts o = { 1 + data[0] % 3, 1 + (data[0] >> 2) % 12,
				1 + (data[0] >> 6) % 3 };
	size_t from = 1, i, nout;
	unsigned uid = 0;
	char err[160];
	long n;

	te_nm_init(&m, jobs, 16);
	for (i = 1; i <= size; i++) {
		if (i < size && data[i] != 0xff)
			continue;
		if (te_nm_record_parse(text + from, i - from, &r, err,
				       sizeof(err)) == 0) {
			check_record(&r);
			te_nm_add(&m, 1000 + uid++ % 3, &r, 1700000000);
		}
		from = i + 1;
	}
	n = te_nm_judge(&m, &o, out, 8);
	if (n < 0)
		return;
	nout = (size_t)n < 8 ? (size_t)n : 8;
	for (i = 0; i < nout; i++)
		if (!te_nm_node_name_ok(out[i].node) ||
		    out[i].users > out[i].failures ||
		    out[i].failures > out[i].jobs || out[i].jobs > o.last ||
		    out[i].users < o.min_users ||
		    out[i].failures < o.min_failures ||
		    (i && out[i].users > out[i - 1].users))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct te_nm_record r;
	char err[160];
	char *text;

	if (size == 0 || size > 65536)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data, size);
	err[0] = '\0';
	if (te_json_scan(text, size, bounded, NULL, err, sizeof(err)) < 0)
		one_line(err, sizeof(err));
	err[0] = '\0';
	if (te_nm_record_parse(text, size, &r, err, sizeof(err)) < 0)
		one_line(err, sizeof(err));
	else
		check_record(&r);
	judge(data, size, text);
	free(text);
	return 0;
}
