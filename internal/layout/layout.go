// Package layout holds the test that keeps docs/architecture.md's import
// rules true: it reads `go list` and fails when a package imports one of the
// project's packages the rules do not allow. It has no code of its own.
package layout
