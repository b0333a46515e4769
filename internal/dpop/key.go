// Package dpop makes RFC 9449 proofs of possession: a client that holds a
// P-256 key sends its access token in the DPoP authorization scheme with a
// fresh proof, a JWT signed with that key (typ dpop+jwt, the public key in
// its jwk header) naming the request's method (htm) and URL (htu), a unique
// jti, the time it was made (iat) and, when bound to an access token, the
// token's hash (ath). Signing costs tens of microseconds, so a Pool makes
// proofs ahead of the schedule and a send only takes one.
package dpop

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// maxKeyFile bounds what ReadKey reads: a PEM key is a few hundred bytes.
const maxKeyFile = 64 << 10

// ReadKey reads a P-256 private key from a PEM file, as openssl writes it
// (`openssl ecparam -name prime256v1 -genkey -noout` gives "EC PRIVATE
// KEY", `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`
// gives "PRIVATE KEY").
func ReadKey(path string) (*ecdsa.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the DPoP key: %w", err)
	}
	defer f.Close()
	data := make([]byte, maxKeyFile+1)
	n, _ := f.Read(data)
	for n < len(data) {
		m, err := f.Read(data[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	if n > maxKeyFile {
		return nil, fmt.Errorf("reading the DPoP key: the file is over %d bytes, which no PEM key is", maxKeyFile)
	}
	return ParseKey(data[:n])
}

// ParseKey parses a PEM P-256 private key (SEC 1 or PKCS #8).
func ParseKey(data []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("the file holds no PEM block; write a P-256 key made by `openssl ecparam -name prime256v1 -genkey -noout`")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("the PEM block is %q, not a private key; write a P-256 key made by `openssl ecparam -name prime256v1 -genkey -noout`", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing the DPoP key: %w", err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("the key is not a P-256 key, which ES256 proofs need; write one made by `openssl ecparam -name prime256v1 -genkey -noout`")
	}
	return ec, nil
}
