package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a function's body on the command and e-stop path:
// a function over it is split into named steps that say why, so that what
// runs when a command arrives or the robot must stop reads a screen at a
// time.
const maxFuncLines = 100

// commandPath are the packages a command or an e-stop runs through: where
// it comes in (the CLI, the fleet, MQTT, the dashboard, the local admin
// socket), the node and its plugins, hooks, the agent and the tools
// registry, down to the actuators and their safety envelope.
var commandPath = []string{"cmd/...", "fleet", "mqtt/...", "dashboard", "localadmin", "node/...", "plugin/...",
	"hooks", "agent/...", "tools/...", "worldmodel"}

func TestCommandPathFunctionsAreShort(t *testing.T) {
	seen := 0
	eachSource(t, func(p, pkg string) {
		if !onCommandPath(pkg) {
			return
		}
		seen++
		for _, f := range longFuncs(t, p) {
			t.Errorf("%s: %s is %d lines long: split it into named steps (at most %d lines on the command and e-stop path)",
				strings.TrimPrefix(f.pos.String(), "../../"), f.name, f.lines, maxFuncLines)
		}
	})
	if seen < 50 {
		t.Fatalf("only %d files on the command path: the walk missed the tree", seen)
	}
}

func onCommandPath(pkg string) bool {
	for _, c := range commandPath {
		if match(c, pkg) {
			return true
		}
	}
	return false
}

type longFunc struct {
	pos   token.Position
	name  string
	lines int
}

// longFuncs finds the file's functions, declared or literal, whose body
// (between its braces) is over maxFuncLines lines.
func longFuncs(t *testing.T, path string) []longFunc {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []longFunc
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		name := "a function literal"
		switch n := n.(type) {
		case *ast.FuncDecl:
			body, name = n.Body, n.Name.Name
		case *ast.FuncLit:
			body = n.Body
		}
		if body == nil {
			return true
		}
		if lines := fset.Position(body.Rbrace).Line - fset.Position(body.Lbrace).Line - 1; lines > maxFuncLines {
			out = append(out, longFunc{fset.Position(n.Pos()), name, lines})
		}
		return true
	})
	return out
}

// The finder itself: declared functions and literals, each by its body's
// lines, one line over the bound and not at it.
func TestLongFuncsFinds(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n) }
	src := fmt.Sprintf("package p\n\nfunc atBound() {\n%s}\n\nfunc over() {\n%s}\n\nvar lit = func() {\n%s}\n",
		body(maxFuncLines), body(maxFuncLines+1), body(maxFuncLines+2))
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range longFuncs(t, path) {
		got = append(got, fmt.Sprintf("%s:%d", f.name, f.lines))
	}
	if want := fmt.Sprintf("over:%d a function literal:%d", maxFuncLines+1, maxFuncLines+2); strings.Join(got, " ") != want {
		t.Fatalf("found %v, want %s", got, want)
	}
}
