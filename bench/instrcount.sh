#!/bin/bash
# instrcount.sh: instructions per op of luaproc Go benchmarks, with and
# without the memory accounting (the noaccounting build tag: lua and
# luaproc accounting_off.go), counted by callgrind, so that a loaded
# machine does not move them. The difference method: each benchmark runs
# at -test.benchtime N1x and N2x, and (Ir(N2) - Ir(N1)) / (N2 - N1) is its
# instructions per op, setup and teardown cancelled. GC is off
# (GOGC=off) and async preemption too, for repeatable counts; what is
# left of the noise is time-based runtime work (timers, the heap
# watchdog's samples), about ±1 % here: run REP > 1 to see it.
#
# Usage: [PKG=./serve] [GOGC=100] bench/instrcount.sh BENCH N1 N2 [REP]
#   e.g. bench/instrcount.sh '^BenchmarkMessageHop$/^luarun$' 40000 80000 3
#   PKG=./serve GOGC=100 bench/instrcount.sh 'ServeHello/luarun' 2000 6000
# PKG is the package whose benchmarks run (./luaproc by default); GOGC
# set counts the garbage collector's work too (an allocation's real cost:
# the serving benchmarks, where GC is a tenth of a request).
# Prints one line per variant and repetition: instructions/op, then the
# benchmark's own line (B/op, allocs/op). Needs valgrind.
set -euo pipefail
bench=$1 n1=$2 n2=$3 rep=${4:-1}
dir=${INSTRCOUNT_DIR:-$(mktemp -d)}
cd "$(dirname "$0")/.."
pkg=${PKG:-./luaproc} gogc=${GOGC:-off}
go test -c -o "$dir/on.test" "$pkg"
go test -c -tags noaccounting -o "$dir/off.test" "$pkg"
ir() { # ir VARIANT N: total instructions of one run; its benchmark line on fd 3
	local out
	out=$(GODEBUG=asyncpreemptoff=1 GOGC=$gogc valgrind --tool=callgrind \
		--callgrind-out-file="$dir/cg.$1.$2.out" "$dir/$1.test" -test.run '^$' \
		-test.bench "$bench" -test.benchtime "$2x" -test.cpu 1 -test.benchmem 2>&1)
	echo "$out" | grep '^Benchmark' | tr -s ' \t' ' ' >&3
	echo "$out" | grep -o 'Collected : [0-9]*' | awk '{print $3}'
}
for r in $(seq 1 "$rep"); do
	for v in on off; do
		a=$(ir "$v" "$n1" 3>/dev/null)
		b=$(ir "$v" "$n2" 3>"$dir/line")
		echo "$v rep $r: $(((b - a) / (n2 - n1))) instructions/op | $(cat "$dir/line")"
	done
done
echo "callgrind files in $dir (callgrind_annotate --auto=no cg.on.$n2.out)"
