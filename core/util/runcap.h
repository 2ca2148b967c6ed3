/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs a program with a deadline and reads its output: the one way the
 * plugin (as the job user, from task_init) and the tools start their
 * helpers. The program dies with its parent, runs in its own process
 * group, and is killed with that group at the deadline. */
#ifndef TE_RUNCAP_H
#define TE_RUNCAP_H

#include <stddef.h>

struct te_spawn_out {
	size_t got;   /* bytes read into buf (terminated) */
	int too_long; /* it wrote more than buf holds: killed */
	int killed;   /* past the deadline: killed */
	int status;   /* waitpid() status */
};

/* name's absolute path: the first executable file of that name in the
 * PATH directories (NULL or empty PATH: /usr/bin:/bin). 0, or -1. */
int te_find_program(const char *name, char *path, size_t len);

/* envp with one variable set to another value: a new array (the strings
 * are envp's, and assignment, which must stay valid) where assignment
 * ("NAME=VALUE") takes the place of NAME's entries, or is added at the
 * end. NULL when out of memory. Free the array only. */
char **te_env_with(char *const envp[], const char *assignment);

/* envp without the entries that start with one of the prefixes in drop
 * (NULL-terminated), unless they also start with one in keep (NULL or
 * NULL-terminated): "SLURM_" with keep "SLURM_CONF=" drops every Slurm
 * variable but SLURM_CONF. Written into out (max slots, the NULL at the
 * end among them; no allocation: slurmstepd's task child calls it), the
 * strings envp's. The number of entries kept, or -1 when out is too small
 * (then out holds what fits, NULL-terminated). */
long te_env_without(char *const envp[], const char *const drop[],
		    const char *const keep[], char **out, size_t max);
/* The number of entries of envp (NULL: 0). */
size_t te_env_count(char *const envp[]);
/* te_env_without into an array of its own, whole however many entries
 * envp has (the strings are envp's: free the array only); NULL when out
 * of memory. */
char **te_env_without_dup(char *const envp[], const char *const drop[],
			  const char *const keep[]);

/* Closes every descriptor from lowfd up (close_range where the kernel
 * has it): what a child must not hold of its parent's. */
void te_close_from(int lowfd);

/* Runs path with argv and envp, stdin from /dev/null, stdout into a pipe
 * read into buf (at most cap - 1 bytes), stderr inherited (or into the
 * same pipe: TE_SPAWN_STDERR), every other descriptor closed, in its own
 * process group. Waits at most timeout_ms for its output and its exit;
 * past that it is killed (SIGKILL to its group) and reaped. It
 * dies with the calling thread (PR_SET_PDEATHSIG). 0 with o filled, or -1
 * with a reason in err when it could not run (its execve failed) or be
 * reaped. */
#define TE_SPAWN_STDERR 1u
int te_spawn_capture(const char *path, char *const argv[], char *const envp[],
		     int timeout_ms, unsigned flags, char *buf, size_t cap,
		     struct te_spawn_out *o, char *err, size_t errlen);

#endif
