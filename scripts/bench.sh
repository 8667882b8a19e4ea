#!/usr/bin/env bash
# The benchmarks behind the README's figures: request parsing and digest
# (1 KiB, 1 MiB), rendering 1 MiB of untrusted text, and the terminal UI's
# first frame on a real pseudo-terminal (spawn to first complete frame).
# Pass -count N to repeat for benchstat.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'Parse1KiB|Parse1MiB' -benchmem "$@" ./decision
go test -run '^$' -bench 'Block1MiB' -benchmem "$@" ./form
go test -run '^$' -bench 'TUIFirstFrame' -benchtime 20x "$@" ./e2e
