package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// Stamped by the release build (Makefile, .goreleaser.yaml):
//
//	-ldflags "-X github.com/kubectl-ssa/kubectl-ssa/cmd.version=v0.1.0
//	          -X github.com/kubectl-ssa/kubectl-ssa/cmd.gitCommit=3f684b1
//	          -X github.com/kubectl-ssa/kubectl-ssa/cmd.buildDate=2026-11-23T09:12:00Z"
//
// buildDate is the commit's date, not the wall clock, so that two builds of
// one commit are the same bytes.
var (
	version   = "dev"
	gitCommit = ""
	buildDate = ""
)

// serverVersionTimeout bounds the request for the server's version unless
// --request-timeout says otherwise: version must answer at once when no
// cluster is reachable.
const serverVersionTimeout = 5 * time.Second

// engineKubernetesVersion is the Kubernetes minor of the k8s.io/apimachinery
// in go.mod, whose copy of the apiserver's field manager explain-conflict
// runs: predictions are exact for servers of this minor. A constant, not
// read from the build info, which test binaries lack; TestEngineVersion
// fails when go.mod moves to another minor without it.
const engineKubernetesVersion = "1.37"

const apimachineryModule = "k8s.io/apimachinery"

func versionInfo() v1alpha1.Version {
	v := v1alpha1.Version{
		TypeMeta:  v1alpha1.NewTypeMeta(v1alpha1.VersionKind),
		Version:   version,
		GitCommit: gitCommit,
		BuildDate: buildDate,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Libraries: map[string]string{},

		EngineKubernetesVersion: engineKubernetesVersion,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		// A plain "go build" in a checkout records the commit itself.
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && v.GitCommit == "":
				v.GitCommit = s.Value
			case s.Key == "vcs.time" && v.BuildDate == "":
				v.BuildDate = s.Value
			}
		}
		for _, d := range bi.Deps {
			switch d.Path {
			case "k8s.io/client-go", apimachineryModule, "k8s.io/cli-runtime", "sigs.k8s.io/structured-merge-diff/v6":
				v.Libraries[d.Path] = d.Version
			}
		}
	}
	return v
}

type versionOptions struct {
	g      *globalOptions
	output string
	out    render.Output
	client bool
}

func newVersionCmd(g *globalOptions) *cobra.Command {
	o := &versionOptions{g: g}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl ssa and of the server",
		Long: `Print the version of kubectl ssa (release, commit, build date) and, when a
cluster is reachable, the version of its API server.

explain-conflict and diff run the field manager of the k8s.io/apimachinery
release kubectl ssa is built with, and apply the defaults of the server's
minor. The server line says how faithful predictions are for it: exact (the
fidelity tests pass against a real apiserver of that minor), differs (known
differences, printed as warnings), or untested (a minor no test bed here
runs). explain-conflict --verify compares a prediction with the server's
own dry run whatever its version.`,
		Example: `  # Print the version of kubectl ssa and of the current context's server
  kubectl ssa version

  # Print only the version of kubectl ssa, without contacting a server
  kubectl ssa version --client

  # Print both, with library versions, as JSON
  kubectl ssa version -o json`,
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "Output format: json, yaml, jsonpath=..., go-template=..., or empty for text.")
	cmd.Flags().BoolVar(&o.client, "client", false, "Print the client version only; do not contact the server.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// complete reads -o into the one printer (empty: the text lines).
func (o *versionOptions) complete(*cobra.Command, []string) error {
	var err error
	if o.out, err = render.ParseOutput(o.output, []string{""}); err != nil {
		return fmt.Errorf("--output must be json, yaml, jsonpath=..., go-template=... or empty, not %q", o.output)
	}
	return nil
}

// validate has nothing to check together: --client and -o go with each
// other.
func (o *versionOptions) validate() error { return nil }

func (o *versionOptions) run(ctx context.Context) error {
	v := versionInfo()
	out, errOut := o.g.streams.Out, o.g.streams.ErrOut
	var serverErr error
	if !o.client {
		server, err := fetchServerVersion(ctx, o.g.configFlags)
		if err != nil {
			// The client version is still worth printing; the exit says
			// the server's is unknown, as kubectl version's does.
			serverErr = &ExitError{Code: CodeError, Err: fmt.Errorf("server version unknown: %w (--client prints the client's alone)", err)}
		} else {
			v.ServerVersion = server
			v.ServerSupport, v.ServerNotes = serverSupport(server, v.EngineKubernetesVersion)
		}
	}
	for _, n := range v.ServerNotes {
		render.Warning(errOut, n+"; --verify compares a prediction with this server's dry run")
	}
	if o.output != "" {
		if err := o.out.Print(out, []any{v}, false); err != nil {
			return err
		}
		return serverErr
	}
	details := []string{}
	if v.GitCommit != "" {
		details = append(details, "commit "+v.GitCommit)
	}
	if v.BuildDate != "" {
		details = append(details, "built "+v.BuildDate)
	}
	details = append(details, v.GoVersion, v.Platform)
	fmt.Fprintf(out, "kubectl-ssa %s (%s)\n", v.Version, strings.Join(details, ", "))
	if v.ServerVersion != nil {
		how := string(v.ServerSupport)
		if v.ServerSupport == v1alpha1.ServerExact {
			how = "exact: verified against a real apiserver of this minor"
		}
		fmt.Fprintf(out, "server %s (%s)\n", render.Escape(v.ServerVersion.GitVersion), how)
	}
	return serverErr
}

// fetchServerVersion reads the server's /version with a short timeout.
func fetchServerVersion(ctx context.Context, getter genericclioptions.RESTClientGetter) (*apimachineryversion.Info, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	// Without a kubeconfig, client-go falls back to kubectl's historical
	// default server; saying so beats "connection refused".
	if raw, err := getter.ToRawKubeConfigLoader().RawConfig(); err == nil && len(raw.Clusters) == 0 && cfg.Host == clientcmd.ClusterDefaults.Server {
		return nil, fmt.Errorf("no kubeconfig (KUBECONFIG, ~/.kube/config or --kubeconfig) and no --server")
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = serverVersionTimeout
	}
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	body, err := client.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var info apimachineryversion.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("%s/version is not a version: %w", cfg.Host, err)
	}
	return &info, nil
}
