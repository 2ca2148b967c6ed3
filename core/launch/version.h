/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv's versions: the package version every part is built with, and
 * the protocol version the plugin, its helpers and libtrainenv speak.
 *
 * The package version (PACKAGE_VERSION, from VERSION and git:
 * tools/version.sh) says which release a part comes from. The protocol
 * version says what the parts exchange: the helpers' command lines and
 * result pipes (core/launch/rdzv_proto.h, core/launch/preflight_proto.h), the
 * rendezvous' per-node data and the files under the step's directory.
 * Raise it with any change one side cannot read from an older other side;
 * parts of one protocol work together whatever their package versions.
 * A mismatch on a node (the plugin and its helpers) or between the nodes
 * of one step stops the launch with one line naming both versions. */
#ifndef TE_VERSION_H
#define TE_VERSION_H

#include <stddef.h>

/* A build may say otherwise (-DTE_PROTOCOL_VERSION=N): the tests build a
 * helper of another protocol that way. */
#ifndef TE_PROTOCOL_VERSION
/* 2: the launch helper takes its settings from TRAINENV_SETTINGS, its
 * command line only the step's facts (core/launch/rdzv_args.h) */
#define TE_PROTOCOL_VERSION 2
#endif

/* TE_PROTOCOL_VERSION as this build's version.o has it: code outside
 * core/launch/version.c asks here, so that a helper linked with another
 * version.o (the tests' helper of another protocol) speaks that protocol
 * throughout, its node's data included. */
int te_protocol_version(void);

/* "trainenv 0.9.0 (protocol 1)": what --version, srun --train=help and
 * --train-explain print. Returns the length, or -1 when it did not fit. */
int te_version_line(char *buf, size_t len);

/* A helper's answer to --protocol-version: "trainenv-protocol 1 0.9.0\n".
 * te_protocol_answer_parse() reads one (from a bounded buffer: at most
 * TE_PROTOCOL_ANSWER_MAX bytes, one line, the version a version word of
 * at most 31 characters) into *proto and pkg; returns 0, or -1 when the
 * text is not such an answer. */
#define TE_PROTOCOL_ANSWER_MAX 64
int te_protocol_answer_format(char *buf, size_t len);
int te_protocol_answer_parse(const char *buf, size_t n, int *proto, char *pkg,
			     size_t pkglen);

/* What every helper does first with its command line: "--protocol-version"
 * alone prints the answer and returns 0 (exit 0); "--protocol N" with N
 * another protocol prints the answer on stdout and returns
 * TE_PROTOCOL_EXIT (exit with it); with N its own, both words are taken
 * off (*argc, *argv keep argv[0]) and it returns -1 (go on). Any other
 * command line: -1, unchanged. A helper of any protocol keeps this, so
 * that the plugin of another one gets an answer it can read. */
#define TE_PROTOCOL_EXIT 3
int te_protocol_args(int *argc, char ***argv);
/* "--protocol-say N" in the same place: the same, except that a helper of
 * another protocol says so in one line on its stderr instead of answering
 * on stdout: for the helpers nobody waits for (srun's hang report, the
 * container check), whose stderr is srun's or the task's. The line:
 * "node NODE: NAME in DIR speaks protocol P (trainenv V), the plugin
 * protocol CALLER: install ..." (te_protocol_refusal_line; NODE is
 * SLURMD_NODENAME or the host name, DIR the helper's own directory).
 * Returns its length, or -1 when it did not fit. */
int te_protocol_refusal_line(const char *name, const char *dir,
			     const char *node, const char *caller, char *buf,
			     size_t len);

/* What every protocol mismatch line ends with. */
#define TE_PROTOCOL_ADVICE                         \
	"install the same trainenv on every node " \
	"(plugin, helpers and libtrainenv)"

/* trainenv before the protocol check: the 0.1.0 release (main at
 * 6d8a4cc). Its trainenv-rdzv refuses "--protocol" as any unknown word
 * (on stdout, exit 0), its trainenv-preflight too (its usage on stderr,
 * exit 2), and its plugin passes no --protocol, its settings as options
 * instead.
 * TE_PROTOCOL_NONE stands for its protocol in te_versions_line. */
#define TE_PROTOCOL_NONE 0
#define TE_PROTOCOL_NONE_RELEASE "0.1.0"

/* The one line of two versions that met on a node: the helper what in
 * dir speaks hproto (trainenv hpkg), the plugin pproto (trainenv ppkg):
 * "trainenv-rdzv in DIR speaks protocol 1 (trainenv 0.9.0), the plugin
 * protocol 2 (trainenv 1.0.0): install ..."; a side of TE_PROTOCOL_NONE
 * reads "no protocol (trainenv 0.1.0, before the protocol check)",
 * whatever its pkg. Returns the length, or -1 when it was cut to len. */
int te_versions_line(char *buf, size_t len, const char *what, const char *dir,
		     int hproto, const char *hpkg, int pproto,
		     const char *ppkg);

/* The one line a mismatch on a node prints:
 * "trainenv-rdzv in /usr/libexec/trainenv speaks protocol 2 (trainenv
 * 1.0.0), the plugin protocol 1 (trainenv 0.9.0): install the same
 * trainenv on every node (plugin, helpers and libtrainenv)". Returns 0
 * when the protocols match (buf untouched), 1 when they differ. */
int te_protocol_mismatch_line(const char *what, const char *dir, int proto,
			      const char *pkg, char *buf, size_t len);

/* The plugin exports the protocol it speaks to every task
 * (TRAINENV_PROTOCOL=N); libtrainenv, loaded into the user's program,
 * reads only what the plugin set in the environment (the settings, the
 * barrier's deadline), so it compares at trainenv_init and warns, never
 * aborts the program. te_protocol_env_check: 1 with the warning line in
 * buf when val (the variable's value; NULL: unset, nothing to compare)
 * is not this build's protocol, else 0. The value is shown only when it
 * is a number of at most 7 digits. */
#define TE_PROTOCOL_ENV "TRAINENV_PROTOCOL"
int te_protocol_env_check(const char *val, char *buf, size_t len);

/* A helper at path exited with code, having written out[0..n): 1 with
 * the mismatch line above in line (naming the helper, its directory and
 * both protocols and versions) when it answered another protocol (exit
 * TE_PROTOCOL_EXIT and a readable answer) or is one from before the
 * protocol check (te_protocol_none_answer), else 0. */
int te_protocol_refused(const char *path, int code, const char *out, size_t n,
			char *line, size_t len);

/* The same for a helper's answer to "--protocol-version" alone (asked
 * after the helper was killed before it answered, or after
 * te_protocol_none_silent: exit 0 and "trainenv-protocol N V", or a
 * refusal of te_protocol_none_answer): 1 with the line when it names
 * another protocol, else 0. */
#define TE_PROTOCOL_ASK_MS 3000 /* deadline of that question */
int te_protocol_asked(const char *path, int code, const char *out, size_t n,
		      char *line, size_t len);

/* A trainenv-rdzv from before the protocol check given "--protocol N"
 * (or "--protocol-version") fails on that word as on any unknown one, in
 * its result's wire form with exit 0; a trainenv-preflight from then
 * prints its usage on stderr and exits TE_PROTOCOL_NONE_USAGE_EXIT. 1 when
 * code and out[0..n) are exactly one of those answers (the preflight's
 * with its stderr captured), else 0. */
#define TE_PROTOCOL_NONE_USAGE_EXIT 2
int te_protocol_none_answer(int code, const char *out, size_t n);

/* A helper's run with "--protocol N" first exited with code, having
 * written n bytes on stdout (its stderr not captured): 1 when that may be
 * a helper from before the protocol check refusing the word on its stderr
 * (0.1.0's trainenv-preflight: exit 2, nothing on stdout), so that its
 * protocol is worth asking (--protocol-version, stderr captured, then
 * te_protocol_asked); else 0. */
int te_protocol_none_silent(int code, size_t n);

/* A plugin from before the protocol check starts trainenv-rdzv as
 * "trainenv-rdzv --job J --step S --port-range LO-HI --port-start P
 * --barrier S --version-check W ...": 1 when argv is such a command line
 * (no --protocol word first, and --port-range among the words: only that
 * plugin passes it without --protocol first), else 0. */
int te_protocol_none_caller(int argc, char *const argv[]);

/* The line a helper started so says, its own protocol and version against
 * the plugin's TE_PROTOCOL_NONE: "node NODE: NAME in DIR speaks protocol
 * 2 (trainenv V), the plugin no protocol (trainenv 0.1.0, before the
 * protocol check): install ..." (NODE, NAME and DIR found as for
 * --protocol-say). Returns its length, or -1 when it did not fit. */
int te_protocol_none_caller_line(const char *argv0, char *buf, size_t len);

#endif
