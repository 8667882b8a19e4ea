package decision

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// gowebpki/jcs, a second implementation of RFC 8785, is the oracle:
// Canonical must give its bytes for every input it canonicalises, and
// refuse what it refuses.

// appendixB are the IEEE 754 bit patterns of RFC 8785 Appendix B.
var appendixB = []uint64{
	0x0000000000000000, 0x8000000000000000, 0x0000000000000001, 0x8000000000000001,
	0x7fefffffffffffff, 0xffefffffffffffff, 0x4340000000000000, 0xc340000000000000,
	0x4430000000000000, 0x44b52d02c7e14af5, 0x44b52d02c7e14af6, 0x44b52d02c7e14af7,
	0x444b1ae4d6e2ef4e, 0x444b1ae4d6e2ef4f, 0x444b1ae4d6e2ef50, 0x3eb0c6f7a0b5ed8c,
	0x3eb0c6f7a0b5ed8d, 0x41b3de4355555553, 0x41b3de4355555554, 0x41b3de4355555555,
	0x41b3de4355555556, 0x41b3de4355555557, 0xbecbf647612f3696, 0x43143ff3c1cb0959,
}

// numberSpellings are ways to write f as a JSON literal.
func numberSpellings(f float64) []string {
	return []string{
		strconv.FormatFloat(f, 'g', -1, 64),
		strconv.FormatFloat(f, 'e', -1, 64),
		strconv.FormatFloat(f, 'E', 20, 64),
		strconv.FormatFloat(f, 'f', -1, 64),
	}
}

// checkOracle fails t unless Canonical and jcs.Transform agree on in.
func checkOracle(t *testing.T, in []byte) {
	t.Helper()
	got, err := Canonical(in)
	want, jcsErr := jcs.Transform(in)
	switch {
	case err == nil && jcsErr == nil:
		if !bytes.Equal(got, want) {
			t.Fatalf("Canonical(%q)\ngot  %q\njcs  %q", in, got, want)
		}
	case err == nil:
		t.Fatalf("Canonical(%q) = %q; jcs refuses it: %v", in, got, jcsErr)
	case jcsErr == nil:
		t.Fatalf("Canonical(%q): %v; jcs gives %q", in, err, want)
	}
}

// vectorFiles are the JCS vectors' inputs and the sample requests.
func vectorFiles(tb testing.TB) [][]byte {
	var files [][]byte
	for _, glob := range []string{"testdata/jcs/input/*.json", "../testdata/requests/*.json"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				tb.Fatal(err)
			}
			files = append(files, b)
		}
	}
	return files
}

func TestCanonicalAgreesWithJCS(t *testing.T) {
	inputs := vectorFiles(t)
	if len(inputs) < 5 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for _, bits := range appendixB {
		for _, s := range numberSpellings(math.Float64frombits(bits)) {
			inputs = append(inputs, []byte(s), []byte(`{"n":[`+s+`]}`))
		}
	}
	for _, s := range []string{
		`-0`, `-0.0`, `0e10`, `-0e-10`, `1e21`, `1e20`, `1e-6`, `1e-7`, `5e-324`, `2e-324`, `1e-400`,
		`9007199254740993`, `12345678901234567890123`, `1.7976931348623157e308`, `0.1`, `100`, `1E+2`,
		`"\u0000\u001f\u007f\u0080\u2028\u2029\ufeff\ud83d\ude00"`, `"\b\f\n\r\t\/\\\""`, `"<>&'"`,
		`{"a":{"b":[{"d":1,"c":2}],"a":null}}`, `{"\ue000":1,"\ud800\udc00":2,"\uffff":3,"\ud7ff":4}`,
		`{"\ud83d\ude01":1,"\ud83d\ude00":2,"\ud83c\udfff":3}`, `{"a":1,"aa":2,"":3,"A":4}`,
		` [ 1 , true , false , null , "x" , { } , [ ] ] `,
		strings.Repeat("[", 200) + strings.Repeat("]", 200),
		// Both stop at 10000 levels.
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		inputs = append(inputs, []byte(s))
	}
	for _, in := range inputs {
		checkOracle(t, in)
	}
}

// Every double's JCS form, however the literal is spelled, is the one of
// the oracle's number formatter.
func FuzzCanonicalNumber(f *testing.F) {
	for _, bits := range appendixB {
		f.Add(bits)
	}
	f.Add(uint64(0x7ff0000000000000))
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return
		}
		want, err := jcs.NumberToJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range numberSpellings(v) {
			if got := mustCanonical(t, s); got != want {
				t.Fatalf("%016x spelled %s: got %s, want %s", bits, s, got, want)
			}
		}
	})
}

// benchmarkCanonical canonicalises in with Canonical (jsontext) and with
// the oracle (jcs).
func benchmarkCanonical(b *testing.B, in []byte) {
	for _, impl := range []struct {
		name string
		f    func([]byte) ([]byte, error)
	}{{"jcs", jcs.Transform}, {"jsontext", Canonical}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := impl.f(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCanonical1MiB: a realistic request of 1 MiB, mostly one string.
func BenchmarkCanonical1MiB(b *testing.B) { benchmarkCanonical(b, benchRequest(1<<20)) }

// BenchmarkCanonical1MiBValues: 1 MiB of small objects, numbers and
// non-ASCII names.
func BenchmarkCanonical1MiBValues(b *testing.B) {
	const item = `{"z":1.50,"a":[true,null,-0,1e21],"\u00e9":"x\ty","b":{"d":2,"c":3}},`
	in := "[" + strings.Repeat(item, (1<<20)/len(item)) + "0]"
	benchmarkCanonical(b, []byte(in))
}
