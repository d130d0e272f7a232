package cmd

import (
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// snapshotOptions are the flags of kubectl ssa snapshot.
type snapshotOptions struct {
	*globalOptions
	sel     kube.Selection
	args    []string
	out     string
	saltHex string
	salt    []byte
}

func newSnapshotCmd(g *globalOptions) *cobra.Command {
	o := &snapshotOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "snapshot TYPE[,TYPE...] -o FILE",
		Short: "Save what predictions read from the cluster, to predict offline with --snapshot",
		Long: `Save, with gets and lists only, what explain-conflict and diff read from
the cluster to predict an apply to the selected objects: the objects with
their managedFields and resourceVersion, the OpenAPI v3 documents of the
group-versions used, the CRDs, admission's configuration (admission
policies and their bindings and params, webhook configurations,
LimitRanges, ServiceAccounts, the classes, namespaces and their labels),
the HorizontalPodAutoscalers, discovery and the server's version.
explain-conflict and diff --snapshot FILE then predict from the file with
no cluster reachable (CI without credentials).

The file is gzip-compressed JSON (kind Snapshot, apiVersion
ssa.kubectl-ssa.io/v1alpha1; docs/snapshot.md). A Secret's values are never
stored: each is an HMAC-SHA256 keyed by a random salt kept in the file
(--salt fixes it), enough to tell the same value from another. The same
cluster state and salt give the same bytes.`,
		Example: `  # Deployments, Services and ConfigMaps of namespace web
  kubectl ssa snapshot deployments,services,configmaps -n web -o web.snapshot

  # Every kind in every namespace
  kubectl ssa snapshot --all-kinds -A -o cluster.snapshot`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(o),
	}
	o.sel.AddFlags(cmd.Flags(), kube.SelectionFlags{What: "to snapshot", AllKinds: true})
	for _, f := range []string{"filename", "kustomize", "recursive"} {
		_ = cmd.Flags().MarkHidden(f) // (whole kinds only: validate refuses them)
	}
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "The file to write (- for standard output).")
	cmd.Flags().StringVar(&o.saltHex, "salt", "", "The salt of the Secret values' hashes, in hex (default: 32 random bytes).")
	return cmd
}

func (o *snapshotOptions) complete(_ *cobra.Command, args []string) error {
	o.args = args
	return nil
}

func (o *snapshotOptions) validate() error {
	if o.out == "" {
		return errors.New("give the file to write with -o FILE (- for standard output)")
	}
	if format, _, _ := strings.Cut(o.out, "="); slices.Contains(outputFormats, format) {
		return fmt.Errorf("-o is the file to write, not an output format: the snapshot is gzip-compressed JSON (-o ./%s writes a file of that name)", o.out)
	}
	if err := checkOutFile(o.out); err != nil {
		return err
	}
	if o.sel.HasFiles() {
		return errors.New("a snapshot lists whole kinds: give TYPE[,TYPE...] or --all-kinds, not -f or -k")
	}
	if len(o.args) == 0 && !o.sel.AllKinds {
		return errors.New("give the kinds to snapshot (deployments,services) or --all-kinds")
	}
	if len(o.args) > 0 && o.sel.AllKinds {
		return errors.New("give kinds or --all-kinds, not both")
	}
	if o.saltHex == "" {
		o.salt = make([]byte, 32)
		_, err := rand.Read(o.salt)
		return err
	}
	var err error
	if o.salt, err = hex.DecodeString(o.saltHex); err != nil || len(o.salt) < 16 {
		return fmt.Errorf("--salt must be at least 16 bytes in hex (32 hex digits), not %q", o.saltHex)
	}
	return nil
}

// checkOutFile tells, before the cluster is read, why -o FILE could not
// be written: a directory, or a file in a directory that is not there.
func checkOutFile(out string) error {
	if out == "-" {
		return nil
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return fmt.Errorf("-o %s is a directory: give a file in it (-o %s)", out, filepath.Join(out, "snapshot.json.gz"))
	}
	if dir := filepath.Dir(out); dir != "." {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("-o %s: the directory %s does not exist: create it first", out, dir)
		}
	}
	return nil
}

// outputFormats are the -o formats of kubectl and of the other commands,
// which snapshot's -o FILE refuses as a file name.
var outputFormats = []string{"json", "yaml", "wide", "name", "jsonpath", "jsonpath-file", "go-template", "go-template-file", "custom-columns", "template", "html", "sarif", "markdown", "junit", "text"}

func (o *snapshotOptions) run(ctx context.Context) error {
	c, err := o.cluster()
	if err != nil {
		return err
	}
	if err := c.CheckServer(); err != nil {
		return err
	}
	kinds, ok, err := o.sel.Kinds(ctx, c, o.args, nil)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("a snapshot lists whole kinds: give TYPE[,TYPE...] (not TYPE NAME) or --all-kinds")
	}
	snap, err := source.NewCluster(c, "").TakeSnapshot(ctx, source.TakeOptions{Kinds: kinds, LabelSelector: o.sel.LabelSelector, Salt: o.salt, Now: time.Now()})
	if err != nil {
		return err
	}
	for _, r := range kinds.Resources {
		snap.Selection.Resources = append(snap.Selection.Resources, r.GVR.GroupResource().String()+"."+r.GVR.Version)
	}
	snap.Selection.Namespace, snap.Selection.AllNamespaces, snap.Selection.LabelSelector = kinds.Namespace, kinds.Namespace == "", o.sel.LabelSelector
	if err := o.write(snap); err != nil {
		return err
	}
	n := 0
	for _, l := range snap.Lists {
		n += len(l.Items)
	}
	if w := refusedWarning(snap); w != "" {
		fmt.Fprintln(o.streams.ErrOut, w)
	}
	if o.out != "-" {
		fmt.Fprintf(o.streams.ErrOut, "Wrote %s: %d objects in %d lists, taken %s from %s.\n", o.out, n, len(snap.Lists), snap.TakenAt.UTC().Format(time.RFC3339), snap.ServerVersion.GitVersion)
	}
	return nil
}

// refusedWarning names the lists the server refused ("" when none was):
// the predictions that read them are not exact, or refused.
func refusedWarning(snap *v1alpha1.Snapshot) string {
	var names []string
	for _, l := range snap.Lists {
		if l.Refused == "" {
			continue
		}
		name := schema.GroupResource{Group: l.Group, Resource: l.Resource}.String()
		if l.Namespace != "" {
			name += " in namespace " + l.Namespace
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("warning: the server refused %d lists (kept as refused; a prediction that reads them is not exact, or fails): %s: give the snapshot's account get and list on them", len(names), strings.Join(names, ", "))
}

// write writes snap gzip-compressed (no name, no time in the header: the
// same snapshot, the same bytes), through a file renamed into place.
func (o *snapshotOptions) write(snap any) error {
	b, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	if o.out == "-" {
		return gzipTo(o.streams.Out, b)
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.out), ".snapshot-*")
	if err != nil {
		return fmt.Errorf("-o %s: %w", o.out, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := gzipTo(tmp, b); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("-o %s: %w", o.out, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("-o %s: %w", o.out, err)
	}
	if err := os.Rename(tmp.Name(), o.out); err != nil {
		return fmt.Errorf("-o %s: %w", o.out, err)
	}
	return nil
}

func gzipTo(w io.Writer, b []byte) error {
	gz := gzip.NewWriter(w)
	if _, err := gz.Write(b); err != nil {
		return err
	}
	return gz.Close()
}
