# SPDX-License-Identifier: MIT
# The release path in a real interpreter (BENCHMARKS.md):
# 60,000 bytearrays of 300-2,300 bytes (glibc's malloc, above pymalloc's
# 512-byte limit), a third freed, and a threading.Lock, so that something
# is tracked while the blocks are freed.  Count with callgrind, ODEBUG=1
# and libodebug.so preloaded, against the plain run.
import threading

d = {}
for i in range(60000):
    d[i] = bytearray(300 + i % 2000)
    if i % 3 == 0:
        del d[i - 1 if i else 0]
lock = threading.Lock()
with lock:
    pass
