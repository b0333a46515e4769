// Package actiontest holds the end-to-end tests of perfgate as a GitHub
// container action: the image built from the repository's Dockerfile on a
// Debian base made from Debian packages, started the way the runner starts
// a container action, over a real git repository with a compose dependency.
// It has no code of its own outside its tests.
package actiontest
