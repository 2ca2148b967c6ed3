#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# t82's Epilog (slurm.conf): a job of user nobody ends 4 s late on every
# node, so that srun's requeue happens while the job is still completing
# (the exclusion must neither wait for the epilog nor come after it).
[ "${SLURM_JOB_USER:-}" = nobody ] && sleep 4
exit 0
