#!/usr/bin/env bash
# The test command: formatting, vet, every test (unit and end-to-end), then
# each fuzz target briefly. The dialog end-to-end tests need xvfb, zenity,
# yad and xdotool (.ci/run installs them) and are skipped without them.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
go test -count=1 -timeout 20m ./...

# A count, not a duration: a timed run can fail with "context deadline
# exceeded" when the clock ends during a minimisation.
fuzztime=${FUZZTIME:-60000x}
for target in decision:FuzzParse decision:FuzzParseDecision decision:FuzzEncode decision:FuzzCanonical decision:FuzzScopeCovers \
	decision:FuzzGlobGuard form:FuzzLine form:FuzzBlock form:FuzzLineInjective form:FuzzWidthAgrees \
	internal/policy:FuzzRulesFile internal/policy:FuzzPath; do
	pkg=${target%%:*} name=${target##*:}
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 100x "./$pkg"
done
echo "all tests passed"
