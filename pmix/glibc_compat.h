/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* glibc_compat.h: binds the calls that glibc 2.34 moved into libc to their
 * oldest versions, so that a library that goes into container images
 * (trainenv-nccl.so, through LD_PRELOAD) loads under an older glibc than
 * the build machine's.
 *
 * glibc 2.34 moved dlopen, dlsym, dladdr, dlerror (libdl) and the
 * pthread_* calls (libpthread) into libc.so.6 under a new version,
 * GLIBC_2.34, keeping the old one there as well. A library built on
 * Debian 12 binds the new one, and the dynamic linker of an older image
 * (EL8: 2.28, Ubuntu 20.04: 2.31, Debian 11: 2.31) refuses it: "version
 * `GLIBC_2.34' not found". Naming the old version (.symver) makes the same
 * calls resolve against the old names, which every glibc has: in libdl.so.2
 * and libpthread.so.0 before 2.34 (the library must then list both as
 * NEEDED, linked with --no-as-needed; since 2.34 they are empty stubs), in
 * libc.so.6 from 2.34 on. The symbols are the same functions: glibc keeps
 * the old version as an alias of the new one.
 *
 * Included by each file of such a library that calls these (a .symver
 * applies to the whole object). tests/unit/test_glibc_baseline.sh checks
 * the result (objdump -T). */
#ifndef TE_GLIBC_COMPAT_H
#define TE_GLIBC_COMPAT_H

#if defined(__linux__) && !defined(TE_NO_GLIBC_COMPAT)
/* The first version of each architecture's glibc ABI. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define TE_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__) || \
	(defined(__powerpc64__) && defined(__LITTLE_ENDIAN__))
#define TE_GLIBC_BASE "GLIBC_2.17"
#endif
#endif

#ifdef TE_GLIBC_BASE
#define TE_GLIBC_OLD(sym) __asm__(".symver " #sym "," #sym "@" TE_GLIBC_BASE)
TE_GLIBC_OLD(dlopen);
TE_GLIBC_OLD(dlsym);
TE_GLIBC_OLD(dladdr);
TE_GLIBC_OLD(dlerror);
TE_GLIBC_OLD(pthread_once);
TE_GLIBC_OLD(pthread_create);
TE_GLIBC_OLD(pthread_attr_setstacksize);
TE_GLIBC_OLD(pthread_sigmask);
#undef TE_GLIBC_OLD
#endif

#endif
