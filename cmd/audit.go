package cmd

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

type auditOptions struct {
	*globalOptions
	sel          kube.Selection
	output       outputFlag
	expect       []string
	allow        []string
	threshold    int
	failOn       string
	allowPartial bool
	fix          string
	allContexts  bool
	concurrency  int
	clusterFlags []string
	rules        []string

	// Set by complete.
	args []string
	// ruleSet is rules, parsed.
	ruleSet map[v1alpha1.Code]bool
	pal     *render.Palette
	// printer prints the report, as data or as its table.
	printer printer[*v1alpha1.AuditReport]
	// clusters is how many clusters the run audits (the table names
	// each finding's when more than one).
	clusters int
}

func newAuditCmd(g *globalOptions) *cobra.Command {
	o := &auditOptions{globalOptions: g, threshold: audit.DefaultLastAppliedThreshold, failOn: string(v1alpha1.SeverityWarning), concurrency: 4}
	cmd := &cobra.Command{
		Use:   "audit [TYPE[,TYPE...] | TYPE/NAME... | -f FILE] [-l SELECTOR] [-n NAMESPACE | -A] [flags]",
		Short: "Find field-ownership problems across kinds, namespaces and clusters",
		Long:  auditLong,
		Example: `  # Everything in the current namespace
  kubectl ssa audit

  # Every namespace, and cluster-scoped kinds
  kubectl ssa audit -A

  # CI gate: only Argo CD may own the fields of the shop namespace's objects
  kubectl ssa audit -n shop --expect-manager argocd-controller --fail-on error

  # Deployments of every cluster in the kubeconfig, with the fix commands
  kubectl ssa audit deployments -A --all-contexts -o wide

  # Findings as JSON for a dashboard
  kubectl ssa audit -A -o json

  # One page for the fleet: findings by cluster, namespace and object
  kubectl ssa audit -A --all-contexts -o html > audit.html

  # Also objects made with kubectl create and never applied, and hand edits the applier adopted
  kubectl ssa audit -A --rules=+imperative,+adopted-edit

  # Only the codes, with a JSONPath template
  kubectl ssa audit -A -o jsonpath='{range .findings[*]}{.code}{"\n"}{end}'`,
		ValidArgsFunction: completeResources(g),
		RunE:              runE(o),
	}
	f := cmd.Flags()
	o.sel.AddFlags(f, kube.SelectionFlags{What: "to audit"})
	o.output.add(cmd, viewTable, append([]string{viewTable, viewWide, viewHTML}, reviewFormats...)...)
	f.StringArrayVar(&o.expect, "expect-manager", nil, "The managers (globs: * any run of characters, ? one) that should own every field of the main resource: others' fields are drift (repeatable).")
	f.StringArrayVar(&o.allow, "allow-manager", nil, "More managers (globs) whose fields are not drift (repeatable; with --expect-manager).")
	f.IntVar(&o.threshold, "last-applied-threshold", o.threshold, fmt.Sprintf("The size in bytes over which a last-applied annotation is a finding (the limit on all annotations is %d).", ownership.AnnotationLimit))
	f.BoolVar(&o.allowPartial, "allow-partial", false, "Accept that kinds you may not list are left out (named as warnings): without it such an audit exits 2, as it checked less than asked.")
	f.StringVar(&o.failOn, "fail-on", o.failOn, "Exit 1 when a finding of this severity or above exists: info, warning, error, or never.")
	f.BoolVar(&o.allContexts, "all-contexts", false, "Audit every context of the kubeconfig, side by side.")
	f.StringVar(&o.fix, "fix", string(v1alpha1.FixAdopt), "The fix named for drift and manual edits: adopt (the applier takes the fields; its next apply returns them to its manifest) or forget (released; the edited values stay).")
	f.IntVar(&o.concurrency, "concurrency", o.concurrency, "How many kinds are listed at once, per cluster.")
	f.StringSliceVar(&o.rules, "rules", nil, "Findings to turn on (+CODE: the optional imperative and adopted-edit) or off (-CODE), separated by commas.")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions(severityNames(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fix", cobra.FixedCompletions([]string{string(v1alpha1.FixAdopt), string(v1alpha1.FixForget)}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("rules", cobra.FixedCompletions(ruleNames(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("expect-manager", completeManagers(g, &o.sel))
	_ = cmd.RegisterFlagCompletionFunc("allow-manager", completeManagers(g, &o.sel))
	return cmd
}

// ruleNames are --rules' values: each code turned on or off.
func ruleNames() []string {
	var out []string
	for _, c := range audit.Codes {
		out = append(out, "+"+string(c), "-"+string(c))
	}
	return out
}

func severityNames() []string {
	out := make([]string, len(audit.Severities))
	for i, s := range audit.Severities {
		out[i] = string(s)
	}
	return out
}

// complete reads each flag into its typed value: the output (the one
// printer, with its palette) and the rules; no TYPE is every kind.
func (o *auditOptions) complete(cmd *cobra.Command, args []string) (err error) {
	o.args = args
	o.clusterFlags = clusterFlags(cmd)
	if len(args) == 0 && !o.sel.HasFiles() {
		// No TYPE: every kind the server lists.
		o.sel.AllKinds = true
	}
	if err := o.output.parse(); err != nil {
		return err
	}
	if o.ruleSet, err = audit.ParseRules(o.rules); err != nil {
		return fmt.Errorf("--rules %w", err)
	}
	if o.pal, err = o.palette(); err != nil {
		return err
	}
	o.printer = choosePrinter(o.streams.Out, o.output.out, nil, textView[*v1alpha1.AuditReport]{one: o.printTable, documents: reviewDocuments(auditReview).with(viewHTML, o.auditPage)})
	return nil
}

// printTable is audit's text view: the findings' table, and nothing when
// nothing was audited ("No findings in 0 objects" would read as a pass:
// the run's error says what happened).
func (o *auditOptions) printTable(w io.Writer, rep *v1alpha1.AuditReport) error {
	if nothingAudited(rep) {
		return nil
	}
	return render.AuditReport(w, rep, render.AuditOptions{Wide: o.output.out.Name == viewWide, Clusters: o.clusters > 1}, o.pal)
}

// nothingAudited: no object was scanned, and kinds could not be listed.
func nothingAudited(rep *v1alpha1.AuditReport) bool {
	return rep.Scanned == 0 && len(rep.Unlisted) > 0
}

// validate checks the flags together.
func (o *auditOptions) validate() error {
	if v1alpha1.Severity(o.failOn).Rank() < 0 {
		return fmt.Errorf("--fail-on must be one of %s, not %q", strings.Join(severityNames(), ", "), o.failOn)
	}
	if m := v1alpha1.FixMode(o.fix); !slices.Contains(audit.FixModes, m) {
		return fmt.Errorf("--fix must be adopt or forget, not %q", o.fix)
	}
	if o.concurrency < 1 {
		return errors.New("--concurrency must be at least 1")
	}
	if o.threshold < 1 || o.threshold > ownership.AnnotationLimit {
		return fmt.Errorf("--last-applied-threshold must be between 1 and %d bytes, not %d", ownership.AnnotationLimit, o.threshold)
	}
	if len(o.allow) > 0 && len(o.expect) == 0 {
		return errors.New("--allow-manager goes with --expect-manager: name the expected managers too")
	}
	for _, m := range o.expect {
		if err := ownership.ValidateGlob(m); err != nil {
			return fmt.Errorf("--expect-manager: %w", err)
		}
	}
	for _, m := range o.allow {
		if err := ownership.ValidateGlob(m); err != nil {
			return fmt.Errorf("--allow-manager: %w", err)
		}
	}
	if o.allContexts && o.configFlags.Context != nil && *o.configFlags.Context != "" {
		return errors.New("give --context or --all-contexts, not both")
	}
	if o.sel.LabelSelector != "" {
		if _, err := labels.Parse(o.sel.LabelSelector); err != nil {
			return fmt.Errorf("-l %s: %w", o.sel.LabelSelector, err)
		}
	}
	if c := o.configFlags.Context; c != nil && strings.Contains(*c, ",") {
		seen := map[string]bool{}
		for _, n := range strings.Split(*c, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				return fmt.Errorf("--context %q names an empty context: give names separated by commas", *c)
			}
			if seen[n] {
				return fmt.Errorf("--context %q names %s twice", *c, n)
			}
			seen[n] = true
		}
	}
	return o.sel.Validate(o.args)
}

// auditLong is the command's --help text; its list of codes is
// audit.Table's.
var auditLong = `Audit the managedFields of every object of every listable kind (or of the
kinds and objects named), through chunked metadata-only lists: memory stays
flat however many objects there are, and no object content is read.

` + audit.CodesHelp() + `
Each finding names the kubectl-ssa command that fixes it (-o wide, or "fix"
in -o json/yaml), with the same cluster flags. Drift and manual edits have
two ("fixes" in -o json/yaml says what each does to the values): adopt, the
default when the object has an applier to adopt them, gives the fields to
it, so that its next apply keeps or reverts them as its manifest says (the
declared state; reverting the pod template rolls the pods); forget
(--fix forget) makes the editor let go: the edited values stay, owned by
nobody, until an apply whose manifest sets them, which then sets its value
with no conflict (nothing protects the edit any more).

A hand edit's fields that an applier applies since are no drift nor
manual edit: the applier holds them at the same values.

--rules turns findings on (+CODE) and off (-CODE): --rules=+imperative,+adopted-edit
adds the optional ones, --rules=-rollout-restart leaves one out.

Several clusters: --context a,b or --all-contexts audits them side by side;
each row names its cluster.

Exit status: 0 no finding at or above --fail-on; 1 there is one; 2 an error.`
