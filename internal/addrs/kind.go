package addrs

import (
	"fmt"
	"strings"
	"sync"
)

// Kind is a resource type: what a block generates.
type Kind uint8

// The resource kinds. The zero Kind is no kind: it marks an address that
// was never set.
const (
	Image Kind = iota + 1
	Video
)

var kindNames = [...]string{Image: "image", Video: "video"}

// Kinds lists every kind, in address order.
var Kinds = []Kind{Image, Video}

// String is the kind as the configuration writes it: "image" or "video".
func (k Kind) String() string {
	if k == Image || k == Video {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind reads a kind as the configuration writes it.
func ParseKind(s string) (Kind, bool) {
	switch s {
	case "image":
		return Image, true
	case "video":
		return Video, true
	}
	return 0, false
}

// Endpoint is where an instance's request is posted: one of the reference
// service's job-creation endpoints (the table below is the one list of
// them in genform; docs/service.md describes what each takes), or a model
// of a live provider. It is comparable, and the zero Endpoint is none.
//
// It is one pointer: every instance, record and history entry holds one,
// so each distinct endpoint is kept once (interned) and endpoints compare
// by that pointer.
type Endpoint struct{ d *endpoint }

type endpoint struct {
	// provider is the name of the provider the endpoint is a model (or,
	// for the reference service, an endpoint) of.
	provider string
	// target is the reference endpoint's path, or the model.
	target string
	kind   Kind
}

// interned holds every endpoint made, by value.
var interned sync.Map // endpoint -> *endpoint

func intern(e endpoint) Endpoint {
	if d, ok := interned.Load(e); ok {
		return Endpoint{d.(*endpoint)}
	}
	d, _ := interned.LoadOrStore(e, &e)
	return Endpoint{d.(*endpoint)}
}

// Reference is the name of the reference service as a provider: the
// provider of every block that names none. Its endpoints are paths,
// written as they are (without the name) in the state, plans and
// messages, as genform has written them from its first version.
const Reference = "reference"

// The reference service's job-creation endpoints.
var (
	Text2Image  = intern(endpoint{provider: Reference, target: "/v1/jobs/text2image", kind: Image})
	Image2Video = intern(endpoint{provider: Reference, target: "/v1/jobs/gen2/image2video", kind: Video})
	KeyFrames   = intern(endpoint{provider: Reference, target: "/v1/jobs/gen2/afc", kind: Video})
	Text2Video  = intern(endpoint{provider: Reference, target: "/v1/jobs/gen2/text2video", kind: Video})
)

// Endpoints lists every job-creation endpoint of the reference service.
var Endpoints = []Endpoint{Text2Image, Image2Video, KeyFrames, Text2Video}

var endpointTitles = map[Endpoint]string{
	Text2Image:  "text-to-image",
	Image2Video: "image-to-video",
	KeyFrames:   "key-frame conditioning",
	Text2Video:  "text-to-video",
}

// ModelEndpoint is model of provider, making kind.
func ModelEndpoint(provider, model string, kind Kind) Endpoint {
	return intern(endpoint{provider: provider, target: model, kind: kind})
}

// Equal reports whether e and o are one endpoint (for go-cmp, which reads
// no unexported fields).
func (e Endpoint) Equal(o Endpoint) bool { return e == o }

// IsZero reports whether e is no endpoint.
func (e Endpoint) IsZero() bool { return e == Endpoint{} }

// Provider is the name of the provider the endpoint is a model of
// (Reference for the reference service's endpoints); "" for no endpoint.
func (e Endpoint) Provider() string {
	if e.d == nil {
		return ""
	}
	return e.d.provider
}

// Target is the reference endpoint's path, or the provider's model.
func (e Endpoint) Target() string {
	if e.d == nil {
		return ""
	}
	return e.d.target
}

// Path is how the endpoint is written in the state, plans and messages:
// the reference endpoint's path ("/v1/jobs/text2image"), or the provider's
// name and model ("fal:fal-ai/flux/dev").
func (e Endpoint) Path() string {
	if p := e.Provider(); p != "" && p != Reference {
		return p + ":" + e.d.target
	}
	return e.Target()
}

// Kind is what the endpoint generates.
func (e Endpoint) Kind() Kind {
	if e.d == nil {
		return 0
	}
	return e.d.kind
}

// Title names the endpoint in messages: "text-to-image", or the model.
func (e Endpoint) Title() string {
	if t, ok := endpointTitles[e]; ok {
		return t
	}
	return e.Target()
}

// String is Path, or "Endpoint()" for none.
func (e Endpoint) String() string {
	if e.IsZero() {
		return "Endpoint()"
	}
	return e.Path()
}

// EndpointOf returns the reference endpoint whose path is p.
func EndpointOf(p string) (Endpoint, bool) {
	for _, e := range Endpoints {
		if e.d.target == p {
			return e, true
		}
	}
	return Endpoint{}, false
}

// ParseEndpoint reads an endpoint as Path writes it: a reference path, or
// "provider:model" of a model that makes kind.
func ParseEndpoint(s string, kind Kind) (Endpoint, bool) {
	if e, ok := EndpointOf(s); ok {
		return e, true
	}
	provider, model, ok := strings.Cut(s, ":")
	if !ok || provider == "" || provider == Reference || model == "" || strings.HasPrefix(s, "/") || (kind != Image && kind != Video) {
		return Endpoint{}, false
	}
	for _, r := range provider {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' && r != '-' {
			return Endpoint{}, false
		}
	}
	return ModelEndpoint(provider, model, kind), true
}
