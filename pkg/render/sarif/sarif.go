// Package sarif writes a run's problems as a SARIF 2.1.0 log (OASIS
// Static Analysis Results Interchange Format), which code scanning reads:
// each result at the file and line of the field in the input manifest,
// so the pull request's diff is annotated where the field is set. The
// structs are the parts of the 2.1.0 schema kubectl-ssa fills
// (testdata/sarif-schema-2.1.0.json, the official schema, validates them).
package sarif

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
)

// The log's schema and version.
const (
	Schema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	Version = "2.1.0"
	// InformationURI is kubectl-ssa's home.
	InformationURI = "https://github.com/kubectl-ssa/kubectl-ssa"
)

// Log is a SARIF log.
type Log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// Run is one run of the tool.
type Run struct {
	Tool              Tool               `json:"tool"`
	AutomationDetails *AutomationDetails `json:"automationDetails,omitempty"`
	Results           []Result           `json:"results"`
}

// AutomationDetails names the run's category (code scanning keeps one
// analysis per category).
type AutomationDetails struct {
	ID string `json:"id"`
}

// Tool is the analysis tool.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver is the tool's main component, with its rules.
type Driver struct {
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	InformationURI string `json:"informationUri"`
	Rules          []Rule `json:"rules"`
}

// Rule is a reportingDescriptor: one of our codes.
type Rule struct {
	ID                   string         `json:"id"`
	ShortDescription     Message        `json:"shortDescription"`
	FullDescription      Message        `json:"fullDescription"`
	Help                 Message        `json:"help"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration Configuration  `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

// Configuration is a rule's default level.
type Configuration struct {
	Level review.Level `json:"level"`
}

// Message is a text, with its Markdown when it has one.
type Message struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

// Result is one problem.
type Result struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               review.Level      `json:"level"`
	Message             Message           `json:"message"`
	Locations           []Location        `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

// Location is where a result is: the manifest's file and line when the
// object came from a file, and always the object and field by name.
type Location struct {
	PhysicalLocation *PhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []LogicalLocation `json:"logicalLocations"`
}

// PhysicalLocation is a file and a region of it.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           *Region          `json:"region,omitempty"`
}

// ArtifactLocation is a file, by URI (relative to the repository when
// the manifest was given by a relative path).
type ArtifactLocation struct {
	URI string `json:"uri"`
}

// Region is a line of a file.
type Region struct {
	StartLine int `json:"startLine"`
}

// LogicalLocation names the object, and the field in it.
type LogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// Write writes the document as a SARIF log of one run.
func Write(w io.Writer, d *review.Document) error {
	run := Run{
		Tool:              Tool{Driver: Driver{Name: "kubectl-ssa", Version: d.Version, InformationURI: InformationURI, Rules: rules(d.Rules)}},
		AutomationDetails: &AutomationDetails{ID: "kubectl-ssa/" + d.Command + "/"},
		Results:           []Result{},
	}
	index := map[string]int{}
	for i, r := range d.Rules {
		index[r.ID] = i
	}
	for _, o := range d.Objects {
		for _, p := range o.Problems {
			run.Results = append(run.Results, result(o, p, index[p.Rule]))
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(Log{Schema: Schema, Version: Version, Runs: []Run{run}})
}

func rules(rs []review.Rule) []Rule {
	out := make([]Rule, 0, len(rs))
	for _, r := range rs {
		help := r.Help
		if r.Fix != "" {
			help += "\n\nFix: " + r.Fix
		}
		out = append(out, Rule{ID: r.ID, ShortDescription: Message{Text: r.Short}, FullDescription: Message{Text: r.Help},
			Help: Message{Text: help, Markdown: help}, DefaultConfiguration: Configuration{Level: r.Level},
			Properties: map[string]any{"tags": []string{"kubernetes", "server-side-apply"}}})
	}
	return out
}

func result(o review.Object, p review.Problem, ruleIndex int) Result {
	object := o.Ref.Display()
	if o.Cluster != "" {
		object = o.Cluster + ": " + object
	}
	text := object + ": " + p.Message
	if p.Fix != "" {
		text += "\nFix: " + p.Fix
	}
	logical := LogicalLocation{Name: o.Ref.Name, FullyQualifiedName: object, Kind: "object"}
	if len(p.Path) > 0 {
		logical = LogicalLocation{Name: p.Path.String(), FullyQualifiedName: object + p.Path.String(), Kind: "property"}
	}
	loc := Location{LogicalLocations: []LogicalLocation{logical}}
	if o.URI != "" {
		loc.PhysicalLocation = &PhysicalLocation{ArtifactLocation: ArtifactLocation{URI: o.URI}}
		if line := lineOf(o, p); line > 0 {
			loc.PhysicalLocation.Region = &Region{StartLine: line}
		}
	}
	props := map[string]any{"object": o.Ref.Display(), "apiVersion": o.Ref.APIVersion}
	if len(p.Owners) > 0 {
		props["owners"] = p.Owners
	}
	if o.Cluster != "" {
		props["cluster"] = o.Cluster
	}
	if o.URI != "" && len(p.Path) > 0 {
		// exactLine: the file sets the field itself, not only the
		// object or a parent of it.
		props["exactLine"] = p.Exact
	}
	if p.Fix != "" {
		props["fix"] = p.Fix
	}
	return Result{RuleID: p.Rule, RuleIndex: ruleIndex, Level: p.Level, Message: Message{Text: text}, Locations: []Location{loc},
		PartialFingerprints: map[string]string{"kubectlSsaProblem/v1": fingerprint(o, p)}, Properties: props}
}

// lineOf is the problem's line, else its object's.
func lineOf(o review.Object, p review.Problem) int {
	if p.Line > 0 {
		return p.Line
	}
	return o.Line
}

// fingerprint identifies a problem across runs (the same rule, object,
// field and owners), whatever line the field moves to.
func fingerprint(o review.Object, p review.Problem) string {
	key := []string{p.Rule, o.Cluster, o.Ref.APIVersion, o.Ref.Display(), p.Path.String()}
	h := sha256.Sum256([]byte(strings.Join(append(key, p.Owners...), "\x00")))
	return hex.EncodeToString(h[:16])
}
