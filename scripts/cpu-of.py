#!/usr/bin/env python3
"""Runs a command and prints the CPU seconds of everything it started, orphans included.

  python3 scripts/cpu-of.py npx vitest run test/db/contract

`time` counts only children that their parents waited for; a test process's shared postgres
(its watchdog outlives the fork) or a daemonized redis-server is reparented to init and never
counted. Here this process is a child subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux): orphans
are reparented to it and reaped, so their CPU is in the total. Prints one line on stderr.
"""
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("cpu-of: prctl(PR_SET_CHILD_SUBREAPER) failed (Linux only)")
began = time.time()
code = subprocess.Popen(sys.argv[1:]).wait()
# The orphans end after the command (a watchdog once its pipe closes): wait for every one.
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(
    f"cpu-of: {time.time() - began:.1f} s wall, {used.ru_utime:.2f} s user, "
    f"{used.ru_stime:.2f} s system, exit {code}",
    file=sys.stderr,
)
sys.exit(code)
