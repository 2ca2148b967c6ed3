/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Asks NCCL RAS at ADDR what the hang report would ask it (core/hang/
 * ras_client.c, te_ras_query) and prints the report's lines and what was
 * parsed; exit 0 when RAS answered with its protocol line, 1 when not.
 * For run_on_gpu.sh, against a real NCCL (2.24 and later), built with
 * the build tree's libtecore.a.
 * Usage: ras_query ADDR [TIMEOUT_MS] */
#include <stdio.h>
#include <stdlib.h>

#include "hang/ras.h"

int main(int argc, char **argv)
{
	static struct te_ras_status st;
	static char out[8192];
	int timeout = argc > 2 ? atoi(argv[2]) : 10000;

	if (argc < 2) {
		fprintf(stderr, "usage: ras_query ADDR [TIMEOUT_MS]\n");
		return 2;
	}
	if (te_ras_query(argv[1], timeout, &st) < 0) {
		printf("ras_query: out of memory\n");
		return 1;
	}
	te_ras_format(&st, argv[1], 16, out, sizeof(out));
	fputs(out, stdout);
	printf("ras_query: outcome %d, answered %d, protocol %d, NCCL %s, "
	       "%zu groups, %zu blocks, finished %d\n",
	       (int)st.outcome, st.answered, st.protocol,
	       st.version[0] ? st.version : "?", st.ngroups, st.nblocks,
	       st.finished);
	return st.answered ? 0 : 1;
}
