/* The NCCL dump directory (--train-nccl-dump-dir=DIR): whether DIR/JOBID,
 * opened without following a link, may receive the job's flight recorder
 * dumps. Another user may have made it first for a predictable job id, or
 * may be able to swap it after the check: then it is not used. Pure. */
#ifndef TE_DUMPDIR_H
#define TE_DUMPDIR_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* parent: DIR as opened; dir: DIR/JOBID, from fstat of a descriptor opened
 * with O_NOFOLLOW (or lstat when that open failed, for the reason); uid:
 * the job's user. DIR/JOBID must be a directory (not a link) owned by uid
 * and not writable by group or others; DIR, when others or the group may
 * write there, must be sticky (else they could rename DIR/JOBID away and
 * put theirs in its place). Returns 0, or -1 with why ("is a symbolic
 * link", "belongs to uid 65534, not to the job's user (uid 1000)", ...),
 * to follow the path in a message. */
int te_dump_dir_verdict(const struct stat *parent, const struct stat *dir,
			uid_t uid, char *why, size_t len);

/* Makes (mode 700) and opens DIR/NAME for the job's user uid, run as that
 * user: O_PATH, without following a link, and only when te_dump_dir_verdict
 * says it is the user's own. The descriptor (for openat), or with why
 * -1 when DIR cannot be opened or DIR/NAME is not the user's own ("cannot
 * open /d: ...", "/d/42 is a symbolic link") and -2 when DIR/NAME cannot be
 * made or opened ("cannot create /d/42: ..."). */
int te_dump_dir_open(const char *dir, const char *name, uid_t uid, char *why,
		     size_t len);

#endif
