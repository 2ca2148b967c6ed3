/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hang report for processes in containers, the pure part: the paths a
 * process sees inside its own root, and the note that names the real
 * cause when its frames are missing (core/hang/stacks.h). */
#include "config.h"

#include <string.h>

#include "hang/stacks.h"
#include "util/strutil.h"

int te_stack_inner_path(char *out, size_t len, const char *exe,
			const char *root)
{
	size_t r = root ? strlen(root) : 0;

	/* "/a/b/" and "/a/b" are the same root */
	while (r > 1 && root[r - 1] == '/')
		r--;
	if (!exe || exe[0] != '/')
		return len ? (out[0] = '\0', -1) : -1;
	if (r > 1 && root[0] == '/' && !strncmp(exe, root, r) && exe[r] == '/')
		exe += r;
	return te_strlcpy(out, exe, len) < len ? 0 : (out[0] = '\0', -1);
}

/* Only plain path characters: the path goes into a gdb command line. */
static int plain_path(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("/._+-", *s)))
			return 0;
	return 1;
}

int te_stack_gdb_script_path(char *out, size_t len, const char *inner)
{
	if (!inner || inner[0] != '/' || strstr(inner, "/../") ||
	    !plain_path(inner) ||
	    te_snprintf(out, len, "/usr/share/gdb/auto-load%s-gdb.py", inner) <
		    0)
		return len ? (out[0] = '\0', -1) : -1;
	return 0;
}

/* Python frames; threads with native frames, and those whose innermost
 * one gdb could not name ("??"): with its files read, gdb names at least
 * the C library's call a waiting thread is in. */
static void count_frames(const struct te_proc_stack *ps, unsigned *py,
			 unsigned *threads, unsigned *unnamed)
{
	size_t t, i;

	*py = *threads = *unnamed = 0;
	for (i = 0; i < ps->nframes; i++)
		*py += ps->frames[i].kind == TE_FRAME_PY;
	for (t = 0; t < ps->nthreads; t++) {
		const struct te_thread_stack *th = &ps->threads[t];
		const struct te_frame *f;

		if (!th->count || (size_t)th->first >= ps->nframes)
			continue;
		f = &ps->frames[th->first];
		if (f->kind != TE_FRAME_NATIVE)
			continue;
		(*threads)++;
		*unnamed += !strcmp(te_frame_str(ps, f->func), "??");
	}
}

void te_stack_note_files(struct te_proc_stack *ps, unsigned flags,
			 int is_python, const struct te_stack_files *f)
{
	/* "python3.9": its Debian package of debug symbols and gdb script
	 * is python3.9-dbg */
	const char *py = f && f->interp[0] ? f->interp : "python3";
	unsigned pyframes, threads, unnamed;

	if (!f || (flags & TE_GDB_DENIED))
		return;
	count_frames(ps, &pyframes, &threads, &unnamed);
	if (f->container && !pyframes &&
	    (f->unreadable || (threads && unnamed == threads))) {
		te_strlcpy(ps->note,
			   "the process runs in a container (its root "
			   "is not the node's) and gdb could not read its "
			   "files",
			   sizeof(ps->note));
		return;
	}
	if (!is_python || pyframes || !threads)
		return;
	if (!f->container) {
		if (flags & TE_GDB_NO_PYBT)
			te_snprintf(ps->note, sizeof(ps->note),
				    "gdb has no "
				    "py-bt (%.24s-dbg not installed on the "
				    "node?): native frames only",
				    py);
		return;
	}
	switch (f->script) {
	case TE_SCRIPT_NONE:
		te_snprintf(ps->note, sizeof(ps->note),
			    "%.24s-dbg is missing "
			    "in the container (no %.24s-gdb.py in it): native "
			    "frames only",
			    py, py);
		break;
	case TE_SCRIPT_NOT_RUN:
		te_strlcpy(ps->note,
			   "run as root for another user, the "
			   "container's gdb script is not run: native frames "
			   "only",
			   sizeof(ps->note));
		break;
	case TE_SCRIPT_USED:
		te_snprintf(ps->note, sizeof(ps->note),
			    "no Python frame "
			    "found, although the container has %.24s-gdb.py "
			    "(%.24s-dbg not matching its %.24s?)",
			    py, py, py);
		break;
	default:
		break;
	}
}
