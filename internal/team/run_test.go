package team

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// fakeTeam is an askperm-team that runs script (sh) for every command.
func fakeTeam(t *testing.T, script string) Config {
	t.Helper()
	program := filepath.Join(t.TempDir(), ProgramName)
	if err := os.WriteFile(program, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := validConfig()
	c.Program = program
	return c
}

// runTeam gives the command its input, returns its output, and fails with
// what the command said, when it exceeds its cap, and when ctx ends
// (the command killed, not waited for).
func TestRunTeam(t *testing.T) {
	ctx := context.Background()
	c := fakeTeam(t, `[ "$1" = echo ] && exec cat; [ "$1" = fail ] && { echo "askperm: no server" >&2; exit 70; }; [ "$1" = hang ] && exec sleep 1000; head -c 2000 /dev/zero`)
	if out, err := runTeam(ctx, c, "echo", []byte("in"), 10); err != nil || string(out) != "in" {
		t.Errorf("echo: %q, %v", out, err)
	}
	if _, err := runTeam(ctx, c, "fail", nil, 10); err == nil || !strings.HasSuffix(err.Error(), ProgramName+" fail: no server") {
		t.Errorf("fail: %v", err)
	}
	if _, err := runTeam(ctx, c, "much", nil, 1000); err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Errorf("over the cap: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := runTeam(short, c, "hang", nil, 10); err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("hang: %v", err)
	}
	c.Program = filepath.Join(t.TempDir(), ProgramName)
	if _, err := runTeam(ctx, c, "echo", nil, 10); err == nil {
		t.Error("a missing program ran")
	}
}

// capped keeps exactly the first max bytes of any writes, and says
// whether more came.
func TestCapped(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		c := capped{max: int64(r.IntN(64))}
		var all bytes.Buffer
		for range r.IntN(8) {
			p := bytes.Repeat([]byte{byte(r.IntN(256))}, r.IntN(32))
			if n, err := c.Write(p); n != len(p) || err != nil {
				t.Fatalf("write: %d, %v", n, err)
			}
			all.Write(p)
		}
		want := all.Bytes()[:min(int64(all.Len()), c.max)]
		if !bytes.Equal(c.buf.Bytes(), want) || c.over != (int64(all.Len()) > c.max) {
			t.Fatalf("max %d of %d bytes: kept %d, over %v", c.max, all.Len(), c.buf.Len(), c.over)
		}
	}
}

// RefreshRules saves what rules-fetch wrote, verified only when used;
// output that is not a list of rules saves nothing. PublishAudit gives
// audit-publish the config and the line exactly.
func TestRulesFetchAndAuditPublish(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	in := filepath.Join(t.TempDir(), "in")
	c := fakeTeam(t, `cat > `+in+`; [ "$1" = rules-fetch ] && echo '[{"key":"k.1","value":{"x":1}}]'; exit 0`)
	now := time.UnixMilli(1_800_000_000_000)
	rc, err := RefreshRules(context.Background(), c, dir, now)
	if err != nil || len(rc.Rules) != 1 || rc.Rules[0].Key != "k.1" {
		t.Fatalf("refresh: %+v, %v", rc, err)
	}
	var sent Config
	if b, _ := os.ReadFile(in); json.Unmarshal(b, &sent) != nil || sent.URL != c.URL || sent.Host != c.Host {
		t.Errorf("rules-fetch was given %q", b)
	}
	if got, err := LoadRules(c, dir); err != nil || got.Fetched != now.UnixMilli() || len(got.Rules) != 1 {
		t.Errorf("cache: %+v, %v", got, err)
	}
	line := []byte(`{"decision":"allow","x":"\u00e9"}` + "\n")
	if err := PublishAudit(context.Background(), c, line); err != nil {
		t.Fatal(err)
	}
	var p AuditPublish
	if b, _ := os.ReadFile(in); json.Unmarshal(b, &p) != nil || !bytes.Equal(p.Line, line) || p.Config.Host != c.Host {
		t.Errorf("audit-publish was given %q", b)
	}
	bad := fakeTeam(t, `echo '{"not":"a list"}'`)
	if _, err := RefreshRules(context.Background(), bad, dir, now.Add(time.Hour)); err == nil {
		t.Error("a rules-fetch writing no list was saved")
	}
	if got, _ := LoadRules(c, dir); got.Fetched != now.UnixMilli() {
		t.Errorf("the cache changed: %+v", got)
	}
}

// runTeam returns, with an error, when askperm-team has ended but a
// descendant that left its process group still holds its stdout: it
// must not wait for that descendant (the hot path's rules fetch).
func TestRunTeamDescendantHoldsStdout(t *testing.T) {
	c := fakeTeam(t, `setsid sleep 5 & exit 0`)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if out, err := runTeam(ctx, c, "rules-fetch", nil, 10); err == nil {
		t.Errorf("a command whose stdout never ended gave %q and no error", out)
	}
}
