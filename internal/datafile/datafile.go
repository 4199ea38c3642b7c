// Package datafile finds the model files a robot-profile binary ships beside
// it instead of inside it (the speech frontend's weights, the built-in
// wake-word head), checks that each is the file the binary was built with,
// and maps it read-only.
//
// Why beside: embedded, the 1.7 MB of weights were a ninth of the robot
// binary's size, which issue 32 budgets. Why mapped rather than read: the
// runtime reads the weights where they lie, so they stay file-backed
// pages the kernel shares and can drop, as they were inside the binary,
// instead of becoming heap (anonymous memory, budgeted too).
//
// scripts/cross-compile.sh writes the files to DIST/edgeagent-data/, beside
// the binaries; scripts/install.sh installs them as /usr/local/lib/edgeagent/.
package datafile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// EnvDir names the environment variable that, when set, is the one
// directory looked in.
const EnvDir = "EDGEAGENT_DATA"

// DirName is the directory beside the binary that holds the files, as
// cross-compile's output lays them out.
const DirName = "edgeagent-data"

// ErrMissing is wrapped by Map's error when the file is in none of the
// directories.
var ErrMissing = errors.New("not found")

// Dirs lists where Map looks, in order: $EDGEAGENT_DATA alone when set;
// otherwise edgeagent-data/ beside the executable, then ../lib/edgeagent/
// from it (/usr/local/bin/edgeagent finds /usr/local/lib/edgeagent/).
func Dirs() []string {
	if d := os.Getenv(EnvDir); d != "" {
		return []string{d}
	}
	exe, err := os.Executable() // on Linux, the path with symlinks resolved
	if err != nil {
		return nil
	}
	bin := filepath.Dir(exe)
	return []string{filepath.Join(bin, DirName), filepath.Join(bin, "..", "lib", "edgeagent")}
}

// Map returns the bytes of the first file called name in Dirs, mapped
// read-only for the life of the process (writing to them faults), once
// check accepts them: SHA256 for a file the binary knows the digest of,
// or a cheaper check of the file's own checksum when its decoder verifies
// that anyway (hashing 1.35 MB twice costs ~33 ms before ready on a CPU
// without SHA instructions, a Raspberry Pi 4's). Errors name the file and
// where it was looked for, never its content.
func Map(name string, check func([]byte) bool) ([]byte, error) {
	dirs := Dirs()
	for _, d := range dirs {
		b, err := mapChecked(filepath.Join(d, name), check)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		return b, err
	}
	return nil, fmt.Errorf("%s %w in %s: a robot-profile binary reads it from beside itself; "+
		"copy the edgeagent-data directory that scripts/cross-compile.sh wrote with this binary next to it "+
		"(or to /usr/local/lib/edgeagent, as scripts/install.sh does), or set %s to a directory holding it",
		name, ErrMissing, strings.Join(dirs, ", "), EnvDir)
}

// SHA256 is a check for Map: the file's SHA-256 is the hex digest want.
func SHA256(want string) func([]byte) bool {
	return func(b []byte) bool {
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:]) == want
	}
}

func mapChecked(path string, check func([]byte) bool) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 || fi.Size() > 1<<30 {
		return nil, fmt.Errorf("%s: not a model file (a regular file of 1 byte to 1 GiB)", path)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: map: %w", path, err)
	}
	if !check(b) {
		_ = syscall.Munmap(b)
		return nil, fmt.Errorf("%s: not the file this binary was built with "+
			"(a damaged file, or one from another build): copy the edgeagent-data directory built with this binary", path)
	}
	return b, nil
}
