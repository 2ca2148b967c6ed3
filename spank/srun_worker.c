/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's worker threads: start, wait, stop (srun_worker.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "srun_worker.h"

int te_srun_worker_start(struct te_srun_worker *w, void *(*fn)(void *),
			 void *arg)
{
	sigset_t all, old;
	int rc, e;

	if (pipe2(w->wake, O_CLOEXEC) < 0) {
		w->wake[0] = w->wake[1] = -1;
		return -1;
	}
	/* the thread inherits the mask: it never takes a signal, not even
	 * before its first line */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&w->thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		e = rc;
		close(w->wake[0]);
		close(w->wake[1]);
		w->wake[0] = w->wake[1] = -1;
		errno = e;
		return -1;
	}
	w->running = 1;
	return 0;
}

int te_srun_worker_wait(struct te_srun_worker *w, int ms)
{
	struct pollfd p = { .fd = w->wake[0], .events = POLLIN };
	int rc;

	while ((rc = poll(&p, 1, ms)) < 0 && errno == EINTR)
		;
	return rc != 0;
}

void te_srun_worker_stop(struct te_srun_worker *w)
{
	if (!w->running)
		return;
	close(w->wake[1]);
	pthread_join(w->thread, NULL);
	close(w->wake[0]);
	w->wake[0] = w->wake[1] = -1;
	w->running = 0;
}
