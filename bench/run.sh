#!/usr/bin/env bash
# askperm side by side with its peers, in one table: each figure the median
# of N runs (default 21) and a ratio against its peer measured in the same
# run. Builds askperm, the floor program (bench/floor), the floor linked
# with the libraries askperm must use (bench/libfloor) and the measuring
# program (bench/measure, which says what each section measures), installs
# gum (the terminal UI's peer) with go install, and prints the machine.
# The peers .ci/run installs (Xvfb, yad, zenity; Codex and the reference
# MCP filesystem server from npm) are skipped with a message when missing.
#
#   bench/run.sh                 # everything, N = 21
#   bench/run.sh -n 11 -only 1,2 # fewer runs; sections 1 and 2 only
#   bench/run.sh -quick          # a few runs: checks that every part works
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Both static, as the README installs askperm (CGO_ENABLED=0): a cgo build
# pays the dynamic loader on every start.
CGO_ENABLED=0 go build -o "$dir/askperm" .
CGO_ENABLED=0 go build -o "$dir/floor" ./bench/floor
CGO_ENABLED=0 go build -o "$dir/libfloor" ./bench/libfloor
go build -o "$dir/measure" ./bench/measure
gum=""
if GOBIN="$dir" go install github.com/charmbracelet/gum@v0.17.0; then
	gum="$dir/gum"
else
	echo "bench: gum did not install; the terminal UI is measured without its peer" >&2
fi

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
echo "machine: $(nproc) cores, ${cpu:-unknown CPU}, Linux $(uname -r), $(go version | cut -d' ' -f3)"
"$dir/measure" -askperm "$dir/askperm" -floor "$dir/floor" -libfloor "$dir/libfloor" -gum "$gum" -repo "$PWD" "$@"
echo "bench/run.sh: $((SECONDS - started)) s in all"
