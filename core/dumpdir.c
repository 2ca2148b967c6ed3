/* The NCCL dump directory's safety verdict, and its safe opening
 * (dumpdir.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "dumpdir.h"
#include "strutil.h"

int te_dump_dir_verdict(const struct stat *parent, const struct stat *dir,
			uid_t uid, char *why, size_t len)
{
	if (S_ISLNK(dir->st_mode))
		return te_err(why, len, "is a symbolic link");
	if (!S_ISDIR(dir->st_mode))
		return te_err(why, len, "is not a directory");
	if (dir->st_uid != uid)
		return te_err(why, len, "belongs to uid %u, not to the job's "
			      "user (uid %u): someone else made it",
			      (unsigned)dir->st_uid, (unsigned)uid);
	if (dir->st_mode & (S_IWGRP | S_IWOTH))
		return te_err(why, len, "is writable by group or others (mode "
			      "%04o)", (unsigned)(dir->st_mode & 07777));
	if ((parent->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(parent->st_mode & S_ISVTX)) {
		return te_err(why, len, "is in a directory others may write "
			      "to without the sticky bit (mode %04o): they "
			      "could replace it", (unsigned)(parent->st_mode &
							     07777));
	}
	return 0;
}

int te_dump_dir_open(const char *dir, const char *name, uid_t uid, char *why,
		     size_t len)
{
	struct stat pst, st;
	char v[160];
	int pfd, dfd;

	/* O_PATH: DIR need not be readable, only searchable (as mkdir) */
	pfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return te_err(why, len, "cannot open %s: %s", dir,
			      strerror(errno));
	if (mkdirat(pfd, name, 0700) < 0 && errno != EEXIST) {
		te_snprintf(why, len, "cannot create %s/%s: %s", dir, name,
			    strerror(errno));
		close(pfd);
		return -2;
	}
	dfd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;

		/* what is there, for the message only */
		int rc = -1;

		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    fstat(pfd, &pst) == 0 &&
		    te_dump_dir_verdict(&pst, &st, uid, v, sizeof(v)) < 0) {
			te_snprintf(why, len, "%s/%s %s", dir, name, v);
		} else {
			te_snprintf(why, len, "cannot open %s/%s: %s", dir, name,
				    strerror(e));
			rc = -2;
		}
		close(pfd);
		return rc;
	}
	if (fstat(pfd, &pst) < 0 || fstat(dfd, &st) < 0) {
		te_snprintf(why, len, "%s/%s: %s", dir, name, strerror(errno));
		close(dfd);
		close(pfd);
		return -2;
	}
	close(pfd);
	if (te_dump_dir_verdict(&pst, &st, uid, v, sizeof(v)) < 0) {
		te_snprintf(why, len, "%s/%s %s", dir, name, v);
		close(dfd);
		return -1;
	}
	return dfd;
}
