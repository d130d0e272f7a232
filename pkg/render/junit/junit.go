// Package junit writes a run's problems as JUnit XML, which CI systems
// (GitLab's test reports, Jenkins, GitHub's test reporters) show: one
// test suite per object, one failing test case per problem (a passing
// one for an object without any), the problem's fix in the failure's
// text.
package junit

import (
	"encoding/xml"
	"io"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
)

// Suites is the document: <testsuites>.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one object's test cases.
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Cases    []Case `xml:"testcase"`
}

// Case is one problem (or the object's pass).
type Case struct {
	Name      string   `xml:"name,attr"`
	ClassName string   `xml:"classname,attr"`
	File      string   `xml:"file,attr,omitempty"`
	Line      int      `xml:"line,attr,omitempty"`
	Failure   *Failure `xml:"failure,omitempty"`
}

// Failure is a problem: its rule and level as the type, its message and
// fix as the text.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Write writes the document as JUnit XML.
func Write(w io.Writer, d *review.Document) error {
	doc := Suites{Name: "kubectl ssa " + d.Command}
	for _, o := range d.Objects {
		doc.Suites = append(doc.Suites, suite(d, o))
	}
	if d.Command == "audit" && len(d.Objects) == 0 {
		// No finding: one passing case says what was audited.
		doc.Suites = append(doc.Suites, Suite{Name: "audit", Tests: 1, Cases: []Case{{Name: "no findings", ClassName: "audit"}}})
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func suite(d *review.Document, o review.Object) Suite {
	name := o.Ref.Display()
	if o.Cluster != "" {
		name = o.Cluster + ": " + name
	}
	s := Suite{Name: name}
	for _, p := range o.Problems {
		c := Case{Name: caseName(p), ClassName: name}
		if o.URI != "" {
			c.File, c.Line = o.Source, p.Line
		}
		text := p.Message
		if len(p.Owners) > 0 {
			text += "\nowners: " + strings.Join(p.Owners, ", ")
		}
		if p.Fix != "" {
			text += "\nfix: " + p.Fix
		}
		if r := d.Rule(p.Rule); r.Short != "" {
			text += "\n" + r.Short
		}
		c.Failure = &Failure{Message: p.Message, Type: string(p.Level) + "/" + p.Rule, Text: text}
		s.Cases = append(s.Cases, c)
		s.Failures++
	}
	if len(o.Problems) == 0 {
		s.Cases = append(s.Cases, Case{Name: d.Command, ClassName: name})
	}
	s.Tests = len(s.Cases)
	return s
}

func caseName(p review.Problem) string {
	if len(p.Path) == 0 {
		return p.Rule
	}
	return p.Rule + " " + p.Path.String()
}
