package teamcmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/team/wire"
)

// A host writes its audit lines, times and all: log --team shows when
// the stream stored each, and --since keeps the lines by that time, not
// by the time the host claims, past or future.
func TestTeamLogSinceByStreamTime(t *testing.T) {
	as, h := startTeam(t, 1)
	for _, claimed := range []string{"2020-01-01T00:00:00Z", "2999-01-01T00:00:00Z"} {
		line := `{"time":"` + claimed + `","request_sha256":"x","action":"claimed ` + claimed + `","decision":"allow","persist":"once","cause":"user","frontend":"team","latency_ms":1}`
		if err := wire.PublishAudit(context.Background(), h.Config, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Now().Add(-time.Minute)
	code, out, stderr := as[0].run("log", "--team", "--since", "1h", "--json")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want both lines, stored within the hour; got:\n%s", out)
	}
	for _, l := range lines {
		var e struct {
			Stored time.Time `json:"stored"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Stored.Before(before) || e.Stored.After(time.Now().Add(time.Minute)) {
			t.Errorf("stored time of %s: %v, %v", l, e.Stored, err)
		}
	}
	code, out, stderr = as[0].run("log", "--team")
	if code != cli.ExitOK || !strings.HasPrefix(out, "HOST") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "STORED") {
		t.Errorf("table: exit %d, %s; stderr %s", code, out, stderr)
	}
}
