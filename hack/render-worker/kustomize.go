package main

import (
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
)

// kustomizeRequest: build the kustomization in Dir (absolute, inside Root) as `kustomize build` would, reading
// only Root, with the files of Replace (absolute path → contents) read in place of the checkout's.
type kustomizeRequest struct {
	Root    string            `json:"root"`
	Dir     string            `json:"dir"`
	Replace map[string][]byte `json:"replace,omitempty"`
}

// kustomizeBuild is what kustomize v5.8.2's build command runs with --load-restrictor LoadRestrictionsNone
// and no other flag (commands/build/build.go: HonorKustomizeFlags over MakeDefaultOptions): legacy
// reordering unspecified, builtin plugins only, no exec functions, Helm off. Its output equals the binary's by
// construction (the same api module, the same options), over a filesystem confined to the checkout. The
// resources are printed as the binary prints them by buildOutput (objects.go).
func kustomizeBuild(req kustomizeRequest) (resmap.ResMap, error) {
	fs, err := newConfinedFS(req.Root, req.Replace)
	if err != nil {
		return nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	opts.LoadRestrictions = types.LoadRestrictionsNone
	opts.PluginConfig.HelmConfig.Enabled = false
	opts.PluginConfig.FnpLoadingOptions.EnableExec = false
	opts.PluginConfig.FnpLoadingOptions.Network = false
	return krusty.MakeKustomizer(opts).Run(fs, req.Dir)
}
