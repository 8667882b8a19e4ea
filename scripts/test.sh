#!/usr/bin/env bash
# The test command: formatting, vet, every test (unit and end-to-end), then
# each fuzz target briefly. The dialog end-to-end tests need xvfb, zenity,
# yad and xdotool, and the tests against peers their npm packages (.ci/run
# installs both); without them those tests are skipped, and the summary at
# the end of the tests says which and why.
#
# Progress: one line per package as it finishes, by gotestsum (pinned in
# go.mod as a tool); then the skipped tests with their reasons, the output
# of any that failed, and the count. Each fuzz target is one line unless it
# fails.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt, go vet"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...

echo "== tests, unit and end-to-end: one line per package"
go tool gotestsum --format pkgname --format-hide-empty-pkg -- -count=1 -timeout 20m ./...

# A count, not a duration: a timed run can fail with "context deadline
# exceeded" when the clock ends during a minimisation.
fuzztime=${FUZZTIME:-60000x}
echo "== fuzz targets, $fuzztime inputs each"
for target in decision:FuzzParse decision:FuzzParseDecision decision:FuzzEncode decision:FuzzCanonical decision:FuzzScopeCovers \
	decision:FuzzCanonicalNumber decision:FuzzUnquote \
	decision:FuzzGlobGuard form:FuzzLine form:FuzzBlock form:FuzzLineInjective form:FuzzWidthAgrees form:FuzzCommandItem \
	internal/hook:FuzzEvent internal/policy:FuzzRulesFile internal/policy:FuzzPath internal/policy:FuzzPerCommandNeverAllowsOpaque internal/policy:FuzzDecodeCached \
	internal/shell:FuzzShellDeny internal/shell:FuzzShellSplit internal/shell:FuzzGlobCovers \
	internal/team:FuzzVerify internal/team:FuzzUserPublicKey internal/team:FuzzReadRule internal/team:FuzzCheckHost \
	internal/secretpath:FuzzIs internal/reviewer/model:FuzzParseVerdict; do
	pkg=${target%%:*} name=${target##*:}
	start=$SECONDS
	if ! out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 100x "./$pkg" 2>&1); then
		printf '%s\n' "$out"
		echo "FAIL  $pkg $name" >&2
		exit 1
	fi
	echo "ok    $pkg $name ($((SECONDS - start))s)"
done
echo "all tests passed"
