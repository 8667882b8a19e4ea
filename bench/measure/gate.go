package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gate: section 6. An MCP client calls the reference filesystem server's
// read_text_file directly and through `askperm gate` (a rules file
// allowing it), alternately, on two sessions open side by side; then
// 1, 10 and 100 such calls at once through a gate with memory on against
// one without (gateConcurrent).
func gate() {
	const what = "an allowed MCP tool call through `askperm gate` vs directly (reference filesystem server)"
	node, err := exec.LookPath("node")
	script, _ := filepath.Abs(filepath.Join(*repo, ".ci/tools/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"))
	if _, serr := os.Stat(script); err != nil || serr != nil {
		skip(what, "node or the reference filesystem server is not installed (.ci/run installs it)")
		return
	}
	dir := newHome()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello"), 0o600)
	rules := file("gate.toml", []byte("[[rule]]\ntool = \"read_text_file\"\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	server := []string{node, script, dir}
	connect := func(argv ...string) (*mcp.ClientSession, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env(newHome())
		client := mcp.NewClient(&mcp.Implementation{Name: "askperm-bench", Version: "1"}, nil)
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
		if err != nil {
			return nil, err
		}
		if _, err := s.ListTools(ctx, nil); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	through := func(flags ...string) (*mcp.ClientSession, error) {
		return connect(append(append(append([]string{*askperm, "gate", "--rules", rules, "--frontend", "none"}, flags...), "--"), server...)...)
	}
	direct, err := connect(server...)
	if err != nil {
		skip(what, "the server: "+err.Error())
		return
	}
	defer direct.Close()
	gated, err := through()
	if err != nil {
		skip(what, "the gate: "+err.Error())
		return
	}
	defer gated.Close()
	call := func(s *mcp.ClientSession) func(int) (time.Duration, error) {
		return func(int) (time.Duration, error) {
			start := time.Now()
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": notes}})
			d := time.Since(start)
			if err == nil && res.IsError {
				err = fmt.Errorf("the call failed: %v", res.Content)
			}
			return d, err
		}
	}
	calls := 20 * *runs
	g, d, err := pair(calls, call(gated), call(direct))
	if err != nil {
		skip(what, "failed: "+err.Error())
	} else {
		add(row{fmt.Sprintf("%s (median of %d calls)", what, calls), ms(g), ms(d) + " (direct)",
			fmt.Sprintf("+%.2f ms", float64(g-d)/1e6), "< +2 ms", yes(g-d < 2*time.Millisecond)})
	}

	const whatN = "calls at once through `askperm gate` with memory on vs with --no-remember"
	memory, err := through("--state-dir", newHome())
	if err != nil {
		skip(whatN, "the gate with memory: "+err.Error())
		return
	}
	defer memory.Close()
	none, err := through("--no-remember")
	if err != nil {
		skip(whatN, "the gate without memory: "+err.Error())
		return
	}
	defer none.Close()
	gateConcurrent(call(memory), call(none))
}

// gateConcurrent: n calls at once (1, 10, 100), by withMemory and by
// without alternately, each side's calls' times pooled over rounds of n
// (at least 200 calls a side, or 20 with -quick); rows of the median's
// and the 99th percentile's difference. Memory adds the state store's
// look-up and the audit line to each call; the target is a p99 added
// under 5 ms at 10 calls at once.
func gateConcurrent(withMemory, without func(int) (time.Duration, error)) {
	least := 200
	if *quick {
		least = 20
	}
	for _, n := range []int{1, 10, 100} {
		what := fmt.Sprintf("%d %s", n, "call(s) at once through `askperm gate` with memory on (a rules file allows) vs --no-remember")
		rounds := max(*runs, (least+n-1)/n)
		var with, bare []time.Duration
		var err error
		for r := -1; r < rounds && err == nil; r++ { // round -1 warms up
			var a, b []time.Duration
			if a, err = atOnce(n, withMemory); err == nil {
				b, err = atOnce(n, without)
			}
			if r >= 0 {
				with, bare = append(with, a...), append(bare, b...)
			}
		}
		if err != nil {
			skip(what, "failed: "+err.Error())
			continue
		}
		p99 := func(ds []time.Duration) time.Duration {
			slices.Sort(ds)
			return ds[len(ds)*99/100]
		}
		wm, bm := median(with), median(bare)
		wp, bp := p99(with), p99(bare)
		add(row{fmt.Sprintf("%s: median of %d calls", what, len(with)), ms(wm), ms(bm) + " (no memory)",
			fmt.Sprintf("+%.2f ms", float64(wm-bm)/1e6), "-", "-"})
		target, met := "-", "-"
		if n == 10 {
			target, met = "< +5 ms", yes(wp-bp < 5*time.Millisecond)
		}
		add(row{fmt.Sprintf("%s: p99 of %d calls", what, len(with)), ms(wp), ms(bp) + " (no memory)",
			fmt.Sprintf("+%.2f ms", float64(wp-bp)/1e6), target, met})
	}
}

// atOnce makes n calls of call at once and returns their times.
func atOnce(n int, call func(int) (time.Duration, error)) ([]time.Duration, error) {
	took := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { took[i], errs[i] = call(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return took, nil
}
