#!/usr/bin/env python3
"""Write the seed corpus of fuzz-ops (corpus/ops): a few short operation
sequences in the harness's input format (one layout byte, then 8 bytes per
operation: kind, slot, descr (bit 7 set: descr % 10, else the slot's own),
arg, x (le16), y (le16); see op_decode in tests/model/diff.c)."""
import os
import random
import struct

OPS = ["init", "activate", "deactivate", "destroy", "free", "assert_init",
       "active_state", "check_range", "free_block", "realloc_block"]


def op(kind, slot, descr=None, arg=0, x=0, y=0):
    d = 0 if descr is None else 0x80 | descr
    return struct.pack("<BBBBHH", OPS.index(kind), slot, d, arg, x, y)


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "ops")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(1)
    seeds = {
        # one object through its whole life
        "lifecycle": [op("init", 0), op("activate", 0), op("deactivate", 0),
                      op("destroy", 0), op("free", 0)],
        # every misuse of the state table on one object
        "misuse": [op("init", 1), op("activate", 1), op("init", 1), op("activate", 1),
                   op("destroy", 1), op("free", 1), op("active_state", 1, arg=1),
                   op("destroy", 1), op("activate", 1), op("deactivate", 1)],
        # active state: set, refuse deactivate, back to 0
        "astate": [op("init", 2), op("activate", 2), op("active_state", 2, arg=4),
                   op("deactivate", 2), op("active_state", 2, arg=1),
                   op("deactivate", 2)],
        # static objects (slots 24..33), descriptors with and without is_static_object
        "static": [op("activate", 24, 1), op("assert_init", 26, 5), op("activate", 28, 6),
                   op("activate", 30, 7), op("activate", 25, 4), op("assert_init", 27, 8)],
        # fixups that re-enter ten levels deep
        "deep": [op("init", 3, 7), op("activate", 3, 7), op("init", 3, 7),
                 op("activate", 3, 7), op("destroy", 3, 7), op("free", 3, 7),
                 op("check_range", 0, arg=6, x=0, y=4096)],
        # released memory: a range, a free and a realloc of blocks with active objects
        "release": [op("init", 40), op("activate", 40), op("init", 41), op("activate", 41),
                    op("free_block", 0, y=100), op("init", 42), op("activate", 42),
                    op("realloc_block", 1, y=3000), op("check_range", 4, arg=15),
                    op("check_range", 1, arg=14, x=77)],
    }
    for i in range(8):
        seq = [struct.pack("<BBBBHH", rng.randrange(10), rng.randrange(256),
                           rng.randrange(256), rng.randrange(256),
                           rng.randrange(65536), rng.randrange(65536))
               for _ in range(rng.randrange(16, 200))]
        seeds["random-%d" % i] = seq
    for name, seq in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([len(name) % 256]) + b"".join(seq))


if __name__ == "__main__":
    main()
