/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the hang report's demultiplexing (issue 25, item 1): srun
 * merges the nodes' collectors' output as slurmstepd sends it, in
 * line-aligned messages of at most 1 KiB, so one node's record comes in
 * pieces with other nodes' lines between them. Each node tags its lines
 * (te_stack_wire_tag); te_stack_demux puts every node's lines back
 * together. Fed: 3 nodes x 2 ranks x 6 threads x 35 frames of long names,
 * cut into such messages and interleaved at random (seeded); every record
 * comes back whole and attributed. Without the tags the same interleaving
 * loses ranks or mixes them up (the defect). And: no line of a record,
 * however long its names, is over what one message holds with its tag. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hang/stacks.h"
#include "util/strutil.h"
#include "tap.h"

#define NODES 3
#define RANKS 6
#define STREAM_MAX (NODES * 2 * TE_STACK_RECORD_MAX * 2)

static struct te_proc_stack procs[RANKS];
static char rec[TE_STACK_RECORD_MAX], tagged[2 * TE_STACK_RECORD_MAX];
static char stream[NODES][STREAM_MAX / NODES];
static size_t stream_len[NODES];
static char merged[STREAM_MAX];

/* Rank r on node r / 2: 6 threads of 35 frames, each name its own. */
static void make_proc(struct te_proc_stack *p, int r)
{
	char fn[TE_STACK_NAME_MAX + 1], file[96];
	int t, f;

	te_stack_init(p);
	p->rank = r;
	p->pid = 4000 + r;
	te_snprintf(p->node, sizeof(p->node), "n%d", r / 2 + 1);
	p->state = 'S';
	p->cpu_ms = 0;
	p->since_ms = 7000;
	for (t = 0; t < 6; t++) {
		te_stack_add_thread(p, p->pid + t);
		for (f = 0; f < 35; f++) {
			te_snprintf(fn, sizeof(fn),
				    "rank%d_thread%d_recursion_"
				    "level_%02d_with_a_long_function_name_"
				    "of_the_training_loop",
				    r, t, f);
			te_snprintf(file, sizeof(file),
				    "/work/project/model/"
				    "layers_rank%d.py",
				    r);
			te_stack_add_frame(p, TE_FRAME_PY, fn, strlen(fn), file,
					   strlen(file), (uint32_t)(100 + f),
					   NULL, 0, 0);
		}
	}
}

/* The node's stream as slurmstepd sends it: messages of whole lines, at
 * most TE_STACK_WIRE_MSG_MAX bytes. msgs[i] = end offset of message i. */
static size_t cut_messages(const char *s, size_t len, size_t *msgs, size_t max)
{
	size_t pos = 0, n = 0;

	while (pos < len && n < max) {
		size_t end = pos, next;

		for (;;) {
			const char *nl = memchr(s + end, '\n', len - end);

			next = nl ? (size_t)(nl - s) + 1 : len;
			if (next - pos > TE_STACK_WIRE_MSG_MAX)
				break;
			end = next;
			if (end == len)
				break;
		}
		if (end == pos) /* a line over a message: cut it */
			end = pos + TE_STACK_WIRE_MSG_MAX;
		msgs[n++] = end;
		pos = end;
	}
	return n;
}

/* The nodes' messages interleaved at random, each node's in its order. */
static size_t interleave(unsigned seed)
{
	static size_t msgs[NODES][4096];
	size_t nm[NODES], next[NODES] = { 0 }, start[NODES] = { 0 }, o = 0;
	int left = 0, i;

	srand(seed);
	for (i = 0; i < NODES; i++) {
		nm[i] = cut_messages(stream[i], stream_len[i], msgs[i], 4096);
		left += (int)nm[i];
	}
	while (left) {
		i = rand() % NODES;
		if (next[i] == nm[i])
			continue;
		memcpy(merged + o, stream[i] + start[i],
		       msgs[i][next[i]] - start[i]);
		o += msgs[i][next[i]] - start[i];
		start[i] = msgs[i][next[i]++];
		left--;
	}
	merged[o] = '\0';
	return o;
}

/* The 6 ranks' records, each node's in its stream, tagged or not. */
static void make_streams(int tag)
{
	int r;

	memset(stream_len, 0, sizeof(stream_len));
	for (r = 0; r < RANKS; r++) {
		int node = r / 2;
		long n;

		te_stack_wire_encode(rec, sizeof(rec), &procs[r]);
		if (tag) {
			n = te_stack_wire_tag(tagged, sizeof(tagged), rec,
					      strlen(rec), (unsigned)node);
		} else {
			n = (long)strlen(rec);
			memcpy(tagged, rec, (size_t)n);
		}
		memcpy(stream[node] + stream_len[node], tagged, (size_t)n);
		stream_len[node] += (size_t)n;
	}
}

/* How many ranks came back whole: rank, node and every frame their own. */
static int whole(const char *buf, size_t len)
{
	struct te_proc_stack *got = NULL;
	int left_out = 0, good = 0;
	long n = te_stack_merge(buf, len, RANKS, NODES, &got, &left_out), i;

	for (i = 0; i < n; i++) {
		const struct te_proc_stack *g = &got[i], *w;

		if (g->rank < 0 || g->rank >= RANKS)
			continue;
		w = &procs[g->rank];
		if (!strcmp(g->node, w->node) && g->nframes == w->nframes &&
		    g->nthreads == w->nthreads && te_stack_same(g, w) &&
		    !strcmp(te_frame_str(g, g->frames[g->nframes - 1].func),
			    te_frame_str(w, w->frames[w->nframes - 1].func)))
			good++;
	}
	free(got);
	return (int)n == RANKS ? good : -good - 1;
}

static void test_interleaved(void)
{
	unsigned seed;
	int r, all = 1, broken = 0, rec_over_1k = 1;
	char *out;
	long n;

	for (r = 0; r < RANKS; r++) {
		make_proc(&procs[r], r);
		te_stack_wire_encode(rec, sizeof(rec), &procs[r]);
		if (strlen(rec) < 8 * 1024)
			rec_over_1k = 0;
	}
	ok(rec_over_1k, "every record is well over 1 KiB (6 x 35 frames)");
	make_streams(1);
	for (seed = 1; seed <= 20; seed++) {
		size_t len = interleave(seed);

		n = te_stack_demux(merged, len, &out);
		if (n < 0 || whole(out, (size_t)n) != RANKS)
			all = 0;
		free(out);
	}
	ok(all, "tagged: 20 random interleavings of 1 KiB messages: all 6 "
		"ranks whole, each with its node and its own frames");
	make_streams(0);
	for (seed = 1; seed <= 20; seed++)
		if (whole(merged, interleave(seed)) != RANKS)
			broken++;
	ok(broken > 0,
	   "untagged (as before): %d of the 20 interleavings lose "
	   "or mix up ranks",
	   broken);
}

static void test_tags(void)
{
	char buf[256], *out;
	const char *in = "@2 b1\nstray line\n@10 c1\n@2 b2\n@0 a1\n@x no\n"
			 "@01 zero-led\n@3\n@10 c2\n@2 cut";
	long n;

	n = te_stack_wire_tag(buf, sizeof(buf), "a\nbb\n", 5, 7);
	is_str(n > 0 ? buf : "", "@7 a\n@7 bb\n", "tag: every line");
	n = te_stack_wire_tag(buf, sizeof(buf), "a", 1, 7);
	is_str(n > 0 ? buf : "", "@7 a\n", "tag: a last line gets its newline");
	is_int((int)te_stack_wire_tag(buf, 8, "a\nbb\n", 5, 7), -1,
	       "tag: out too small: -1");
	is_int((int)te_stack_wire_tag(buf, sizeof(buf), "a\n", 2,
				      TE_STACK_WIRE_TAG_MAX + 1),
	       -1, "tag: over the bound: -1");
	n = te_stack_demux(in, strlen(in), &out);
	is_str(n >= 0 ? out : "", "a1\nb1\nb2\nc1\nc2\n",
	       "demux: by tag, in order within each; untagged, bad tags and "
	       "a line without its newline left out");
	free(out);
	n = te_stack_demux("", 0, &out);
	ok(n == 0 && out && !out[0], "demux: nothing");
	free(out);
}

/* Names whose every byte is escaped (3 bytes each on the wire), at their
 * bounds in every field: no line over TE_STACK_WIRE_SEND_MAX. */
static void test_line_bound(void)
{
	static struct te_proc_stack p, back;
	char name[TE_STACK_NAME_MAX + 1], *line, *save = NULL, err[160];
	size_t longest = 0, used;
	int cut_ok;

	te_stack_init(&p);
	p.rank = 2147483647;
	p.pid = 2147483647;
	memset(p.node, 'a', sizeof(p.node) - 1);
	p.node[sizeof(p.node) - 1] = '\0';
	p.state = 'S';
	p.cpu_ms = 999999999999999LL;
	p.since_ms = 999999999999999LL;
	memset(p.wchan, ':', sizeof(p.wchan) - 1);
	p.wchan[sizeof(p.wchan) - 1] = '\0';
	memset(p.note, '(', sizeof(p.note) - 1);
	p.note[sizeof(p.note) - 1] = '\0';
	p.threads_nopy = 65535;
	p.world = 2147483647;
	/* 40 "é" (2 bytes each) = 80 bytes, 240 on the wire; 120 "<" = 360 */
	te_stack_add_thread(&p, 1);
	memset(name, '<', TE_STACK_NAME_MAX);
	name[TE_STACK_NAME_MAX] = '\0';
	te_stack_add_frame(&p, TE_FRAME_NATIVE, name, strlen(name), name,
			   strlen(name), 9999999, name, strlen(name),
			   0xffffffffffffffffull);
	name[0] = '\0';
	for (int i = 0; i < 60; i++)
		strcat(name, "\xc3\xa9");
	te_stack_add_frame(&p, TE_FRAME_PY, name, strlen(name), name,
			   strlen(name), 9999999, NULL, 0, 0);
	ok(te_stack_wire_encode(rec, sizeof(rec), &p) == 0, "encodes whole");
	ok(te_stack_wire_tag(tagged, sizeof(tagged), rec, strlen(rec),
			     TE_STACK_WIRE_TAG_MAX) > 0,
	   "tags with the largest tag");
	ok(te_stack_wire_decode(rec, strlen(rec), &used, &back, err,
				sizeof(err)) == 0,
	   "and decodes: %s", err);
	cut_ok = back.nframes == 2 &&
		 !strncmp(te_frame_str(&back, back.frames[0].func), "<<<", 3) &&
		 strstr(te_frame_str(&back, back.frames[0].func), "...") &&
		 strlen(te_frame_str(&back, back.frames[1].func)) % 2 == 1;
	ok(cut_ok,
	   "long escaped names are cut with '...', a UTF-8 "
	   "character never in half ('%s')",
	   back.nframes == 2 ? te_frame_str(&back, back.frames[1].func) : "");
	for (line = strtok_r(tagged, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strlen(line) + 1 > longest)
			longest = strlen(line) + 1;
	ok(longest <= TE_STACK_WIRE_MSG_MAX,
	   "the longest tagged line, %zu "
	   "bytes, fits one of slurmstepd's %d-byte messages",
	   longest, TE_STACK_WIRE_MSG_MAX);
}

int main(void)
{
	test_tags();
	test_line_bound();
	test_interleaved();
	return tap_done();
}
