// Package oidctest is an OIDC issuer on loopback for tests: its discovery
// document, its JWKS and tokens shaped like GitHub Actions', signed with
// go-jose.
//
// It is imported only by tests and verifies nothing itself: httpapi checks
// the tokens it signs.
package oidctest
