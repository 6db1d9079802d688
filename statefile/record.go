package statefile

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// Resource is the recorded state of one resource instance: what was asked
// for, what the service answered, and what is on disk.
type Resource struct {
	Addr         addrs.Instance
	Endpoint     addrs.Endpoint  // where the request was sent
	Fingerprint  string          // hash of the service, endpoint and request (config.Fingerprint)
	Request      json.RawMessage // the request body sent, without secrets
	GenerationID string
	CreationID   string
	// Handle is what the provider handed back to follow the job and
	// fetch its result again (provider.Job.Handle); nil when the id is
	// enough.
	Handle json.RawMessage
	// Version is the model version that ran, when the provider says.
	Version string
	// Usage is what the provider reported of the job's cost or usage, as
	// received; nil when it reported none.
	Usage   json.RawMessage
	Status  string          // raw service status of the last poll, "succeed" or "failed"
	Error   string          // last failure message, if the last generation failed
	Detail  json.RawMessage // creation detail as received
	Outputs []Output
	// Dir is the directory of its files, relative to the working directory.
	// A Dir or output Path leading outside it is refused by Tx.Record and
	// read as corrupt (see checkPaths).
	Dir string
	// WatermarkFree records that video outputs were downloaded from the
	// watermark-free URL.
	WatermarkFree bool
	// Deps are the addresses of the resources it was generated from, kept so
	// that destroy can run in reverse order and a replace can cascade even
	// after the configuration is gone.
	Deps []addrs.Resource
	// CreatedAt is when the resource was first recorded; UpdatedAt when it was
	// last written. Tx.Record fills both (see there).
	CreatedAt, UpdatedAt time.Time
	// Serial is the state's serial once the generation it holds was first
	// recorded: what changed since a serial (the gallery's before and
	// after) is what has a larger one. Tx.Record fills it; 0 in records
	// written before it was kept.
	Serial uint64
	// Failure is the generation that failed after the one this record
	// holds: the record keeps the last good generation (its request, files
	// and hashes) and the failure is kept beside it. nil when the last
	// generation succeeded, and for a record whose only generation failed
	// (Status says so then).
	Failure *Failure
}

// Failure is a generation the service reported failed.
type Failure struct {
	Endpoint     addrs.Endpoint
	Fingerprint  string
	Request      json.RawMessage // the request that failed, without secrets
	GenerationID string
	Error        string
	// Refused is true when the provider refused the request for its
	// content (moderation): it is never sent again as it is.
	Refused bool
	At      time.Time
}

// Output is one downloaded output file of a resource.
type Output struct {
	Index        int
	ID           string
	MediaURL     string
	ThumbnailURL string
	Path         string // relative to the working directory
	// Size, ModTime and SHA256 are what the file had when genform last
	// hashed it; plan rehashes only files whose size or mtime differ.
	Size        int64
	ModTime     time.Time
	SHA256      string
	ContentType string
	// Stored is true once the object store holds the file's bytes (under
	// SHA256): apply sets it when its upload succeeds, so plan and show
	// can say where the bytes are without asking the store.
	Stored bool
}

// Intent is the write-ahead record of an in-flight submission. It is
// committed before the create request is sent, and GenerationID is committed
// as soon as the service answers, so an apply that dies at any point can be
// resumed without paying twice.
type Intent struct {
	Addr        addrs.Instance
	Endpoint    addrs.Endpoint
	Fingerprint string
	Request     json.RawMessage
	// GenerationID is "" until the service answered: an intent without one
	// means a create request may or may not have reached the service.
	GenerationID string
	// Handle is what the provider handed back with the id to follow the
	// job (provider.Job.Handle); nil when the id is enough.
	Handle      json.RawMessage
	CreatedAt   time.Time
	SubmittedAt time.Time // when GenerationID was recorded
	// Answer is the finished job the answer to the create request
	// carried, on a provider that answers only once the work is done;
	// nil otherwise. It is recorded with GenerationID, in one step.
	Answer *Answer
}

// Answer is what the answer to a create request carried when it carried
// the finished job itself (OpenAI's images come inline in it, once). It
// is recorded with the job's id in the same step, before any file is
// written, so that an apply that dies, or cannot write a file, after the
// answer leaves what the next apply finishes the instance from, paying
// nothing again: each inline output's bytes are in the local cache under
// its SHA256 (with its Size and ContentType), and an output the answer
// gave a link to has its MediaURL. No Path: the files are not written
// yet.
type Answer struct {
	Version string
	Usage   json.RawMessage
	Detail  json.RawMessage
	Outputs []Output
}

// Protection records lifecycle.prevent_destroy for an address. It is kept in
// state so that deleting a block alone does not lift it.
type Protection struct {
	Addr           addrs.Instance
	PreventDestroy bool
}

// Record format versions. A record carries its format in field 1, so a
// record layout can change without a schema migration: the decoder reads
// every format up to the current one. Each record type counts on its own.
const (
	resourceFormat   = 1
	intentFormat     = 1
	protectionFormat = 1
)

// Field numbers of a resource record. Blobs (request, detail) come last and
// are written last; see stringPrefix.
const (
	resFormat        = 1
	resAddr          = 2
	resKind          = 3
	resEndpoint      = 4
	resFingerprint   = 5
	resGenerationID  = 6
	resCreationID    = 7
	resStatus        = 8
	resError         = 9
	resOutput        = 10 // repeated message, fields out*
	resDir           = 11
	resWatermarkFree = 12
	resDep           = 13 // repeated string
	resCreatedAt     = 14
	resUpdatedAt     = 15
	resRequest       = 16
	resDetail        = 17
	resFailure       = 18 // message, fields fail*; written before the blobs
	resSerial        = 19
	resHandle        = 20
	resVersion       = 21
	resUsage         = 22
)

// Field numbers of a failure, nested in a resource record.
const (
	failEndpoint     = 1
	failFingerprint  = 2
	failGenerationID = 3
	failError        = 4
	failAt           = 5
	failRequest      = 6
	failRefused      = 7
)

// Field numbers of an output, nested in a resource record.
const (
	outIndex        = 1
	outID           = 2
	outMediaURL     = 3
	outThumbnailURL = 4
	outPath         = 5
	outSize         = 6
	outModTime      = 7
	outSHA256       = 8
	outContentType  = 9
	outStored       = 10
)

// Field numbers of an intent record.
const (
	intFormat       = 1
	intAddr         = 2
	intKind         = 3
	intEndpoint     = 4
	intFingerprint  = 5
	intGenerationID = 6
	intCreatedAt    = 7
	intSubmittedAt  = 8
	intHandle       = 9
	intAnswer       = 10 // message, fields ans*
	intRequest      = 16
)

// Field numbers of an answer, nested in an intent record.
const (
	ansVersion = 2
	ansUsage   = 3
	ansOutput  = 4 // repeated message, fields out*
	ansDetail  = 5
)

// Field numbers of a protection record.
const (
	protFormat         = 1
	protAddr           = 2
	protPreventDestroy = 3
)

func encodeResource(r *Resource) []byte {
	e := encoder{b: make([]byte, 0, 256+len(r.Request)+len(r.Detail)+200*len(r.Outputs))}
	e.uvarint(resFormat, resourceFormat)
	e.string(resAddr, r.Addr.String())
	e.string(resKind, r.Addr.Resource.Kind.String())
	e.string(resEndpoint, r.Endpoint.Path())
	e.string(resFingerprint, r.Fingerprint)
	e.string(resGenerationID, r.GenerationID)
	e.string(resCreationID, r.CreationID)
	e.string(resStatus, r.Status)
	e.string(resError, r.Error)
	for i := range r.Outputs {
		o := &r.Outputs[i]
		e.message(resOutput, func(e *encoder) { encodeOutput(e, o) })
	}
	e.string(resDir, r.Dir)
	e.bool(resWatermarkFree, r.WatermarkFree)
	for _, d := range r.Deps {
		e.repeatedString(resDep, d.String())
	}
	e.time(resCreatedAt, r.CreatedAt)
	e.time(resUpdatedAt, r.UpdatedAt)
	e.uvarint(resSerial, r.Serial)
	e.string(resHandle, string(r.Handle))
	e.string(resVersion, r.Version)
	e.string(resUsage, string(r.Usage))
	if f := r.Failure; f != nil {
		e.message(resFailure, func(e *encoder) {
			e.string(failEndpoint, f.Endpoint.Path())
			e.string(failFingerprint, f.Fingerprint)
			e.string(failGenerationID, f.GenerationID)
			e.string(failError, f.Error)
			e.time(failAt, f.At)
			e.bool(failRefused, f.Refused)
			e.bytes(failRequest, f.Request)
		})
	}
	e.bytes(resRequest, r.Request)
	e.bytes(resDetail, r.Detail)
	return e.b
}

// encodeOutput writes the fields of o, a message nested in a record.
func encodeOutput(e *encoder, o *Output) {
	e.svarint(outIndex, int64(o.Index))
	e.string(outID, o.ID)
	e.string(outMediaURL, o.MediaURL)
	e.string(outThumbnailURL, o.ThumbnailURL)
	e.string(outPath, o.Path)
	e.svarint(outSize, o.Size)
	e.time(outModTime, o.ModTime)
	e.string(outSHA256, o.SHA256)
	e.string(outContentType, o.ContentType)
	e.bool(outStored, o.Stored)
}

func isResourceBlob(num int) bool { return num == resRequest || num == resDetail }

// decodeResource decodes the resource record filed under key. It never
// panics on bad input: whatever the bytes, it returns a resource or an error
// saying what is wrong. The caller names the record in the error it shows.
func decodeResource(key, buf []byte) (*Resource, error) {
	return decodeResourceRecord(key, buf, true, true)
}

// decodeResourceRecord decodes a resource record; atKey says whether it
// must be filed under its own address (a history entry is filed under its
// generation instead).
func decodeResourceRecord(key, buf []byte, atKey, detail bool) (*Resource, error) {
	prefix, nOutputs := stringPrefix(buf, isResourceBlob, resOutput)
	r := newReader(buf, string(buf[:prefix]))
	res := &Resource{}
	if nOutputs > 0 {
		res.Outputs = make([]Output, 0, nOutputs)
	}
	var format uint64
	var addr, kind, endpoint, failureEndpoint string
	for r.next() {
		switch r.f.num {
		case resFormat:
			format = r.uvarint()
			if r.err == nil && format > resourceFormat {
				return nil, fmt.Errorf("record format %d is newer than this genform reads (%d); upgrade genform", format, resourceFormat)
			}
		case resAddr:
			addr = r.string()
		case resKind:
			kind = r.string()
		case resEndpoint:
			endpoint = r.string()
		case resFingerprint:
			res.Fingerprint = r.string()
		case resGenerationID:
			res.GenerationID = r.string()
		case resCreationID:
			res.CreationID = r.string()
		case resStatus:
			res.Status = r.string()
		case resError:
			res.Error = r.string()
		case resOutput:
			sub := r.sub()
			o, err := decodeOutput(&sub)
			if err != nil {
				return nil, fmt.Errorf("output %d: %w", len(res.Outputs), err)
			}
			res.Outputs = append(res.Outputs, o)
		case resDir:
			res.Dir = r.string()
		case resWatermarkFree:
			res.WatermarkFree = r.bool()
		case resDep:
			d, err := addrs.ParseInstance(r.string())
			if err != nil || !d.Key.IsZero() {
				return nil, fmt.Errorf("dependency %d is not a resource address", len(res.Deps))
			}
			res.Deps = append(res.Deps, d.Resource)
		case resCreatedAt:
			res.CreatedAt = r.time()
		case resUpdatedAt:
			res.UpdatedAt = r.time()
		case resSerial:
			res.Serial = r.uvarint()
		case resHandle:
			res.Handle = json.RawMessage(r.string())
		case resVersion:
			res.Version = r.string()
		case resUsage:
			res.Usage = json.RawMessage(r.string())
		case resRequest:
			res.Request = r.bytes()
		case resDetail:
			if detail {
				res.Detail = r.bytes()
			}
		case resFailure:
			sub := r.sub()
			f, ep, err := decodeFailure(&sub)
			if err != nil {
				return nil, fmt.Errorf("failure: %w", err)
			}
			res.Failure, failureEndpoint = f, ep
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if format == 0 {
		return nil, fmt.Errorf("no record format version")
	}
	var err error
	if !atKey {
		key = []byte(addr)
	}
	if res.Addr, err = recordAddr(addr, key); err != nil {
		return nil, err
	}
	if kind != res.Addr.Resource.Kind.String() {
		return nil, fmt.Errorf("kind %q does not match the address", kind)
	}
	if res.Endpoint, err = recordEndpoint(endpoint, res.Addr); err != nil {
		return nil, err
	}
	if f := res.Failure; f != nil {
		if f.Endpoint, err = recordEndpoint(failureEndpoint, res.Addr); err != nil {
			return nil, fmt.Errorf("failure: %w", err)
		}
	}
	if err := checkPaths(res); err != nil {
		return nil, err
	}
	return res, nil
}

// recordAddr parses the address a record carries, which must be the key it
// is filed under: a record under another key was moved by hand or damaged.
func recordAddr(addr string, key []byte) (addrs.Instance, error) {
	if addr == "" {
		return addrs.Instance{}, fmt.Errorf("no address")
	}
	if addr != string(key) {
		return addrs.Instance{}, fmt.Errorf("record says it is %s", displayAddr(addr))
	}
	a, ok := canonicalAddr(addr)
	if !ok {
		return addrs.Instance{}, fmt.Errorf("%s is not an address genform writes", displayAddr(addr))
	}
	return a, nil
}

// canonicalAddr parses key as an address, and reports whether it is one
// written as genform writes them: only such a key can be found again from
// the address it names.
func canonicalAddr(key string) (addrs.Instance, bool) {
	return addrs.ParseCanonical(key)
}

// checkAddr refuses, before it is written, an address genform could not
// read back: no kind, or a name that is no identifier.
func checkAddr(a addrs.Instance) error {
	if _, ok := canonicalAddr(a.String()); !ok || kindName(a.Resource.Kind) == "" {
		return fmt.Errorf("%q is not a resource address", a.String())
	}
	return nil
}

// kindName is the name of a valid kind, "" for any other.
func kindName(k addrs.Kind) string {
	if k == addrs.Image || k == addrs.Video {
		return k.String()
	}
	return ""
}

// checkRecord refuses, before it is written, what decoding would refuse:
// an invalid address, an endpoint that does not make the address's kind,
// a dependency that is no resource address.
func checkRecord(a addrs.Instance, ep addrs.Endpoint, deps []addrs.Resource) error {
	if err := checkAddr(a); err != nil {
		return err
	}
	if ep.Kind() != a.Resource.Kind {
		return fmt.Errorf("recording %s: endpoint %v does not generate a %s", a, ep, a.Resource.Kind)
	}
	for _, d := range deps {
		if err := checkAddr(d.Instance(addrs.NoKey)); err != nil {
			return fmt.Errorf("recording %s: dependency %w", a, err)
		}
	}
	return nil
}

// recordEndpoint reads a record's endpoint, which must make what its
// address's kind is.
func recordEndpoint(path string, addr addrs.Instance) (addrs.Endpoint, error) {
	ep, ok := addrs.ParseEndpoint(path, addr.Resource.Kind)
	if !ok || ep.Kind() != addr.Resource.Kind {
		return addrs.Endpoint{}, fmt.Errorf("endpoint %q is not one a %s is generated by", path, addr.Resource.Kind)
	}
	return ep, nil
}

// checkPaths refuses a resource whose directory or output paths lead
// outside the working directory. genform never records such a path (the
// configuration refuses them), so one in a file was put there by hand or
// by a damaged or hostile state file, and acting on it would delete, move
// or publish a file that genform does not own.
func checkPaths(r *Resource) error {
	if why := outsidePath(r.Dir); why != "" {
		return fmt.Errorf("directory %q %s", r.Dir, why)
	}
	for i, o := range r.Outputs {
		if why := outsidePath(o.Path); why != "" {
			return fmt.Errorf("output %d: path %q %s", i, o.Path, why)
		}
	}
	return nil
}

// outsidePath says why p, recorded relative to the working directory,
// could name a file outside it, or returns "" when it cannot. Both slash
// and backslash count as separators, so a file written on one system is
// read safely on another.
func outsidePath(p string) string {
	if p == "" {
		return ""
	}
	s := strings.ReplaceAll(p, `\`, "/")
	switch {
	case strings.ContainsRune(p, 0):
		return "contains a NUL character"
	case strings.HasPrefix(s, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return "is absolute, not relative to the working directory"
	}
	if c := path.Clean(s); c == ".." || strings.HasPrefix(c, "../") {
		return "leads outside the working directory"
	}
	return ""
}

func decodeFailure(r *reader) (*Failure, string, error) {
	f := &Failure{}
	var endpoint string
	for r.next() {
		switch r.f.num {
		case failEndpoint:
			endpoint = r.string()
		case failFingerprint:
			f.Fingerprint = r.string()
		case failGenerationID:
			f.GenerationID = r.string()
		case failError:
			f.Error = r.string()
		case failAt:
			f.At = r.time()
		case failRequest:
			f.Request = r.bytes()
		case failRefused:
			f.Refused = r.bool()
		}
	}
	if r.err != nil {
		return nil, "", r.err
	}
	// The endpoint is read once the record's kind is known.
	return f, endpoint, nil
}

func decodeOutput(r *reader) (Output, error) {
	var o Output
	for r.next() {
		switch r.f.num {
		case outIndex:
			o.Index = r.int()
		case outID:
			o.ID = r.string()
		case outMediaURL:
			o.MediaURL = r.string()
		case outThumbnailURL:
			o.ThumbnailURL = r.string()
		case outPath:
			o.Path = r.string()
		case outSize:
			o.Size = r.svarint()
		case outModTime:
			o.ModTime = r.time()
		case outSHA256:
			o.SHA256 = r.string()
		case outContentType:
			o.ContentType = r.string()
		case outStored:
			o.Stored = r.bool()
		}
	}
	return o, r.err
}

func encodeIntent(i *Intent) []byte {
	e := encoder{b: make([]byte, 0, 128+len(i.Request))}
	e.uvarint(intFormat, intentFormat)
	e.string(intAddr, i.Addr.String())
	e.string(intKind, i.Addr.Resource.Kind.String())
	e.string(intEndpoint, i.Endpoint.Path())
	e.string(intFingerprint, i.Fingerprint)
	e.string(intGenerationID, i.GenerationID)
	e.time(intCreatedAt, i.CreatedAt)
	e.time(intSubmittedAt, i.SubmittedAt)
	e.string(intHandle, string(i.Handle))
	if a := i.Answer; a != nil {
		e.message(intAnswer, func(e *encoder) {
			e.string(ansVersion, a.Version)
			e.string(ansUsage, string(a.Usage))
			for j := range a.Outputs {
				e.message(ansOutput, func(e *encoder) { encodeOutput(e, &a.Outputs[j]) })
			}
			e.string(ansDetail, string(a.Detail))
		})
	}
	e.bytes(intRequest, i.Request)
	return e.b
}

// decodeAnswer decodes an answer nested in an intent record.
func decodeAnswer(r *reader) (*Answer, error) {
	a := &Answer{}
	for r.next() {
		switch r.f.num {
		case ansVersion:
			a.Version = r.string()
		case ansUsage:
			if u := r.string(); u != "" {
				a.Usage = json.RawMessage(u)
			}
		case ansOutput:
			sub := r.sub()
			o, err := decodeOutput(&sub)
			if err != nil {
				return nil, fmt.Errorf("output %d: %w", len(a.Outputs), err)
			}
			a.Outputs = append(a.Outputs, o)
		case ansDetail:
			if d := r.string(); d != "" {
				a.Detail = json.RawMessage(d)
			}
		}
	}
	return a, r.err
}

func isIntentBlob(num int) bool { return num == intRequest }

// decodeIntent decodes the intent record filed under key; like
// decodeResource it never panics on bad input.
func decodeIntent(key, buf []byte) (*Intent, error) {
	prefix, _ := stringPrefix(buf, isIntentBlob, 0)
	r := newReader(buf, string(buf[:prefix]))
	in := &Intent{}
	var format uint64
	var addr, kind, endpoint string
	for r.next() {
		switch r.f.num {
		case intFormat:
			format = r.uvarint()
			if r.err == nil && format > intentFormat {
				return nil, fmt.Errorf("record format %d is newer than this genform reads (%d); upgrade genform", format, intentFormat)
			}
		case intAddr:
			addr = r.string()
		case intKind:
			kind = r.string()
		case intEndpoint:
			endpoint = r.string()
		case intFingerprint:
			in.Fingerprint = r.string()
		case intGenerationID:
			in.GenerationID = r.string()
		case intCreatedAt:
			in.CreatedAt = r.time()
		case intSubmittedAt:
			in.SubmittedAt = r.time()
		case intHandle:
			in.Handle = json.RawMessage(r.string())
		case intAnswer:
			sub := r.sub()
			a, err := decodeAnswer(&sub)
			if err != nil {
				return nil, fmt.Errorf("answer: %w", err)
			}
			in.Answer = a
		case intRequest:
			in.Request = r.bytes()
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if format == 0 {
		return nil, fmt.Errorf("no record format version")
	}
	var err error
	if in.Addr, err = recordAddr(addr, key); err != nil {
		return nil, err
	}
	if kind != in.Addr.Resource.Kind.String() {
		return nil, fmt.Errorf("kind %q does not match the address", kind)
	}
	if in.Endpoint, err = recordEndpoint(endpoint, in.Addr); err != nil {
		return nil, err
	}
	return in, nil
}

func encodeProtection(p *Protection) []byte {
	addr := p.Addr.String()
	e := encoder{b: make([]byte, 0, 16+len(addr))}
	e.uvarint(protFormat, protectionFormat)
	e.string(protAddr, addr)
	e.bool(protPreventDestroy, p.PreventDestroy)
	return e.b
}

// decodeProtection decodes the protection record filed under key; like
// decodeResource it never panics on bad input.
func decodeProtection(key, buf []byte) (*Protection, error) {
	r := newReader(buf, string(buf))
	p := &Protection{}
	var format uint64
	var addr string
	for r.next() {
		switch r.f.num {
		case protFormat:
			format = r.uvarint()
			if r.err == nil && format > protectionFormat {
				return nil, fmt.Errorf("record format %d is newer than this genform reads (%d); upgrade genform", format, protectionFormat)
			}
		case protAddr:
			addr = r.string()
		case protPreventDestroy:
			p.PreventDestroy = r.bool()
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if format == 0 {
		return nil, fmt.Errorf("no record format version")
	}
	var err error
	if p.Addr, err = recordAddr(addr, key); err != nil {
		return nil, err
	}
	return p, nil
}
