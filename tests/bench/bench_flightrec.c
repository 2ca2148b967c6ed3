/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_flightrec: what reading one rank's flight recorder dump costs
 * (te_fr_extract: the restricted pickle reader and the extract,
 * core/hang/flightrec.c), on a dump of N entries made here the way
 * torch::jit::Pickler writes one (memoized strings, BININT/LONG1,
 * EMPTY_DICT + MARK + SETITEMS). Prints the median of 5 runs:
 *   entries N bytes B ms_per_dump T MB_per_s R
 * Usage: bench_flightrec [N] (default 2000, PyTorch's default buffer) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hang/flightrec.h"

#define RUNS 5

struct out {
	unsigned char *p;
	size_t n;
	unsigned memo;
};

static void put(struct out *o, const void *s, size_t n)
{
	memcpy(o->p + o->n, s, n);
	o->n += n;
}

static void le(struct out *o, uint64_t v, unsigned n)
{
	while (n--) {
		o->p[o->n++] = (unsigned char)v;
		v >>= 8;
	}
}

/* A string once (BINUNICODE, BINPUT into slot *slot), BINGET after. */
static void str(struct out *o, const char *s, unsigned *slot)
{
	if (*slot) {
		put(o, "j", 1);
		le(o, *slot - 1, 4);
		return;
	}
	put(o, "X", 1);
	le(o, strlen(s), 4);
	put(o, s, strlen(s));
	put(o, "r", 1);
	le(o, o->memo, 4);
	*slot = ++o->memo;
}

static void int64(struct out *o, int64_t v)
{
	put(o, "\x8a\x08", 2);
	le(o, (uint64_t)v, 8);
}

static void entry(struct out *o, unsigned *slots, unsigned i)
{
	static const char *const keys[] = {
		"record_id",  "pg_id",	 "process_group",  "collective_seq_id",
		"p2p_seq_id", "op_id",	 "profiling_name", "time_created_ns",
		"state",      "retired", "is_p2p",	   "timeout_ms"
	};
	unsigned k;

	put(o, "}(", 2);
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		str(o, keys[k], &slots[k]);
		if (k == 2) {
			str(o, "0", &slots[20]);
			str(o, "default_pg", &slots[21]);
			put(o, "\x86", 1);
		} else if (k == 6) {
			str(o, "nccl:all_reduce", &slots[22]);
		} else if (k == 8) {
			str(o, "completed", &slots[23]);
		} else if (k == 9 || k == 10) {
			put(o, k == 9 ? "\x88" : "\x89", 1);
		} else {
			int64(o,
			      k == 7 ? 1764480000000000000LL + i : (int64_t)i);
		}
	}
	put(o, "u", 1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 2000, i;
	unsigned slots[32] = { 0 }, entries_slot = 0;
	static struct te_fr_rank r;
	struct out o = { 0 };
	double t[RUNS];

	o.p = malloc((size_t)n * 400 + 64);
	if (!o.p || n < 1)
		return 1;
	put(&o, "\x80\x02}(", 4);
	str(&o, "entries", &entries_slot);
	put(&o, "](", 2);
	for (i = 0; i < n; i++)
		entry(&o, slots, i);
	put(&o, "eu.", 3);
	for (i = 0; i < RUNS; i++) {
		t[i] = now_ms();
		if (te_fr_extract(o.p, o.n, NULL, 0, &r) < 0 ||
		    r.pos[0].seq != (int64_t)n - 1) {
			fprintf(stderr, "bench_flightrec: %s\n", r.why);
			return 1;
		}
		t[i] = now_ms() - t[i];
	}
	qsort(t, RUNS, sizeof(t[0]), cmp_d);
	printf("entries %u bytes %zu ms_per_dump %.2f MB_per_s %.0f\n", n, o.n,
	       t[RUNS / 2], (double)o.n / 1e3 / t[RUNS / 2]);
	free(o.p);
	return 0;
}
