package state

import (
	"testing"
	"time"

	"github.com/askperm/askperm/form"
)

// A session approval keeps what the person approved, for session list:
// the server and the one-line question, rendered; keeping them changes
// nothing of what the approval covers.
func TestSessionApprovalKeepsTheQuestion(t *testing.T) {
	s := open(t, t.TempDir())
	now := time.Unix(1_700_000_000, 0)
	raw := `{"action":"read","server":"fs\u001b[2J","tool":"read_file","session_id":"s1","dimensions":[{"name":"path","value":"/etc/hosts\u202e"}],"arguments":{"path":"/etc/hosts\u202e"}}`
	req := request(t, raw)
	if err := s.ApproveSession(req, now); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sessions(now, time.Hour)
	if err != nil || len(got) != 1 {
		t.Fatalf("Sessions = %v, %v", got, err)
	}
	want := form.New(request(t, raw), form.Options{}).Headline()
	if got[0].Server != "fs\x1b[2J" || got[0].Question != want || want != `read_file (fs\e[2J) wants to read /etc/hosts\u{202e}` {
		t.Errorf("recorded server %q, question %q; want %q", got[0].Server, got[0].Question, want)
	}
	if ok, err := s.SessionApproved(request(t, raw), now, time.Hour); !ok || err != nil {
		t.Errorf("the same call: %v, %v", ok, err)
	}
}
