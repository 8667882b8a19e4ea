package team

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestNames(t *testing.T) {
	n := Names{"team-a"}
	for got, want := range map[string]string{
		n.RequestStream():                            "TEAM-A_REQ",
		n.RequestSubjects():                          "team-a.req.*",
		n.RequestSubject("ci-1"):                     "team-a.req.ci-1",
		n.AnswersBucket():                            "TEAM-A_ANSWERS",
		n.DoneBucket():                               "TEAM-A_DONE",
		n.RulesBucket():                              "TEAM-A_RULES",
		n.AuditStream():                              "TEAM-A_AUDIT",
		n.AuditSubjects():                            "team-a.audit.*",
		n.AuditSubject("ci-1"):                       "team-a.audit.ci-1",
		AnswerWatch("ci-1", "d"):                     "ci-1.d.>",
		DoneKey("ci-1", "d"):                         "ci-1.d",
		HostInbox("ci-1"):                            "_INBOX_ci-1",
		ApproverInbox("UABCDEFGHIJKLMNOPQRSTUVWXYZ"): "_INBOX_UABCDEFGHIJKLMNOPQRSTUVWXYZ",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if h, ok := n.HostOfSubject("team-a.req.a.b"); ok {
		t.Errorf("HostOfSubject took a two-token host %q", h)
	}
	if _, ok := n.HostOfSubject("other.req.ci-1"); ok {
		t.Error("HostOfSubject took another prefix's subject")
	}
}

func TestParseAnswerKey(t *testing.T) {
	k := PublicKey(userKey(t))
	d := NewAsk()
	h, gd, gk, err := ParseAnswerKey(AnswerKey("ci-1", d, k))
	if err != nil || h != "ci-1" || gd != d || gk != k {
		t.Fatalf("round trip: %q %q %q %v", h, gd, gk, err)
	}
	for _, bad := range []string{
		"ci-1." + d,                            // no approver
		"ci-1." + d + "." + k + ".x",           // one token too many
		"ci-1." + strings.ToUpper(d) + "." + k, // ask id in upper case
		"ci-1." + d[:31] + "." + k,             // short ask id
		"ci-1." + digestOf("r") + "." + k,      // a digest, not an ask id
		"ci-1." + d + ".alice",                 // not a key
		"*." + d + "." + k,                     // a wildcard host
		"ci-1." + d + "." + strings.ToLower(k), // not a key
	} {
		if _, _, _, err := ParseAnswerKey(bad); err == nil {
			t.Errorf("ParseAnswerKey(%q) passed", bad)
		}
	}
}
