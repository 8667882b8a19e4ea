package decision

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"
)

// Canonical returns the RFC 8785 (JCS) form of one JSON value.
func Canonical(b []byte) ([]byte, error) {
	out, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("canonical form: %w", err)
	}
	return out, nil
}

// RequestSHA256 is the lowercase hex SHA-256 of the JCS form of a request
// exactly as received: the decision's request_sha256.
func RequestSHA256(raw []byte) (string, error) {
	c, err := Canonical(raw)
	if err != nil {
		return "", err
	}
	return sha256Hex(c), nil
}

// ArgumentsDigest is the approval-binding digest of a call's arguments
// (protocol.md section 5): the SHA-256 of the JCS form after every number is
// replaced by the string of its JCS number form, so 5, 5.0, 5e0 and "5" bind
// alike while "5.0" and "5" differ. nil (absent arguments) binds as null.
func ArgumentsDigest(args []byte) (string, error) {
	if args == nil {
		args = []byte("null")
	}
	stringified, err := stringifyNumbers(args)
	if err != nil {
		return "", err
	}
	c, err := Canonical(stringified)
	if err != nil {
		return "", err
	}
	return sha256Hex(c), nil
}

// stringifyNumbers rewrites one JSON value with every number token replaced
// by a string token holding its JCS number form.
func stringifyNumbers(b []byte) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		if tok.Kind() == '0' {
			f, err := strconv.ParseFloat(tok.String(), 64)
			if err != nil {
				return nil, fmt.Errorf("arguments: number %s: %w", tok.String(), err)
			}
			s, err := jcs.NumberToJSON(f)
			if err != nil {
				return nil, fmt.Errorf("arguments: number %s: %w", tok.String(), err)
			}
			tok = jsontext.String(s)
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
