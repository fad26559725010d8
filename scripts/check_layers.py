#!/usr/bin/env python3
"""Checks that the #include "..." lines of tilesim's sources obey the layers of scripts/layers.txt.

usage: check_layers.py [--root DIR] [--layers FILE]

Reads every C++ source under DIR (default: the repository holding this script; build folders,
hidden folders and anything named build or build-* are skipped) and reports, as
FILE:LINE: error: ..., each
  - include that points up a layer (into a folder of a higher rank) or sideways (into another
    folder of the same rank),
  - include that names no file of the tree (quoted includes resolve against the including
    file's folder, then against DIR, as the compiler's -I DIR does),
  - source that belongs to no folder of the table,
  - cycle between folders: the includes between the tree's folders, a folder and its own
    subfolders aside (cache/hash/ is part of cache/), must not form a cycle.
Exit status: 0 clean, 1 violations found, 2 bad usage or a bad table. Python 3 standard
library only. tests/scripts/test_check_layers.sh plants violations to show that it fails.
"""
import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".cxx", ".hh", ".ipp", ".inl", ".cu", ".cuh")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def die(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def read_layers(path):
    """[(folder, rank)] from the table; exits with status 2 on a malformed line."""
    layers = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            fields = text.split()
            if len(fields) != 2 or not fields[0].isdigit():
                die(f"{path}:{number}: error: expected 'RANK FOLDER', got {line.strip()!r}")
            folder = fields[1].strip("/")
            if any(folder == f for f, _ in layers):
                die(f"{path}:{number}: error: folder {folder} is listed twice")
            layers.append((folder, int(fields[0])))
    if not layers:
        die(f"{path}: error: no layers")
    return layers


def layer_of(rel, layers):
    """The (folder, rank) of the longest table folder holding `rel`, or None."""
    best = None
    for folder, rank in layers:
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(best[0]):
                best = (folder, rank)
    return best


def is_build_dir(path, name):
    return (name.startswith(".") or name == "build" or name.startswith("build-")
            or os.path.exists(os.path.join(path, "CMakeCache.txt")))


def sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not is_build_dir(os.path.join(dirpath, d), d))
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def resolve(root, rel, target):
    """The tree-relative path an #include "target" of file `rel` reads, or None."""
    for base in (os.path.dirname(rel), ""):
        candidate = os.path.normpath(os.path.join(base, target)).replace(os.sep, "/")
        if not candidate.startswith("../") and os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def is_within(folder, other):
    """True when `folder` is `other` or one of its subfolders."""
    return other == "" or folder == other or folder.startswith(other + "/")


def shortest_cycle(start, inside, edges):
    """A shortest cycle through `start` inside one strongly connected component."""
    previous, frontier = {start: None}, [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(edges.get(v, ())):
                if w == start:
                    path = []
                    while v is not None:
                        path.append(v)
                        v = previous[v]
                    return list(reversed(path)) + [start]
                if w in inside and w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"no cycle through {start}")


def find_cycles(edges):
    """A cycle of the folder graph per strongly connected component (Tarjan), as the list of
    folders of a shortest cycle through the component's first folder."""
    nodes = sorted(set(edges) | {b for targets in edges.values() for b in targets})
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(max(1000, 4 * len(nodes) + 100))
    for v in nodes:
        if v not in index:
            connect(v)
    return [shortest_cycle(c[0], set(c), edges) for c in components]


def check(root, layers_path):
    layers = read_layers(layers_path)
    errors = []
    edges, where = {}, {}
    for rel in sources(root):
        mine = layer_of(rel, layers)
        if mine is None:
            errors.append(f"{rel}: error: belongs to no folder of {os.path.relpath(layers_path, root)}")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            target = resolve(root, rel, m.group(1))
            if target is None:
                errors.append(f'{rel}:{number}: error: #include "{m.group(1)}" names no file of the tree')
                continue
            theirs = layer_of(target, layers)
            if theirs is None:
                errors.append(f'{rel}:{number}: error: #include "{m.group(1)}" reads {target}, '
                              f"which belongs to no folder of the layer table")
                continue
            if theirs[0] != mine[0]:
                if theirs[1] > mine[1]:
                    errors.append(f'{rel}:{number}: error: #include "{m.group(1)}" points up a layer: '
                                  f"{mine[0]} (rank {mine[1]}) may not include {theirs[0]} (rank {theirs[1]})")
                elif theirs[1] == mine[1]:
                    errors.append(f'{rel}:{number}: error: #include "{m.group(1)}" points sideways: '
                                  f"{mine[0]} and {theirs[0]} share rank {mine[1]} and stay independent")
            a, b = os.path.dirname(rel), os.path.dirname(target)
            if not is_within(a, b) and not is_within(b, a):
                edges.setdefault(a, set()).add(b)
                where.setdefault((a, b), f"{rel}:{number}")
    for cycle in find_cycles(edges):
        hops = ", ".join(f"{a} -> {b} ({where[(a, b)]})" for a, b in zip(cycle, cycle[1:]))
        errors.append(f"error: include cycle between folders {' -> '.join(cycle)}: {hops}")
    return errors


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(here), help="the tree to check")
    parser.add_argument("--layers", help="the layer table (default: ROOT/scripts/layers.txt)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    layers_path = os.path.abspath(args.layers or os.path.join(root, "scripts", "layers.txt"))
    if not os.path.isfile(layers_path):
        die(f"check_layers: error: no layer table at {layers_path}")
    errors = check(root, layers_path)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} violation(s) of {os.path.relpath(layers_path, root)}", file=sys.stderr)
        return 1
    print(f"check_layers: every include of {root} obeys {os.path.relpath(layers_path, root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
