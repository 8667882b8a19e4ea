package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQuick runs the measuring program in its quick mode against a fresh
// build, so that bench/run.sh cannot rot: every section must measure or
// say which tool is missing, none may fail. gum is its peer only when on
// PATH (bench/run.sh installs it).
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: measures for about 30 s")
	}
	dir := t.TempDir()
	for _, b := range [][2]string{{"askperm", "../.."}, {"floor", "../floor"}, {"libfloor", "../libfloor"}, {"measure", "."}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v: %s", b[0], err, out)
		}
	}
	gum, _ := exec.LookPath("gum")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "measure"), "-quick", "-askperm", filepath.Join(dir, "askperm"),
		"-floor", filepath.Join(dir, "floor"), "-libfloor", filepath.Join(dir, "libfloor"), "-gum", gum, "-repo", "../..")
	cmd.Env = os.Environ()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("measure: %v\n%s", err, stderr.String())
	}
	table := string(out)
	t.Logf("\n%s", table)
	if !strings.Contains(table, "| what | askperm | peer | ratio | target | met? |") {
		t.Fatal("no table")
	}
	for _, line := range strings.Split(table, "\n") {
		if strings.Contains(line, "failed:") {
			t.Errorf("a measurement failed: %s", line)
		}
	}
	for _, want := range []string{"required libraries", "canned answer", "rules file", "memory", "first complete frame", "1 MiB", "10,000", "askperm gate", "50 parallel", "remembered rules", "rules list", "audit lines"} {
		if !strings.Contains(table, want) {
			t.Errorf("no row about %q", want)
		}
	}
}
