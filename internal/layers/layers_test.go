package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kubectl-ssa/kubectl-ssa"

// foundations sit below the engines: the facts engines share. The list is
// explicit; any other package under pkg/ is an engine (but pkg/apis and
// pkg/render).
var foundations = []string{"admission", "convert", "defaults", "ownership", "pathlang", "remedy", "schemacodec", "tools", "write"}

// reportParts are the foundations the reports are made of: the only ones
// pkg/apis may import.
var reportParts = []string{"pathlang", "remedy"}

// allowedSideways are the engine imports of another engine: diff is
// explain-conflict's simulation plus a view of its result.
var allowedSideways = map[string]string{"diff": "conflict"}

// layer is where a package of the module sits.
type layer int

const (
	other layer = iota // cmd, internal, hack, main: not held here
	apis
	render
	foundation
	engine
)

// layerOf places a package by its import path: a new directory under pkg/
// is an engine unless it is listed as a foundation.
func layerOf(pkg string) (layer, string) {
	rest, ok := strings.CutPrefix(pkg, module+"/pkg/")
	if !ok {
		return other, ""
	}
	top, _, _ := strings.Cut(rest, "/")
	switch {
	case top == "apis":
		return apis, top
	case top == "render":
		return render, top
	case slices.Contains(foundations, top):
		return foundation, top
	}
	return engine, top
}

// file is one Go file's imports.
type file struct {
	pkg, name string
	test      bool
	imports   []string
}

// violations are the imports that break the layers, as "file: why".
func violations(files []file) []string {
	var out []string
	for _, f := range files {
		from, fromTop := layerOf(f.pkg)
		for _, imp := range f.imports {
			to, toTop := layerOf(imp)
			if to == other || fromTop == toTop {
				continue
			}
			if why := rule(from, fromTop, to, toTop, f.test); why != "" {
				out = append(out, f.name+": imports "+imp+": "+why)
			}
		}
	}
	sort.Strings(out)
	return out
}

// rule says why a package of layer from may not import one of layer to
// (""": it may). Tests are held to the same rules, but render's, which
// may run an engine to get a report to print.
func rule(from layer, fromTop string, to layer, toTop string, test bool) string {
	switch from {
	case engine:
		switch {
		case to == engine && allowedSideways[fromTop] != toTop:
			return "no sideways imports between feature engines (a package under pkg/ that is not a listed foundation is an engine)"
		case to == render:
			return "engines compute; render prints their reports"
		}
	case foundation:
		switch to {
		case engine:
			return "foundations never import engines"
		case render:
			return "foundations never import render"
		}
	case apis:
		if to != foundation || !slices.Contains(reportParts, toTop) {
			return "pkg/apis defines the reports; engines and foundations fill them (only pathlang and remedy, which reports are made of, are below it)"
		}
	case render:
		switch {
		case test:
		case to == engine:
			return "render takes report types from pkg/apis/ssa/v1alpha1, not from the engine"
		case toTop == "admission":
			return "render prints what admission found from the report (pkg/apis/ssa/v1alpha1), not from the package that evaluates it"
		}
	}
	return ""
}

// moduleFiles reads the imports of every Go file of the module (the test
// module and testdata left out).
func moduleFiles(t *testing.T, root string) []file {
	t.Helper()
	var out []file
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir // another module (test/, bench's)
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fl := file{pkg: path.Join(module, filepath.ToSlash(filepath.Dir(rel))), name: filepath.ToSlash(rel), test: strings.HasSuffix(p, "_test.go")}
		for _, imp := range f.Imports {
			s, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			fl.imports = append(fl.imports, s)
		}
		out = append(out, fl)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayers holds every package of the module to the layers.
func TestLayers(t *testing.T) {
	files := moduleFiles(t, filepath.Join("..", ".."))
	engines := map[string]bool{}
	for _, f := range files {
		if l, top := layerOf(f.pkg); l == engine {
			engines[top] = true
		}
	}
	if len(engines) < 6 {
		t.Fatalf("found only the engines %v: is the module's root right?", engines)
	}
	for _, v := range violations(files) {
		t.Error(v)
	}
}

// TestLayersCatchANewPackage: a package added under pkg/ is an engine,
// held to the engines' rules with no list to update.
func TestLayersCatchANewPackage(t *testing.T) {
	pkg := func(p string) string { return module + "/pkg/" + p }
	tests := []struct {
		name string
		file file
		want int
	}{
		{"a new engine importing engines and render", file{pkg: pkg("release"), name: "pkg/release/release.go",
			imports: []string{pkg("audit"), pkg("migrate"), pkg("render"), pkg("apis/ssa/v1alpha1"), pkg("ownership")}}, 3},
		{"an engine importing the new one", file{pkg: pkg("audit"), name: "pkg/audit/audit.go", imports: []string{pkg("release")}}, 1},
		{"a foundation importing the new one", file{pkg: pkg("tools"), name: "pkg/tools/tools.go", imports: []string{pkg("release")}}, 1},
		{"the reports importing the new one", file{pkg: pkg("apis/ssa/v1alpha1"), name: "pkg/apis/ssa/v1alpha1/x.go", imports: []string{pkg("release"), pkg("remedy"), pkg("ownership")}}, 2},
		{"render importing the new one", file{pkg: pkg("render"), name: "pkg/render/x.go", imports: []string{pkg("release"), pkg("admission"), pkg("tools")}}, 2},
		{"render's test running an engine", file{pkg: pkg("render"), name: "pkg/render/x_test.go", test: true, imports: []string{pkg("release"), pkg("conflict")}}, 0},
		{"diff importing conflict", file{pkg: pkg("diff"), name: "pkg/diff/diff.go", imports: []string{pkg("conflict"), pkg("tools")}}, 0},
		{"conflict importing diff", file{pkg: pkg("conflict"), name: "pkg/conflict/x.go", imports: []string{pkg("diff")}}, 1},
		{"cmd importing everything", file{pkg: module + "/cmd", name: "cmd/x.go", imports: []string{pkg("release"), pkg("render")}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := violations([]file{tt.file})
			if len(got) != tt.want {
				t.Errorf("%d violations, want %d: %q", len(got), tt.want, got)
			}
		})
	}
}
