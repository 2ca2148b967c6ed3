/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the hang report for processes in containers
 * (core/hang/stacks_files.c): the paths inside a process's root, and the note
 * that names the real cause when frames are missing, on gdb's real output
 * about a Python rank in a Debian 11 root (tests/unit/data/stacks/
 * py_container*.txt, made by capture_container.sh). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "hang/stacks.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "tap.h"

static char fixture[65536];
static struct te_proc_stack ps;

static size_t load(const char *name)
{
	char path[512];
	ssize_t n;

	te_snprintf(path, sizeof(path), "%s/%s", TE_STACKDATA, name);
	n = te_read_small(path, fixture, sizeof(fixture), TE_READ_WHOLE);
	if (n < 0) {
		printf("# cannot read %s\n", path);
		fixture[0] = '\0';
		return 0;
	}
	return (size_t)n;
}

/* Parses the fixture as the node side does, then the note of f. */
static unsigned parse(const char *name, int is_python,
		      const struct te_stack_files *f)
{
	unsigned fl;

	te_stack_init(&ps);
	fl = te_stack_parse_gdb(fixture, load(name), is_python, &ps);
	te_stack_note_files(&ps, fl, is_python, f);
	return fl;
}

static int has_func(const char *func)
{
	size_t i;

	for (i = 0; i < ps.nframes; i++)
		if (!strcmp(te_frame_str(&ps, ps.frames[i].func), func))
			return 1;
	return 0;
}

static struct te_stack_files files(int container, int script,
				   const char *interp)
{
	struct te_stack_files f;

	memset(&f, 0, sizeof(f));
	f.container = container;
	f.script = script;
	te_strlcpy(f.interp, interp, sizeof(f.interp));
	return f;
}

static void test_paths(void)
{
	char out[64], tiny[8];

	is_int(te_stack_inner_path(out, sizeof(out),
				   "/var/lib/r/usr/bin/python3.9",
				   "/var/lib/r"),
	       0, "inner path: a chroot's prefix goes");
	is_str(out, "/usr/bin/python3.9", "inner path: /usr/bin/python3.9");
	te_stack_inner_path(out, sizeof(out), "/var/lib/r/usr/bin/python3.9",
			    "/var/lib/r/");
	is_str(out, "/usr/bin/python3.9", "inner path: a root with a final /");
	te_stack_inner_path(out, sizeof(out), "/usr/bin/python3.11", "/");
	is_str(out, "/usr/bin/python3.11",
	       "inner path: the node's root keeps it");
	te_stack_inner_path(out, sizeof(out), "/var/lib/rx/usr/bin/python3",
			    "/var/lib/r");
	is_str(out, "/var/lib/rx/usr/bin/python3",
	       "inner path: a root that is a prefix of a name only is no prefix");
	te_stack_inner_path(out, sizeof(out), "/usr/bin/python3", "");
	is_str(out, "/usr/bin/python3", "inner path: an unknown root keeps it");
	ok(te_stack_inner_path(out, sizeof(out), "python3", "/") < 0 && !out[0],
	   "inner path: a relative path is refused");
	ok(te_stack_inner_path(tiny, sizeof(tiny), "/usr/bin/python3", "/") <
			   0 &&
		   !tiny[0],
	   "inner path: one that does not fit is refused, not cut");

	is_int(te_stack_gdb_script_path(out, sizeof(out), "/usr/bin/python3.9"),
	       0, "script: pythonX.Y-dbg's path");
	is_str(out, "/usr/share/gdb/auto-load/usr/bin/python3.9-gdb.py",
	       "script: /usr/share/gdb/auto-load/usr/bin/python3.9-gdb.py");
	ok(te_stack_gdb_script_path(out, sizeof(out), "/opt/my python") < 0 &&
		   !out[0],
	   "script: a blank in the path is refused (a gdb command)");
	ok(te_stack_gdb_script_path(out, sizeof(out), "/bin/x\nshell id") < 0,
	   "script: a newline is refused");
	ok(te_stack_gdb_script_path(out, sizeof(out), "/a/../etc/x") < 0,
	   "script: /../ is refused");
	ok(te_stack_gdb_script_path(out, sizeof(out), "usr/bin/python3") < 0,
	   "script: a relative path is refused");
	ok(te_stack_gdb_script_path(tiny, sizeof(tiny), "/usr/bin/python3") < 0,
	   "script: one that does not fit is refused");
}

static void test_notes(void)
{
	struct te_stack_files f;
	char before[TE_STACK_NOTE_MAX];

	/* gdb with the container's root as sysroot and its python3.9-gdb.py */
	f = files(1, TE_SCRIPT_USED, "python3.9");
	parse("py_container.txt", 1, &f);
	ok(has_func("odd_one") && has_func("helper_thread"),
	   "container, sysroot and its script: both threads' Python frames");
	is_str(ps.note, "", "container with frames: no note");

	/* the same without python3.9-dbg in the root */
	f = files(1, TE_SCRIPT_NONE, "python3.9");
	parse("py_container_nodbg.txt", 1, &f);
	ok(has_func("select") && !has_func("odd_one"),
	   "container without python3.9-dbg: native frames, named from its libc");
	is_str(ps.note,
	       "python3.9-dbg is missing in the container (no "
	       "python3.9-gdb.py in it): native frames only",
	       "the note names the container's missing python3.9-dbg");
	ok(!strstr(ps.note, "python3.11"), "and not the node's python3.11-dbg");

	f = files(1, TE_SCRIPT_NOT_RUN, "python3.9");
	parse("py_container_nodbg.txt", 1, &f);
	like(ps.note, "not run",
	     "a script not run as root for another user: said so");

	f = files(1, TE_SCRIPT_USED, "python3.9");
	parse("py_container_nodbg.txt", 1, &f);
	like(ps.note, "although the container has python3.9-gdb.py",
	     "a script that found nothing: the debug symbols are suspected");

	f = files(1, TE_SCRIPT_NONE, "python3.9");
	f.unreadable = 1;
	parse("py_container_nodbg.txt", 1, &f);
	like(ps.note, "could not read its files",
	     "files that could not be opened: said so");

	/* gdb without the sysroot on a rootless container's process (another
	 * mount namespace): it could open none of its files */
	f = files(1, TE_SCRIPT_NONE, "python3.9");
	parse("py_container_unread.txt", 1, &f);
	ok(has_func("??") && !has_func("select"),
	   "unread files: frames are ??");
	is_str(ps.note,
	       "the process runs in a container (its root is not the "
	       "node's) and gdb could not read its files",
	       "unread files: the note says so, not a missing package");
	f = files(0, TE_SCRIPT_UNKNOWN, "python3.9");
	parse("py_container_unread.txt", 1, &f);
	like(ps.note, "python3.9-dbg not installed on the node",
	     "taken for the node's own process, it names the process's python3.9");

	/* on the node itself: the interpreter's own package */
	f = files(0, TE_SCRIPT_UNKNOWN, "python3.11");
	parse("py_nodbg.txt", 1, &f);
	is_str(ps.note,
	       "gdb has no py-bt (python3.11-dbg not installed on the "
	       "node?): native frames only",
	       "node: python3.11-dbg named");
	f = files(0, TE_SCRIPT_UNKNOWN, "");
	parse("py_nodbg.txt", 1, &f);
	like(ps.note, "python3-dbg not installed",
	     "node: unknown interpreter: python3-dbg");
	parse("py_nodbg.txt", 1, NULL);
	is_str(ps.note,
	       "gdb has no py-bt (python3-dbg not installed?): native "
	       "frames only",
	       "no files known: te_stack_parse_gdb's own note");

	/* left alone */
	f = files(1, TE_SCRIPT_NONE, "python3.9");
	te_stack_init(&ps);
	te_stack_parse_gdb(fixture, load("ptrace_denied.txt"), 1, &ps);
	te_strlcpy(before, ps.note, sizeof(before));
	te_stack_note_files(&ps, TE_GDB_DENIED, 1, &f);
	is_str(ps.note, before, "denied: the note stays gdb's");
	parse("c_read.txt", 0, &f);
	is_str(ps.note, "", "a C program with named frames: no note");
	f = files(1, TE_SCRIPT_NONE, "python3.9");
	parse("c_stripped.txt", 0, &f);
	is_str(ps.note, "", "some ?? frames, the innermost named: no note");

	/* bounded: a long interpreter name is cut, the note terminated */
	f = files(1, TE_SCRIPT_USED, "python3.99999999999999999999999999");
	parse("py_container_nodbg.txt", 1, &f);
	ok(strlen(ps.note) < TE_STACK_NOTE_MAX &&
		   strstr(ps.note, "python3.9999"),
	   "a long interpreter name: the note is cut to its size");
}

int main(void)
{
	test_paths();
	test_notes();
	return tap_done();
}
