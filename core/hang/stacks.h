/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hang report's stacks, the pure part: a bounded model of one process's
 * stack, the parser of gdb's batch output, signatures and grouping, the
 * text and JSON reports, and the line format between the node-side
 * collector and the login-side merger.
 *
 * Everything here reads hostile bytes (gdb's output about user processes,
 * lines from other nodes over a pipe) and is bounded: at most
 * TE_STACK_THREADS threads per process, TE_STACK_FRAMES frames per thread
 * and TE_STACK_FRAMES_ALL per process, names cut at TE_STACK_NAME_MAX
 * bytes (cut names end in "..." and their frame is marked), all of a
 * process's text in one arena of TE_STACK_TEXT bytes (about 14 KiB per
 * process, so that a merger can hold 10000 ranks).
 *
 * Frames are kept as gdb prints them: most recent call first (the frame a
 * rank is waiting in is the first line of its stack; when a deep stack is
 * cut, the outermost frames go). A process with Python frames in any
 * thread keeps only those threads' Python frames (the others are counted
 * in threads_nopy); a process without any keeps native frames. */
#ifndef TE_STACKS_H
#define TE_STACKS_H

#include <stddef.h>
#include <stdint.h>

#define TE_STACK_THREADS 16
#define TE_STACK_FRAMES 64	/* per thread */
#define TE_STACK_FRAMES_ALL 256 /* per process */
#define TE_STACK_NAME_MAX 120	/* function, file, library */
#define TE_STACK_TEXT 8192
#define TE_STACK_NODE_MAX 64
#define TE_STACK_WCHAN_MAX 64
#define TE_STACK_NOTE_MAX 128
#define TE_STACK_NODE_RANKS 1024 /* records one node sends at most */
/* the workers one task may stand for in the merger (torchrun's
 * --nproc-per-node): a record's WORLD_SIZE, set by the job's own
 * processes, never asks for more */
#define TE_STACK_TASK_WORKERS 64
#define TE_STACK_RECORD_MAX (64 * 1024) /* one process's record */

enum te_frame_kind {
	TE_FRAME_PY = 1,
	TE_FRAME_NATIVE = 2
};
#define TE_FRAME_CUT 1u /* a name of the frame was cut */

/* Strings are offsets into the process's text (0 is ""): the struct stays
 * plain (memcpy-able) and small; te_frame_str() reads them. */
struct te_frame {
	uint8_t kind;
	uint8_t flags;
	uint16_t func, file, lib; /* lib: native only, its base name */
	uint32_t line;		  /* 0: unknown */
	uint64_t addr;		  /* native pc, 0 inlined; never compared */
};

struct te_thread_stack {
	uint16_t first, count; /* frames[first .. first + count) */
	uint8_t cut;	       /* frames past the bounds were dropped */
	int lwp;	       /* never compared */
};

struct te_proc_stack {
	int rank; /* -1 unknown */
	int pid;
	char node[TE_STACK_NODE_MAX];
	char state; /* R S D T Z ... ('?' unknown) */
	char wchan[TE_STACK_WCHAN_MAX];
	int64_t cpu_ms;	  /* CPU used since the reference, -1 unknown */
	int64_t since_ms; /* since the first exit, -1 unknown */
	int world;	  /* its WORLD_SIZE, -1 unknown */
	char note[TE_STACK_NOTE_MAX]; /* what is missing, "" when nothing */
	uint16_t nthreads;
	uint16_t threads_nopy; /* threads left out: no Python frame */
	uint16_t threads_cut;  /* threads left out: past the bound */
	uint16_t nframes, text_used;
	struct te_thread_stack threads[TE_STACK_THREADS];
	struct te_frame frames[TE_STACK_FRAMES_ALL];
	char text[TE_STACK_TEXT];
};

/* ---------------------------------------------------------------- model */

/* An empty stack: rank and times unknown, state '?', no threads. */
void te_stack_init(struct te_proc_stack *ps);
const char *te_frame_str(const struct te_proc_stack *ps, uint16_t off);
/* "running", "sleeping", "in I/O (disk sleep)", "stopped", "zombie", ...,
 * "unknown state". */
const char *te_stack_state_word(char state);

/* Adds a thread / a frame to the last thread, as the parser and the decoder
 * do (names cut and marked, strings shared in the text). 0, or -1 when a
 * bound is reached (the thread or frame is then counted as cut). */
int te_stack_add_thread(struct te_proc_stack *ps, int lwp);
int te_stack_add_frame(struct te_proc_stack *ps, int kind, const char *func,
		       size_t funclen, const char *file, size_t filelen,
		       uint32_t line, const char *lib, size_t liblen,
		       uint64_t addr);

/* ---------------------------------------------------------------- gdb */

/* Output flags of te_stack_parse_gdb. */
#define TE_GDB_NO_PYBT 1u  /* gdb had no py-bt command */
#define TE_GDB_DETACHED 2u /* gdb's output ran to its end */
#define TE_GDB_DENIED 4u   /* gdb could not attach */

/* Reads the output (stdout and stderr together) of
 *   gdb -p PID -batch -nx -ex 'thread apply all py-bt' \
 *       -ex 'thread apply all bt'
 * into ps's threads (rank, node, state... are left as they are). is_python:
 * the process runs a Python interpreter; when it has no Python frame the
 * note says why. Threads are kept in gdb's order up to the bounds, except
 * the one a "trainenv-gil-holder LWP N" line names (the GIL holder), which
 * is kept first. Noise, truncated output and garbage are skipped. Returns
 * TE_GDB_* flags. */
unsigned te_stack_parse_gdb(const char *buf, size_t len, int is_python,
			    struct te_proc_stack *ps);

/* ---------------------------------------------------------------- containers */
/* core/hang/stacks_files.c. A process whose root (/proc/PID/root) is not the
 * node's runs in a container (pyxis/enroot, Apptainer, a chroot): gdb
 * reads its files through /proc/PID/root (its sysroot), and the
 * interpreter's gdb script (py-bt) is the container's, which the host's
 * gdb does not find by itself. */

/* What the node side found out about a process's files. */
enum te_stack_script {
	TE_SCRIPT_UNKNOWN = 0, /* not looked for */
	TE_SCRIPT_NONE,	       /* not in the container */
	TE_SCRIPT_USED,	       /* found and given to gdb */
	TE_SCRIPT_NOT_RUN      /* found; not run as root for another user */
};
struct te_stack_files {
	int container;	 /* its root is not the node's */
	int unreadable;	 /* its root or program could not be opened */
	int script;	 /* enum te_stack_script */
	char interp[32]; /* its interpreter's name ("python3.9"), "" */
};

/* The path of exe (readlink of /proc/PID/exe) inside the process's root
 * (readlink of /proc/PID/root, both as this process sees them): exe
 * without root's prefix, or exe itself when root is "/" or no prefix of it
 * (a root in another mount namespace reads as "/"). 0, or -1 (out "")
 * when exe is not absolute or out is too small. */
int te_stack_inner_path(char *out, size_t len, const char *exe,
			const char *root);
/* Where Debian's and Ubuntu's pythonX.Y-dbg put the gdb script of the
 * interpreter at inner (a path inside the root), which gdb loads for py-bt:
 * /usr/share/gdb/auto-load + inner + "-gdb.py". 0, or -1 (out "") for a
 * relative path, "/../", or a character outside [A-Za-z0-9._+/-] (the path
 * goes into a gdb command). */
int te_stack_gdb_script_path(char *out, size_t len, const char *inner);
/* After te_stack_parse_gdb (its flags), rewrites ps's note with the real
 * cause when frames are missing: in a container, gdb could not read its
 * files (they could not be opened, or no thread's innermost frame has a
 * name), or its pythonX.Y-dbg is missing there,
 * or the script was not run; on the node itself, pythonX.Y-dbg of the
 * process's own interpreter. f NULL: the note is left as it is. */
void te_stack_note_files(struct te_proc_stack *ps, unsigned flags,
			 int is_python, const struct te_stack_files *f);

/* ---------------------------------------------------------------- groups */

/* The signature: every thread's frames (kind, function, file, line,
 * library; not addresses, pids, thread ids or argument values), threads as
 * a set (their order does not matter), and the note. */
uint64_t te_stack_hash(const struct te_proc_stack *ps);
int te_stack_same(const struct te_proc_stack *a, const struct te_proc_stack *b);

struct te_stack_group {
	size_t first, count; /* into order[] */
};
/* Groups the n stacks by signature: order[0..n) gets the indexes of procs
 * group by group, each group's members by rank (unknown ranks last, by
 * pid); groups[] the groups, outliers first (fewest members, then lowest
 * rank). Writes at most gmax groups (order[] only for them) and returns
 * how many there are in all, or -1 when out of memory. */
long te_stack_group(const struct te_proc_stack *procs, size_t n, size_t *order,
		    struct te_stack_group *groups, size_t gmax);

/* "4", "0,2-5", "0-9999": ranks sorted ascending (duplicates and negative
 * ones skipped). When the buffer is too small the list ends in ",..." at
 * an item's end; returns 0, or -1 when cut. */
int te_ranks_format(char *buf, size_t len, const int *ranks, size_t n);
/* "n1-n3", "n1,n3,gpu2": distinct names, consecutive numeric suffixes of
 * one prefix joined ("n01-n03" keeps its width). Cut as te_ranks_format;
 * -1 also when out of memory ("?" written). */
int te_nodes_format(char *buf, size_t len, const char *const *names, size_t n);

/* ---------------------------------------------------------------- reports */

/* The report srun prints: per group a header line
 *   trainenv: hang: rank 4 on n3 (1 rank, pid 77): state S (sleeping,
 *   wchan hrtimer_nanosleep), 12.0 s since the first exit, cpu 0.0 s
 * (one line; groups of several ranks count their states and give ranges),
 * then its threads and frames indented. Groups that do not fit are left
 * out with a last line "trainenv: hang: ... N more groups". Returns 0, or
 * -1 when something was left out (buf is always terminated). */
int te_stack_report_text(char *buf, size_t len,
			 const struct te_proc_stack *procs, size_t n);
/* The same as JSON: {"groups":[{"ranks":[..],"nodes":[..],"procs":[..],
 * "note":..,"threads":[{"frames":[..]}]}],"more_groups":N}. Strings are
 * written by te_buf_json_str (core/util/textbuf.h): valid UTF-8 as it is,
 * quote, backslash and control characters escaped, ill-formed bytes as
 * U+FFFD. Built with an append cursor: linear in the report's size.
 * Returns 0, or -1 when groups were left out (counted in more_groups). */
int te_stack_report_json(char *buf, size_t len,
			 const struct te_proc_stack *procs, size_t n);
/* s as a JSON string (quotes included, as te_buf_json_str) appended to
 * the terminated text in buf; 0 or -1 (cut: buf is left as it was). */
int te_json_str_append(char *buf, size_t len, const char *s);

/* ---------------------------------------------------------------- wire */

/* One process as a few lines (every string percent-encoded, "-" for ""):
 *   TE-STACK1 proc rank=4 pid=77 node=n3 state=S cpu_ms=0 since_ms=12000
 *     wchan=hrtimer_nanosleep nopy=1 tcut=0 note=- world=8
 *   thread lwp=77 cut=0
 *   frame py LINE FUNC FILE FLAGS
 *   frame native ADDR LINE FUNC FILE LIB FLAGS
 *   end
 * Records of several processes follow each other. A process whose record
 * does not fit len (16 threads of deep C++ stacks are over 64 KiB) is
 * never dropped: the outermost frames go first (each thread keeps its
 * innermost ones, the same number for all, and is marked cut); when not
 * one frame of every thread fits, the innermost frame of the first
 * threads that do (the others counted in tcut); the note says so.
 * Returns 0 (whole), 1 (cut to fit), or -1 when not even the proc line
 * fits (buf then holds ""). */
#define TE_STACK_WIRE_MAGIC "TE-STACK1"
#define TE_STACK_WIRE_LINE_MAX 1536
int te_stack_wire_encode(char *buf, size_t len, const struct te_proc_stack *ps);
/* Decodes the record at buf[0..len) into ps; *used gets its length (with
 * its last newline). world= may be left out (a collector before it).
 * Refuses, with a one-line reason in err, a bad magic or
 * key, NUL or control bytes, over-long lines or fields, numbers out of
 * range, more threads or frames than the bounds, and a record without
 * "end". Returns 0 or -1. */
int te_stack_wire_decode(const char *buf, size_t len, size_t *used,
			 struct te_proc_stack *ps, char *err, size_t errlen);

/* Between the nodes and the login side, srun merges the collectors'
 * outputs as slurmstepd sends them: in line-aligned messages of at most
 * TE_STACK_WIRE_MSG_MAX bytes (SLURM_IO_MAX_MSG_LEN), so that one node's
 * record may come in pieces with other nodes' lines in between. Each node
 * tags its every line with "@TAG " (TAG: its task id in the collecting
 * step); every line a record has (at most TE_STACK_WIRE_SEND_MAX bytes
 * with its newline: encoded fields are cut to TE_STACK_WIRE_FIELD_MAX)
 * fits one message with its tag, and comes whole. */
#define TE_STACK_WIRE_MSG_MAX 1024
#define TE_STACK_WIRE_FIELD_MAX 300
#define TE_STACK_WIRE_SEND_MAX 960
#define TE_STACK_WIRE_TAG_MAX 1048575u
/* rec[0..len) (whole lines) with "@TAG " before each line, into out.
 * The bytes written, or -1 when out is too small, tag is over the bound,
 * or a line is over TE_STACK_WIRE_SEND_MAX. */
long te_stack_wire_tag(char *out, size_t cap, const char *rec, size_t len,
		       unsigned tag);
/* The login side: the tagged lines of in[0..len), each tag's lines in the
 * order they came and the tags one after another (by number), the tags
 * taken off; lines without a tag (a node's stray output) are left out.
 * *out is allocated (the caller frees it; NULL for none); its length, or
 * -1 when memory runs out. */
long te_stack_demux(const char *in, size_t len, char **out);

/* The login side's merger: the records of every node in buf[0..len)
 * (lines that are no record skipped) into *procs, grown with realloc (the
 * caller frees it). It stops at the step's rank count: ntasks (one task a
 * rank), or the WORLD_SIZE its records carry when that is more (torchrun:
 * a task stands for its workers), never past what the step's ntasks can
 * stand for (TE_STACK_TASK_WORKERS each) nor what nnodes nodes can send
 * (TE_STACK_NODE_RANKS each): a record's claim never raises it further;
 * *left_out is then 1 (also when memory runs out: what came is kept).
 * Returns how many. */
long te_stack_merge(const char *buf, size_t len, unsigned ntasks,
		    unsigned nnodes, struct te_proc_stack **procs,
		    int *left_out);

#endif
