/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-stacks --local: on one node, as the job's user, the stacks of
 * the step's ranks still running: the processes from /proc (core/hang/proctab),
 * their state, wait channel and CPU, and gdb's view of each (Python frames
 * with Debian's python3-dbg, native ones without), bounded in time. A
 * process in a container (its root not the node's) is read through its
 * /proc/PID/root, with the container's pythonX.Y-dbg. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hang/proctab.h"
#include "util/runcap.h"
#include "hang/stacks.h"
#include "stacks_int.h"
#include "util/strutil.h"
#include "util/sysutil.h"

/* gdb's output of one process: 64 threads of 64 native frames are 0.5 MiB
 * (the report keeps 16 threads); past this it is cut (and gdb killed) */
#define GDB_OUT_MAX (2 * 1024 * 1024)
#define GDB_BT_FRAMES "64" /* as many as the report keeps of a thread */
#define ENV_CHUNK (64 * 1024)

extern char **environ;

/* The real uid on /proc/PID/status's "Uid:" line, or -1. */
static long real_uid(const char *pid)
{
	char path[64], buf[2048], *u;
	uint64_t n;

	te_snprintf(path, sizeof(path), "/proc/%s/status", pid);
	if (te_read_small(path, buf, sizeof(buf), 0) <= 0 ||
	    !(u = strstr(buf, "\nUid:")))
		return -1;
	u += 5;
	while (*u == '\t' || *u == ' ')
		u++;
	u[strcspn(u, "\t \n")] = '\0';
	return te_parse_u64(u, 0x7fffffff, &n) == 0 ? (long)n : -1;
}

/* What pid is: 0 the slurmstepd of a numbered step (its process title,
 * with job and step), 1 a slurmstepd of another kind (batch, extern), -1
 * another program, -2 when /proc does not show it (hidepid). slurmstepd
 * runs as root: a process of another owner with its title is none. */
static int stepd_of(int pid, long *job, long *step)
{
	static const char title[] = "slurmstepd:";
	char path[64], cmd[64];
	struct stat st;
	ssize_t len;

	te_snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	len = pid > 0 ? te_read_small(path, cmd, sizeof(cmd), 0) : -1;
	if (len <= 0)
		return -2;
	if ((size_t)len < sizeof(title) ||
	    memcmp(cmd, title, sizeof(title) - 1))
		return -1;
	te_snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st) < 0 || st.st_uid != 0)
		return -1;
	return te_proc_stepd_title(cmd, (size_t)len, job, step) == 0 ? 0 : 1;
}

/* The last parent looked at: the processes of a step share few parents.
 * Forgotten at each scan (a pid is reused, an ancestor ends). */
static struct {
	int ppid, kind;
	long job, step;
} parent_seen = { .ppid = -1 };

#define RUNTIME_DEPTH 3

/* What p's parent is: the slurmstepd of a step, or something else; unknown
 * when /proc does not show it (hidepid). A parent that is not a slurmstepd
 * may be an OCI runtime that slurmstepd started (srun --container: the
 * task is "/bin/sh -c crun run ..." without the step's environment, the
 * program its child or grandchild, with it): up to RUNTIME_DEPTH
 * ancestors are looked through, to the first slurmstepd or an ancestor
 * /proc hides. An orphan, adopted by init or a subreaper, finds none. */
static void parent_of(struct te_proc *p)
{
	if (p->ppid != parent_seen.ppid) {
		int rc = stepd_of(p->ppid, &parent_seen.job, &parent_seen.step);
		int up = p->ppid, d;
		struct te_proc a;

		parent_seen.ppid = p->ppid;
		for (d = 0; rc == -1 && d < RUNTIME_DEPTH; d++) {
			if (te_proc_stat_read(up, &a) < 0 || a.ppid <= 1)
				break;
			up = a.ppid;
			rc = stepd_of(up, &parent_seen.job, &parent_seen.step);
		}
		parent_seen.kind = rc == 0    ? TE_PARENT_STEPD
				   : rc == -2 ? TE_PARENT_UNKNOWN
					      : TE_PARENT_OTHER;
	}
	p->parent_kind = parent_seen.kind;
	p->stepd_job = parent_seen.job;
	p->stepd_step = parent_seen.step;
}

/* The variables the picking reads, from the process's whole environment
 * (read in pieces: a task may carry megabytes of it). */
static void read_environ(const char *path, struct te_proc *p)
{
	static char buf[ENV_CHUNK];
	static struct te_env_pick pick;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	ssize_t got;

	te_env_pick_init(&pick);
	if (fd >= 0) {
		while ((got = read(fd, buf, sizeof(buf))) > 0)
			te_env_pick_feed(&pick, buf, (size_t)got);
		close(fd);
	}
	te_env_pick_end(&pick);
	te_proc_environ_parse(pick.out, pick.outlen, p);
}

size_t te_stacks_scan(struct te_proc *t, size_t max, const char *node,
		      uid_t uid)
{
	char path[64], exe[PATH_MAX];
	struct dirent *d;
	struct stat st;
	size_t n = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return 0;
	parent_seen.ppid = -1;
	while ((d = readdir(dir)) && n < max) {
		struct te_proc *p = &t[n];
		ssize_t len;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		te_snprintf(path, sizeof(path), "/proc/%s", d->d_name);
		if (stat(path, &st) < 0 || st.st_uid != uid ||
		    real_uid(d->d_name) != (long)uid)
			continue;
		memset(p, 0, sizeof(*p));
		if (te_proc_stat_read(atoi(d->d_name), p) < 0)
			continue;
		te_snprintf(path, sizeof(path), "/proc/%s/environ", d->d_name);
		read_environ(path, p);
		if (p->job < 0 || !p->node[0] ||
		    (node && strcmp(p->node, node)))
			continue;
		parent_of(p);
		te_snprintf(path, sizeof(path), "/proc/%s/exe", d->d_name);
		len = readlink(path, exe, sizeof(exe) - 1);
		if (len > 0) {
			exe[len] = '\0';
			p->is_python = te_proc_is_python(exe);
		}
		n++;
	}
	closedir(dir);
	return n;
}

/* gdb's absolute path: TRAINENV_GDB (the user's own choice; it runs as the
 * user), else the first "gdb" on PATH. 0, or -1 with why in note. */
static int find_gdb(char *path, size_t len, char *note, size_t notelen)
{
	const char *g = getenv("TRAINENV_GDB");

	if (g && *g) {
		if (g[0] == '/' && access(g, X_OK) == 0 &&
		    te_strlcpy(path, g, len) < len)
			return 0;
		return te_err(note, notelen,
			      "no debugger: TRAINENV_GDB=%s is "
			      "not an executable path",
			      g);
	}
	if (te_find_program("gdb", path, len) == 0)
		return 0;
	return te_err(note, notelen,
		      "no debugger: gdb is not installed "
		      "(Debian: gdb, and python3-dbg for Python frames)");
}

static void read_wchan(int pid, char *out, size_t len)
{
	char path[64], raw[128];
	ssize_t n;

	te_snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	n = te_read_small(path, raw, sizeof(raw), 0);
	if (n <= 0 || !strcmp(raw, "0"))
		raw[0] = '\0';
	te_clean_text(out, len, raw, sizeof(raw));
}

static uint64_t cpu_ticks(int pid)
{
	struct te_proc p;

	return te_proc_stat_read(pid, &p) == 0 ? p.cpu_ticks : 0;
}

/* The environment for gdb: without the user's PYTHONHOME and PYTHONPATH,
 * which would break gdb's own Python (py-bt). */
static char **gdb_env(void)
{
	static const char *const drop[] = { "PYTHONHOME=", "PYTHONPATH=", NULL };
	static char **env;

	if (!env)
		env = te_env_without_dup(environ, drop, NULL);
	return env ? env : environ;
}

/* The container's gdb script rel (its path inside pid's root), resolved
 * inside that root, every component and link (te_open_in_root: an absolute
 * link higher up, /usr/share/gdb -> /tmp/x, is the container's /tmp/x, not
 * the node's). Its O_PATH descriptor when it is a regular file, else -1. */
static int script_in_root(int pid, const char *rel)
{
	char path[64];
	struct stat st;
	int rootfd, fd;

	te_snprintf(path, sizeof(path), "/proc/%d/root", pid);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -1;
	fd = te_open_in_root(rootfd, rel, 0);
	close(rootfd);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A directory of this process's own for the scripts gdb sources (mode
 * 700: mkdtemp), made once, under TMPDIR or /tmp; 0 or -1. */
#define SCRIPT_MAX (4 * 1024 * 1024)
static char script_dir[PATH_MAX];

static int make_script_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (script_dir[0])
		return 0;
	if (tmp && tmp[0] == '/' &&
	    te_snprintf(script_dir, sizeof(script_dir),
			"%s/trainenv-stacks.XXXXXX", tmp) == 0 &&
	    mkdtemp(script_dir))
		return 0;
	te_strlcpy(script_dir, "/tmp/trainenv-stacks.XXXXXX",
		   sizeof(script_dir));
	if (mkdtemp(script_dir))
		return 0;
	script_dir[0] = '\0';
	return -1;
}

/* What gdb sources: a copy of the file fd holds (O_PATH, read through
 * /proc/self/fd), in make_script_dir's directory, named as rel ends (gdb
 * reads a .py name as Python). gdb, outside the container, then opens no
 * path that the image or another user could point elsewhere. Its path
 * into script (the caller removes it), or -1. */
static int script_copy(int fd, const char *rel, char *script, size_t slen)
{
	const char *base = strrchr(rel, '/');
	char path[64], *text = malloc(SCRIPT_MAX);
	ssize_t n = -1;
	int rfd, wfd = -1;

	script[0] = '\0';
	te_snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rfd = text ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
	if (rfd >= 0) {
		n = te_read_fd(rfd, text, SCRIPT_MAX, TE_READ_WHOLE);
		close(rfd);
	}
	if (n >= 0 && make_script_dir() == 0 &&
	    te_snprintf(script, slen, "%s/%s", script_dir,
			base ? base + 1 : rel) == 0) {
		unlink(script);
		wfd = open(script,
			   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			   0600);
	}
	if (wfd < 0 || te_write_all(wfd, text, (size_t)n) < 0) {
		if (wfd >= 0)
			unlink(script);
		script[0] = '\0';
	}
	if (wfd >= 0)
		close(wfd);
	free(text);
	return script[0] ? 0 : -1;
}

/* Where pid's files are (core/hang/stacks.h): whether its root is this
 * node's, its interpreter's name, and in a container the interpreter's
 * gdb script there (a private copy of it into script, "" when none is
 * to be given to gdb: script_copy). The
 * script is Python that gdb runs: never as root for another user's
 * process (its container's files are that user's).
 *
 * Returns 1 when gdb must be given the program (/proc/PID/exe): a root
 * this node sees as a directory (a chroot, unshare --root) reads as that
 * directory, and so does the program's path, which gdb would look for
 * under the sysroot again. A root in another mount namespace (pyxis and
 * enroot) reads as "/" and the program as its path inside: gdb finds it
 * under the sysroot by itself, and given /proc/PID/exe it would resolve
 * that link to the node's file of the same name. */
static int proc_files(int pid, int is_python, uid_t uid,
		      struct te_stack_files *f, char *script, size_t slen)
{
	char path[64], root[PATH_MAX], exe[PATH_MAX], inner[PATH_MAX];
	char rel[PATH_MAX];
	struct stat me, it;
	ssize_t n;
	int fd, give_exe;

	memset(f, 0, sizeof(*f));
	script[0] = '\0';
	te_snprintf(path, sizeof(path), "/proc/%d/root", pid);
	if (stat("/", &me) == 0 && stat(path, &it) == 0 &&
	    (me.st_dev != it.st_dev || me.st_ino != it.st_ino))
		f->container = 1;
	n = readlink(path, root, sizeof(root) - 1);
	root[n > 0 ? n : 0] = '\0';
	give_exe = f->container && root[0] == '/' && root[1];
	te_snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	te_snprintf(path, sizeof(path), "/proc/%d/root/", pid);
	f->unreadable = fd < 0 || access(path, X_OK) < 0;
	if (!is_python)
		return give_exe;
	te_snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return give_exe;
	exe[n] = '\0';
	if (te_stack_inner_path(inner, sizeof(inner), exe, root) < 0)
		return give_exe;
	te_strlcpy(f->interp, strrchr(inner, '/') + 1, sizeof(f->interp));
	if (!f->container)
		return 0; /* gdb finds the node's own script */
	f->script = TE_SCRIPT_NONE;
	if (te_stack_gdb_script_path(rel, sizeof(rel), inner) < 0 ||
	    (fd = script_in_root(pid, rel)) < 0)
		return give_exe;
	if (geteuid() == 0 && uid != 0)
		f->script = TE_SCRIPT_NOT_RUN;
	else if (script_copy(fd, rel, script, slen) == 0)
		f->script = TE_SCRIPT_USED;
	close(fd);
	return give_exe;
}

/* One gdb's time: its share of what is left of the node's (ms_left over
 * the ranks still to take), at least TE_STACKS_GDB_MS, at most what is
 * left. A slow gdb on a busy node then still gets its rank's stack, and a
 * hung one costs only its share. */
static int gdb_share_ms(int64_t ms_left, size_t ranks_left)
{
	int64_t share = ranks_left ? ms_left / (int64_t)ranks_left : ms_left;

	if (share < TE_STACKS_GDB_MS)
		share = TE_STACKS_GDB_MS;
	if (share > ms_left)
		share = ms_left;
	return share > 1000 ? (int)share : 1000;
}

/* gdb's view of one process into ps. A gdb past its deadline is killed; the
 * process it had stopped is continued. In a container (f) gdb reads the
 * program and libraries through /proc/PID/root (the program given as
 * /proc/PID/exe with give_exe: proc_files), and gets the container's gdb
 * script for py-bt (script, "" for none). */
static void continue_process(int pid, int pidfd);

static void take_stack(const char *gdb, int pid, int pidfd, int is_python,
		       const struct te_stack_files *f, int give_exe,
		       const char *script, int gdb_ms, struct te_proc_stack *ps)
{
	static char out[GDB_OUT_MAX];
	static char script_cmd[TE_STACKS_GDB_CMD_MAX];
	char spid[16], err[256], exe[64], sysroot[64], source[PATH_MAX + 8];
	char *argv[24];
	struct te_spawn_out so;
	size_t k = 0;
	unsigned fl;
	int have_script;

	te_snprintf(spid, sizeof(spid), "%d", pid);
	te_snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	te_snprintf(sysroot, sizeof(sysroot), "set sysroot /proc/%d/root", pid);
	argv[k++] = (char *)"gdb";
	argv[k++] = (char *)"-p";
	argv[k++] = spid;
	if (give_exe)
		argv[k++] = exe;
	argv[k++] = (char *)"-batch";
	argv[k++] = (char *)"-nx";
	argv[k++] = (char *)"-q";
	/* never a download (nothing is fetched at run time) */
	argv[k++] = (char *)"-iex";
	argv[k++] = (char *)"set debuginfod enabled off";
	/* before the attach: the libraries' symbols are read only for those
	 * on the stacks (stacks_pybt.c) */
	have_script = te_stacks_gdb_command(script_cmd, sizeof(script_cmd)) ==
		      0;
	if (have_script) {
		argv[k++] = (char *)"-iex";
		argv[k++] = script_cmd;
	}
	if (f->container) {
		argv[k++] = (char *)"-iex";
		argv[k++] = sysroot;
	}
	argv[k++] = (char *)"-ex";
	argv[k++] = (char *)"set pagination off";
	if (have_script) {
		argv[k++] = (char *)"-ex";
		argv[k++] = (char *)"trainenv-load-stack-libs";
	}
	if (script[0] &&
	    te_snprintf(source, sizeof(source), "source %s", script) == 0) {
		argv[k++] = (char *)"-ex";
		argv[k++] = source;
	}
	argv[k++] = (char *)"-ex";
	if (is_python && have_script)
		/* py-bt on the threads with a Python frame, or the frames it
		 * cannot read (Python 3.12+) */
		argv[k++] = (char *)"trainenv-py-bt-threads";
	else
		argv[k++] = (char *)"thread apply all py-bt";
	argv[k++] = (char *)"-ex";
	argv[k++] = (char *)"thread apply all bt " GDB_BT_FRAMES;
	argv[k] = NULL;
	if (te_spawn_capture(gdb, argv, gdb_env(), gdb_ms, TE_SPAWN_STDERR, out,
			     sizeof(out), &so, err, sizeof(err)) < 0) {
		te_snprintf(ps->note, sizeof(ps->note), "gdb: %s", err);
		return;
	}
	/* a gdb killed or crashed while attached may leave it stopped */
	if (so.killed || !WIFEXITED(so.status) || WEXITSTATUS(so.status))
		continue_process(pid, pidfd);
	if (so.killed && !so.too_long) {
		te_snprintf(ps->note, sizeof(ps->note),
			    "gdb took more than "
			    "%d s: stack not taken",
			    gdb_ms / 1000);
		return;
	}
	/* cut output: the Python frames came first, the rest is still a
	 * stack */
	fl = te_stack_parse_gdb(out, so.got, is_python, ps);
	if (so.too_long)
		te_snprintf(ps->note, sizeof(ps->note),
			    "gdb's output passed %d KiB: the stack is what "
			    "came before",
			    GDB_OUT_MAX / 1024);
	if ((fl & TE_GDB_DENIED) && !ps->note[0])
		te_strlcpy(ps->note,
			   "gdb could not attach (ptrace denied: "
			   "kernel.yama.ptrace_scope?)",
			   sizeof(ps->note));
	te_stack_note_files(ps, fl, is_python, f);
}

/* One record on stdout, every line tagged (core/hang/stacks.h: srun merges the
 * nodes' lines). A stack over the record's size is cut, never dropped;
 * a record that cannot be tagged goes without its frames, with a note. */
static void send_record(struct te_proc_stack *ps, unsigned tag)
{
	static char rec[TE_STACK_RECORD_MAX];
	static char tagged[2 * TE_STACK_RECORD_MAX]; /* lines of 17+ bytes */
	long n = -1;

	if (te_stack_wire_encode(rec, sizeof(rec), ps) >= 0)
		n = te_stack_wire_tag(tagged, sizeof(tagged), rec, strlen(rec),
				      tag);
	if (n < 0) {
		ps->nthreads = 0;
		ps->nframes = 0;
		te_strlcpy(ps->note,
			   "its record could not be sent: frames "
			   "left out",
			   sizeof(ps->note));
		if (te_stack_wire_encode(rec, sizeof(rec), ps) >= 0)
			n = te_stack_wire_tag(tagged, sizeof(tagged), rec,
					      strlen(rec), tag);
	}
	if (n > 0)
		fwrite(tagged, 1, (size_t)n, stdout);
	fflush(stdout);
}

/* This collector's tag: its task id in the collecting step (one a node). */
static unsigned node_tag(void)
{
	const char *id = getenv("SLURM_PROCID");
	uint64_t v;

	return id && te_parse_u64(id, TE_STACK_WIRE_TAG_MAX, &v) == 0
		       ? (unsigned)v
		       : 0;
}

/* Run as root (root's `trainenv stacks`, an admin's srun): the job's user
 * from here on, before anything of the job's is looked at: gdb, the
 * container's files and its gdb script are the user's own, read with the
 * user's rights only. 0, or -1 (said). */
static int become_job_user(uid_t uid, const char *node)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	gid_t gid;

	if (geteuid() != 0 || uid == 0)
		return 0;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res) {
		fprintf(stderr,
			"trainenv: node %s: the job's user (uid %u) "
			"is unknown here: no stacks from this node as root\n",
			node, (unsigned)uid);
		return -1;
	}
	gid = pw.pw_gid;
	if (setgroups(1, &gid) < 0 || setgid(gid) < 0 || setuid(uid) < 0 ||
	    getuid() != uid || geteuid() != uid || setuid(0) == 0) {
		fprintf(stderr,
			"trainenv: node %s: cannot become the job's "
			"user (uid %u): %s: no stacks from this node\n",
			node, (unsigned)uid, strerror(errno));
		return -1;
	}
	return 0;
}

/* The pid is still the process scanned (its start time). */
static int same_process(const struct te_proc *p)
{
	uint64_t start;

	return te_proc_start_time(p->pid, &start) == 0 && start == p->start;
}

/* A rank's process, held from the scan to its SIGCONT: a pidfd opened
 * while its start time is still the one scanned (then it names that
 * process, not a later one of the same pid). -1 when it is gone (or no
 * pidfd could be had). */
static int hold_process(const struct te_proc *p)
{
	int fd = (int)syscall(SYS_pidfd_open, p->pid, 0);

	if (fd >= 0 && !same_process(p)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* SIGCONT to the process held (by pid only when no pidfd could be had:
 * then checked by its start time just before). */
static void continue_process(int pid, int pidfd)
{
	if (pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
	else
		kill(pid, SIGCONT);
}

/* A pidfd for every rank of a node: the soft limit up to the hard one. */
static void raise_fd_limit(size_t ranks)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < ranks + 64 &&
	    rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = ranks + 64 < rl.rlim_max ? ranks + 64
						       : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int still_there(int pidfd)
{
	return pidfd >= 0 &&
	       syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

int te_stacks_node(long job, long step, uid_t uid)
{
	unsigned tag = node_tag();
	static struct te_proc t[TE_PROC_MAX];
	static struct te_rank_proc r[TE_STACK_NODE_RANKS];
	static struct te_proc_stack ps;
	static char script[PATH_MAX];
	struct te_stack_files files;
	int give_exe;
	char node[TE_STACK_NODE_MAX], gdb[PATH_MAX],
		gdb_note[TE_STACK_NOTE_MAX];
	static uint64_t before[TE_STACK_NODE_RANKS];
	static int held[TE_STACK_NODE_RANKS]; /* pidfds, -1: none */
	long hz = sysconf(_SC_CLK_TCK);
	int64_t deadline = te_now_ms() + TE_STACKS_NODE_MS;
	size_t n, k, i;
	int have_gdb;

	if (getenv("SLURMD_NODENAME"))
		te_node_name_from(getenv("SLURMD_NODENAME"), node,
				  sizeof(node));
	else
		te_node_name(node, sizeof(node));
	if (become_job_user(uid, node) < 0)
		return 1;
	n = te_stacks_scan(t, TE_PROC_MAX, getenv("SLURMD_NODENAME"), uid);
	k = te_proc_pick_ranks(t, n, job, step, r, TE_STACK_NODE_RANKS);
	raise_fd_limit(k);
	te_stacks_nccl(job, step, uid, t, r, k, tag); /* from the node's time */
	/* the CPU each rank uses over one second: spinning or waiting */
	for (i = 0; i < k; i++) {
		before[i] = cpu_ticks(t[r[i].idx].pid);
		held[i] = hold_process(&t[r[i].idx]);
	}
	if (k)
		sleep(1);
	have_gdb = find_gdb(gdb, sizeof(gdb), gdb_note, sizeof(gdb_note)) == 0;
	for (i = 0; i < k; i++) {
		const struct te_proc *p = &t[r[i].idx];
		uint64_t now = cpu_ticks(p->pid);

		/* ended since the scan (or a pidfd could not be had, and its
		 * pid is another process's now): no rank of the step */
		if (held[i] == -1 ? !same_process(p) : !still_there(held[i])) {
			if (held[i] >= 0)
				close(held[i]);
			continue;
		}
		te_stack_init(&ps);
		ps.rank = r[i].rank >= 0 && r[i].rank <= INT_MAX
				  ? (int)r[i].rank
				  : -1;
		ps.pid = p->pid;
		ps.world = p->world >= 0 && p->world <= INT_MAX ? (int)p->world
								: -1;
		te_strlcpy(ps.node, node, sizeof(ps.node));
		ps.state = p->state;
		read_wchan(p->pid, ps.wchan, sizeof(ps.wchan));
		ps.cpu_ms = now >= before[i] && hz > 0
				    ? (int64_t)((now - before[i]) * 1000 /
						(uint64_t)hz)
				    : -1;
		give_exe = proc_files(p->pid, p->is_python, uid, &files, script,
				      sizeof(script));
		if (have_gdb && te_now_ms() < deadline)
			take_stack(gdb, p->pid, held[i], p->is_python, &files,
				   give_exe, script,
				   gdb_share_ms(deadline - te_now_ms(), k - i),
				   &ps);
		else if (have_gdb)
			te_snprintf(ps.note, sizeof(ps.note),
				    "stack not taken: "
				    "this node's %d s for stacks are spent",
				    TE_STACKS_NODE_MS / 1000);
		else
			te_strlcpy(ps.note, gdb_note, sizeof(ps.note));
		if (script[0])
			unlink(script); /* the copy proc_files made */
		send_record(&ps, tag);
		if (held[i] >= 0)
			close(held[i]);
	}
	if (script_dir[0])
		rmdir(script_dir);
	return 0;
}
