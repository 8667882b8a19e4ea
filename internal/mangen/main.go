// Command mangen writes askperm's man pages, one per command, from the
// command tree and its help texts: go run ./internal/mangen docs/man.
// The pages carry no date, so that the same commands give the same pages.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra/doc"

	"github.com/askperm/askperm/cmd"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/mangen DIR")
		os.Exit(64)
	}
	if err := generate(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
}

// stamp is the date cobra requires, written into every page's title line
// and taken out again.
var stamp = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// generate replaces the pages in dir with those of the current commands.
func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil {
		return err
	}
	for _, p := range old { // a page of a command that is gone goes too
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	header := &doc.GenManHeader{Section: "1", Source: "askperm", Manual: "askperm manual", Date: &stamp}
	if err := doc.GenManTree(cmd.Root(), header, dir); err != nil {
		return err
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
