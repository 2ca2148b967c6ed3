/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests' contained process: a child in a user namespace of its own,
 * chrooted into a tree the test made, that waits until killed, so that
 * /proc/PID/root and /proc/PID/cwd are the tree (as a container's rank
 * seen from the node). Header-only, for the tests that need one. */
#ifndef TE_TEST_USERNS_CHILD_H
#define TE_TEST_USERNS_CHILD_H

/* unshare: _GNU_SOURCE, from config.h, included first by the test */
#include <sched.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child's pid (chrooted into root, its working directory cwd there),
 * or -1 when this machine allows no user namespace or chroot; the caller
 * kills and reaps it. */
static inline pid_t te_test_userns_child(const char *root, const char *cwd)
{
	int ready[2];
	pid_t pid;
	char b = 0;

	if (pipe(ready) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		if (unshare(CLONE_NEWUSER) < 0 || chroot(root) < 0 ||
		    chdir(cwd) < 0)
			_exit(write(ready[1], "n", 1) == 1 ? 3 : 4);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (pid < 0 || read(ready[0], &b, 1) != 1 || b != 'r') {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

#endif
