/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv: the command-line tool. One subcommand per file; this file only
 * dispatches. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tool.h"
#include "tool_bind.h"
#include "launch/version.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "barrier", te_tool_barrier,
	  "wait until every rank of the step is here (job-wide barrier, needs --mpi=pmix)" },
	{ "bind", te_tool_bind,
	  "bind this process for its local rank and exec a command; --show previews a machine's binding" },
	{ "env", te_tool_env,
	  "print the effective trainenv settings of this task and where each came from" },
	{ "health", te_tool_health,
	  "check this node's health (InfiniBand, Ethernet, GPUs through NVML): one line per result [--json]" },
	{ "nodes", te_tool_nodes,
	  "name nodes that were the first failure of jobs of several users, from a record directory (DIR [--json])" },
	{ "record", te_tool_record,
	  "a job's goodput from its step records: training, initialisation and lost time (JOBID --dir DIR)" },
	{ "stacks", te_tool_stacks,
	  "the stack of every rank of a running step, ranks grouped by stack (JOBID[.STEP] [--json])" },
	{ "version", te_tool_version, "print the trainenv version" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: trainenv COMMAND [ARGS...]\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nSee trainenv(8) and 'trainenv COMMAND --help'.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--protocol-version"))
		return te_protocol_args(&argc, &argv);
	if (!strcmp(argv[1], "--version"))
		return te_tool_version(argc - 1, argv + 1);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "trainenv: unknown command '%.64s'\n", argv[1]);
	usage(stderr);
	return 2;
}
