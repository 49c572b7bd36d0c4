#!/usr/bin/env bash
# More real pure-Lua code under lua5.1 and luarun, beside ../../shared/lua-compat (whose shim and minibusted
# it uses): the test suites of 20 libraries from GitHub (sources.txt: name, repository, commit), luacheck over
# itself, ldoc over its tests, Debian's markdown.lua over every README/manual, lua_cliargs' examples.
#   usage: run.sh LUARUN_BIN SRC_DIR [COMPAT_DIR]
#     SRC_DIR holds one checkout per line of sources.txt, named by its first field (git clone + checkout),
#     and is filled with mdocs/ (the .md files below it, as docN.md) and cliargs/ (Debian's examples).
#   env: ONLY=re  rows whose name matches;  OUT=dir  outputs kept (NAME.lua51.out/.luarun.out/.err/.rc)
# Prints NAME lua51=RC luarun=RC same|DIFF per row (same: stdout equal after 0x... addresses and luaunit's
# seconds are masked, and the interpreter's name before an uncaught error's message, for rows that keep stderr). Needs lua5.1 and Debian's lua-markdown, lua-cliargs, lua-luassert, lua-penlight.
set -u
[ $# -ge 2 ] || { echo "usage: $0 LUARUN_BIN SRC_DIR [COMPAT_DIR]"; exit 2; }
H=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LUARUN=$(readlink -f "$1"); S=$(readlink -f "$2"); C=${3:-$H/../../../shared/lua-compat}; C=$(readlink -f "$C")
O=${OUT:-$(mktemp -d)}; mkdir -p "$O"; W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
MB=$C/minibusted.lua
if [ ! -d "$S/mdocs" ]; then
  mkdir -p "$S/mdocs"; i=0
  for f in $(find -L "$S" -maxdepth 2 \( -name '*.md' -o -name '*.rst' \) | sort); do i=$((i + 1)); cp "$f" "$S/mdocs/doc$i.md"; done
fi
[ -d "$S/cliargs" ] || { mkdir -p "$S/cliargs"; cp /usr/share/doc/lua-cliargs/examples/*.lua "$S/cliargs/"; }
same=0; rows=0
while read -r name dir extra args; do
  [ -n "$name" ] && [[ $name != \#* ]] || continue
  [[ -n ${ONLY:-} && ! $name =~ ${ONLY} ]] && continue
  dir=${dir#:}
  lp="$C/shim/?.lua;./?.lua;./?/init.lua;${extra//@/;};/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;;"
  lp=${lp//;-;/;}
  for i in lua51 luarun; do
    case $i in lua51) bin=lua5.1;; luarun) bin=$LUARUN;; esac
    rm -rf "$W/$name"; mkdir -p "$W/$name"; cp -a "$S/$dir/." "$W/$name/"
    a=${args//@MB@/$MB}; a=${a//@H@/$H}; a=${a//@BIN@/timeout -k 5 120 $bin}
    ( cd "$W/$name" && export LUA_PATH="$lp" && eval "$a" ) >"$O/$name.$i.out" 2>"$O/$name.$i.err" </dev/null
    echo $? >"$O/$name.$i.rc"
    sed -E -e 's/0x[0-9a-f]+/X/g' -e 's/in [0-9.]+ seconds/in N seconds/g' -e 's/^(lua5\.1|luarun): /LUA: /' "$O/$name.$i.out" >"$O/$name.$i.norm"
  done
  r1=$(cat "$O/$name.lua51.rc"); r2=$(cat "$O/$name.luarun.rc"); s=DIFF
  cmp -s "$O/$name.lua51.norm" "$O/$name.luarun.norm" && [ "$r1" = "$r2" ] && { s=same; same=$((same + 1)); }
  rows=$((rows + 1))
  echo "$name lua51=$r1 luarun=$r2 $s $(grep -aE 'RESULT:|Ran [0-9]+ tests' "$O/$name.lua51.out" | tail -1)"
done <"$H/rows"
echo "compat-more: $same of $rows rows the same"
