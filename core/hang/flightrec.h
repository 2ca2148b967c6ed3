/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PyTorch's flight recorder in the hang report (issue 36 item 3), the pure
 * part: what each rank's dump says about the last collective it entered in
 * each process group, and the report's lines that name the ranks behind
 * ("flight recorder: rank 4 is at all_reduce #1832 (completed) of group 0
 * (default_pg), all others at #1833").
 *
 * The dump, as PyTorch writes it (checked in PyTorch's source, not a
 * guess): ProcessGroupNCCL's monitor thread reads one byte from the pipe
 * TORCH_NCCL_DEBUG_INFO_PIPE_FILE<rank>.pipe (made by mkfifo when that
 * variable is set and the buffer, TORCH_FR_BUFFER_SIZE or
 * TORCH_NCCL_TRACE_BUFFER_SIZE, is above 0) and writes the dump to
 * TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank> (TORCH_FR_DUMP_TEMP_FILE in newer
 * releases; default /tmp/nccl_trace_rank_<rank>). The dump is
 * torch::jit::Pickler's output of a c10::Dict (TraceUtils.h pickle_str:
 * PROTO 2, tag_aggregates off, so no GLOBAL or REDUCE for plain dicts and
 * lists; BINUNICODE strings memoized with BINPUT and repeated with BINGET;
 * BININT1/BININT2/BININT/LONG1 8 integers; BINFLOAT; TUPLE2; NEWTRUE and
 * NEWFALSE; NONE; EMPTY_DICT/EMPTY_LIST + MARK + SETITEMS/APPENDS). Its
 * keys: "version" ("2.3" ... "2.10"), "pg_config", "pg_status",
 * "comm_lib_version" or "nccl_version", and "entries", a list of dicts in
 * the order recorded, each with "record_id", "pg_id", "process_group"
 * (a tuple: the group's name, its description), "collective_seq_id",
 * "p2p_seq_id", "is_p2p", "op_id", "profiling_name" ("nccl:all_reduce"),
 * "time_created_ns", "state" ("scheduled", "started" or "completed"),
 * sizes, dtypes, "frames" and more. Checked: FlightRecorder.hpp and
 * FlightRecorderDetail.hpp at dump versions 2.4 and 2.10 (PyTorch 2.5 to
 * 2.10's main), NCCLUtils.hpp at version 2.3 (PyTorch 2.4), TraceUtils.h
 * at version 1.4 (PyTorch 2.2: "seq_id" instead of "collective_seq_id",
 * no "process_group": the group is its pg_id), pickler.cpp (the opcodes),
 * ProcessGroupNCCL.cpp's DumpPipe. No dump holds its rank: it is the file
 * name's suffix, which the caller passes.
 *
 * Where a rank is: in each group, its entry of the highest
 * collective_seq_id (p2p entries left out: their collective_seq_id is the
 * last collective's). PyTorch records an entry when the rank calls the
 * collective ("scheduled": entered, its kernel not begun), marks it
 * "started" when the kernel began and "completed" when it ended: a rank
 * whose last entry is completed has passed it and entered nothing after
 * it in that group. Ranks are grouped by (seq, op, state): the most common
 * is "all others"; the rest are named. */
#ifndef TE_FLIGHTREC_H
#define TE_FLIGHTREC_H

#include <stddef.h>
#include <stdint.h>

#include "util/pickle.h"

#define TE_FR_GROUPS 16 /* process groups kept per rank */
#define TE_FR_NAME 48	/* a group's name or description, NUL included */
#define TE_FR_OP 32	/* an op's name, NUL included */
/* Bounds on the work of reading a hostile dump whose memo repeats one big
 * dict: the latest TE_FR_ENTRIES entries are read (PyTorch keeps 2,000 by
 * default), and an entry of more than TE_FR_ENTRY_KEYS keys is left out
 * (PyTorch writes about 22). */
#define TE_FR_ENTRIES 100000
#define TE_FR_ENTRY_KEYS 64

enum te_fr_state {
	TE_FR_UNKNOWN,
	TE_FR_SCHEDULED,
	TE_FR_STARTED,
	TE_FR_COMPLETED,
};

enum te_fr_status {
	TE_FR_OK,      /* read: pos[] says where the rank is */
	TE_FR_MISSING, /* no dump (the caller says so) */
	TE_FR_REFUSED, /* not a dump the restricted reader takes: why */
	TE_FR_EMPTY,   /* a dump without collectives */
};

/* One rank in one process group. Text is printable ASCII (others '?'). */
struct te_fr_pos {
	char group[TE_FR_NAME]; /* process_group's name ("0"), or the pg_id */
	char desc[TE_FR_NAME];	/* its description ("default_pg"), or "" */
	char op[TE_FR_OP];	/* profiling_name without "nccl:" */
	int64_t seq;		/* collective_seq_id */
	enum te_fr_state state;
};

struct te_fr_rank {
	int rank;
	enum te_fr_status status;
	char why[160]; /* REFUSED and MISSING: one line */
	char version[16];
	size_t npos;
	struct te_fr_pos pos[TE_FR_GROUPS];
	size_t groups_over; /* entries of groups past TE_FR_GROUPS, left out */
};

/* Reads one rank's dump (buf[0..len), the bytes the user's process wrote)
 * with the restricted reader (lim NULL: its defaults) into out. 0 when
 * read (status OK or EMPTY); -1 when refused (status REFUSED, why says
 * where and why). Never runs, imports or allocates on behalf of the
 * pickle beyond the reader's bounds. */
int te_fr_extract(const unsigned char *buf, size_t len,
		  const struct te_pk_limits *lim, int rank,
		  struct te_fr_rank *out);
/* A rank without a dump (why: "no dump in 10 s", or NULL). */
void te_fr_missing(struct te_fr_rank *out, int rank, const char *why);

/* The report's lines, each "flight recorder: ..." and '\n'-ended, for n
 * ranks: per process group, the ranks not where most are, or that all
 * agree; then one line for the ranks without a readable dump. At most
 * TE_FR_REPORT_GROUPS groups. 0, or -1 when out was too small (its text
 * cut, still terminated). */
#define TE_FR_REPORT_GROUPS 32
int te_fr_report(const struct te_fr_rank *ranks, size_t n, char *out,
		 size_t outlen);

#endif
