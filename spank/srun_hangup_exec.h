/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How the hang-up shield splits srun off (srun_hangup_exec.c), and starts
 * srun anew when srun already runs threads: a copy of a multithreaded srun
 * made by fork() cannot carry on as srun, so the shield's child executes
 * srun again. */
#ifndef TE_HANGUP_EXEC_H
#define TE_HANGUP_EXEC_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* The re-executed srun's marker, "PID:ERR:TELL:NAME": started by the
 * shield PID (its parent), with its real stderr at descriptor ERR and TELL
 * the pipe to say it took that back (te_hup_reexeced; both -1 when srun has
 * no stderr), NAME the process name srun had. The plugin removes it from
 * the environment as soon as it is loaded. */
#define TE_SHIELD_ENV "TRAINENV_SHIELD"
/* Beside the marker, "FD": the pipe on which srun gives its shield the
 * word to start it again (srun_hangup_relaunch.c), -1 for none. */
#define TE_SHIELD_WORD_ENV "TRAINENV_SHIELD_WORD"
#define TE_HUP_EXTRA_MAX 1200 /* an entry te_hup_argv_setenv adds */

/* 1 when this srun's shield started it (its marker named the parent),
 * until te_hup_reexeced takes the marker. */
int te_hup_marker_valid(void);

/* The pipe to the shield this srun was given (its marker's, or inherited
 * from a shield that forked it: te_hup_word_set), or -1. */
int te_hup_word_fd(void);
void te_hup_word_set(int fd);

/* The number of threads this process runs, 0 when unknown. */
int te_hup_thread_count(void);

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
	char *args, *env;    /* the texts, NUL-separated */
	char **argv, **envp; /* into them; envp ends with the marker */
	char marker[96];
	char word[48]; /* TE_SHIELD_WORD_ENV's entry, after the marker */
	char extra[3][TE_HUP_EXTRA_MAX]; /* room for te_hup_argv_setenv */
	char exe[4096];			 /* srun's binary */
};
int te_hup_argv_read(struct te_hup_argv *a, char *err, size_t errlen);
/* Sets NAME=VALUE in a's environment (replaced where there; up to three
 * names). 0, or -1 when there is no room. */
int te_hup_argv_setenv(struct te_hup_argv *a, const char *name,
		       const char *value);
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

/* What a re-executed srun says before its plugin's init_post_opt (srun's
 * option warnings, -v's list, trainenv's own warnings) was said by the
 * first srun already: its stderr is a pipe the shield holds (srun_hangup.c)
 * until the plugin puts the real one back and says so. */
struct te_hup_hold {
	int rd, wr;	/* that pipe: the shield's end, srun's stderr */
	int keep;	/* srun's real stderr, at that number in srun */
	int said, tell; /* the plugin's word: the shield's end, srun's */
};
/* Opens them for srun's real stderr real_err (all -1 when it has none).
 * 0, or -1 with errno. */
int te_hup_hold_open(struct te_hup_hold *h, int real_err);
/* srun has started: srun's ends are closed here. */
void te_hup_hold_started(struct te_hup_hold *h);
void te_hup_hold_close(struct te_hup_hold *h);
/* The plugin's word, without waiting: 1 srun took its stderr back (what was
 * held is dropped), 0 srun ended without (it goes out), -1 not yet. */
int te_hup_hold_word(struct te_hup_hold *h);

/* Starts srun again as a child in a session of its own (posix_spawn:
 * setsid, then execve of srun's binary with a's command line and
 * environment). from[i] >= 0 becomes the child's descriptor i; h's keep
 * and tell, and word (-1: none), stay open at their numbers in the child
 * and are named in its environment; the child starts with mask blocked.
 * The child's pid, or -1 with a reason (nothing was started). */
pid_t te_hup_respawn(struct te_hup_argv *a, const int from[3],
		     const struct te_hup_hold *h, int word,
		     const sigset_t *mask, char *err, size_t errlen);

/* srun's descriptors a pipe of the shield's may stand in for: stdout,
 * stderr, then stdin. */
extern const int te_hup_stream[3];

/* srun split off the shield (te_hup_split). The caller says how; the rest
 * is filled in. */
struct te_hup_split {
	int reexec;	 /* srun runs threads: te_hup_respawn, else fork */
	int tty;	 /* the terminal the shield reads for srun, or -1 */
	int relay[2];	 /* srun's stdout, stderr go through a pipe */
	int pipes[3][2]; /* for te_hup_stream's, -1 when not relayed */
	struct te_hup_hold hold; /* a re-executed srun's */
	struct te_hup_argv a;
	sigset_t old; /* srun's own mask */
	int masked;   /* old is to be put back */
	int sfd;      /* the shield's signalfd for its signals */
	int word[2];  /* srun's word to the shield (relaunch) */
};
/* Blocks shield (and SIGHUP) and opens a signalfd for shield, then starts
 * srun in a session of its own with its own mask, the pipes for its
 * descriptors. Returns 0 in the child that carries on as srun, srun's pid
 * in the shield, -1 with a reason when srun carries on unshielded in this
 * process, as it was (all undone, tty closed). */
pid_t te_hup_split(struct te_hup_split *sp, const sigset_t *shield, char *err,
		   size_t errlen);

#endif
