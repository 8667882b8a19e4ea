package team

import (
	"crypto/ed25519"
	"encoding/base32"
	"encoding/binary"
)

// An NKey user public key (U...) is decoded here, not by the nkeys
// module: askperm verifies answers with crypto/ed25519 alone, and nkeys
// would link, and initialise at every start, NaCl and x/sys/cpu.

// userKeyPrefix is the first byte of a decoded user public key: NKey's
// prefix byte of users (20 << 3, 'U' once encoded).
const userKeyPrefix = 20 << 3

// userKeyLen is an encoded user public key's length: base32 of the
// prefix byte, the 32-byte Ed25519 key and a CRC-16.
const userKeyLen = 56

var nkeyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// userPublicKey is the Ed25519 key of the NKey user public key k, false
// when k is not one.
func userPublicKey(k string) (ed25519.PublicKey, bool) {
	if len(k) != userKeyLen {
		return nil, false
	}
	raw, err := nkeyEncoding.DecodeString(k)
	if err != nil || len(raw) != 1+ed25519.PublicKeySize+2 || raw[0] != userKeyPrefix {
		return nil, false
	}
	data := raw[:len(raw)-2]
	if crc16(data) != binary.LittleEndian.Uint16(raw[len(raw)-2:]) {
		return nil, false
	}
	return ed25519.PublicKey(data[1:]), true
}

// IsUserKey says whether k is an NKey user public key.
func IsUserKey(k string) bool {
	_, ok := userPublicKey(k)
	return ok
}

// crc16 is NKey's checksum, CRC-16/XMODEM (polynomial 0x1021, from 0).
func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
