package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// docs/man is what the current commands generate: a command or help text
// changed without `go generate` fails here.
func TestManPagesUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	have, _ := filepath.Glob(filepath.Join("..", "..", "docs", "man", "*.1"))
	names := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, filepath.Base(p))
		}
		return out
	}
	if !slices.Equal(names(want), names(have)) {
		t.Fatalf("docs/man has %v, the commands make %v: run go generate", names(have), names(want))
	}
	for _, p := range want {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("..", "..", "docs", "man", filepath.Base(p)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(committed) {
			t.Errorf("docs/man/%s is out of date with the commands: run go generate", filepath.Base(p))
		}
	}
	// Generating twice gives the same pages: no date, no version.
	again := t.TempDir()
	if err := generate(again); err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		a, _ := os.ReadFile(p)
		b, _ := os.ReadFile(filepath.Join(again, filepath.Base(p)))
		if string(a) != string(b) {
			t.Errorf("%s differs between two runs", filepath.Base(p))
		}
	}
}
