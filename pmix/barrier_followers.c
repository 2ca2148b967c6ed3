/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier's followers: the node's other ranks that this helper stands
 * for say they arrived, or failed, with files in the step's private
 * directory; one that ends while waiting is seen by its lock. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "barrier_int.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"

/* The local ranks this process stands for say they are here with a file
 * (the plugin writes it in task_init), or that they failed before the
 * barrier with another file. */
void te_bfollow_check(struct te_barrier *b, int64_t now)
{
	size_t i;
	int news = 0;

	if (b->nfollowers_here == b->nfollowers || now < b->next_follower_check)
		return;
	for (i = 0; i < b->nfollowers; i++) {
		char path[600];
		struct stat st;

		char why[TE_FAIL_TEXT_MAX + 1];

		if (b->follower_here[i])
			continue;
		if (b->coordinated &&
		    te_snprintf(path, sizeof(path), TE_FAILED_FMT, b->tmpdir,
				b->followers[i]) == 0 &&
		    te_bstate_read_failed_file(path, why, sizeof(why)) == 0) {
			b->follower_here[i] = 2;
			b->nfollowers_here++;
			news = 1;
			if (b->tree || b->p->me.rank == 0)
				te_bstate_rank_failed(b, b->followers[i],
						      b->p->host, why);
			else if (b->cs == C_SENT || b->cs == C_CONNECTING)
				te_bstate_queue_failed(b, b->followers[i], why);
			continue;
		}
		if (te_snprintf(path, sizeof(path), TE_ARRIVED_FMT, b->tmpdir,
				b->followers[i]) < 0 ||
		    lstat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		b->follower_here[i] = 1;
		b->nfollowers_here++;
		news = 1;
		if (b->tree || b->p->me.rank == 0)
			te_bstate_mark_arrived(b, b->followers[i], b->p->host);
		else if (b->cs == C_SENT || b->cs == C_CONNECTING)
			te_bstate_queue_arrived(b, b->followers[i]);
	}
	if (news && b->cs == C_SENT)
		te_bstate_up_flush(b);
	b->follower_wait = news ? 1
				: (b->follower_wait ? b->follower_wait * 2 : 1);
	if (b->follower_wait > 4)
		b->follower_wait = 4;
	b->next_follower_check = now + b->follower_wait;
}

/* A follower holds a lock on its arrival file for as long as it waits
 * (spank/stepd_rdzv_client.c): a file nobody holds locked is a task that ended. */
static int follower_alive(struct te_barrier *b, uint32_t rank)
{
	char path[600];
	int fd, alive;

	if (te_snprintf(path, sizeof(path), TE_ARRIVED_FMT, b->tmpdir, rank) <
	    0)
		return 1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno != ENOENT;
	alive = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd); /* drops the lock if we got it */
	return alive;
}

/* Launch barrier: a follower that arrived and then ended (killed while
 * waiting) failed before the barrier like any other: rank 0 is told, and
 * the step fails now instead of releasing the others without it. */
void te_bfollow_check_alive(struct te_barrier *b, int64_t now)
{
	size_t i;
	int news = 0;

	if (!b->coordinated || !b->nfollowers || now < b->next_alive_check)
		return;
	b->alive_gap_ms = !b->alive_gap_ms ? ALIVE_CHECK_MS
			  : b->alive_gap_ms * 3 / 2 > ALIVE_CHECK_MAX_MS
				  ? ALIVE_CHECK_MAX_MS
				  : b->alive_gap_ms * 3 / 2;
	b->next_alive_check = now + b->alive_gap_ms;
	for (i = 0; i < b->nfollowers; i++) {
		if (b->follower_here[i] != 1 ||
		    follower_alive(b, b->followers[i]))
			continue;
		b->follower_here[i] = 2;
		news = 1;
		if (b->tree || b->p->me.rank == 0)
			te_bstate_rank_failed(b, b->followers[i], b->p->host,
					      TASK_GONE_WHY);
		else if (b->cs == C_SENT || b->cs == C_CONNECTING)
			te_bstate_queue_failed(b, b->followers[i],
					       TASK_GONE_WHY);
	}
	if (news && b->cs == C_SENT)
		te_bstate_up_flush(b);
}
