//go:build !kustomizeonly

package main

import (
	"bufio"
	"fmt"
	"io"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Helm's `lookup` with spec.helm.lookup on (docs/adr/0038): answered by the controller, as the PackageSync's
// identity in its target cluster, over the same frames. The worker stays without network: mid-render it writes
// a lookup frame ({"id":N,"lookup":{…}}) and reads the controller's answer ({"id":N,"op":"lookup-answer",
// "answer":{…}}) before the template goes on. The function is Helm's own (pkg/engine/lookup_func.go) with the
// client replaced: not found answers an empty map and no error; any other error (forbidden, no such kind)
// fails the template, as `helm install` with that identity would.

type lookupQuery struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// lookupAnswer: the object (or list) as the API server returned it, or its Status (code, reason, message).
type lookupAnswer struct {
	Object  map[string]any `json:"object,omitempty"`
	Code    int32          `json:"code,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Message string         `json:"message,omitempty"`
}

// maxLookups bounds the questions one render may ask (a template looping over lookups).
const maxLookups = 1000

// lookupChannel: the frames the render loop reads and writes, lent to the template while it renders.
type lookupChannel struct {
	mu   sync.Mutex
	in   io.Reader
	out  *bufio.Writer
	id   uint64
	asks int
}

func (c *lookupChannel) lookup(apiVersion, kind, namespace, name string) (map[string]any, error) {
	c.mu.Lock() // templates render in one goroutine; the lock only keeps the frames whole
	defer c.mu.Unlock()
	if c.asks++; c.asks > maxLookups {
		return map[string]any{}, fmt.Errorf("more than %d lookups in one render", maxLookups)
	}
	q := lookupQuery{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
	if err := writeFrame(c.out, response{ID: c.id, Lookup: &q}); err != nil {
		return map[string]any{}, err
	}
	req, err := readFrame(c.in)
	if err != nil {
		return map[string]any{}, err
	}
	if req.ID != c.id || req.Op != "lookup-answer" || req.Answer == nil {
		return map[string]any{}, fmt.Errorf("render-worker: expected the answer to lookup %d, got op %q", c.id, req.Op)
	}
	a := req.Answer
	if a.Code == 0 {
		if a.Object == nil {
			return map[string]any{}, nil
		}
		return a.Object, nil
	}
	status := apierrors.FromObject(&metav1.Status{
		Status: metav1.StatusFailure, Code: a.Code, Reason: metav1.StatusReason(a.Reason), Message: a.Message,
	})
	if apierrors.IsNotFound(status) {
		// Just return an empty interface when the object was not found, as Helm's lookup does.
		return map[string]any{}, nil
	}
	return map[string]any{}, status
}
