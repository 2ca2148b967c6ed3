/* The NCCL dump directory's safety verdict (dumpdir.h). */
#include "config.h"

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
