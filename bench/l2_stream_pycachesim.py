#!/usr/bin/env python3
"""Replays a tilesim L2 request stream (docs/trace-format.md) through pycachesim's C backend
and prints its statistics beside tilesim's hit counts on the same stream.

    python3 bench/l2_stream_pycachesim.py BUILD_DIR

Writes the stream of a 2048^3 GEMM with the L2 as pycachesim models it (one partition, modulo
set index, LRU, no request coalescer), and prints tilesim's reported hits and time beside
pycachesim's statistics and replay time. Not run here: pycachesim could not be installed. Skips with a
message when pycachesim (`import cachesim`) is not installed: Debian does not package it.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OVERRIDES = "arch_overrides={l2: {partitions: 1, hash: modulo, replacement: lru, request_coalescing_ns: 0, far_copy: false}}"


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    try:
        from cachesim import Cache, CacheSimulator, MainMemory
    except ImportError:
        print("bench: pycachesim (import cachesim) is not installed; skipping the stream replay comparison")
        return 0
    sim = os.path.join(build, "tilesim")
    exp = os.path.join(ROOT, "experiments", "bench_gemm_8192.yaml")
    sets = ["--set", "workload.m=2048", "--set", "workload.n=2048", "--set", "workload.k=2048", "--set", OVERRIDES]
    with tempfile.TemporaryDirectory() as tmp:
        stream, out = os.path.join(tmp, "s.l2s"), os.path.join(tmp, "r.json")
        subprocess.run([sim, "trace", exp, "--l2-stream", stream, *sets], check=True, stdout=subprocess.DEVNULL)
        t0 = time.perf_counter()
        subprocess.run([sim, "run", exp, "-q", "--json", out, *sets], check=True)
        t_tilesim = time.perf_counter() - t0
        l2 = json.load(open(out))["kernels"][0]["l2"]
        with open(stream, "rb") as f:
            magic, version, line, sector, parts = struct.unpack("<8sIIII", f.read(24))
            data = f.read()
        size = 50 * 1024 * 1024  # the h100 preset's L2
        ways = 16
        cache = Cache("L2", size // line // ways, ways, line, "LRU", write_allocate=True, write_back=True)
        mem = MainMemory()
        mem.load_to(cache)
        mem.store_from(cache)
        cs = CacheSimulator(cache, mem)
        t0 = time.perf_counter()
        pos = 0
        while pos < len(data):
            tag = data[pos]
            if tag == 2:
                pos += 10
                continue
            flags, _part, _sm, _k, _t, start, pitch, row_bytes, rows = struct.unpack_from("<BHIIQQQQI", data, pos + 1)
            pos += 48
            for r in range(rows):
                (cs.store if flags & 1 else cs.load)(start + r * pitch, length=row_bytes)
        t_py = time.perf_counter() - t0
        st = cache.stats()
        print(f"tilesim: read sectors {l2['read_sectors']}, hit {l2['read_hit_sectors']} ({t_tilesim:.2f} s, whole run)")
        print(f"pycachesim: {st}  ({t_py:.2f} s, replay only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
