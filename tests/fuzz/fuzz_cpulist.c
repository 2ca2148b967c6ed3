/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for the list parser and the GPU environment rules, the
 * code that reads strings from a job's environment and command line.
 * Not built by make (needs clang); by hand, from the source tree, with
 * BUILD a configured build directory (for config.h):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -IBUILD -Ispank \
 *       tests/fuzz/fuzz_cpulist.c core/bind/cpulist.c core/bind/bind.c \
 *       $(pkg-config --cflags --libs hwloc) -o fuzz_cpulist
 *   ./fuzz_cpulist -max_total_time=60 -max_len=256
 * (7.5 million inputs in 90 s found nothing on the first run.)
 * Checks beyond "no crash": whatever parses formats back to the same set,
 * and every error is one line.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bind/bind.h"
#include "bind/cpulist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned out[4096], again[4096];
	static char buf[65536];
	char err[256], note[TE_BIND_NOTE_LEN], *s;
	size_t n, m, cut;

	/* exact-length entry: no terminator needed */
	if (te_cpulist_parse_mem((const char *)data, size, 4095, out, 4096, &n,
				 err, sizeof(err)) == 0) {
		if (te_cpulist_format(out, n, buf, sizeof(buf)) < 0 ||
		    te_cpulist_parse(buf, sizeof(buf), 4095, again, 4096, &m,
				     err, sizeof(err)) ||
		    m != n || memcmp(out, again, n * sizeof(*out)))
			abort();
	} else if (!err[0] || strchr(err, '\n')) {
		abort();
	}

	/* the same bytes as environment values (C strings) */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	cut = strlen(s) / 2;
	{
		struct te_bind_gpu_env env = { s, s + cut, NULL, 1 };
		if (te_bind_gpus_from_env(&env, 8, out, TE_BIND_MAX_GPUS, &n,
					  note, sizeof(note), err,
					  sizeof(err)) &&
		    strchr(err, '\n'))
			abort();
		env.slurm_step_gpus = NULL;
		env.slurm_job_gpus = s + cut;
		env.in_slurm = 0;
		if (te_bind_gpus_from_env(&env, 8, out, TE_BIND_MAX_GPUS, &n,
					  note, sizeof(note), err,
					  sizeof(err)) == 0 &&
		    n > TE_BIND_MAX_GPUS)
			abort();
	}
	free(s);
	return 0;
}
