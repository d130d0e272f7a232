package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

func (o *whoOwnsOptions) run(ctx context.Context) error {
	o.sel.In = o.streams.In
	o.sel.CommandFlags = o.commandFlags
	objs, single, err := o.sel.Resolve(ctx, o.configFlags, o.args)
	var partial *kube.PartialError
	if err != nil && !errors.As(err, &partial) {
		return err
	}
	o.view = o.renderOptions()
	if partial != nil {
		o.failed = append(o.failed, partial)
	}
	analyzed, failed := o.analyze(objs)
	if err := o.unmatchedFields(analyzed); err != nil {
		return err
	}
	view := o.output.out.Name
	shown, empty := 0, 0
	for _, rep := range analyzed {
		rep = o.filter.Apply(rep)
		if len(objs) > 1 && o.filtered() && render.NothingToShow(rep, view) {
			// Over many objects, a filter shows only those it matches,
			// and says once if it matches none.
			empty++
			continue
		}
		if err := o.printer.print(ownersShown{rep: rep, only: len(analyzed) == 1}, shown == 0); err != nil {
			return err
		}
		shown++
	}
	// As data, an empty list too over many objects that all could be
	// read.
	o.unmatched = empty
	if err := o.printer.flush(!single, !single && failed == 0); err != nil {
		return err
	}
	if shown == 0 && empty > 0 && !o.output.isData() {
		fmt.Fprintln(o.streams.ErrOut, render.NothingShown(view, o.view, empty))
	}
	if partial != nil {
		return partial
	}
	return exitWith(whoOwnsCode(failed))
}

// renderOptions are the text views' options, with what an empty answer
// says under the filters given.
func (o *whoOwnsOptions) renderOptions() render.Options {
	ropts := render.Options{Time: o.time.mode, Now: o.now(), Palette: o.pal, Wide: o.output.out.Name == viewWide}
	switch f := o.filter; {
	case f.Unowned && len(f.Fields) == 0:
		ropts.Empty = "no unowned fields: every field present has an owner"
	case f.Shared && len(f.Fields) == 0 && len(f.Managers) == 0 && f.Operation == "" && f.Subresource == "":
		ropts.Empty = "no field has two or more owners"
	}
	return ropts
}

// analyze decodes each object's managedFields; an object that can't be
// is said on stderr and counted in failed.
func (o *whoOwnsOptions) analyze(objs []*unstructured.Unstructured) (analyzed []*ownership.Report, failed int) {
	for _, obj := range objs {
		rep, err := ownership.Analyze(obj, ownership.Options{ShowSecretValues: o.showSecretValues})
		if err != nil {
			render.Error(o.streams.ErrOut, err)
			o.failed = append(o.failed, err)
			failed++
			continue
		}
		analyzed = append(analyzed, rep)
	}
	return analyzed, failed
}

// ownersShown is one object's report as shown: only is true when it is
// the one object analysed (a long table then gets a hint).
type ownersShown struct {
	rep  *ownership.Report
	only bool
}

// choosePrinter chooses the printer of -o, once: the reports as data, or
// each in the text view of -o (printView, with o.view, which the run
// sets).
func (o *whoOwnsOptions) choosePrinter() {
	o.printer = choosePrinter(o.streams.Out, o.output.out, func(s ownersShown) any { return s.rep }, textView[ownersShown]{one: o.printView, documents: documentSet[ownersShown]{viewHTML: o.whoOwnsPage}})
}

// printView prints one object's report in the text view of -o.
func (o *whoOwnsOptions) printView(w io.Writer, s ownersShown) error {
	rep, ropts := s.rep, o.view
	switch o.output.out.Name {
	case viewTable, viewWide:
		err := render.FieldTable(w, rep, ropts, o.filter.Unowned)
		if err == nil && !o.viewChosen && s.only {
			o.hintLongTable(rep, ropts)
		}
		return err
	case viewBlame:
		return render.Blame(w, rep, ropts)
	case viewTree:
		if o.filter.Unowned {
			fmt.Fprintln(o.streams.ErrOut, "note: the tree shows owned fields only; unowned fields are listed by -o table and marked by -o blame")
		}
		return render.Tree(w, rep, ropts)
	case viewManagers:
		return render.ManagerTable(w, rep, ropts)
	}
	return nil
}

// hintLongTable points, on stderr, from a long default table to the tree
// view (which collapses what one owner set holds) and to the filters.
func (o *whoOwnsOptions) hintLongTable(rep *ownership.Report, ropts render.Options) {
	rows := len(rep.Fields)
	if o.filter.Unowned || rows <= longTable {
		// (The tree has no unowned fields to show.)
		return
	}
	var tree lineCounter
	if render.Tree(&tree, rep, ropts) != nil {
		return
	}
	fmt.Fprintf(o.streams.ErrOut, "note: %d rows; -o tree shows the same ownership in %d lines, and --field (e.g. '.spec.template.**') or --manager narrow the table\n", rows, int(tree))
}

// lineCounter counts the lines written to it.
type lineCounter int

func (c *lineCounter) Write(p []byte) (int, error) {
	*c += lineCounter(bytes.Count(p, []byte("\n")))
	return len(p), nil
}

// unmatchedFields fails when a --field pattern selects no path of any of
// the objects, owned or not: a mistyped path is an error, not an empty
// answer.
func (o *whoOwnsOptions) unmatchedFields(reps []*ownership.Report) error {
	if len(reps) == 0 || len(o.filter.Fields) == 0 {
		return nil
	}
	missed := map[string]int{}
	for _, r := range reps {
		for _, s := range o.filter.Unmatched(r) {
			missed[s]++
		}
	}
	for _, s := range o.filter.Fields {
		if missed[s] < len(reps) {
			continue
		}
		what := fmt.Sprintf("%d objects", len(reps))
		if len(reps) == 1 {
			r := reps[0]
			what = ownership.ObjectName(r.Object.Kind, r.Object.Namespace, r.Object.Name)
		}
		return &ExitError{Code: CodeError, Err: fmt.Errorf("--field %s matches no field of %s: check the path with -o tree (owned fields) or --unowned", s, what)}
	}
	return nil
}

func (o *whoOwnsOptions) filtered() bool {
	f := o.filter
	return len(f.Managers) > 0 || len(f.Fields) > 0 || f.Operation != "" || f.Subresource != "" || f.Shared || f.Unowned
}
