package webinbox

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/askperm/askperm/internal/userfile"
)

// PasskeyFile is the file in the state directory that holds the
// approver's passkeys.
const PasskeyFile = "web-passkeys.json"

// Passkeys are the passkeys registered for one approver: the WebAuthn
// user is the approver, its handle random, its name the public key.
type Passkeys struct {
	// Approver is the approver's public key: passkeys registered for
	// another key are not this approver's.
	Approver    string                `json:"approver"`
	Handle      []byte                `json:"handle"`
	Credentials []webauthn.Credential `json:"credentials"`
}

// WebAuthn user.
func (p *Passkeys) WebAuthnID() []byte                         { return p.Handle }
func (p *Passkeys) WebAuthnName() string                       { return p.Approver }
func (p *Passkeys) WebAuthnDisplayName() string                { return "askperm approver " + p.Approver[:12] }
func (p *Passkeys) WebAuthnCredentials() []webauthn.Credential { return p.Credentials }

// LoadPasskeys reads the passkeys of approver from path, checked as a
// secret (the user's own, nobody else may read it); none yet when the
// file does not exist.
func LoadPasskeys(path, approver string) (*Passkeys, error) {
	b, err := userfile.ReadSecret(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Passkeys{Approver: approver, Handle: []byte(rand.Text())}, nil
	}
	if err != nil {
		return nil, err
	}
	var p Passkeys
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.Approver != approver || len(p.Handle) == 0 {
		return nil, fmt.Errorf("%s: the passkeys of another approver key (%.12s...): remove the file to pair again", path, p.Approver)
	}
	return &p, nil
}

// save writes p to path, mode 0600, replacing it whole.
func (p *Passkeys) save(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".web-passkeys-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
