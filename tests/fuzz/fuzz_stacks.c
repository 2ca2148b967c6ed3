/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the hang report's parsers (core/hang/stacks*.c). The first
 * byte picks the input: even, gdb's batch output about a user's process;
 * odd, the wire records a node sends the merger (also through the merger,
 * te_stack_merge). Whatever parses must stay in bounds, survive an
 * encode/decode round trip unchanged, still decode when cut to fit a small
 * record (same rank, no more frames), and format; every record's lines
 * take their tag (none too long for one of slurmstepd's messages) and come
 * back from the demultiplexer as they were; the demultiplexer takes any
 * input and gives at most as much back. */
// FUZZ-SOURCES: core/hang/stacks.c core/hang/stacks_report.c core/hang/stacks_wire.c core/util/strutil.c core/util/textbuf.c|
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hang/stacks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct te_proc_stack procs[4], back;
static char wire[1 << 20], wire2[1 << 20], small[2048], report[1 << 16],
	tagged[2 << 20];

static void check(const struct te_proc_stack *ps)
{
	char err[256];
	size_t used, i;

	if (ps->nthreads > TE_STACK_THREADS ||
	    ps->nframes > TE_STACK_FRAMES_ALL ||
	    ps->text_used > TE_STACK_TEXT ||
	    !memchr(ps->note, 0, sizeof(ps->note)))
		__builtin_trap();
	for (i = 0; i < ps->nframes; i++)
		if (strlen(te_frame_str(ps, ps->frames[i].func)) >
		    TE_STACK_NAME_MAX)
			__builtin_trap();
	if (te_stack_wire_encode(wire, sizeof(wire), ps) < 0 ||
	    te_stack_wire_decode(wire, strlen(wire), &used, &back, err,
				 sizeof(err)) < 0 ||
	    used != strlen(wire) || back.nthreads != ps->nthreads ||
	    back.nframes != ps->nframes || back.world != ps->world)
		__builtin_trap();
	/* what came back encodes the same (names cut to fit a line stay as
	 * they were cut); with no name cut, it is the same stack */
	if (te_stack_wire_encode(wire2, sizeof(wire2), &back) < 0 ||
	    strcmp(wire, wire2) ||
	    (!strstr(wire, "...") && !te_stack_same(ps, &back)))
		__builtin_trap();
	{ /* tagged, and back: the same bytes */
		char *back_buf = NULL;
		long t = te_stack_wire_tag(tagged, sizeof(tagged), wire,
					   strlen(wire), 3),
		     d;

		if (t < 0)
			__builtin_trap();
		d = te_stack_demux(tagged, (size_t)t, &back_buf);
		if (d != (long)strlen(wire) ||
		    memcmp(back_buf, wire, (size_t)d))
			__builtin_trap();
		free(back_buf);
	}
	/* cut to fit 2 KiB: a record still, of the same process */
	if (te_stack_wire_encode(small, sizeof(small), ps) < 0 ||
	    strlen(small) >= sizeof(small) ||
	    te_stack_wire_decode(small, strlen(small), &used, &back, err,
				 sizeof(err)) < 0 ||
	    back.rank != ps->rank || back.nframes > ps->nframes ||
	    back.nthreads > ps->nthreads)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data + 1;
	size_t n = 0, len, used;
	char err[256];

	if (!size)
		return 0;
	len = size - 1;
	if (!(data[0] & 1)) {
		te_stack_init(&procs[0]);
		te_stack_parse_gdb(in, len, data[0] & 2, &procs[0]);
		n = 1;
	} else {
		/* the merger, for a step of data[0] / 2 tasks on one node:
		 * never past what a node sends, nor past the tasks unless a
		 * record's WORLD_SIZE says so */
		struct te_proc_stack *m = NULL;
		unsigned ntasks = data[0] >> 1;
		int left, world = 0;
		long k = te_stack_merge(in, len, ntasks, 1, &m, &left), i;
		char *dm = NULL;
		long d = te_stack_demux(in, len, &dm);

		if (d > (long)len || (d >= 0 && (!dm || dm[d])))
			__builtin_trap();
		free(dm);

		for (i = 0; i < k; i++)
			world = m[i].world > world ? m[i].world : world;
		if (k < 0 || k > TE_STACK_NODE_RANKS ||
		    (ntasks && k > (long)ntasks && k > world))
			__builtin_trap();
		free(m);
		while (n < 4 && te_stack_wire_decode(in, len, &used, &procs[n],
						     err, sizeof(err)) == 0) {
			if (!used || used > len)
				__builtin_trap();
			in += used;
			len -= used;
			n++;
		}
		if (n < 4 && !memchr(err, 0, sizeof(err)))
			__builtin_trap();
	}
	for (size_t i = 0; i < n; i++) {
		procs[i].rank = (int)i;
		check(&procs[i]);
	}
	te_stack_report_text(report, sizeof(report), procs, n);
	te_stack_report_json(report, sizeof(report), procs, n);
	te_stack_report_text(report, 300, procs, n);
	return 0;
}
