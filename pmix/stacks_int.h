/* trainenv-stacks, private: the node-side collector (stacks_node.c) and
 * the login-side merger (stacks.c) of the hang report. */
#ifndef TE_PMIX_STACKS_INT_H
#define TE_PMIX_STACKS_INT_H

/* Prints, as TE-STACK1 records on stdout, the stack of every rank of
 * job.step still running on this node (core/stacks.h). 0, or 1 with a
 * line on stderr when it cannot look. */
int te_stacks_node(long job, long step);

/* How long gdb may take for one process. */
#define TE_STACKS_GDB_MS 8000

#endif
