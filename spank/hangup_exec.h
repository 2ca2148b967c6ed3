/* How the hang-up shield starts srun anew when srun already runs threads
 * (hangup_exec.c): a copy of a multithreaded srun made by fork() cannot
 * carry on as srun, so the shield's child executes srun again. */
#ifndef TE_HANGUP_EXEC_H
#define TE_HANGUP_EXEC_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* The re-executed srun's marker, "PID:FD:NAME": started by the shield PID
 * (its parent), with its own stderr at FD (its stderr is held by the shield
 * until its plugin takes it back, te_hup_reexeced), or -1 (not held); NAME
 * is the process name srun had. The plugin removes it from the environment
 * as soon as it is loaded. */
#define TE_SHIELD_ENV "TRAINENV_SHIELD"

/* The number of threads this process runs, 0 when unknown. */
int te_hup_thread_count(void);

/* 1 when srun must start again in the shield's child: it runs threads, or
 * the test hook TRAINENV_TEST_SHIELD_REEXEC=1 asks for this way (honoured
 * with the site policy test-hooks=on only). */
int te_hup_must_reexec(void);

/* pipe2(O_CLOEXEC) with both ends above stderr (srun may have started
 * without some of 0, 1, 2): moving them there cannot overwrite one. */
int te_hup_pipe(int p[2]);

/* 1 in an srun that its shield started (the marker named this process's
 * parent): srun's own stderr is put back on fd 2, and the caller must not
 * shield again. 0 otherwise. Once only. */
int te_hup_reexeced(void);

/* srun's command line and starting environment (/proc/self/cmdline and
 * /proc/self/environ), ready for te_hup_respawn. */
struct te_hup_argv {
	char *args, *env;	/* the texts, NUL-separated */
	char **argv, **envp;	/* into them; envp ends with the marker */
	char marker[96];
	char exe[4096];		/* srun's binary */
};
int te_hup_argv_read(struct te_hup_argv *a, char *err, size_t errlen);
void te_hup_argv_free(struct te_hup_argv *a);

/* Blocks the signals the shield takes (and the other asynchronous ones) in
 * every thread of this process but the calling one, so that each signal
 * sent to the process waits for the caller (signalfd) instead of running
 * a handler of srun's, or stopping the process, on another thread. Threads
 * they start later inherit that. 0, or -1 with a reason when some thread
 * was still not quiet at the deadline (1 s). Uses a real-time signal whose
 * handler stays; te_hup_quiet_undo puts its default back (for srun to go
 * on: the threads that blocked the signals still do, this one takes them). */
int te_hup_quiet_threads(char *err, size_t errlen);
void te_hup_quiet_undo(void);

/* Starts srun again as a child in a session of its own (posix_spawn:
 * setsid, then execve of /proc/self/exe with a's command line and
 * environment). from[i] >= 0 becomes the child's descriptor i; keep_err is
 * srun's real stderr, left open at that number in the child and named in
 * the marker; the child starts with mask blocked. The child's pid, or -1
 * with a reason (nothing was started). */
pid_t te_hup_respawn(struct te_hup_argv *a, const int from[3], int keep_err,
		     const sigset_t *mask, char *err, size_t errlen);

#endif
