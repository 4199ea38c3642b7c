package browsertest

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/edgeagent/edgeagent/internal/waittest"
)

// ownGroup starts the browser in a process group of its own, killed with
// the test process as chromedp arranges when nobody modifies the command.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// endGroup kills what is left of the browser's process group and waits
// until none of it runs.
func endGroup(t testing.TB, pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	waittest.For(t, "chromium's processes to end", func() bool { return syscall.Kill(-pgid, 0) == syscall.ESRCH })
}
