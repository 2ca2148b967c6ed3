/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `trainenv bind`: the binding preview and wrapper (tool_bind.c). */
#ifndef TE_TOOL_BIND_H
#define TE_TOOL_BIND_H

/* `trainenv bind ...`: argv[0] is the subcommand's own name ("bind").
 * Returns the exit status; does not return when it runs a command. */
int te_tool_bind(int argc, char **argv);

#endif
