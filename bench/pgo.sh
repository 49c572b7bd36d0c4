#!/bin/bash
# pgo.sh: makes the profile the luarun command and the harness are built
# with. Go's profile-guided optimisation takes a CPU profile named
# default.pgo from the main package's directory (go build, go run and go
# install use it by default) and inlines and devirtualises where the
# profile says the time goes.
#
# The profile is the whole harness at its quick sizes under -cpuprofile:
# messages, spawns, CPU-bound Lua, the library, serving, embedding, the
# baselines beside them (the bare gopher-lua floors are built with it
# too, so the ratios compare like with like). It is written to
# default.pgo (the luarun command); bench/default.pgo (the harness) is a
# link to it.
# Run it again after a change to the hot paths: a stale profile still
# builds correct code, it only optimises less. An embedding program gets
# the same code with go build -pgo=<this file> (BENCHMARKS.md says what
# it is worth).
#
# Usage: bench/pgo.sh   (about 90 s on 2 cores; needs what the harness
# needs for the rows it should profile: erl, wrk, nats-server...)
set -euo pipefail
cd "$(dirname "$0")/.."
prof=$(mktemp)
trap 'rm -f "$prof"' EXIT
go run ./bench -quick -cpuprofile "$prof" > /dev/null
cp "$prof" default.pgo
ls -l default.pgo bench/default.pgo
