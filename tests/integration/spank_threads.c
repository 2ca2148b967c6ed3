/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test plugin (t20_hangup.sh): makes srun run threads before trainenv's
 * init_post_opt, as Slurm 26.05's srun does (its connection manager), on
 * any release. Listed before trainenv in plugstack.conf. In srun only: two
 * threads from slurm_spank_init, two more from slurm_spank_init_post_opt
 * (just before trainenv's), each waiting in poll(), and process-wide
 * handlers for SIGINT, SIGTERM and SIGUSR1 (where srun has none of its own
 * yet) that say when one of them ran: in the shield, no thread of srun's
 * may take a signal meant for it. With the argument "fail-again", srun
 * fails in slurm_spank_init when trainenv's shield started it anew (its
 * starting environment holds TRAINENV_SHIELD): what such an srun says
 * before its init_post_opt must still come out. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(spank_threads, 1);

static void took(int sig)
{
	static const char m[] = "spank_threads: a thread of srun's took a "
				"signal\n";
	ssize_t rc = write(STDERR_FILENO, m, sizeof(m) - 1);

	(void)sig;
	(void)rc;
}

static void *idle(void *arg)
{
	for (;;)
		poll(NULL, 0, -1);
	return arg;
}

static void start(int n)
{
	pthread_t t;

	while (n-- > 0)
		if (pthread_create(&t, NULL, idle, NULL) == 0)
			pthread_detach(t);
}

static int started_by_shield(void)
{
	static char env[256 * 1024];
	int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, env, sizeof(env) - 1) : -1;
	ssize_t i;

	if (fd >= 0)
		close(fd);
	for (i = 0; i < n; i += (ssize_t)strlen(env + i) + 1)
		if (!strncmp(env + i, "TRAINENV_SHIELD=", 16))
			return 1;
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGUSR1 };
	struct sigaction sa, old;
	int i;

	(void)sp;
	if (spank_context() != S_CTX_LOCAL)
		return 0;
	if (ac > 0 && !strcmp(av[0], "fail-again") && started_by_shield()) {
		fprintf(stderr, "spank_threads: failing in the srun started "
				"again\n");
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = took;
	/* never in place of srun's own (26.05 has them by now) */
	for (i = 0; i < 3; i++)
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO))
			sigaction(sigs[i], &sa, NULL);
	start(2);
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_LOCAL)
		start(2);
	return 0;
}
