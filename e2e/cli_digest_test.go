package e2e

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// canonicalizeJS is the RFC 8785 authors' own implementation, the npm
// package canonicalize (.ci/run installs it into .ci/tools).
func canonicalizeJS(t *testing.T) (node, lib string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node: the digest's test against the JCS authors' canonicalize (npm) is skipped")
	}
	lib, err = filepath.Abs("../.ci/tools/node_modules/canonicalize/lib/canonicalize.js")
	if err == nil {
		_, err = os.Stat(lib)
	}
	if err != nil {
		t.Skip("canonicalize is not installed (.ci/run installs it from npm): the digest's test against the JCS authors' implementation is skipped")
	}
	return node, lib
}

// jsDigests are the SHA-256 digests of canonicalize(JSON.parse(r)), by
// node's own crypto, one per request.
func jsDigests(t *testing.T, node, lib string, requests []string) []string {
	t.Helper()
	script := `import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
const { default: canonicalize } = await import(pathToFileURL(process.argv[1]).href);
let input = "";
for await (const chunk of process.stdin) input += chunk;
for (const r of JSON.parse(input)) {
	console.log(createHash("sha256").update(canonicalize(JSON.parse(r)), "utf8").digest("hex"));
}`
	in, err := json.Marshal(requests)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--input-type=module", "-e", script, lib)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(requests) {
		t.Fatalf("node gave %d digests for %d requests", len(lines), len(requests))
	}
	return lines
}

// digestRequests are requests whose canonical forms exercise JCS: number
// forms, escapes, non-ASCII text, member order by UTF-16 code units,
// whitespace; every one a request askperm accepts.
func digestRequests(t *testing.T) []string {
	var reqs []string
	files, _ := filepath.Glob("../testdata/requests/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata requests")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, string(b))
	}
	reqs = append(reqs,
		`{"action":"x","arguments":{"n":1e21,"m":0.1,"z":-0,"big":1E+300,"tiny":5e-324,"i":100,"f":1.50,"neg":-12.5e-3,"e":1e-7,"g":123456789012345680000.0,"h":9007199254740991,"k":0.000001}}`,
		`{"action":"x","reason":"caf\u00e9 \"quoted\" \\ back\tslash \/ \u2028\u2029 \ud83d\ude00 😀 é \u0001\u001f\u007f","arguments":{"\u00e9":1,"e\u0301":2,"z":3,"a":4,"😀":5,"\u0080":6,"\ufb01":7,"":8,"A":9}}`,
		"{\n  \"action\" : \"x\" ,\r\n\t\"arguments\" : { \"a\" : [ ] , \"b\" : { } , \"c\" : [ null , true , false , [ [ ] ] ] }\n}\n",
		`{"id":"n\u0001ul","action":"x","arguments":{"deep":[[[[[[{"k":[1,2.5,-3e-2]}]]]]]]}}`,
	)
	rng := rand.New(rand.NewPCG(8785, 1))
	for range 25 {
		var b strings.Builder
		b.WriteString(`{"action":"x","id":`)
		writeString(&b, randString(rng))
		b.WriteString(`,"arguments":`)
		writeValue(&b, rng, 3)
		b.WriteString("}")
		reqs = append(reqs, b.String())
	}
	return reqs
}

// randString is a string of letters, escapes, non-ASCII and astral runes
// (no NUL: askperm refuses it).
func randString(rng *rand.Rand) string {
	pool := []rune("aZ09 \"\\/\b\f\n\r\t\x01\x1f\x7fé€\u2028\ufb01\U0001F600\U00010000\uffff")
	var b strings.Builder
	for range rng.IntN(8) {
		b.WriteRune(pool[rng.IntN(len(pool))])
	}
	return b.String()
}

func writeString(b *strings.Builder, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}

// writeValue writes a random JSON value, its members in random order and
// its numbers in random spellings.
func writeValue(b *strings.Builder, rng *rand.Rand, depth int) {
	switch k := rng.IntN(7); {
	case depth == 0 || k == 0:
		writeNumber(b, rng)
	case k == 1:
		writeString(b, randString(rng))
	case k == 2:
		b.WriteString([]string{"null", "true", "false"}[rng.IntN(3)])
	case k == 3 || k == 4:
		b.WriteString("[")
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteString(",")
			}
			writeValue(b, rng, depth-1)
		}
		b.WriteString("]")
	default:
		b.WriteString("{")
		seen := map[string]bool{}
		for range rng.IntN(4) {
			name := randString(rng)
			if seen[name] { // a duplicate name is refused
				continue
			}
			if len(seen) > 0 {
				b.WriteString(",")
			}
			seen[name] = true
			writeString(b, name)
			b.WriteString(":")
			writeValue(b, rng, depth-1)
		}
		b.WriteString("}")
	}
}

// writeNumber writes a finite number of any magnitude as 'e', 'f' or
// shortest text; integers beyond 2^53 only with an exponent or a fraction
// (askperm refuses the others, as I-JSON asks).
func writeNumber(b *strings.Builder, rng *rand.Rand) {
	var f float64
	switch rng.IntN(4) {
	case 0:
		f = float64(rng.IntN(2000) - 1000)
	case 1:
		f = rng.Float64() * math.Pow(10, float64(rng.IntN(40)-20))
	case 2:
		f = -rng.NormFloat64() * 1e21
	default:
		f = math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(0x7fe)+1)<<52)
	}
	format := []byte("egf")[rng.IntN(3)]
	if format == 'f' && (math.Abs(f) > 1e20 || f != 0 && math.Abs(f) < 1e-6) {
		format = 'e'
	}
	text := strconv.FormatFloat(f, format, -1, 64)
	if !strings.ContainsAny(text, ".eE") && math.Abs(f) > 1<<53-1 {
		text += ".0"
	}
	b.WriteString(text)
}

// askperm digest prints what the JCS authors' implementation computes.
func TestDigestMatchesCanonicalizeJS(t *testing.T) {
	node, lib := canonicalizeJS(t)
	reqs := digestRequests(t)
	want := jsDigests(t, node, lib, reqs)
	for i, req := range reqs {
		r := runPipe(t, []byte(req), baseEnv(), "digest")
		if r.code != 0 {
			t.Errorf("request %d %q: exit %d, stderr %q", i, req, r.code, r.stderr)
			continue
		}
		if got := strings.TrimSuffix(r.stdout, "\n"); got != want[i] {
			t.Errorf("request %d %q: askperm digest %s, canonicalize %s", i, req, got, want[i])
		}
	}
}

// A request that is not UTF-8 has no digest (testdata/script holds the
// other refusals, in text).
func TestDigestRefusesInvalidUTF8(t *testing.T) {
	r := runPipe(t, []byte("{\"action\":\"\xff\"}"), baseEnv(), "digest")
	if r.code != 65 || r.stdout != "" || !strings.Contains(r.stderr, "askperm would refuse this request") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 65 and a refusal", r.code, r.stdout, r.stderr)
	}
}
