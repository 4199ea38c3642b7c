package layout

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// doorPointers are the pointers plugin.Host may hand out: the board is
// data (the parsed config, read only), not a part of the running agent.
var doorPointers = map[string]bool{"board.Config": true}

// TestHostDoorsAreInterfaces: plugin.Host opens onto the running agent
// through interfaces (plugin.Agent, plugin.World, plugin.Tools,
// store.Store, clock.Clock …), never a pointer to one of the runtime's
// types, so that a plugin uses the loop, the world model and the tools
// registry for what plugins need, and its parts declare the narrower
// interface they consume (mqtt.Deps, agent.NewEngine, actuator.Options,
// record.New).
func TestHostDoorsAreInterfaces(t *testing.T) {
	fset := token.NewFileSet()
	dir := filepath.Join("..", "..", "plugin")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	types := map[string]ast.Expr{} // the package's type declarations
	var host *ast.InterfaceType
	var hostFile *ast.File
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				types[ts.Name.Name] = ts.Type
				if it, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.Name == "Host" {
					host, hostFile = it, f
				}
			}
		}
	}
	if host == nil {
		t.Fatal("no interface Host in package plugin")
	}
	methods := 0
	for _, m := range host.Methods.List {
		fn, ok := m.Type.(*ast.FuncType)
		if !ok || fn.Results == nil {
			continue
		}
		methods++
		for _, r := range fn.Results.List {
			if problem := doorProblem(r.Type, hostFile, types); problem != "" {
				t.Errorf("plugin.Host.%s returns %s: %s", m.Names[0].Name, exprString(fset, r.Type), problem)
			}
		}
	}
	if methods < 5 {
		t.Fatalf("plugin.Host has %d methods with results: not the Host this test knows", methods)
	}
}

// doorProblem says what is wrong with a Host method's result type, or "".
func doorProblem(e ast.Expr, f *ast.File, types map[string]ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident: // a type of package plugin: one of its doors
		if d, ok := types[e.Name]; ok {
			if _, ok := d.(*ast.InterfaceType); !ok {
				return "a door of package plugin that is not an interface"
			}
		}
	case *ast.StarExpr:
		sel, ok := e.X.(*ast.SelectorExpr)
		if !ok {
			return "a pointer to a type of package plugin: declare an interface"
		}
		pkg, _ := sel.X.(*ast.Ident)
		if pkg == nil {
			return ""
		}
		path := importPath(f, pkg.Name)
		own, ours := strings.CutPrefix(path, module)
		if ours && !doorPointers[filepath.Base(own)+"."+sel.Sel.Name] {
			return "a pointer to one of the runtime's types: hand out an interface of what plugins use (plugin/doors.go)"
		}
	}
	return ""
}

// importPath is the path a file imports under name ("" when none).
func importPath(f *ast.File, name string) string {
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if (imp.Name != nil && imp.Name.Name == name) || (imp.Name == nil && filepath.Base(p) == name) {
			return p
		}
	}
	return ""
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	var b strings.Builder
	_ = printer.Fprint(&b, fset, e)
	return b.String()
}

// behindDoors are the plugins and the parts they adapt: they hold the
// running agent through the doors' interfaces, so none of them names the
// node's concrete loop, world model or tools registry (their tests may).
var behindDoors = []string{"plugin/...", "dashboard", "record", "mqtt/...", "tools/actuator/...", "localadmin"}

// concrete are the node's parts that only the node holds as such.
var concrete = map[string]bool{"agent.Loop": true, "worldmodel.Model": true, "tools.Registry": true}

func TestPluginsHoldNoConcreteParts(t *testing.T) {
	seen := 0
	eachSource(t, func(p, pkg string) {
		behind := false
		for _, b := range behindDoors {
			behind = behind || match(b, pkg)
		}
		if !behind {
			return
		}
		seen++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			star, ok := n.(*ast.StarExpr)
			if !ok {
				return true
			}
			sel, ok := star.X.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			own, ours := strings.CutPrefix(importPath(f, x.Name), module)
			if ours && concrete[own+"."+sel.Sel.Name] {
				t.Errorf("%s: names *%s.%s: take the interface of what it uses (declare it here, as mqtt.World does), the plugin.Host doors satisfy it",
					strings.TrimPrefix(fset.Position(n.Pos()).String(), "../../"), x.Name, sel.Sel.Name)
			}
			return true
		})
	})
	if seen < 20 {
		t.Fatalf("only %d files behind the doors: the walk missed the tree", seen)
	}
}
