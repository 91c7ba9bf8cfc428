package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// confinedFS is kustomize's on-disk filesystem confined to one checkout, read-only, with some files replaced
// by the controller's text (the package's kustomization with spec.kustomize applied, sops-decrypted sources).
//
// Modelled on Flux's fluxcd/pkg/kustomize/filesys fsSecure: every path is resolved (symlinks followed) and
// must stay inside root, so a base, a patch or a generator file that leads out of the checkout is refused
// here whatever kustomize's load restrictor says (the build runs with LoadRestrictionsNone, as the binary
// does: bases elsewhere in the repository are common). The kernel (Landlock) and the controller's tree
// check (kustomize-check.ts) refuse the same paths independently. Writes are refused: a build never needs one.
type confinedFS struct {
	root    string
	disk    filesys.FileSystem
	replace map[string][]byte
}

func newConfinedFS(root string, replace map[string][]byte) (*confinedFS, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(real)
	if err != nil {
		return nil, err
	}
	fs := &confinedFS{root: abs, disk: filesys.MakeFsOnDisk(), replace: map[string][]byte{}}
	for p, text := range replace {
		// keyed by the real path, as kustomize reaches it (it resolves each kustomization directory)
		key, err := fs.resolve(p)
		if err != nil {
			return nil, err
		}
		fs.replace[key] = text
	}
	return fs, nil
}

// errOutside names the path as kustomize asked for it; the controller turns the checkout prefix back into
// a repository path before anyone sees it.
type errOutside struct{ path string }

func (e errOutside) Error() string {
	return fmt.Sprintf("%s is outside the repository: files outside the checkout cannot be read", e.path)
}

// resolve returns the real absolute path of p (its longest existing prefix resolved, the rest appended),
// or errOutside when that leaves the root.
func (fs *confinedFS) resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(real); err == nil {
			real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(real)
		if parent == real {
			break
		}
		rest = filepath.Join(filepath.Base(real), rest)
		real = parent
	}
	if !within(fs.root, real) {
		return "", errOutside{p}
	}
	return real, nil
}

// within: path is root or below it, compared by whole segments (/a/bc is not within /a/b).
func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

func (fs *confinedFS) inside(p string) bool {
	_, err := fs.resolve(p)
	return err == nil
}

var errReadOnly = fmt.Errorf("the render worker's filesystem is read-only")

func (fs *confinedFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (fs *confinedFS) Mkdir(string) error                  { return errReadOnly }
func (fs *confinedFS) MkdirAll(string) error               { return errReadOnly }
func (fs *confinedFS) RemoveAll(string) error              { return errReadOnly }
func (fs *confinedFS) WriteFile(string, []byte) error      { return errReadOnly }

func (fs *confinedFS) Open(p string) (filesys.File, error) {
	real, err := fs.resolve(p)
	if err != nil {
		return nil, err
	}
	if _, ok := fs.replace[real]; ok {
		// kustomize reads files through ReadFile; Open of a replaced file would bypass the replacement
		return nil, fmt.Errorf("%s: open of a replaced file is not supported", p)
	}
	return fs.disk.Open(p)
}

func (fs *confinedFS) IsDir(p string) bool { return fs.inside(p) && fs.disk.IsDir(p) }

func (fs *confinedFS) ReadDir(p string) ([]string, error) {
	if _, err := fs.resolve(p); err != nil {
		return nil, err
	}
	return fs.disk.ReadDir(p)
}

// CleanedAbs is the directory kustomize roots each kustomization at: it must be inside the checkout.
func (fs *confinedFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	d, f, err := fs.disk.CleanedAbs(p)
	if err != nil {
		return d, f, err
	}
	if !fs.inside(string(d)) {
		return "", "", errOutside{p}
	}
	return d, f, nil
}

func (fs *confinedFS) Exists(p string) bool { return fs.inside(p) && fs.disk.Exists(p) }

func (fs *confinedFS) Glob(pattern string) ([]string, error) {
	paths, err := fs.disk.Glob(pattern)
	if err != nil {
		return nil, err
	}
	kept := paths[:0]
	for _, p := range paths {
		if fs.inside(p) {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

func (fs *confinedFS) ReadFile(p string) ([]byte, error) {
	real, err := fs.resolve(p)
	if err != nil {
		return nil, err
	}
	if text, ok := fs.replace[real]; ok {
		return append([]byte(nil), text...), nil
	}
	return fs.disk.ReadFile(p)
}

func (fs *confinedFS) Walk(p string, walkFn filepath.WalkFunc) error {
	if _, err := fs.resolve(p); err != nil {
		return err
	}
	return fs.disk.Walk(p, func(path string, info os.FileInfo, err error) error {
		if !fs.inside(path) {
			return errOutside{path}
		}
		return walkFn(path, info, err)
	})
}
