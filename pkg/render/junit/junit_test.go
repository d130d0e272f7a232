package junit_test

import (
	"bytes"
	"encoding/xml"
	"flag"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/junit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review/reviewtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestGolden(t *testing.T) {
	reviewtest.Golden(t, "xml", *update, junit.Write)
}

// TestParses: each document parses, with the counts of its problems.
func TestParses(t *testing.T) {
	for name, doc := range reviewtest.Documents(t) {
		var buf bytes.Buffer
		if err := junit.Write(&buf, doc); err != nil {
			t.Fatal(err)
		}
		var got junit.Suites
		if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := doc.Count()
		problems := c.ByLevel["error"] + c.ByLevel["warning"] + c.ByLevel["note"]
		if got.Failures != problems {
			t.Errorf("%s: %d failures for %d problems", name, got.Failures, problems)
		}
		cases := 0
		for _, s := range got.Suites {
			cases += len(s.Cases)
		}
		if got.Tests != cases {
			t.Errorf("%s: tests=%d, %d cases", name, got.Tests, cases)
		}
	}
}
