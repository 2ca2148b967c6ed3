/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job's directory under a directory the user or the site names
 * (--train-nccl-dump-dir=DIR for the NCCL flight recorder, the site's
 * record-dir for the step's record): DIR/UID/JOBID, made and opened so
 * that no other user can pre-create, swap or read it.
 *
 * DIR is used only when DIR and every directory above it pass the rule
 * OpenSSH applies to its paths: owned by root or the job's user, and
 * writable by group or others only when sticky and root's (as /tmp).
 * The level DIR/UID (the job user's numeric uid, as /run/user/UID) is the
 * user's own, mode 700: in a shared DIR another user can make DIR/JOBID
 * for a future job id, but nothing inside DIR/UID. DIR/UID is a name
 * another user can make first (a directory or a link of theirs): then the
 * level is DIR/UID.<12 random hex digits>, the first such directory that
 * is the user's own (only the user or root can make one), else a new one,
 * and the caller says in one line who made DIR/UID and what is used. */
#ifndef TE_DUMPDIR_H
#define TE_DUMPDIR_H

#include <limits.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The longest path te_dump_dir_open writes (DIR resolved, UID, JOBID). */
#define TE_DUMP_DIR_PATH_MAX (PATH_MAX + 64)

/* The rule for DIR and each directory above it: st of one of them (fstat
 * of a descriptor opened without following a link), uid the job's user.
 * A directory owned by root or uid that group and others cannot write to,
 * or that is sticky and root's. Returns 0, or -1 with why ("belongs to uid
 * 65534, neither root nor the job's user (uid 1000)", "is writable by
 * others (mode 0777) without the sticky bit: ...") to follow the path in a
 * message. */
int te_dump_path_verdict(const struct stat *st, uid_t uid, char *why,
			 size_t len);

/* The levels trainenv makes, DIR/UID and DIR/UID/JOBID: parent is the
 * level above as opened; dir from fstat of a descriptor opened with
 * O_NOFOLLOW (or lstat when that open failed, for the reason). dir must be
 * a directory (not a link) owned by uid and not writable by group or
 * others; its parent, when others or the group may write there, sticky.
 * Returns 0, or -1 with why ("is a symbolic link", "belongs to uid 65534,
 * not to the job's user (uid 1000): someone else made it", ...). */
int te_dump_dir_verdict(const struct stat *parent, const struct stat *dir,
			uid_t uid, char *why, size_t len);

/* Makes (mode 700, with the rights of the caller, who must be the job's
 * user) and opens DIR/UID/NAME for uid: DIR resolved once (realpath), then
 * every directory from / down opened relative to the one above, without
 * following a link, and checked on its descriptor; the two levels below
 * made if missing and checked with te_dump_dir_verdict (DIR/UID.<hex> for
 * DIR/UID when another user's, above). Returns the O_PATH descriptor of
 * DIR/UID/NAME (for openat), its path in path (may be NULL; the resolved
 * DIR: a link in DIR's own path is not followed again later), with why ""
 * or, when DIR/UID was another user's, the line to say ("/d/1000 belongs
 * to uid 4242, not to the job's user (uid 1000): someone else made it;
 * using /d/1000.0123456789ab instead"); or with why -1 when a directory on
 * the way is not safe or DIR
 * cannot be opened ("/d belongs to uid 65534, neither root nor ...",
 * "/d/0/42 is a symbolic link") and -2 when a level cannot be made or
 * opened ("cannot create /d/0: Permission denied"). */
int te_dump_dir_open(const char *dir, const char *name, uid_t uid, char *path,
		     size_t pathlen, char *why, size_t len);
/* The same for a reader (trainenv record): makes nothing. DIR/UID/NAME is
 * found where te_dump_dir_open made it (DIR/UID.<hex> when DIR/UID is
 * another user's, with the same line in why) and held to the same rules;
 * -2 when a level is missing ("cannot open /d/1000/42: No such file or
 * directory"). */
int te_dump_dir_find(const char *dir, const char *name, uid_t uid, char *path,
		     size_t pathlen, char *why, size_t len);

#endif
