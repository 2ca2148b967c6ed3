/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-stacks: the gdb command that prints a thread's Python frames,
 * trainenv-py-bt. It is CPython's own py-bt where that can read the frames.
 * Python 3.12 and later, built with optimization as Debian builds it (13
 * in trixie, 3.13 and 3.14 in sid), leave the frame argument of
 * _PyEval_EvalFrameDefault "optimized out": py-bt then prints only
 * "(unable to read python frame information)". The frames are still in
 * the thread state's chain (_PyRuntime's interpreters, each thread's
 * current_frame, or cframe->current_frame before 3.13), which the command
 * walks with the interpreter's own gdb script (libpython's PyFramePtr), in
 * py-bt's format, so the report's parser reads both alike.
 *
 * The script is handed to gdb on its command line, hex-encoded (gdb's
 * "python" takes one line; no file to install or to trust). */
#include "config.h"

#include <string.h>

#include "stacks_int.h"

static const char pybt_script[] =
	"import gdb\n"
	"def _te_walk(lwp):\n"
	"    ptr = globals().get('PyFramePtr')\n"
	"    if ptr is None:\n"
	"        return None\n"
	"    ts = gdb.parse_and_eval('_PyRuntime.interpreters.head.threads.head')\n"
	"    while int(ts):\n"
	"        if int(ts['native_thread_id']) == lwp:\n"
	"            try:\n"
	"                f = ts['current_frame']\n"
	"            except gdb.error:\n"
	"                f = ts['cframe']['current_frame']\n"
	"            out = []\n"
	"            while int(f) and len(out) < 4096:\n"
	"                p = ptr(f)\n"
	"                if not p.is_shim():\n"
	"                    out.append('  File \"%s\", line %s, in %s\\n' % (\n"
	"                        p.filename(), p.current_line_num(),\n"
	"                        p.co_name.proxyval(set())))\n"
	"                f = f['previous']\n"
	"            return out\n"
	"        ts = ts['next']\n"
	"    return None\n"
	"class _TePyBt(gdb.Command):\n"
	"    def __init__(self):\n"
	"        super().__init__('trainenv-py-bt', gdb.COMMAND_STACK)\n"
	"    def invoke(self, arg, from_tty):\n"
	"        try:\n"
	"            out = gdb.execute('py-bt', to_string=True)\n"
	"        except gdb.error as e:\n"
	"            out = str(e) + '\\n'\n"
	"        if 'File \"' in out and 'unable to read python frame' not in out:\n"
	"            gdb.write(out)\n"
	"            return\n"
	"        try:\n"
	"            got = _te_walk(gdb.selected_thread().ptid[1])\n"
	"        except Exception:\n"
	"            got = None\n"
	"        if got:\n"
	"            gdb.write('Traceback (most recent call first):\\n' + ''.join(got))\n"
	"        else:\n"
	"            gdb.write(out)\n"
	"_TePyBt()\n";

int te_stacks_pybt_command(char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	static const char head[] = "python exec(bytes.fromhex('";
	static const char tail[] = "').decode())";
	size_t n = sizeof(pybt_script) - 1, i, o;

	if (len < sizeof(head) - 1 + 2 * n + sizeof(tail))
		return -1;
	memcpy(buf, head, sizeof(head) - 1);
	o = sizeof(head) - 1;
	for (i = 0; i < n; i++) {
		buf[o++] = hex[(unsigned char)pybt_script[i] >> 4];
		buf[o++] = hex[(unsigned char)pybt_script[i] & 15];
	}
	memcpy(buf + o, tail, sizeof(tail));
	return 0;
}
