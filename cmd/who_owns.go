package cmd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

type whoOwnsOptions struct {
	*globalOptions
	sel              selection
	output           string
	timeMode         string
	filter           ownership.Filter
	showSecretValues bool
	now              func() time.Time
}

var whoOwnsOutputs = []string{"table", "wide", "blame", "tree", "managers", "json", "yaml"}

func newWhoOwnsCmd(g *globalOptions) *cobra.Command {
	o := &whoOwnsOptions{globalOptions: g, output: "table", timeMode: "relative", now: time.Now}
	cmd := &cobra.Command{
		Use:   "who-owns (TYPE [NAME...] | TYPE/NAME... | -f FILE | -k DIR) [flags]",
		Short: "Show which field manager owns each field of objects",
		Long: `Show who owns each field of live objects (or of objects saved to files),
decoded from metadata.managedFields.

A field can have several owners (shared ownership: they applied the same
value). A manager's identity is its name, operation (Apply or Update),
subresource and, for Update, apiVersion: the same name under Apply and
Update is two managers. Fields that are present but owned by nobody
(defaulted fields, or fields written before their managedFields were
cleared) are listed with --unowned.

Times are those of each managedFields entry: the time of that manager's
last write to the object, not of the field's last change.

Views (-o):
  table     one row per owned field (default); wide adds apiVersion and value
  blame     the object's YAML with a gutter naming each line's owners
  tree      the field tree, collapsed where one owner set holds every owned field below a node
  managers  one row per managedFields entry
  json|yaml the OwnershipReport (documented in the README)

Secret values are redacted unless --show-secret-values is given.`,
		Example: `  # Who owns the fields of a Deployment
  kubectl ssa who-owns deployment/web

  # The object's YAML annotated like git blame
  kubectl ssa who-owns deploy web -o blame

  # Only the fields a given manager owns, with their values
  kubectl ssa who-owns deploy/web --manager kube-controller-manager -o wide

  # Fields owned by two or more managers, in every namespace
  kubectl ssa who-owns deployments -A --shared

  # Fields under the pod template, as a tree
  kubectl ssa who-owns deploy/web --field '.spec.template.**' -o tree

  # Fields nobody owns (they stay when you drop them from a manifest)
  kubectl ssa who-owns deploy/web --unowned

  # Read a saved object without a cluster
  kubectl get deploy web -o yaml --show-managed-fields > web.yaml
  kubectl ssa who-owns --local -f web.yaml -o json`,
		ValidArgsFunction: completeResources(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(args); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			return o.run(args)
		},
	}
	f := cmd.Flags()
	o.sel.addFlags(f, "to inspect", true)
	f.StringVarP(&o.output, "output", "o", o.output, "View: "+strings.Join(whoOwnsOutputs, "|")+".")
	f.StringVar(&o.timeMode, "time", o.timeMode, "How to show each manager's last write: relative, absolute (RFC 3339, UTC) or none.")
	f.StringArrayVar(&o.filter.Managers, "manager", nil, "Only fields owned by managers matching this glob (repeatable).")
	f.StringArrayVar(&o.filter.Fields, "field", nil, "Only paths matching this pattern: '*' is one path element, '**' any number; list items by key or position, e.g. '.spec.template.**', '.metadata.labels.*', '.spec.template.spec.containers[name=app].*', '.spec.template.spec.containers[0].image' (repeatable).")
	f.StringVar(&o.filter.Operation, "operation", "", "Only fields owned through this operation: Apply or Update.")
	f.StringVar(&o.filter.Subresource, "subresource", "", "Only fields owned through this subresource (status, scale, ...; 'none' for the main resource).")
	f.BoolVar(&o.filter.Shared, "shared", false, "Only fields with two or more owners.")
	f.BoolVar(&o.filter.Unowned, "unowned", false, "Only the fields present in the object that nobody owns.")
	f.BoolVar(&o.showSecretValues, "show-secret-values", false, "Show the values of Secret data instead of redacting them.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(whoOwnsOutputs, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("time", cobra.FixedCompletions([]string{"relative", "absolute", "none"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("operation", cobra.FixedCompletions([]string{"Apply", "Update"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("manager", completeManagers(g, &o.sel))
	_ = cmd.RegisterFlagCompletionFunc("field", completeFields(g, &o.sel))
	return cmd
}

func (o *whoOwnsOptions) validate(args []string) error {
	if !contains(whoOwnsOutputs, o.output) {
		return fmt.Errorf("--output must be one of %s, not %q", strings.Join(whoOwnsOutputs, ", "), o.output)
	}
	switch render.TimeMode(o.timeMode) {
	case render.TimeRelative, render.TimeAbsolute, render.TimeNone:
	default:
		return fmt.Errorf("--time must be relative, absolute or none, not %q", o.timeMode)
	}
	if op := o.filter.Operation; op != "" && !strings.EqualFold(op, "Apply") && !strings.EqualFold(op, "Update") {
		return fmt.Errorf("--operation must be Apply or Update, not %q", op)
	}
	if o.filter.Shared && o.filter.Unowned {
		return errors.New("--shared and --unowned select disjoint fields: give one of them")
	}
	if err := o.filter.Validate(); err != nil {
		return err
	}
	return o.sel.validate(args)
}

func (o *whoOwnsOptions) run(args []string) error {
	pal, err := o.palette()
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	objs, single, err := o.sel.resolve(o.globalOptions, args)
	var partial *partialError
	if err != nil && !errors.As(err, &partial) {
		return &ExitError{Code: 2, Err: err}
	}
	ropts := render.Options{Time: render.TimeMode(o.timeMode), Now: o.now(), Palette: pal, Wide: o.output == "wide"}
	switch {
	case o.filter.Unowned && len(o.filter.Fields) == 0:
		ropts.Empty = "no unowned fields: every field present has an owner"
	case o.filter.Shared && len(o.filter.Fields) == 0 && len(o.filter.Managers) == 0 && o.filter.Operation == "" && o.filter.Subresource == "":
		ropts.Empty = "no field has two or more owners"
	}
	reports := []interface{}{}
	var failed []string
	shown, empty := 0, 0
	for _, obj := range objs {
		rep, err := ownership.Analyze(obj, ownership.Options{ShowSecretValues: o.showSecretValues})
		if err != nil {
			render.Error(o.streams.ErrOut, err)
			failed = append(failed, err.Error())
			continue
		}
		rep = o.filter.Apply(rep)
		if len(objs) > 1 && o.filtered() && render.NothingToShow(rep, o.output) {
			// Over many objects, a filter shows only those it matches,
			// and says once if it matches none.
			empty++
			continue
		}
		if render.IsData(o.output) {
			reports = append(reports, rep)
			continue
		}
		if shown > 0 {
			fmt.Fprintln(o.streams.Out)
		}
		shown++
		switch o.output {
		case "table", "wide":
			err = render.FieldTable(o.streams.Out, rep, ropts, o.filter.Unowned)
		case "blame":
			err = render.Blame(o.streams.Out, rep, ropts)
		case "tree":
			if o.filter.Unowned {
				fmt.Fprintln(o.streams.ErrOut, "note: the tree shows owned fields only; unowned fields are listed by -o table and marked by -o blame")
			}
			err = render.Tree(o.streams.Out, rep, ropts)
		case "managers":
			err = render.ManagerTable(o.streams.Out, rep, ropts)
		}
		if err != nil {
			return err
		}
	}
	if render.IsData(o.output) && (len(reports) > 0 || !single && len(failed) == 0) {
		if err := render.Data(o.streams.Out, o.output, reports, !single); err != nil {
			return err
		}
	}
	if shown == 0 && empty > 0 && !render.IsData(o.output) {
		fmt.Fprintln(o.streams.ErrOut, render.NothingShown(o.output, ropts, empty))
	}
	if partial != nil {
		return &ExitError{Code: 2, Err: partial}
	}
	if len(failed) > 0 {
		return &ExitError{Code: 2}
	}
	return nil
}

func (o *whoOwnsOptions) filtered() bool {
	f := o.filter
	return len(f.Managers) > 0 || len(f.Fields) > 0 || f.Operation != "" || f.Subresource != "" || f.Shared || f.Unowned
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
