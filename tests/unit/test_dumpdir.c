/* The NCCL dump directory's verdict: DIR/JOBID is used only when it is the
 * job user's own directory that nobody else can write to or swap. */
#include "config.h"

#include <string.h>

#include "dumpdir.h"
#include "tap.h"

static struct stat entry(mode_t mode, uid_t uid)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = mode;
	st.st_uid = uid;
	return st;
}

int main(void)
{
	struct stat tmp = entry(S_IFDIR | 01777, 0);	/* a shared /tmp-like DIR */
	struct stat own = entry(S_IFDIR | 0755, 1000);	/* the user's own DIR */
	struct stat d;
	char why[256];

	d = entry(S_IFDIR | 0700, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), 0,
	       "the user's own 0700 directory in a sticky shared DIR is used");
	is_int(te_dump_dir_verdict(&own, &d, 1000, why, sizeof(why)), 0,
	       "... and in the user's own DIR");
	d = entry(S_IFDIR | 0755, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), 0,
	       "a 0755 directory of the user's own is used (readable is the "
	       "user's choice)");
	d = entry(S_IFDIR | 0700, 0);
	is_int(te_dump_dir_verdict(&tmp, &d, 0, why, sizeof(why)), 0,
	       "root's job: root's own directory is used");

	d = entry(S_IFDIR | 0700, 65534);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "a directory another user made first is refused");
	is_str(why, "belongs to uid 65534, not to the job's user (uid 1000): "
	       "someone else made it", "... saying whose it is");
	d = entry(S_IFDIR | 0700, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 0, why, sizeof(why)), -1,
	       "root's job does not take a user's directory either");
	d = entry(S_IFDIR | 0777, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "the user's own but world-writable: refused");
	is_str(why, "is writable by group or others (mode 0777)",
	       "... naming the mode");
	d = entry(S_IFDIR | 0770, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "group-writable: refused");
	d = entry(S_IFLNK | 0777, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "a symbolic link (even the user's own) is refused");
	is_str(why, "is a symbolic link", "... saying so");
	d = entry(S_IFREG | 0600, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "a regular file is refused");
	is_str(why, "is not a directory", "... saying so");
	d = entry(S_IFIFO | 0600, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "a FIFO is refused");

	d = entry(S_IFDIR | 0700, 1000);
	tmp = entry(S_IFDIR | 0777, 0);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "in a world-writable DIR without the sticky bit: refused "
	       "(others could rename it away and put theirs there)");
	like(why, "without the sticky bit (mode 0777)", "... saying why");
	tmp = entry(S_IFDIR | 02775, 0);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "in a group-writable DIR without the sticky bit: refused");
	tmp = entry(S_IFDIR | 03775, 0);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), 0,
	       "in a group-writable sticky DIR: used");

	d = entry(S_IFDIR | 0700, 65534);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, 8), -1,
	       "a short message buffer: still refused");
	is_int((long long)strlen(why), 7, "... and the reason is cut, terminated");
	return tap_done();
}
