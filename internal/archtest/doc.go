// Package archtest holds the tests that keep the house's shape: which
// room (a top-level package and its children) may import which, and that
// every package says in a doc comment what it owns. It has no code of its
// own; the rules are in archtest_test.go (mayImport), summed up in the
// README's Layout.
package archtest
