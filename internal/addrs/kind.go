package addrs

import "fmt"

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

// Endpoint is one of the service's job-creation endpoints: where an
// instance's request is posted. The table below is the one list of them in
// genform (docs/service.md describes what each takes).
type Endpoint uint8

// The job-creation endpoints. The zero Endpoint is none.
const (
	Text2Image Endpoint = iota + 1
	Image2Video
	KeyFrames
	Text2Video
)

var endpoints = [...]struct {
	path  string
	kind  Kind
	title string
}{
	Text2Image:  {"/v1/jobs/text2image", Image, "text-to-image"},
	Image2Video: {"/v1/jobs/gen2/image2video", Video, "image-to-video"},
	KeyFrames:   {"/v1/jobs/gen2/afc", Video, "key-frame conditioning"},
	Text2Video:  {"/v1/jobs/gen2/text2video", Video, "text-to-video"},
}

// Endpoints lists every job-creation endpoint.
var Endpoints = []Endpoint{Text2Image, Image2Video, KeyFrames, Text2Video}

func (e Endpoint) valid() bool { return e >= Text2Image && e <= Text2Video }

// Path is the endpoint's path below the service's base URL, e.g.
// "/v1/jobs/text2image".
func (e Endpoint) Path() string {
	if !e.valid() {
		return ""
	}
	return endpoints[e].path
}

// Kind is what the endpoint generates.
func (e Endpoint) Kind() Kind {
	if !e.valid() {
		return 0
	}
	return endpoints[e].kind
}

// Title names the endpoint in messages: "text-to-image".
func (e Endpoint) Title() string {
	if !e.valid() {
		return ""
	}
	return endpoints[e].title
}

// String is the endpoint's path, or Endpoint(N) for no valid endpoint.
func (e Endpoint) String() string {
	if !e.valid() {
		return fmt.Sprintf("Endpoint(%d)", uint8(e))
	}
	return endpoints[e].path
}

// EndpointOf returns the endpoint whose path is p.
func EndpointOf(p string) (Endpoint, bool) {
	for _, e := range Endpoints {
		if endpoints[e].path == p {
			return e, true
		}
	}
	return 0, false
}
