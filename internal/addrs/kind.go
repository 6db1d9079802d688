package addrs

import (
	"fmt"
	"strings"
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
type Endpoint struct {
	// provider is "" for the reference service.
	provider string
	// target is the reference endpoint's path, or the model.
	target string
	kind   Kind
}

// The reference service's job-creation endpoints.
var (
	Text2Image  = Endpoint{target: "/v1/jobs/text2image", kind: Image}
	Image2Video = Endpoint{target: "/v1/jobs/gen2/image2video", kind: Video}
	KeyFrames   = Endpoint{target: "/v1/jobs/gen2/afc", kind: Video}
	Text2Video  = Endpoint{target: "/v1/jobs/gen2/text2video", kind: Video}
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
	return Endpoint{provider: provider, target: model, kind: kind}
}

// Equal reports whether e and o are one endpoint (for go-cmp, which reads
// no unexported fields).
func (e Endpoint) Equal(o Endpoint) bool { return e == o }

// IsZero reports whether e is no endpoint.
func (e Endpoint) IsZero() bool { return e == Endpoint{} }

// Provider is the live provider the endpoint is a model of; "" for the
// reference service.
func (e Endpoint) Provider() string { return e.provider }

// Target is the reference endpoint's path, or the provider's model.
func (e Endpoint) Target() string { return e.target }

// Path is how the endpoint is written in the state, plans and messages:
// the reference endpoint's path ("/v1/jobs/text2image"), or the provider's
// name and model ("fal:fal-ai/flux/dev").
func (e Endpoint) Path() string {
	if e.provider != "" {
		return e.provider + ":" + e.target
	}
	return e.target
}

// Kind is what the endpoint generates.
func (e Endpoint) Kind() Kind { return e.kind }

// Title names the endpoint in messages: "text-to-image", or the model.
func (e Endpoint) Title() string {
	if t, ok := endpointTitles[e]; ok {
		return t
	}
	return e.target
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
		if e.target == p {
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
	if !ok || provider == "" || model == "" || strings.HasPrefix(s, "/") || (kind != Image && kind != Video) {
		return Endpoint{}, false
	}
	for _, r := range provider {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' && r != '-' {
			return Endpoint{}, false
		}
	}
	return ModelEndpoint(provider, model, kind), true
}
