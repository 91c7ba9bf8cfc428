//go:build !kustomizeonly

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader"
	v2loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// helmRequest: `helm template <ReleaseName> <Chart> --namespace <Namespace> --skip-tests [--include-crds]
// [--kube-version K --api-versions A...] --values V...` as the controller runs it (adapters/render/helm.ts).
type helmRequest struct {
	Root        string   `json:"root"`
	Chart       string   `json:"chart"`
	ReleaseName string   `json:"releaseName"`
	Namespace   string   `json:"namespace"`
	IncludeCRDs bool     `json:"includeCRDs"`
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
	// Values layers in order, later ones win: a file of the checkout (Path) or text the controller gives
	// (valuesFrom, inline values), named by Name in messages.
	Values []valuesLayer `json:"values,omitempty"`
	// spec.helm.lookup: `lookup` asks the controller (lookup.go); off, it answers nothing, as `helm template`
	Lookup bool `json:"lookup,omitempty"`
}

type valuesLayer struct {
	Path string `json:"path,omitempty"`
	Name string `json:"name,omitempty"`
	Text string `json:"text,omitempty"`
}

// helmTemplate follows helm v4's `template` command (pkg/cmd/template.go, runInstall in pkg/cmd/install.go)
// step by step, with the same defaults as its flags: a client-only dry run (capabilities given, never asked
// of a cluster; the release store in memory; `lookup` answers nothing, as the engine has no cluster client),
// the manifest then each hook as "---\n# Source: …", test hooks dropped (--skip-tests). What the command does
// for flags the controller never passes (--show-only, --output-dir, post-renderers, --dependency-update, remote
// charts) is left out. Its output equals the binary's for the same chart and values.
func helmTemplate(req helmRequest, ask *lookupChannel) ([]byte, error) {
	if err := confined(req.Root, req.Chart); err != nil {
		return nil, err
	}
	cfg := action.NewConfiguration()
	if req.Lookup {
		// the engine's template funcs are overridden by the configuration's custom ones (engine.initFunMap)
		cfg.CustomTemplateFuncs = template.FuncMap{"lookup": ask.lookup}
	}
	client := action.NewInstall(cfg)
	if req.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(req.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("invalid kube version '%s': %w", req.KubeVersion, err)
		}
		client.KubeVersion = kv
	}
	client.DryRunStrategy = action.DryRunClient
	client.ReleaseName = "release-name"
	client.Replace = true
	var apis []string
	for _, a := range req.APIVersions {
		// --api-versions is a string slice flag: a comma separates entries
		apis = append(apis, strings.Split(a, ",")...)
	}
	client.APIVersions = common.VersionSet(apis)
	client.IncludeCRDs = req.IncludeCRDs
	// the flags' defaults (pkg/cmd/install.go addInstallFlags)
	client.ServerSideApply = true

	rel, err := runInstall(req, client)
	if err != nil {
		if rel != nil {
			return nil, fmt.Errorf("%w\n\nUse --debug flag to render out invalid YAML", err)
		}
		return nil, err
	}
	var manifests bytes.Buffer
	fmt.Fprintln(&manifests, strings.TrimSpace(rel.Manifest))
	for _, m := range rel.Hooks {
		if slices.Contains(m.Events, release.HookTest) {
			continue // --skip-tests
		}
		fmt.Fprintf(&manifests, "---\n# Source: %s\n%s\n", m.Path, m.Manifest)
	}
	return manifests.Bytes(), nil
}

func runInstall(req helmRequest, client *action.Install) (*release.Release, error) {
	name, chartRef, err := client.NameAndChart([]string{req.ReleaseName, req.Chart})
	if err != nil {
		return nil, err
	}
	client.ReleaseName = name
	// LocateChart of a local directory: its absolute path
	if _, err := os.Stat(chartRef); err != nil {
		return nil, fmt.Errorf("path %q not found", chartRef)
	}
	cp, err := filepath.Abs(chartRef)
	if err != nil {
		return nil, err
	}
	vals, err := mergeValues(req)
	if err != nil {
		return nil, err
	}
	chartRequested, err := loader.Load(cp)
	if err != nil {
		return nil, err
	}
	ac, err := chart.NewAccessor(chartRequested)
	if err != nil {
		return nil, err
	}
	// checkIfInstallable, as the command has it
	switch t := ac.MetadataAsMap()["Type"]; t {
	case "", "application":
	default:
		return nil, fmt.Errorf("%s charts are not installable", t)
	}
	if req := ac.MetaDependencies(); len(req) > 0 {
		if err := action.CheckDependencies(chartRequested, req); err != nil {
			return nil, fmt.Errorf("an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: %w", err)
		}
	}
	client.Namespace = req.Namespace
	ri, err := client.RunWithContext(context.Background(), chartRequested, vals)
	var rel *release.Release
	switch r := ri.(type) {
	case *release.Release:
		rel = r
	case release.Release:
		rel = &r
	case nil:
	default:
		return nil, fmt.Errorf("unsupported release type: %T", ri)
	}
	return rel, err
}

// mergeValues is values.Options.MergeValues for --values files only, each layer read here: a file of the
// checkout (confined to it) or the controller's text.
func mergeValues(req helmRequest) (map[string]any, error) {
	base := map[string]any{}
	for _, layer := range req.Values {
		raw, name := []byte(layer.Text), layer.Name
		if layer.Path != "" {
			if err := confined(req.Root, layer.Path); err != nil {
				return nil, err
			}
			b, err := os.ReadFile(layer.Path)
			if err != nil {
				return nil, err
			}
			raw, name = b, layer.Path
		}
		current, err := v2loader.LoadValues(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("failed to parse %s: %w", name, err)
		}
		base = v2loader.MergeMaps(base, current)
	}
	return base, nil
}

// confined: path, symlinks resolved, is inside root (resolved). helm reads the chart through os directly, so
// this is checked before it starts; the controller has walked the chart (every link inside the checkout) and
// the kernel confines the worker's reads to the checkout directory.
func confined(root, path string) error {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // helm says what is missing
		}
		return err
	}
	if !within(r, p) {
		return errOutside{path}
	}
	return nil
}
