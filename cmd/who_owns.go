package cmd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

type whoOwnsOptions struct {
	*globalOptions
	sel              kube.Selection
	output           outputFlag
	time             timeFlag
	filter           ownership.Filter
	showSecretValues bool
	now              func() time.Time
	// viewChosen: -o was given; a long default table then gets no hint.
	viewChosen bool

	// Set by complete.
	args []string
	pal  *render.Palette
	// printer prints the reports, as data or in a text view.
	printer printer[ownersShown]
	// view is the text views' options (the run sets the time).
	view render.Options
	// unmatched is how many objects a filter left nothing of (not shown).
	unmatched int
}

// longTable is the number of rows over which the default table of one
// object points to the tree view and the filters.
const longTable = 100

// The text views of who-owns.
const (
	viewTable    = "table"
	viewWide     = "wide"
	viewBlame    = "blame"
	viewTree     = "tree"
	viewManagers = render.ViewManagers
)

var whoOwnsViews = []string{viewTable, viewWide, viewBlame, viewTree, viewManagers, viewHTML}

func newWhoOwnsCmd(g *globalOptions) *cobra.Command {
	o := &whoOwnsOptions{globalOptions: g, now: time.Now}
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
  html      one self-contained page of every object: its YAML with each
            line's owners, numbered and coloured, and a legend of managers
  json|yaml the OwnershipReport (documented in docs/reports.md); jsonpath=...
            and go-template=... run over it, as with kubectl get

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
  kubectl ssa who-owns --local -f web.yaml -o json

  # Just the managers' names, with a JSONPath template
  kubectl ssa who-owns deploy/web -o jsonpath='{.managers[*].manager}'`,
		ValidArgsFunction: completeResources(g),
		RunE:              runE(o),
	}
	f := cmd.Flags()
	o.sel.AddFlags(f, kube.SelectionFlags{What: "to inspect", Local: true})
	o.output.add(cmd, "table", whoOwnsViews...)
	o.time.add(cmd, "How to show each manager's last write: relative, absolute (RFC 3339, UTC) or none.")
	f.StringArrayVar(&o.filter.Managers, "manager", nil, "Only fields owned by managers matching this glob (repeatable).")
	f.StringArrayVar(&o.filter.Fields, "field", nil, "Only paths matching this pattern: '*' is one path element, '**' any number; list items by key or position, e.g. '.spec.template.**', '.metadata.labels.*', '.spec.template.spec.containers[name=app].*', '.spec.template.spec.containers[0].image' (repeatable).")
	f.StringVar(&o.filter.Operation, "operation", "", "Only fields owned through this operation: Apply or Update.")
	f.StringVar(&o.filter.Subresource, "subresource", "", "Only fields owned through this subresource (status, scale, ...; 'none' for the main resource).")
	f.BoolVar(&o.filter.Shared, "shared", false, "Only fields with two or more owners.")
	f.BoolVar(&o.filter.Unowned, "unowned", false, "Only the fields present in the object that nobody owns.")
	f.BoolVar(&o.showSecretValues, "show-secret-values", false, "Show the values of Secret data instead of redacting them.")
	_ = cmd.RegisterFlagCompletionFunc("operation", cobra.FixedCompletions([]string{"Apply", "Update"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("manager", completeManagers(g, &o.sel))
	_ = cmd.RegisterFlagCompletionFunc("field", completeFields(g, &o.sel))
	return cmd
}

// complete reads each flag into its typed value: the output (the one
// printer, with its palette) and the time format.
func (o *whoOwnsOptions) complete(cmd *cobra.Command, args []string) (err error) {
	o.args = args
	o.viewChosen = cmd.Flags().Changed("output")
	if err := o.output.parse(); err != nil {
		return err
	}
	if err := o.time.parse(); err != nil {
		return err
	}
	if o.pal, err = o.palette(); err != nil {
		return err
	}
	o.choosePrinter()
	return nil
}

// validate checks the flags together.
func (o *whoOwnsOptions) validate() error {
	if op := o.filter.Operation; op != "" && !strings.EqualFold(op, "Apply") && !strings.EqualFold(op, "Update") {
		return fmt.Errorf("--operation must be Apply or Update, not %q", op)
	}
	if o.filter.Shared && o.filter.Unowned {
		return errors.New("--shared and --unowned select disjoint fields: give one of them")
	}
	if err := o.filter.Validate(); err != nil {
		return err
	}
	return o.sel.Validate(o.args)
}
