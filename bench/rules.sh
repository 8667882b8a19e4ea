#!/usr/bin/env bash
# One request against 10,000 rules, whole process: askperm check with a
# 10,000-rule file against Codex's `execpolicy check` with the same prefix
# rules (Codex from .ci/tools, installed by .ci/run). Prints the median of
# N runs of each (default 21). The in-process figure is
# `go test -bench Opinions10000Rules ./internal/policy`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/askperm" .

# The same 10,000 prefix rules for both; the request matches one near the end.
for ((i = 0; i < 10000; i++)); do
	d=$(( i % 3 ))
	printf '[[rule]]\nname = "r%d"\ndecision = "%s"\n[[rule.when]]\npath = "$.argv"\nprefix = ["cmd%d", ["-a", "-b"]]\n' \
		"$i" "$(echo allow prompt deny | cut -d' ' -f$((d + 1)))" "$i"
	printf 'prefix_rule(pattern=["cmd%d", ["-a", "-b"]], decision="%s")\n' \
		"$i" "$(echo allow prompt forbidden | cut -d' ' -f$((d + 1)))" >&3
done >"$dir/rules.toml" 3>"$dir/rules.codex"
chmod 600 "$dir/rules.toml"
echo '{"tool":"shell","action":"exec","arguments":{"argv":["cmd9990","-a","x"]}}' >"$dir/req.json"

# median runs a command runs times and prints the median wall time in ms.
median() {
	local times=()
	for ((r = 0; r < runs; r++)); do
		local start end
		start=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		end=$(date +%s%N)
		times+=($(( (end - start) / 1000 )))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) { printf "%.1f ms\n", $1 / 1000 }'
}

printf 'askperm check, 10,000 rules: '
HOME="$dir" median "$dir/askperm" check --json --rules "$dir/rules.toml" --no-remember <"$dir/req.json"
codex=$(ls .ci/tools/node_modules/@openai/codex-linux-*/vendor/*/bin/codex 2>/dev/null | head -1 || true)
if [ -n "$codex" ]; then
	printf 'codex execpolicy check, same rules: '
	HOME="$dir" median "$codex" execpolicy check --rules "$dir/rules.codex" cmd9990 -a x
else
	echo "codex: not installed (.ci/run installs it); skipped"
fi
