/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-stacks: the gdb commands the hang report runs in gdb's Python,
 * given to gdb before it attaches. Their point is to keep gdb's work within
 * its bound on a process as big as a training job's (hundreds of libraries,
 * millions of symbols, tens of threads: issue 33; docs/usage.md, "Hang
 * report", has the figures):
 *
 * - symbols only of the libraries on the threads' stacks: automatic loading
 *   is turned off before gdb attaches (it read every library's symbols, 8-10
 *   s of a 15 s gdb on a test process with 200 libraries of 10,000 symbols);
 *   trainenv-load-stack-libs loads libc's, libpthread's, libpython's and the
 *   loader's, then, until no new one shows up (8 rounds at most), those of
 *   every library a thread's frames are in (each load lets gdb unwind one
 *   library further up);
 * - py-bt only on the threads with a Python frame (the interpreters' thread
 *   states with a current frame: every thread that holds the GIL or runs
 *   Python; a native thread of CUDA, NCCL or OpenMP has none):
 *   trainenv-py-bt-threads, all threads when the thread states cannot be
 *   read; the thread holding the GIL first, named on a line of its own
 *   ("trainenv-gil-holder LWP N"), so that the report's 16-thread bound
 *   (and gdb's deadline) never cut it (te_stack_parse_gdb keeps it first);
 * - trainenv-py-bt, per thread: CPython's own py-bt where that can read the
 *   frames. Python 3.12 and later, built with optimization as Debian builds
 *   it (3.13 in trixie, 3.13 and 3.14 in sid), leave the frame argument of
 *   _PyEval_EvalFrameDefault "optimized out": py-bt then prints only
 *   "(unable to read python frame information)". The frames are still in
 *   the thread state's chain (_PyRuntime's interpreters, each thread's
 *   current_frame, or cframe->current_frame before 3.13), which the command
 *   walks with the interpreter's own gdb script (libpython's PyFramePtr), in
 *   py-bt's format, so the report's parser reads both alike.
 *
 * A gdb without Python refuses the line: it then reads every library's
 * symbols as by default, and says the trainenv commands are undefined (the
 * report keeps the native frames of "thread apply all bt").
 * The script is handed to gdb on its command line, hex-encoded (gdb's
 * "python" takes one line; no file to install or to trust). */
#include "config.h"

#include <string.h>

#include "stacks_int.h"

static const char gdb_script[] =
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
	"def _te_walk_first():\n"
	"    try:\n"
	"        return int(gdb.parse_and_eval('Py_Version')) >= 0x030c0000\n"
	"    except gdb.error:\n"
	"        return False\n"
	"class _TePyBt(gdb.Command):\n"
	"    def __init__(self):\n"
	"        super().__init__('trainenv-py-bt', gdb.COMMAND_STACK)\n"
	"        self.walk_first = None\n"
	"    def invoke(self, arg, from_tty):\n"
	"        if self.walk_first is None:\n"
	"            self.walk_first = _te_walk_first()\n"
	"        got, out = None, ''\n"
	"        if self.walk_first:\n"
	"            try:\n"
	"                got = _te_walk(gdb.selected_thread().ptid[1])\n"
	"            except Exception:\n"
	"                got = None\n"
	"        if not got:\n"
	"            try:\n"
	"                out = gdb.execute('py-bt', to_string=True)\n"
	"            except gdb.error as e:\n"
	"                out = str(e) + '\\n'\n"
	"            if 'File \"' in out and 'unable to read python frame' not in out:\n"
	"                gdb.write(out)\n"
	"                return\n"
	"        if not got and not self.walk_first:\n"
	"            try:\n"
	"                got = _te_walk(gdb.selected_thread().ptid[1])\n"
	"            except Exception:\n"
	"                got = None\n"
	"        if got:\n"
	"            gdb.write('Traceback (most recent call first):\\n' + ''.join(got))\n"
	"        else:\n"
	"            gdb.write(out)\n"
	"_TePyBt()\n"
	"def _te_py_lwps():\n"
	"    lwps = set()\n"
	"    interp = gdb.parse_and_eval('_PyRuntime.interpreters.head')\n"
	"    while int(interp):\n"
	"        ts = interp['threads']['head']\n"
	"        while int(ts):\n"
	"            f = None\n"
	"            for path in (('current_frame',), ('cframe', 'current_frame'), ('frame',)):\n"
	"                try:\n"
	"                    v = ts\n"
	"                    for k in path:\n"
	"                        v = v[k]\n"
	"                    f = v\n"
	"                    break\n"
	"                except gdb.error:\n"
	"                    continue\n"
	"            if f is not None and int(f):\n"
	"                lwps.add(int(ts['native_thread_id']))\n"
	"            ts = ts['next']\n"
	"        interp = interp['next']\n"
	"    return lwps\n"
	"def _te_plain(v):\n"
	"    if v.type.strip_typedefs().code == gdb.TYPE_CODE_STRUCT:\n"
	"        return v['_value']\n"
	"    return v\n"
	"def _te_gil_lwp():\n"
	"    for expr in ('_PyRuntime.interpreters.main->ceval.gil',\n"
	"                 '&_PyRuntime.ceval.gil'):\n"
	"        try:\n"
	"            gil = gdb.parse_and_eval(expr).dereference()\n"
	"            locked = int(_te_plain(gil['locked']))\n"
	"            holder = _te_plain(gil['last_holder'])\n"
	"        except gdb.error:\n"
	"            continue\n"
	"        ts = holder.cast(gdb.lookup_type('PyThreadState').pointer())\n"
	"        if not locked or not int(ts):\n"
	"            return None\n"
	"        try:\n"
	"            return int(ts['native_thread_id'])\n"
	"        except gdb.error:\n"
	"            pass\n"
	"        tid = int(ts['thread_id'])\n"
	"        for th in gdb.selected_inferior().threads():\n"
	"            if int.from_bytes(th.handle(), 'little') == tid:\n"
	"                return th.ptid[1]\n"
	"        return None\n"
	"    return None\n"
	"class _TePyBtThreads(gdb.Command):\n"
	"    def __init__(self):\n"
	"        super().__init__('trainenv-py-bt-threads', gdb.COMMAND_STACK)\n"
	"    def invoke(self, arg, from_tty):\n"
	"        try:\n"
	"            gil = _te_gil_lwp()\n"
	"        except Exception:\n"
	"            gil = None\n"
	"        if gil:\n"
	"            gdb.write('trainenv-gil-holder LWP %d\\n' % gil)\n"
	"        try:\n"
	"            lwps = _te_py_lwps()\n"
	"        except Exception:\n"
	"            gdb.execute('thread apply all trainenv-py-bt')\n"
	"            return\n"
	"        threads = gdb.selected_inferior().threads()\n"
	"        nums = sorted((t.num for t in threads if t.ptid[1] in lwps),\n"
	"                      reverse=True)\n"
	"        first = [t.num for t in threads if t.ptid[1] == gil and t.num in nums]\n"
	"        nums = first + [n for n in nums if n not in first]\n"
	"        if nums:\n"
	"            gdb.execute('thread apply %s trainenv-py-bt' % ' '.join(map(str, nums)))\n"
	"_TePyBtThreads()\n"
	"def _te_bre(path):\n"
	"    return '^' + ''.join('\\\\' + c if c in '.*[]^$\\\\' else c for c in path) + '$'\n"
	"def _te_stack_libs():\n"
	"    want = set()\n"
	"    for th in gdb.selected_inferior().threads():\n"
	"        th.switch()\n"
	"        try:\n"
	"            f = gdb.newest_frame()\n"
	"        except gdb.error:\n"
	"            continue\n"
	"        n = 0\n"
	"        while f is not None and n < 256:\n"
	"            name = gdb.solib_name(f.pc())\n"
	"            if name:\n"
	"                want.add(name)\n"
	"            try:\n"
	"                f = f.older()\n"
	"            except gdb.error:\n"
	"                break\n"
	"            n += 1\n"
	"    return want\n"
	"class _TeLoadStackLibs(gdb.Command):\n"
	"    def __init__(self):\n"
	"        super().__init__('trainenv-load-stack-libs', gdb.COMMAND_FILES)\n"
	"    def invoke(self, arg, from_tty):\n"
	"        cur = gdb.selected_thread()\n"
	"        for rx in ('/libc\\\\.so', '/libpthread', '/libpython', '/ld-linux'):\n"
	"            gdb.execute('sharedlibrary ' + rx, to_string=True)\n"
	"        done = set()\n"
	"        for _ in range(8):\n"
	"            new = _te_stack_libs() - done\n"
	"            if not new:\n"
	"                break\n"
	"            for name in sorted(new):\n"
	"                gdb.execute('sharedlibrary ' + _te_bre(name), to_string=True)\n"
	"            done |= new\n"
	"        if cur is not None:\n"
	"            cur.switch()\n"
	"_TeLoadStackLibs()\n"
	"gdb.execute('set auto-solib-add off')\n";

int te_stacks_gdb_command(char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	static const char head[] = "python exec(bytes.fromhex('";
	static const char tail[] = "').decode())";
	size_t n = sizeof(gdb_script) - 1, i, o;

	if (len < sizeof(head) - 1 + 2 * n + sizeof(tail))
		return -1;
	memcpy(buf, head, sizeof(head) - 1);
	o = sizeof(head) - 1;
	for (i = 0; i < n; i++) {
		buf[o++] = hex[(unsigned char)gdb_script[i] >> 4];
		buf[o++] = hex[(unsigned char)gdb_script[i] & 15];
	}
	memcpy(buf + o, tail, sizeof(tail));
	return 0;
}
