package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/edgeagent/edgeagent/internal/datafile"
	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
	"github.com/edgeagent/edgeagent/sensors/mic/speechembed"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// TestSmoke builds the real binary (the robot profile, and checks it holds
// what profiles_gen.go says) and runs the sim board end to end: it
// reaches ready, publishes "online" on the embedded broker, answers an
// agent.status command over MQTT and exits 0 on SIGTERM. It always runs for
// the host. With EDGEAGENT_SMOKE_QEMU=1 (set by scripts/smoke-qemu.sh, which
// CI calls) it also runs linux/arm64 and linux/arm (GOARM=7) binaries under
// qemu-user, skipping with a message when qemu-user-static is missing, so a
// broken cross build cannot land. The cross builds take minutes, which is
// why plain `go test ./...` leaves them to the script.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	targets := []struct{ name, goarch, goarm, qemu, cc, sysroot string }{
		{name: "host", goarch: runtime.GOARCH},
		{name: "arm64", goarch: "arm64", qemu: "qemu-aarch64-static", cc: "aarch64-linux-gnu-gcc", sysroot: "/usr/aarch64-linux-gnu"},
		{name: "armv7", goarch: "arm", goarm: "7", qemu: "qemu-arm-static", cc: "arm-linux-gnueabihf-gcc", sysroot: "/usr/arm-linux-gnueabihf"},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			if runtime.GOOS != "linux" {
				t.Skip("the smoke test runs the linux binary")
			}
			var runner []string
			env := os.Environ()
			if tg.qemu != "" {
				if os.Getenv("EDGEAGENT_SMOKE_QEMU") != "1" {
					t.Skip("set EDGEAGENT_SMOKE_QEMU=1 (scripts/smoke-qemu.sh) to run the cross-built binary under qemu")
				}
				if runtime.GOARCH == tg.goarch {
					t.Skip("host is " + tg.goarch + ": covered by the host run")
				}
				q, err := exec.LookPath(tg.qemu)
				if err != nil {
					t.Skipf("%s not installed (apt-get install qemu-user-static): cannot run the %s binary", tg.qemu, tg.name)
				}
				runner = []string{q}
			}
			// The robot profile: what cross-compile.sh ships by default,
			// with its model files beside it as cross-compile lays them out.
			bin := filepath.Join(t.TempDir(), "edgeagent-robot")
			stageDataFiles(t, filepath.Dir(bin))
			build := exec.Command("go", "build", "-trimpath", "-tags", robotTags, "-ldflags", "-s -w", "-o", bin, ".")
			build.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+tg.goarch, "GOARM="+tg.goarm, "CGO_ENABLED=0")
			if tg.qemu != "" {
				// With the cross compiler present, build as cross-compile.sh
				// does (cgo, malgo audio) and give qemu the target's libc.
				if _, err := exec.LookPath(tg.cc); err == nil && dirExists(tg.sysroot) {
					build.Env = append(build.Env, "CGO_ENABLED=1", "CC="+tg.cc)
					env = append(env, "QEMU_LD_PREFIX="+tg.sysroot)
				}
			}
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("build for %s: %v\n%s", tg.name, err, out)
			}
			if tg.qemu == "" {
				if got, want := versionOf(t, bin), profileTable["robot"]; !reflect.DeepEqual(got, want) {
					t.Errorf("the robot binary holds\n%+v\nprofiles_gen.go says\n%+v\nrun go generate ./cmd/edgeagent", got, want)
				}
				assertNoEmbeddedModels(t, bin)
			}
			timeScale := time.Duration(1)
			if tg.qemu != "" {
				timeScale = 10 // emulation is slow
			}
			r := smokeRun(t, append(runner, bin), env, timeScale)
			t.Logf("%s: start_to_ready=%s rss=%d KiB (%s)", tg.name, r.startToReady, r.rssKiB,
				map[bool]string{true: "emulated under qemu-user", false: "native"}[tg.qemu != ""])
		})
	}
}

type smokeResult struct {
	startToReady string
	rssKiB       int
}

var readyLine = regexp.MustCompile(`msg=ready .*start_to_ready=(\S+)`)

func smokeRun(t *testing.T, argv, env []string, scale time.Duration) smokeResult {
	t.Helper()
	port := freePort(t)
	data := t.TempDir()
	sim, err := os.ReadFile("../../board-configs/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(sim), "listen: 127.0.0.1:1883", fmt.Sprintf("listen: 127.0.0.1:%d", port), 1)
	if cfg == string(sim) {
		t.Fatal("sim.yaml no longer has 'listen: 127.0.0.1:1883'; update the smoke test")
	}
	web := strings.Replace(cfg, "listen: 127.0.0.1:8080", fmt.Sprintf("listen: 127.0.0.1:%d", freePort(t)), 1)
	if web == cfg {
		t.Fatal("sim.yaml no longer has the dashboard on 'listen: 127.0.0.1:8080'; update the smoke test")
	}
	cfg = "data_dir: " + data + "\n" + web
	// Next to sim.yaml, so relative paths in it resolve the same way.
	boardPath := filepath.Join("../../board-configs", fmt.Sprintf(".smoke-%d.yaml", os.Getpid()))
	if err := os.WriteFile(boardPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(boardPath)

	cmd := exec.Command(argv[0], append(argv[1:], "run", "--board", boardPath)...)
	cmd.Env = env
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	ready := make(chan string, 1)
	var logTail []string
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logTail = append(logTail, line)
			if m := readyLine.FindStringSubmatch(line); m != nil {
				ready <- m[1]
			}
		}
	}()
	go func() { <-logDone; exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	fail := func(format string, args ...any) {
		t.Helper()
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf(format+"\nlog:\n%s", append(args, strings.Join(logTail, "\n"))...)
	}

	var res smokeResult
	select {
	case res.startToReady = <-ready:
	case err := <-exited:
		fail("exited before ready: %v", err)
	case <-time.After(10 * time.Second * scale):
		fail("not ready in time")
	}

	opts := paho.NewClientOptions().AddBroker(fmt.Sprintf("tcp://127.0.0.1:%d", port)).SetClientID("smoke").SetConnectTimeout(5 * time.Second * scale)
	c := paho.NewClient(opts)
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second*scale) || tok.Error() != nil {
		fail("connect to the embedded broker: %v", tok.Error())
	}
	defer c.Disconnect(100)
	status := make(chan string, 4)
	replies := make(chan []byte, 4)
	c.Subscribe("edgeagent/sim-bot/status", 1, func(_ paho.Client, m paho.Message) { status <- string(m.Payload()) }).WaitTimeout(5 * time.Second * scale)
	c.Subscribe("edgeagent/sim-bot/reply", 1, func(_ paho.Client, m paho.Message) { replies <- m.Payload() }).WaitTimeout(5 * time.Second * scale)
	select {
	case s := <-status:
		if s != "online" {
			fail("status = %q, want online", s)
		}
	case <-time.After(5 * time.Second * scale):
		fail("no retained status")
	}
	c.Publish("edgeagent/sim-bot/cmd", 1, false, `{"id":"smoke-1","tool":"agent.status","params":{}}`).WaitTimeout(5 * time.Second * scale)
	select {
	case raw := <-replies:
		var rep struct {
			ID     string         `json:"id"`
			OK     bool           `json:"ok"`
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(raw, &rep); err != nil || rep.ID != "smoke-1" || !rep.OK || rep.Result == nil {
			fail("reply %s (%v)", raw, err)
		}
	case <-time.After(5 * time.Second * scale):
		fail("no reply to agent.status")
	}
	res.rssKiB = rssKiB(cmd.Process.Pid)

	t0 := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\nlog:\n%s", err, strings.Join(logTail, "\n"))
		}
	case <-time.After(3 * time.Second * scale):
		fail("did not exit after SIGTERM")
	}
	if took := time.Since(t0); tookTooLong(took, scale) {
		t.Errorf("SIGTERM to exit took %v", took)
	}
	return res
}

func tookTooLong(d, scale time.Duration) bool { return d > 2*time.Second*scale }

// robotTags are the robot profile's build tags, as scripts/cross-compile.sh
// builds it.
const robotTags = "robot,nethttpomithttp2"

// dataFiles are the model files a robot-profile binary reads from beside
// itself (internal/datafile), where they lie in the checkout.
var dataFiles = []string{
	"../../sensors/mic/speechembed/weights/" + speechembed.WeightsFile,
	"../../sensors/mic/wakeword/models/" + wakeword.HeadFile,
}

// stageDataFiles copies the model files to dir/edgeagent-data, as
// scripts/cross-compile.sh writes them beside the binaries.
func stageDataFiles(t *testing.T, dir string) {
	t.Helper()
	dst := filepath.Join(dir, datafile.DirName)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range dataFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// assertNoEmbeddedModels checks that the robot binary does not carry the
// model files inside it too (their size is what leaving them out saves):
// the first 256 bytes of each must not appear in it.
func assertNoEmbeddedModels(t *testing.T, bin string) {
	t.Helper()
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range dataFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(exe, b[:256]) {
			t.Errorf("the robot binary embeds %s; it should read it from beside itself", filepath.Base(f))
		}
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// rssKiB reads VmRSS of a process (for qemu-user that is the emulator's).
func rssKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			var n int
			fmt.Sscan(f[1], &n)
			return n
		}
	}
	return 0
}

// freePort is a loopback TCP port nothing listens on.
func freePort(t testing.TB) int { return mosquittotest.FreePort(t) }
