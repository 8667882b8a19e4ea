package team

import (
	"bytes"
	"testing"

	"github.com/nats-io/nkeys"
)

// Every user public key nkeys makes decodes to its Ed25519 key.
func TestUserPublicKey(t *testing.T) {
	for range 200 {
		kp := userKey(t)
		k := PublicKey(kp)
		pub, ok := userPublicKey(k)
		raw, _ := nkeys.Decode(nkeys.PrefixByteUser, []byte(k))
		if !ok || !bytes.Equal(pub, raw) {
			t.Fatalf("%s: %x, %v; nkeys: %x", k, pub, ok, raw)
		}
	}
	acct, _ := nkeys.CreateAccount()
	ak, _ := acct.PublicKey()
	if IsUserKey(ak) {
		t.Errorf("an account key %s taken for a user's", ak)
	}
}

// Whatever is taken for a user public key, nkeys takes for one too, with
// the same key.
func FuzzUserPublicKey(f *testing.F) {
	kp, _ := nkeys.CreateUser()
	k, _ := kp.PublicKey()
	f.Add(k)
	f.Add(k[:55] + "A")
	f.Add("U" + k[1:])
	f.Fuzz(func(t *testing.T, s string) {
		pub, ok := userPublicKey(s)
		if ok != nkeys.IsValidPublicUserKey(s) {
			t.Fatalf("%q: ours %v, nkeys %v", s, ok, !ok)
		}
		if ok {
			raw, err := nkeys.Decode(nkeys.PrefixByteUser, []byte(s))
			if err != nil || !bytes.Equal(pub, raw) {
				t.Fatalf("%q: %x, nkeys %x, %v", s, pub, raw, err)
			}
		}
	})
}
