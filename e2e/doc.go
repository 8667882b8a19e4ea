// Package e2e holds the end-to-end tests of the built askperm binary: the
// command line and golden decisions over pipes, the terminal frontends on a
// real pseudo-terminal, and the dialogs under Xvfb.
package e2e
