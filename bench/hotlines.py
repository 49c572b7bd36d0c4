#!/usr/bin/env python3
# hotlines.py: the code a benchmark's every op runs, as instruction cache
# lines, from a callgrind profile taken with --dump-instr=yes. It counts
# the 64-byte lines holding an instruction run at least THRESHOLD times
# an op (0.45: what one of two alternating processes runs each hop), how
# they fall on the sets of a 32 KiB, 8-way L1i (64 sets, the set is bits
# 6-11 of the address), and which functions hold them. A set holding
# more hot lines than it has ways misses on each of them every op, in a
# loop that cycles through them (LRU): callgrind's cache simulation
# (--cache-sim=yes, I1mr) counts those misses; this says where they come
# from. The counts are deterministic (GC off, one CPU: see instrcount.sh).
#
# Usage:
#   GODEBUG=asyncpreemptoff=1 GOGC=off valgrind --tool=callgrind --dump-instr=yes \
#     --callgrind-out-file=cg.out ./luaproc.test -test.run '^$' \
#     -test.bench '^BenchmarkMessageHop$/^luarun$' -test.benchtime 40000x -test.cpu 1
#   bench/hotlines.py cg.out 40000 [THRESHOLD]
import collections
import re
import sys

LINE, SETS, WAYS = 64, 64, 8


def parse(path):
    """Instructions executed per address, and the function of each."""
    cost, fn_of, names = collections.Counter(), {}, {}
    addr, fn, after_call = 0, None, False
    for line in open(path):
        if line.startswith(('fn=', 'cfn=')):
            m = re.match(r'c?fn=\((\d+)\)(?: (.*))?', line.strip())
            if m.group(2):
                names[m.group(1)] = m.group(2)
            if line.startswith('fn='):
                fn = names.get(m.group(1))
            continue
        if line.startswith('calls='):
            after_call = True  # the next cost line is the call's inclusive cost
            continue
        if not line or line[0] not in '0123456789+-*':
            after_call = False
            continue
        tok = line.split()
        a = tok[0]
        if a.startswith('0x'):
            addr = int(a, 16)
        elif a[0] in '+-':
            addr += int(a)
        if after_call:
            after_call = False
            continue
        if len(tok) >= 3:
            cost[addr] += int(tok[2])
            fn_of[addr] = fn
    return cost, fn_of


def main():
    path, ops = sys.argv[1], int(sys.argv[2])
    threshold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.45
    cost, fn_of = parse(path)
    hot = [a for a, n in cost.items() if n >= ops * threshold]
    lines = collections.defaultdict(set)
    for a in hot:
        name = re.sub(r"'\d+", '', fn_of[a] or '?').replace('github.com/luarun/luarun/', '')
        lines[a // LINE].add(name)
    sets = collections.Counter(l % SETS for l in lines)
    over = sorted((n for n in sets.values() if n > WAYS), reverse=True)
    print(f'{len(hot)} hot instructions on {len(lines)} lines ({len(lines) * LINE} bytes); '
          f'{len(over)} of {SETS} sets over {WAYS} ways {over}')
    per_fn = collections.Counter()
    for names in lines.values():
        for name in names:
            per_fn[name] += 1 / len(names)
    for name, n in per_fn.most_common(40):
        print(f'{n:5.1f} {name}')


if __name__ == '__main__':
    main()
