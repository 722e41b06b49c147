#!/usr/bin/env python3
"""chain-share.py - how many objects share a chain with an object, by the
hash alone (lib/table/tracker.h's odebug_chunk_hash(), lib/table/table.c's shuffle), for 1 M objects at P per
4 KiB page in consecutive chunks: the sum over chains of length^2 / objects.
Objects at a stride of 2^k cells use the chains the shuffle's low bits pick,
so the chunks of one bucket collide when those bits agree.

    bench/chain-share.py        # raw class as the shuffle, and lib/table/table.c's
"""
from collections import Counter

MASK, GOLDEN, HASH_BITS = (1 << 64) - 1, 0x61C8864680B583EB, 13
REGION_BITS, KEY_SHIFT = 6, 64 - HASH_BITS - 8     # lib/table/tracker.h


def region_hash(chunk):
    """odebug_chunk_hash(): the region's golden-ratio hash, the chunk's place
    in its region xored into the bucket index's low bits."""
    place = chunk & ((1 << REGION_BITS) - 1)
    return (((chunk >> REGION_BITS) * GOLDEN) & MASK) ^ (place << (64 - HASH_BITS))


def share(per_page, shuffle):
    chunks, chains = 1000000 // per_page, Counter()
    for i in range(chunks):
        h = region_hash(0x7f0000000 + i)
        key = (h >> KEY_SHIFT) & 127
        for c in range(0, 128, 128 // per_page):   # the objects' cells
            chains[(h >> (64 - HASH_BITS), c ^ shuffle(key))] += 1
    return sum(v * v for v in chains.values()) / (chunks * per_page)


def raw(key):
    return key


def mixed(key):
    return key ^ (key >> 2 & 126) ^ (key >> 4 & 126)


for pp in (1, 4, 8, 16):
    print(f'{pp} per page: raw class {share(pp, raw):.2f}, lib/table/table.c {share(pp, mixed):.2f}')
