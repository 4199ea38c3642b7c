package datafile

import (
	"os"
	"syscall"
	"testing"
)

// BenchmarkMapShippedModels maps the speech frontend's weights and the
// "hey robot" head and hashes each whole (SHA-256), as a robot-profile
// binary does on its way to ready (the microphone's sensor is built before
// it): the head here, the weights in their decoder, which verifies the
// digest they carry (datafile only compares it). For a CPU without SHA
// instructions (a Raspberry Pi 4's), run it with
// GODEBUG=cpu.sha=off,cpu.avx2=off.
func BenchmarkMapShippedModels(b *testing.B) {
	files := []string{"../../sensors/mic/speechembed/weights/speech_embedding.bin", "../../sensors/mic/wakeword/models/hey_robot.eawh"}
	sums := make([]string, len(files))
	size := 0
	for i, f := range files {
		content, err := os.ReadFile(f)
		if err != nil {
			b.Skipf("no model file: %v", err)
		}
		sums[i], size = digest(content), size+len(content)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for i, f := range files {
			m, err := mapChecked(f, SHA256(sums[i]))
			if err != nil {
				b.Fatal(err)
			}
			_ = syscall.Munmap(m)
		}
	}
}
