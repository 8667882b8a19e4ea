package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/askperm/askperm/internal/teamcmd"
)

// manDir holds the man pages, one per command, made from the command tree
// and its help texts. ASKPERM_UPDATE_MAN=1 rewrites them (go generate).
const manDir = "../docs/man"

// stamp is the date cobra requires, written into every page's title line
// and taken out again: the same commands give the same pages.
var stamp = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// writeManPages writes the pages of the current commands into the empty
// directory dir.
func writeManPages(dir string) error {
	header := &doc.GenManHeader{Section: "1", Source: "askperm", Manual: "askperm manual", Date: &stamp}
	// askperm-team's pages too: askperm hands it the team commands.
	for _, root := range []*cobra.Command{Root(), teamcmd.Tree()} {
		if err := doc.GenManTree(root, header, dir); err != nil {
			return err
		}
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil {
		return err
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines := strings.Split(string(b), "\n")
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, ".TH ") })
		date := `"` + stamp.Format("Jan 2006") + `"`
		if i < 0 || !strings.Contains(lines[i], date) {
			return fmt.Errorf("%s: no title line with the date", p)
		}
		lines[i] = strings.Replace(lines[i], date, `""`, 1)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// docs/man is what the current commands make: a command or help text
// changed without `go generate` fails here.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if err := writeManPages(dir); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("ASKPERM_UPDATE_MAN") != "" {
		old, _ := filepath.Glob(filepath.Join(manDir, "*.1"))
		for _, p := range old { // a page of a command that is gone goes too
			os.Remove(p)
		}
		if err := os.MkdirAll(manDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeManPages(manDir); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	have, _ := filepath.Glob(filepath.Join(manDir, "*.1"))
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
	again := t.TempDir()
	if err := writeManPages(again); err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		got, _ := os.ReadFile(p)
		committed, _ := os.ReadFile(filepath.Join(manDir, filepath.Base(p)))
		if string(got) != string(committed) {
			t.Errorf("docs/man/%s is out of date with the commands: run go generate", filepath.Base(p))
		}
		if second, _ := os.ReadFile(filepath.Join(again, filepath.Base(p))); string(second) != string(got) {
			t.Errorf("%s differs between two runs", filepath.Base(p))
		}
	}
}
