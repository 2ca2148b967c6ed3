/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sample NCCL RAS 2.30 replies (as src/ras/client_support.cc prints them),
 * shared by the stand-in server (tests/integration/ras_standin.c) and the
 * reader's unit test (tests/unit/hang/test_ras.c): TE_RAS_REPLY_HEAD, the
 * report up to its table's header, then one of the bodies. */
#ifndef TE_RAS_REPLIES_H
#define TE_RAS_REPLIES_H

/* The versions, the job summary, the communicators' table header. */
#define TE_RAS_REPLY_HEAD                                                             \
	"NCCL version 2.30.7 compiled with CUDA 12.9\n"                               \
	"CUDA runtime version 12090, driver version 12090\n\n"                        \
	"Job summary\n===========\n\n"                                                \
	"  Nodes  Processes         GPUs  Processes     GPUs\n"                       \
	"(total)   per node  per process    (total)  (total)\n"                       \
	"      2          4            1          8        8\n"                       \
	"\nCommunicators... (2.05s)\n=============\n\n"                               \
	"Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n" \
	"    #  in group  per comm  per node  per comm  in group\n"

/* Every rank answered (2 communicators). */
#define TE_RAS_REPLY_OK                                                               \
	"    0         1         2         4         8         8   RUNNING      OK\n" \
	"    1         2         1         4         4         8   RUNNING      OK\n" \
	"\nErrors\n======\n\nWarnings\n========\n\n"

/* Rank 4 of 8 missing, its process silent, 2 timeouts. */
#define TE_RAS_REPLY_MISSING                                                              \
	"    0         1         2       3-4         8         8   RUNNING  INCOMPLETE\n" \
	"\nErrors\n======\n\n"                                                            \
	"INCOMPLETE\n  Missing communicator data from 1 job process\n"                    \
	"  Process 41235 on node 10.0.0.2 managing GPU 0\n\n"                             \
	"#0-0 (cf264af53edbe986) INCOMPLETE\n"                                            \
	"  Missing communicator data from 1 rank\n"                                       \
	"  Rank 4 -- GPU 0 managed by process 41235 on node 10.0.0.2\n\n"                 \
	"Warnings\n========\n\n"                                                          \
	"TIMEOUT\n  Encountered 2 communication timeouts while gathering "                \
	"communicator data\n\n"

/* Rank 4 missing as NCCL 2.24 says it ("The missing rank: 4"). */
#define TE_RAS_REPLY_OLD                                                                  \
	"    0         1         2       3-4         8         8   RUNNING  INCOMPLETE\n" \
	"\nErrors\n======\n\n"                                                            \
	"#0-0 (cf264af53edbe986) INCOMPLETE\n"                                            \
	"  Missing communicator data from 1 rank\n"                                       \
	"  The missing rank: 4\n\n"                                                       \
	"Warnings\n========\n\n"

/* A process considered dead, two ranks missing. */
#define TE_RAS_REPLY_DEAD                                                                 \
	"    0         1         2       2-4         8         8   RUNNING  INCOMPLETE\n" \
	"\nErrors\n======\n\n"                                                            \
	"DEAD\n  2 job processes are considered dead (unreachable via the "               \
	"RAS network)\n"                                                                  \
	"  Process 41235 on node 10.0.0.2 managing GPU 0\n"                               \
	"  Process 41236 on node 10.0.0.2 managing GPU 1\n\n"                             \
	"#0-0 (cf264af53edbe986) INCOMPLETE\n"                                            \
	"  Missing communicator data from 2 ranks\n"                                      \
	"  Rank 4 -- GPU 0 managed by process 41235 on node 10.0.0.2\n"                   \
	"  Rank 5 -- GPU 1 managed by process 41236 on node 10.0.0.2\n\n"                 \
	"Warnings\n========\n\n"

/* Ranks that reported errors. */
#define TE_RAS_REPLY_ERROR                                                           \
	"    0         1         2         4         8         8     ABORT  ERROR\n" \
	"\nErrors\n======\n\n"                                                       \
	"#0-0 (9e17999afaa87dbb) ERROR\n"                                            \
	"  Asynchronous errors on 2 ranks\n"                                         \
	"  2 ranks reported remote process exited or there was a network error\n"    \
	"  Rank 1 -- GPU 1 managed by process 5123 on node 10.0.0.1\n"               \
	"  Rank 6 -- GPU 2 managed by process 41237 on node 10.0.0.2\n\n"            \
	"Warnings\n========\n\n"

/* A rank behind the others in AllReduce. */
#define TE_RAS_REPLY_MISMATCH                                                           \
	"    0         1         2         4         8         8   RUNNING  MISMATCH\n" \
	"\nErrors\n======\n\nWarnings\n========\n\n"                                    \
	"#0-0 (27a079b828ff1a75) MISMATCH\n"                                            \
	"  Communicator ranks have different AllReduce operation counts\n"              \
	"  7 ranks have launched up to operation 6650\n"                                \
	"  Rank 4 has launched up to operation 6649 -- GPU 0 managed by "               \
	"process 41235 on node 10.0.0.2\n\n"

#endif
