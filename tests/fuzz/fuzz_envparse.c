/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the strings trainenv reads from the job environment,
 * from peers and from its own encodings: TRAINENV_SETTINGS, the failure
 * report line and TRAINENV_REPORT, host lists, device lists, the launcher
 * detection and srun's own options (per Slurm release) over an argv,
 * slurm.conf's SrunPortRange, SLURM_PMIX_FENCE and TRAINENV_FENCE. Beyond
 * "no crash": outputs stay bounded and terminated, parsed reports format
 * back to the same line. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "srun/exportenv.h"
#include "report/failrep.h"
#include "launch/fence_choice.h"
#include "srun/portrange.h"
#include "launch/rankenv.h"
#include "settings/settings.h"
#include "srun/srunargs.h"
#include "util/strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TOKEN "0123456789abcdef0123456789abcdef"

static const char *fuzz_env(void *ctx, const char *name)
{
	return strcmp(name, "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC") ? NULL : "900";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct te_config cfg;
	char err[TE_ERR_MAX], host[64], tok[64], line[TE_FAILREP_LINE_MAX];
	char *s, *argv[32];
	struct te_failrep r;
	uint16_t port;
	size_t i;
	int argc = 0;
	const char *what;

	if (size > 65536)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	te_config_decode(&cfg, s, err, sizeof(err));
	if (te_failrep_parse(s, TOKEN, &r) == 0) {
		struct te_failrep again;

		/* what parses formats to a line that parses to the same */
		if (te_failrep_format(line, sizeof(line), TOKEN, &r) < 0 ||
		    te_failrep_parse(line, TOKEN, &again) < 0 ||
		    memcmp(&r, &again, sizeof(r)) != 0)
			abort();
		te_failrep_describe(&r, 1, NULL, line, sizeof(line));
	}
	(void)te_failrep_kind_wanted(s, TE_FAILREP_KIND_HEALTH);
	if (te_failrep_env_parse(s, &port, tok, sizeof(tok)) == 0 &&
	    (port == 0 || strlen(tok) != TE_FAILREP_TOKEN_LEN))
		abort();
	if (te_hostlist_first(s, host, sizeof(host)) == 0 &&
	    (strlen(host) >= sizeof(host) || !host[0]))
		abort();
	(void)te_devlist_count(s);
	(void)te_name_in_list(s, "RANK");

	/* the same bytes as an argv: NUL-separated words */
	for (i = 0; i < size && argc < 31;) {
		argv[argc++] = s + i;
		i += strlen(s + i) + 1;
	}
	argv[argc] = NULL;
	(void)te_is_node_launcher(argc, argv, &what);
	/* srun's (sbatch's, salloc's) own options, as a release the first
	 * byte picks (a known one, one before or after, or any number) */
	{
		static const unsigned rel[] = {
			0,	  0x150808, 0x160508, 0x170204,
			0x170205, 0x170b0b, 0x180508, 0x180b07,
			0x190508, 0x190b07, 0x1a0503, 0x1b0b00,
		};
		unsigned v =
			size && data[0] < 240
				? rel[data[0] % (sizeof(rel) / sizeof(rel[0]))]
			: size >= 4 ? (unsigned)data[1] << 16 |
					      (unsigned)data[2] << 8 | data[3]
				    : 0;

		te_srun_argv_set_release(v);
		if (te_srun_asks_pty(argc, argv) > 1 ||
		    te_srun_reads_stdin(argc, argv) > 1 ||
		    te_srun_asks_signal(argc, argv) > 1)
			abort();
	}
	(void)te_export_from_args(argc, argv);
	/* an --export specification, and a lookup through it */
	{
		char val[256];
		const char *v =
			te_export_getenv(s, "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC",
					 fuzz_env, NULL, val, sizeof(val));

		if (v && strlen(v) > 65536)
			abort();
	}
	/* slurm.conf text and an SrunPortRange value */
	{
		char val[64];
		uint16_t lo, hi;

		if (te_slurmconf_value(s, size, "SrunPortRange", val,
				       sizeof(val)) == 1 &&
		    strlen(val) >= sizeof(val))
			abort();
		if (te_port_range_parse(s, &lo, &hi, err, sizeof(err)) == 0 &&
		    (lo == 0 || lo > hi))
			abort();
	}
	/* SLURM_PMIX_FENCE (and TRAINENV_FENCE) as the user left them: srun
	 * sets one of Slurm's three words, and says so in printable text */
	{
		struct te_fence_in in = { .nnodes = (unsigned)size,
					  .tree_width = 50,
					  .env = s,
					  .decided = size & 1 ? s : "tree" };
		struct te_fence_choice c;

		te_fence_choose(&in, &c);
		if (strcmp(c.value, "ring") && strcmp(c.value, "tree") &&
		    strcmp(c.value, "mixed"))
			abort();
		if (!te_is_printable(c.why, sizeof(c.why)) ||
		    !te_is_printable(c.warn, sizeof(c.warn)))
			abort();
		if (size < 50 && strcmp(c.value, "ring"))
			abort(); /* never a tree below TreeWidth */
		(void)te_fence_nodata_barrier(s, in.decided);
	}
	free(s);
	return 0;
}
