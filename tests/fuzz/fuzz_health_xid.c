/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the gpu check's XID reading (core/health/
 * health_xid.c) over hostile text: the input's first line as the node's
 * watermark, the rest as kernel log records (one per line, as the tool's
 * --kmsg file gives them) and whole as one record; the site keys from it.
 * Beyond "no crash": every result stays printable and within its sizes,
 * the tally within its caps, a mark the scan writes reads back as this
 * boot's with its number, and a key's error is one bounded line. */
// FUZZ-SOURCES: core/health/health_xid.c core/health/health_result.c core/util/strutil.c core/util/sysutil.c core/util/textbuf.c|
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "health/health.h"
#include "util/strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_set(const struct te_health_set *s)
{
	int i;

	if (s->n < 0 || s->n > TE_HEALTH_RESULTS_MAX)
		abort();
	for (i = 0; i < s->n; i++)
		if (!te_is_printable(s->r[i].text, TE_HEALTH_TEXT_MAX - 1) ||
		    !te_is_printable(s->r[i].device, TE_HEALTH_DEV_MAX - 1) ||
		    !te_is_printable(s->r[i].value, TE_HEALTH_VALUE_MAX - 1))
			abort();
}

static void check_tally(const struct te_xid_tally *t)
{
	int i;

	if (t->n < 0 || t->n > TE_XID_DEVS_MAX)
		abort();
	for (i = 0; i < t->n; i++)
		if (t->dev[i].n_codes < 1 ||
		    t->dev[i].n_codes > TE_XID_CODES_MAX ||
		    t->dev[i].bus > 0xff || t->dev[i].dev > 0x1f)
			abort();
}

/* KEY=VALUE of the first line as a site key. */
static void fuzz_key(const char *text, size_t len)
{
	struct te_health_policy p;
	char key[32], val[300], err[512];
	const char *eq = memchr(text, '=', len);
	size_t kl, vl;

	if (!eq || (kl = (size_t)(eq - text)) >= sizeof(key) ||
	    (vl = len - kl - 1) >= sizeof(val))
		return;
	memcpy(key, text, kl);
	key[kl] = '\0';
	memcpy(val, eq + 1, vl);
	val[vl] = '\0';
	memset(&p, 0, sizeof(p));
	err[0] = '\0';
	if (te_health_gpu_key_set(&p, key, val, "site", err, sizeof(err)) < 0 &&
	    (strlen(err) >= sizeof(err) || strchr(err, '\n')))
		abort();
	if (p.n_xid_fail < 0 || p.n_xid_fail > TE_XID_FAIL_MAX ||
	    p.nvlink > TE_HEALTH_NVLINK_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct te_health_gpu_pci gpus[2] = { { 0, 0, 0x40, 0 },
							  { 1, 0, 0x3b, 0 } };
	static struct te_xid_scan s, back;
	static struct te_health_set set;
	struct te_health_policy p;
	const char *text = (const char *)data, *nl, *line, *why;
	struct te_kmsg_rec r;
	struct te_xid_event ev;
	char mark[TE_XID_MARK_MAX];
	size_t first;

	nl = memchr(text, '\n', size);
	first = nl ? (size_t)(nl - text) : size;
	fuzz_key(text, first);
	if (te_kmsg_parse(text, size, &r) == 0 &&
	    (r.msg < text || r.msg + r.msg_len > text + size))
		abort();
	te_xid_parse(text, size, &ev);
	te_xid_scan_init(&s, "0f0e0d0c-1111-2222-3333-444455556666", text,
			 first);
	for (line = nl ? nl + 1 : text + size; line < text + size;) {
		const char *e =
			memchr(line, '\n', (size_t)(text + size - line));
		size_t l = e ? (size_t)(e - line)
			     : (size_t)(text + size - line);

		te_xid_scan_record(&s, line, l);
		line += l + 1;
	}
	check_tally(&s.since_mark);
	check_tally(&s.since_boot);
	check_tally(te_xid_scan_tally(&s, &why));
	memset(&p, 0, sizeof(p)); /* the default health_xid_fail */
	te_health_set_init(&set, "fuzz");
	te_xid_results(&s, gpus, 2, &p, &set);
	check_set(&set);
	te_xid_mark_text(&s, mark, sizeof(mark));
	te_xid_scan_init(&back, s.boot, mark, strlen(mark));
	if (!back.mark || back.mark_seq != (s.any ? s.last_seq : s.mark_seq))
		abort();
	return 0;
}
