/* trainenv-stacks --local: on one node, as the job's user, the stacks of
 * the step's ranks still running: the processes from /proc (core/proctab),
 * their state, wait channel and CPU, and gdb's view of each (Python frames
 * with Debian's python3-dbg, native ones without), bounded in time. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctab.h"
#include "runcap.h"
#include "stacks.h"
#include "stacks_int.h"
#include "strutil.h"
#include "sysutil.h"

#define GDB_OUT_MAX (256 * 1024)
#define ENV_MAX (256 * 1024)

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

/* What p's parent is: the slurmstepd of a step (its process title), or
 * something else; unknown when /proc does not show it (hidepid). The
 * processes of a step share few parents: the last one is kept. */
static void parent_of(struct te_proc *p)
{
	static int last_ppid = -1, last_kind;
	static long last_job, last_step;
	char path[64], cmd[64];
	ssize_t len;

	if (p->ppid != last_ppid) {
		last_ppid = p->ppid;
		te_snprintf(path, sizeof(path), "/proc/%d/cmdline", p->ppid);
		len = p->ppid > 0 ? te_read_small(path, cmd, sizeof(cmd), 0) : -1;
		if (len <= 0)
			last_kind = TE_PARENT_UNKNOWN;
		else if (te_proc_stepd_title(cmd, (size_t)len, &last_job,
					     &last_step) == 0)
			last_kind = TE_PARENT_STEPD;
		else
			last_kind = TE_PARENT_OTHER;
	}
	p->parent_kind = last_kind;
	p->stepd_job = last_job;
	p->stepd_step = last_step;
}

size_t te_stacks_scan(struct te_proc *t, size_t max, const char *node,
		      uid_t uid)
{
	static char env[ENV_MAX];
	char path[64], buf[1024], exe[PATH_MAX];
	struct dirent *d;
	struct stat st;
	size_t n = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return 0;
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
		te_snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		if (te_read_small(path, buf, sizeof(buf), 0) <= 0 ||
		    te_proc_stat_parse(buf, p) < 0)
			continue;
		te_snprintf(path, sizeof(path), "/proc/%s/environ", d->d_name);
		len = te_read_small(path, env, sizeof(env), 0);
		te_proc_environ_parse(env, len > 0 ? (size_t)len : 0, p);
		if (p->job < 0 || !p->node[0] || (node && strcmp(p->node, node)))
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
		return te_err(note, notelen, "no debugger: TRAINENV_GDB=%s is "
			      "not an executable path", g);
	}
	if (te_find_program("gdb", path, len) == 0)
		return 0;
	return te_err(note, notelen, "no debugger: gdb is not installed "
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
	char path[64], buf[1024];

	te_snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (te_read_small(path, buf, sizeof(buf), 0) <= 0 ||
	    te_proc_stat_parse(buf, &p) < 0)
		return 0;
	return p.cpu_ticks;
}

/* The environment for gdb: without the user's PYTHONHOME and PYTHONPATH,
 * which would break gdb's own Python (py-bt). */
static char **gdb_env(void)
{
	static char *env[4096];
	size_t i, k = 0;

	for (i = 0; environ[i] && k + 1 < sizeof(env) / sizeof(env[0]); i++)
		if (strncmp(environ[i], "PYTHONHOME=", 11) &&
		    strncmp(environ[i], "PYTHONPATH=", 11))
			env[k++] = environ[i];
	env[k] = NULL;
	return env;
}

/* gdb's view of one process into ps. A gdb past its deadline is killed; the
 * process it had stopped is continued. */
static void take_stack(const char *gdb, int pid, int is_python,
		       struct te_proc_stack *ps)
{
	static char out[GDB_OUT_MAX];
	char spid[16], err[256];
	char *argv[] = {
		(char *)"gdb", (char *)"-p", spid, (char *)"-batch",
		(char *)"-nx", (char *)"-q",
		/* never a download (nothing is fetched at run time) */
		(char *)"-iex", (char *)"set debuginfod enabled off",
		(char *)"-ex", (char *)"set pagination off",
		(char *)"-ex", (char *)"thread apply all py-bt",
		(char *)"-ex", (char *)"thread apply all bt", NULL
	};
	struct te_spawn_out so;
	unsigned f;

	te_snprintf(spid, sizeof(spid), "%d", pid);
	if (te_spawn_capture(gdb, argv, gdb_env(), TE_STACKS_GDB_MS,
			     TE_SPAWN_STDERR, out, sizeof(out), &so, err,
			     sizeof(err)) < 0) {
		te_snprintf(ps->note, sizeof(ps->note), "gdb: %s", err);
		return;
	}
	/* a gdb killed or crashed while attached may leave it stopped */
	if (so.killed || !WIFEXITED(so.status) || WEXITSTATUS(so.status))
		kill(pid, SIGCONT);
	if (so.killed) {
		te_snprintf(ps->note, sizeof(ps->note), "gdb took more than "
			    "%d s: stack not taken", TE_STACKS_GDB_MS / 1000);
		return;
	}
	f = te_stack_parse_gdb(out, so.got, is_python, ps);
	if ((f & TE_GDB_DENIED) && !ps->note[0])
		te_strlcpy(ps->note, "gdb could not attach (ptrace denied: "
			   "kernel.yama.ptrace_scope?)", sizeof(ps->note));
}

int te_stacks_node(long job, long step, uid_t uid)
{
	static struct te_proc t[TE_PROC_MAX];
	static struct te_rank_proc r[TE_STACK_NODE_RANKS];
	static struct te_proc_stack ps;
	static char rec[TE_STACK_RECORD_MAX];
	char node[TE_STACK_NODE_MAX], gdb[PATH_MAX], gdb_note[TE_STACK_NOTE_MAX];
	static uint64_t before[TE_STACK_NODE_RANKS];
	long hz = sysconf(_SC_CLK_TCK);
	int64_t deadline = te_now_ms() + TE_STACKS_NODE_MS;
	size_t n, k, i;
	int have_gdb;

	if (getenv("SLURMD_NODENAME"))
		te_node_name_from(getenv("SLURMD_NODENAME"), node, sizeof(node));
	else
		te_node_name(node, sizeof(node));
	n = te_stacks_scan(t, TE_PROC_MAX, getenv("SLURMD_NODENAME"), uid);
	k = te_proc_pick_ranks(t, n, job, step, r, TE_STACK_NODE_RANKS);
	/* the CPU each rank uses over one second: spinning or waiting */
	for (i = 0; i < k; i++)
		before[i] = t[r[i].idx].cpu_ticks;
	if (k)
		sleep(1);
	have_gdb = find_gdb(gdb, sizeof(gdb), gdb_note, sizeof(gdb_note)) == 0;
	for (i = 0; i < k; i++) {
		const struct te_proc *p = &t[r[i].idx];
		uint64_t now = cpu_ticks(p->pid);

		te_stack_init(&ps);
		ps.rank = r[i].rank >= 0 && r[i].rank <= INT_MAX ?
				  (int)r[i].rank : -1;
		ps.pid = p->pid;
		ps.world = p->world >= 0 && p->world <= INT_MAX ? (int)p->world : -1;
		te_strlcpy(ps.node, node, sizeof(ps.node));
		ps.state = p->state;
		read_wchan(p->pid, ps.wchan, sizeof(ps.wchan));
		ps.cpu_ms = now >= before[i] && hz > 0 ?
				    (int64_t)((now - before[i]) * 1000 / (uint64_t)hz) : -1;
		if (have_gdb && te_now_ms() < deadline)
			take_stack(gdb, p->pid, p->is_python, &ps);
		else if (have_gdb)
			te_snprintf(ps.note, sizeof(ps.note), "stack not taken: "
				    "this node's %d s for stacks are spent",
				    TE_STACKS_NODE_MS / 1000);
		else
			te_strlcpy(ps.note, gdb_note, sizeof(ps.note));
		/* a stack over the record's size is cut, never dropped */
		if (te_stack_wire_encode(rec, sizeof(rec), &ps) >= 0)
			fputs(rec, stdout);
		fflush(stdout);
	}
	return 0;
}
