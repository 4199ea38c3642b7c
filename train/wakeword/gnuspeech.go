package wakeword

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// GnuSpeech is an articulatory synthesiser: its voice is a tube model of
// a vocal tract whose length, glottal source and breathiness can be set,
// so one engine gives speakers espeak-ng's formant tables do not. It runs
// under node (scripts/gnuspeech/say.mjs, package fetched by
// scripts/fetch-gnuspeech.sh) on the workstation that trains; a recipe
// without GnuSpeech clips never starts it.
const engineGnuSpeech = "gnuspeech"

// gnuSpeakers are GnuSpeech's training speakers: its male, female and
// large-child voices with vocal tracts from 12 to 19 cm (Variant
// "VOICE:CM").
var gnuSpeakers = []string{"male:16", "male:16.8", "male:17.5", "male:18.3", "male:19",
	"female:13.8", "female:14.4", "female:15", "female:15.6", "female:16.2",
	"large_child:12", "large_child:12.5", "large_child:13.2"}

func gnuVoice(r *rand.Rand) Voice { return Voice{"en-us", pick(r, gnuSpeakers), engineGnuSpeech} }

// gnuRequest is say.mjs's request line for d: the delivery's speed as
// tempo, its pitch as ±3.5 semitones, its amplitude as 0–4 % breathiness.
func gnuRequest(d Delivery, out string) (string, error) {
	voice, tract, ok := strings.Cut(d.Voice.Variant, ":")
	if !ok || strings.ContainsAny(d.Text, "\t\n") || strings.ContainsAny(out, "\t\n") {
		return "", fmt.Errorf("gnuspeech: bad delivery for %s", d.Voice)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	return strings.Join([]string{out, voice, tract, f(float64(d.Pitch-50) / 10), f(float64(d.Speed) / 175),
		f(float64(d.Amp-60) / 25), d.Text}, "\t") + "\n", nil
}

// gnuProc is one say.mjs co-process: a request line in, "ok" or "err …"
// out.
type gnuProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// gnuPool starts co-processes as workers ask for them and stops them all
// in close; the synth owns it.
type gnuPool struct {
	script, pkg string
	mu          sync.Mutex
	idle        []*gnuProc
	all         []*gnuProc
}

// newGnuPool finds node, the driver script and the package; an error says
// how to get what is missing.
func newGnuPool(pkg string) (*gnuPool, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return nil, errors.New("GnuSpeech needs node (Debian: apt-get install nodejs)")
	}
	if _, err := os.Stat(filepath.Join(pkg, "wasm", "gnuspeech.wasm")); err != nil {
		return nil, errors.New("GnuSpeech package not found: run scripts/fetch-gnuspeech.sh and pass the directory it prints")
	}
	script, err := findScript("scripts/gnuspeech/say.mjs")
	if err != nil {
		return nil, err
	}
	return &gnuPool{script: script, pkg: pkg}, nil
}

// findScript looks for a repository script from the working directory
// up: the trainer is a workstation tool run inside the checkout.
func findScript(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("%s not found: run the trainer inside the edgeagent checkout", rel)
		}
		dir = up
	}
}

func (p *gnuPool) get() (*gnuProc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		g := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return g, nil
	}
	// Not tied to a request's context: the pool outlives each request and
	// close ends every process.
	cmd := exec.Command("node", p.script, p.pkg)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting GnuSpeech: %w", err)
	}
	g := &gnuProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	p.all = append(p.all, g)
	return g, nil
}

func (p *gnuPool) put(g *gnuProc) {
	p.mu.Lock()
	p.idle = append(p.idle, g)
	p.mu.Unlock()
}

// say writes d's speech to out (a WAV file).
func (p *gnuPool) say(ctx context.Context, d Delivery, out string) error {
	req, err := gnuRequest(d, out)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	g, err := p.get()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(g.in, req); err != nil {
		return fmt.Errorf("GnuSpeech stopped: %w", err)
	}
	line, err := g.out.ReadString('\n')
	if err != nil {
		return fmt.Errorf("GnuSpeech stopped: %w", err)
	}
	p.put(g)
	if line = strings.TrimSpace(line); line != "ok" {
		return fmt.Errorf("GnuSpeech %s: %s", d.Voice, strings.TrimPrefix(line, "err "))
	}
	return nil
}

// close ends every co-process: their stdin closes and they exit.
func (p *gnuPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.all {
		g.in.Close()
		_ = g.cmd.Wait()
	}
	p.all, p.idle = nil, nil
}
