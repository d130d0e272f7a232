package audit

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/audit.md's table of codes from audit.Table")

// The markers around the generated table in docs/audit.md.
const (
	codesBegin = "<!-- audit-codes:begin -->\n"
	codesEnd   = "<!-- audit-codes:end -->"
)

// TestCodeTable checks that audit.Table, the one table of the codes,
// agrees with the Code constants of the report package and with the
// table in docs/audit.md (go test ./pkg/audit -run TestCodeTable -update
// rewrites it).
func TestCodeTable(t *testing.T) {
	var inTable []string
	seen := map[v1alpha1.Code]bool{}
	for _, c := range Table {
		if seen[c.Code] {
			t.Errorf("%s is twice in Table", c.Code)
		}
		seen[c.Code] = true
		inTable = append(inTable, string(c.Code))
		if c.Severity.Rank() < 0 || c.Severity == v1alpha1.SeverityNever {
			t.Errorf("%s: severity %q is not one a finding has", c.Code, c.Severity)
		}
		if len(c.Help) == 0 || c.What == "" || c.Fix == "" {
			t.Errorf("%s: its help, what or fix is empty", c.Code)
		}
		if got := SeverityOf(c.Code); got != c.Severity {
			t.Errorf("SeverityOf(%s) = %s, the table says %s", c.Code, got, c.Severity)
		}
	}
	if diff := cmp.Diff(codeConstants(t), inTable); diff != "" {
		t.Errorf("the Code constants of pkg/apis/ssa/v1alpha1 and Table differ (-constants +table):\n%s", diff)
	}
	for i, c := range Table[1:] {
		if Table[i].Optional && !c.Optional {
			t.Errorf("%s: the optional codes come last (after %s)", c.Code, Table[i].Code)
		}
	}

	file := filepath.Join("..", "..", "docs", "audit.md")
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), codesBegin)
	table, after, ok2 := strings.Cut(rest, codesEnd)
	if !ok || !ok2 {
		t.Fatalf("%s has no %q ... %q markers", file, strings.TrimSpace(codesBegin), codesEnd)
	}
	want := CodesMarkdown()
	if *updateDocs {
		if err := os.WriteFile(file, []byte(before+codesBegin+want+codesEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, table); diff != "" {
		t.Errorf("%s's table of codes is not audit.Table's (-table +docs); run go test ./pkg/audit -run TestCodeTable -update:\n%s", file, diff)
	}
}

// codeConstants are the values of the Code constants declared in
// pkg/apis/ssa/v1alpha1, in their order.
func codeConstants(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("..", "apis", "ssa", "v1alpha1", "audit.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, s)
				}
			}
		}
	}
	return out
}
