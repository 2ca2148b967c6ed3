# SPDX-License-Identifier: GPL-2.0-or-later
# TE_CHECK_CFLAG(FLAG, ACTION-IF-OK)
# Runs ACTION-IF-OK when the C compiler accepts FLAG without a warning.
AC_DEFUN([TE_CHECK_CFLAG], [
  AS_VAR_PUSHDEF([te_var], [te_cv_cflag_$1])
  AC_CACHE_CHECK([whether $CC accepts $1], [te_var], [
    te_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $1"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [return 0;])],
      [AS_VAR_SET([te_var], [yes])], [AS_VAR_SET([te_var], [no])])
    CFLAGS=$te_save_CFLAGS])
  AS_VAR_IF([te_var], [yes], [$2])
  AS_VAR_POPDEF([te_var])
])

# TE_CHECK_LDFLAG(FLAG, ACTION-IF-OK)
AC_DEFUN([TE_CHECK_LDFLAG], [
  AS_VAR_PUSHDEF([te_var], [te_cv_ldflag_$1])
  AC_CACHE_CHECK([whether the linker accepts $1], [te_var], [
    te_save_LDFLAGS=$LDFLAGS
    LDFLAGS="$LDFLAGS -Werror $1"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [return 0;])],
      [AS_VAR_SET([te_var], [yes])], [AS_VAR_SET([te_var], [no])])
    LDFLAGS=$te_save_LDFLAGS])
  AS_VAR_IF([te_var], [yes], [$2])
  AS_VAR_POPDEF([te_var])
])
