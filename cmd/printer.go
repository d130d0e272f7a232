package cmd

import (
	"fmt"
	"io"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// printer prints a run's reports in the output -o asks for, chosen once
// by complete (choosePrinter): as data (json, yaml, jsonpath,
// go-template: every report at the end, in one document), or in the
// command's text view (each report as it comes). The run says print for
// each report and flush at the end, whichever it is.
type printer[R any] interface {
	// print prints r in a text view (first: it is the first one shown,
	// else a blank line goes before it), or keeps it to print as data.
	print(r R, first bool) error
	// flush prints the reports kept, as a list when asList; none is
	// printed, unless evenEmpty (then an empty list). A text view has
	// printed everything already.
	flush(asList, evenEmpty bool) error
}

// choosePrinter is the printer of out: data (of as(r), or of r itself
// when as is nil), or view, the command's text view of one report,
// written to w.
func choosePrinter[R any](w io.Writer, out render.Output, as func(R) any, view textView[R]) printer[R] {
	if out.IsData() {
		return &dataPrinter[R]{w: w, out: out, kept: []any{}, as: as}
	}
	if doc, ok := view.documents[out.Name]; ok {
		return &documentPrinter[R]{w: w, doc: doc}
	}
	return &textPrinter[R]{w: w, view: view}
}

// printAll prints reports, all known at once, with p (as a list when
// asList, as data).
func printAll[R any](p printer[R], reports []R, asList bool) error {
	for i, r := range reports {
		if err := p.print(r, i == 0); err != nil {
			return err
		}
	}
	return p.flush(asList, false)
}

// dataPrinter keeps the reports and prints them as data at the end.
type dataPrinter[R any] struct {
	w    io.Writer
	out  render.Output
	kept []any
	// as is what of R is printed (nil: R itself).
	as func(R) any
}

func (p *dataPrinter[R]) print(r R, _ bool) error {
	var item any = r
	if p.as != nil {
		item = p.as(r)
	}
	p.kept = append(p.kept, item)
	return nil
}

func (p *dataPrinter[R]) flush(asList, evenEmpty bool) error {
	if len(p.kept) == 0 && !evenEmpty {
		return nil
	}
	return p.out.Print(p.w, p.kept, asList)
}

// textView is a command's text view: how it prints one report, and what
// goes before the first one shown (header; nil: nothing).
type textView[R any] struct {
	header func(w io.Writer)
	one    func(w io.Writer, r R) error
	// documents are the -o formats that print every report of the run
	// as one document at the end (html, sarif, markdown, junit), by -o
	// name; the name is one of the command's views too.
	documents documentSet[R]
}

// documentSet are a command's document formats, by -o name.
type documentSet[R any] map[string]document[R]

// with is the set and format name written by d.
func (s documentSet[R]) with(name string, d document[R]) documentSet[R] {
	out := documentSet[R]{name: d}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// document writes a run's reports as one document (a page, a SARIF log).
type document[R any] func(w io.Writer, reports []R) error

// documentPrinter keeps the reports and writes them as one document at
// the end, even when there are none (an empty page still says so).
type documentPrinter[R any] struct {
	w    io.Writer
	doc  document[R]
	kept []R
}

func (p *documentPrinter[R]) print(r R, _ bool) error {
	p.kept = append(p.kept, r)
	return nil
}

func (p *documentPrinter[R]) flush(_, _ bool) error { return p.doc(p.w, p.kept) }

// textPrinter prints each report in its text view as it comes.
type textPrinter[R any] struct {
	w    io.Writer
	view textView[R]
}

func (p *textPrinter[R]) print(r R, first bool) error {
	switch {
	case !first:
		fmt.Fprintln(p.w)
	case p.view.header != nil:
		p.view.header(p.w)
	}
	return p.view.one(p.w, r)
}

func (p *textPrinter[R]) flush(_, _ bool) error { return nil }
