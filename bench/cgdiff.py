#!/usr/bin/env python3
# cgdiff.py: per-function instructions per op between two instrcount.sh
# runs (INSTRCOUNT_DIR=A and =B), from their noaccounting callgrind files
# (cg.off.N1.out, cg.off.N2.out), by the same difference method. Whole-run
# totals move by ±1 % between runs (lua.(*LTable).rawGetStringH above all:
# lua's string hash is unseeded, but SetFuncs fills the library tables in
# Go map order, which changes each run, and with it the collision chains);
# the functions a change touches show its effect alone.
#
# Usage: bench/cgdiff.py DIR_A DIR_B [N1 N2]   (defaults 40000 80000)
# Prints the totals, then the functions that moved most, in both
# directions: delta, A, B, name (recursion levels folded together).
import collections
import re
import subprocess
import sys


def load(path):
    out = subprocess.run(['callgrind_annotate', '--auto=no', '--threshold=100', path],
                         capture_output=True, text=True, check=True).stdout
    d = collections.Counter()
    for line in out.splitlines():
        m = re.match(r'\s*([\d,]+)\s+\([^)]*\)\s+(\S+)', line)
        if m and 'PROGRAM' not in line:
            d[re.sub(r"'\d+", "", m.group(2).split(':', 1)[-1])] += int(m.group(1).replace(',', ''))
    return d


def per_op(dir_, n1, n2):
    hi, lo = load(f'{dir_}/cg.off.{n2}.out'), load(f'{dir_}/cg.off.{n1}.out')
    return {k: (hi[k] - lo.get(k, 0)) / (n2 - n1) for k in set(hi) | set(lo)}


def main():
    a_dir, b_dir = sys.argv[1], sys.argv[2]
    n1, n2 = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (40000, 80000)
    a, b = per_op(a_dir, n1, n2), per_op(b_dir, n1, n2)
    print('total A %.0f B %.0f' % (sum(a.values()), sum(b.values())))
    diffs = sorted((b.get(k, 0) - a.get(k, 0), k) for k in set(a) | set(b))
    for dv, k in diffs[:15] + diffs[-15:]:
        if abs(dv) >= 1:
            print('%+8.1f %8.1f %8.1f %s' % (dv, a.get(k, 0), b.get(k, 0), k[:110]))


if __name__ == '__main__':
    main()
