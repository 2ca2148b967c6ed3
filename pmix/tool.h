/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The trainenv tool's subcommands (pmix/tool*.c). */
#ifndef TE_TOOL_H
#define TE_TOOL_H

/* Each subcommand gets argv[0] = its own name; returns the exit status. */
int te_tool_barrier(int argc, char **argv);
int te_tool_env(int argc, char **argv);
int te_tool_health(int argc, char **argv);
int te_tool_stacks(int argc, char **argv);
int te_tool_version(int argc, char **argv);

#endif
