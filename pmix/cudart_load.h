/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading the CUDA runtime (libcudart) with dlopen: trainenv never links
 * CUDA, so that nodes without it keep working. Shared by the pre-flight
 * program and the rendezvous helper (which reports the runtime's version
 * in the cross-node version check). */
#ifndef TE_CUDART_LOAD_H
#define TE_CUDART_LOAD_H

#include <stddef.h>

/* Opens the CUDA runtime, trying libcudart.so, libcudart.so.13, .so.12
 * and .so.11.0 from the loader's path (LD_LIBRARY_PATH, ld.so.cache),
 * then in $CUDA_HOME/lib64, then in /usr/local/cuda/lib64. Returns the
 * handle, with the file that was loaded in path (when it can be told), or
 * NULL with what was tried in err. */
void *te_cudart_open(char *path, size_t pathlen, char *err, size_t errlen);

/* cudaRuntimeGetVersion() of the runtime te_cudart_open() finds (13000
 * for CUDA 13.0), or 0 when there is none. */
int te_cudart_version(void);

#endif
