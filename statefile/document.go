package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// The state document is the whole state as one JSON document: what
// genform state pull prints and genform state push writes back, as
// Terraform's state pull and push do. It is a public format of its own,
// versioned by DocumentFormat, not the records' encoding: a field added to
// a record is added here too (TestDocumentCoversRecords fails until it
// is). It holds everything the state does, so that a document pushed
// back writes the very bytes it was pulled from.

// DocumentFormat is the format_version of the state document this
// genform writes and reads.
const DocumentFormat = "1"

// Document is the state document.
type Document struct {
	FormatVersion string `json:"format_version"`
	// SchemaVersion is the layout of the state the document was taken
	// from; a document is pushed only into a state of the same schema.
	SchemaVersion int    `json:"schema_version"`
	Lineage       string `json:"lineage"`
	Serial        uint64 `json:"serial"`
	// Service is the service the generations were made with; "" when none
	// was recorded yet.
	Service string `json:"service,omitempty"`
	// RunStart is the serial before the last writing command's first
	// change; absent when no command has said.
	RunStart *uint64 `json:"run_start,omitempty"`
	// Spent is what the workspace spent, by currency, in millionths
	// (Meta.Spent); absent when nothing priced was sent.
	Spent       map[string]int64 `json:"spent,omitempty"`
	Resources   []DocResource    `json:"resources"`
	Intents     []DocIntent      `json:"intents"`
	Protections []DocProtect     `json:"protections"`
	// History holds every generation ever recorded, in the order of their
	// keys (fingerprint, then generation id).
	History []DocResource `json:"history"`
}

// DocResource is a resource record, or a history entry.
type DocResource struct {
	Address       string      `json:"address"`
	Endpoint      string      `json:"endpoint"`
	Fingerprint   string      `json:"fingerprint"`
	Request       RawJSON     `json:"request,omitempty"`
	GenerationID  string      `json:"generation_id,omitempty"`
	CreationID    string      `json:"creation_id,omitempty"`
	Handle        RawJSON     `json:"handle,omitempty"`
	Version       string      `json:"version,omitempty"`
	Usage         RawJSON     `json:"usage,omitempty"`
	Status        string      `json:"status,omitempty"`
	Error         string      `json:"error,omitempty"`
	Detail        RawJSON     `json:"detail,omitempty"`
	Outputs       []DocOutput `json:"outputs,omitempty"`
	Dir           string      `json:"dir,omitempty"`
	WatermarkFree bool        `json:"watermark_free,omitempty"`
	Deps          []string    `json:"depends_on,omitempty"`
	CreatedAt     string      `json:"created_at,omitempty"`
	UpdatedAt     string      `json:"updated_at,omitempty"`
	Serial        uint64      `json:"serial,omitempty"`
	Failure       *DocFailure `json:"failure,omitempty"`
}

// DocFailure is the failed generation kept beside a record.
type DocFailure struct {
	Endpoint     string  `json:"endpoint"`
	Fingerprint  string  `json:"fingerprint"`
	Request      RawJSON `json:"request,omitempty"`
	GenerationID string  `json:"generation_id,omitempty"`
	Error        string  `json:"error,omitempty"`
	Refused      bool    `json:"refused,omitempty"`
	At           string  `json:"at,omitempty"`
}

// DocOutput is one output file of a record.
type DocOutput struct {
	Index        int    `json:"index"`
	ID           string `json:"id,omitempty"`
	MediaURL     string `json:"media_url,omitempty"`
	ThumbnailURL string `json:"thumbnail_url,omitempty"`
	Path         string `json:"path,omitempty"`
	Size         int64  `json:"size"`
	ModTime      string `json:"mod_time,omitempty"`
	SHA256       string `json:"sha256,omitempty"`
	ContentType  string `json:"content_type,omitempty"`
	Stored       bool   `json:"stored,omitempty"`
}

// DocIntent is a submission in flight.
type DocIntent struct {
	Address      string  `json:"address"`
	Endpoint     string  `json:"endpoint"`
	Fingerprint  string  `json:"fingerprint"`
	Request      RawJSON `json:"request,omitempty"`
	GenerationID string  `json:"generation_id,omitempty"`
	Handle       RawJSON `json:"handle,omitempty"`
	CreatedAt    string  `json:"created_at,omitempty"`
	SubmittedAt  string  `json:"submitted_at,omitempty"`
	// Answer is the finished job the create request's answer carried.
	Answer *DocAnswer `json:"answer,omitempty"`
}

// DocAnswer is the finished job an intent's answer carried: its outputs'
// bytes are in the local cache, by sha256.
type DocAnswer struct {
	Version string      `json:"version,omitempty"`
	Usage   RawJSON     `json:"usage,omitempty"`
	Detail  RawJSON     `json:"detail,omitempty"`
	Outputs []DocOutput `json:"outputs,omitempty"`
}

// DocProtect is a protection record.
type DocProtect struct {
	Address        string `json:"address"`
	PreventDestroy bool   `json:"prevent_destroy"`
}

// RawJSON is a JSON value the state keeps as it was sent or received (a
// request, a creation detail). The document shows it as JSON when it is
// written without insignificant white space, as genform's requests and
// the simulator's answers are, and as a string of its exact text
// otherwise: an indented document cannot keep the white space inside a
// value, and a detail must come back byte for byte.
type RawJSON []byte

// MarshalJSON writes the value, or its text as a string.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, r) == nil && bytes.Equal(buf.Bytes(), r) && r[0] != '"' {
		return r, nil
	}
	return json.Marshal(string(r))
}

// UnmarshalJSON reads what MarshalJSON wrote: a string is the exact text
// of the value (no request or detail is a bare string), anything else the
// value itself, without the document's indentation.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*r = nil
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if !json.Valid([]byte(s)) {
			return errors.New("a string here holds the exact text of a JSON value, and this one is not JSON")
		}
		*r = RawJSON(s)
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*r = RawJSON(buf.Bytes())
	return nil
}

// WriteDocument writes d as indented JSON, with HTML characters as they
// are (a prompt's "<" stays "<").
func WriteDocument(w io.Writer, d *Document) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// ReadDocument reads a state document, refusing anything that is not one
// this genform writes: another format_version, a field it does not know
// (it would be lost), trailing data.
func ReadDocument(r io.Reader) (*Document, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var d Document
	if err := dec.Decode(&d); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("it is empty, not a state document")
		}
		return nil, fmt.Errorf("it is not a state document as genform state pull writes it: %w", err)
	}
	if dec.More() {
		return nil, errors.New("it holds more than one JSON document")
	}
	if d.FormatVersion != DocumentFormat {
		return nil, fmt.Errorf("its format_version is %q; this genform reads state documents of format_version %q", d.FormatVersion, DocumentFormat)
	}
	return &d, nil
}

// Document returns the whole state as its document. The state is checked
// first: every record must decode.
func (s *Store) Document() (*Document, error) {
	raw, err := s.dump()
	if err != nil {
		return nil, err
	}
	m := raw.meta
	d := &Document{
		FormatVersion: DocumentFormat,
		SchemaVersion: m.SchemaVersion,
		Lineage:       m.Lineage,
		Serial:        m.Serial,
		Service:       m.Service,
		Resources:     []DocResource{},
		Intents:       []DocIntent{},
		Protections:   []DocProtect{},
		History:       []DocResource{},
	}
	for _, x := range raw.data[string(bucketMeta)] {
		if bytes.Equal(x.k, keyRunStart) {
			d.RunStart = &m.RunStart
		}
		if bytes.Equal(x.k, keySpent) {
			if d.Spent, err = decodeSpent(x.v); err != nil {
				return nil, &CorruptError{Path: s.path, Database: s.database, Record: "meta", Addr: string(keySpent), Err: err}
			}
		}
	}
	for _, x := range raw.data[string(bucketResources)] {
		r, err := decodeResource(x.k, x.v)
		if err != nil {
			return nil, &CorruptError{Path: s.path, Database: s.database, Record: "resource", Addr: displayAddr(string(x.k)), Err: err}
		}
		d.Resources = append(d.Resources, docResource(r))
	}
	for _, x := range raw.data[string(bucketIntents)] {
		in, err := decodeIntent(x.k, x.v)
		if err != nil {
			return nil, &CorruptError{Path: s.path, Database: s.database, Record: "intent", Addr: displayAddr(string(x.k)), Err: err}
		}
		d.Intents = append(d.Intents, DocIntent{
			Address: in.Addr.String(), Endpoint: in.Endpoint.Path(), Fingerprint: in.Fingerprint,
			Request: RawJSON(in.Request), GenerationID: in.GenerationID, Handle: RawJSON(in.Handle),
			CreatedAt: docTime(in.CreatedAt), SubmittedAt: docTime(in.SubmittedAt),
			Answer: docAnswer(in.Answer),
		})
	}
	for _, x := range raw.data[string(bucketProtections)] {
		p, err := decodeProtection(x.k, x.v)
		if err != nil {
			return nil, &CorruptError{Path: s.path, Database: s.database, Record: "protection", Addr: displayAddr(string(x.k)), Err: err}
		}
		d.Protections = append(d.Protections, DocProtect{Address: p.Addr.String(), PreventDestroy: p.PreventDestroy})
	}
	for _, x := range raw.data[string(bucketHistory)] {
		e, err := decodeEntry(x.k, x.v)
		if err != nil {
			return nil, &CorruptError{Path: s.path, Database: s.database, Record: "history entry", Addr: historyName(x.k), Err: err}
		}
		d.History = append(d.History, docResource(e))
	}
	return d, nil
}

func docResource(r *Resource) DocResource {
	d := DocResource{
		Address: r.Addr.String(), Endpoint: r.Endpoint.Path(), Fingerprint: r.Fingerprint,
		Request: RawJSON(r.Request), GenerationID: r.GenerationID, CreationID: r.CreationID,
		Handle: RawJSON(r.Handle), Version: r.Version, Usage: RawJSON(r.Usage),
		Status: r.Status, Error: r.Error, Detail: RawJSON(r.Detail), Dir: r.Dir,
		WatermarkFree: r.WatermarkFree, CreatedAt: docTime(r.CreatedAt), UpdatedAt: docTime(r.UpdatedAt),
		Serial: r.Serial,
	}
	d.Outputs = docOutputs(r.Outputs)
	for _, dep := range r.Deps {
		d.Deps = append(d.Deps, dep.String())
	}
	if f := r.Failure; f != nil {
		d.Failure = &DocFailure{
			Endpoint: f.Endpoint.Path(), Fingerprint: f.Fingerprint, Request: RawJSON(f.Request),
			GenerationID: f.GenerationID, Error: f.Error, Refused: f.Refused, At: docTime(f.At),
		}
	}
	return d
}

// docTime writes a timestamp to the nanosecond, in UTC as the records
// keep it; "" for the zero time, which records leave out.
func docTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseDocTime(s, what string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not a time such as 2026-01-02T15:04:05Z", what, s)
	}
	return t.UTC(), nil
}

// Push replaces the state with the document d, in one transaction, as
// Copy replaces it with another state: unless force, it refuses to
// overwrite records of another lineage, or a serial newer than d's. from
// names the document in messages (a file, or standard input). Every
// record of d is checked as one read from the state is, and a document
// with one that is not is refused whole.
func (s *Store) Push(d *Document, from string, force bool) (Copied, error) {
	raw, err := d.raw()
	if err != nil {
		return Copied{}, fmt.Errorf("%s: %w", from, err)
	}
	return s.replace(raw, from, force)
}

// raw encodes the document as the state's buckets, checking every record
// by decoding it again.
func (d *Document) raw() (rawState, error) {
	raw := rawState{data: map[string][]kv{}}
	if d.SchemaVersion != SchemaVersion {
		return raw, fmt.Errorf("the document was taken from a state of schema %d; this genform keeps schema %d: push it with the genform that pulled it", d.SchemaVersion, SchemaVersion)
	}
	if d.Lineage == "" {
		return raw, errors.New("the document has no lineage")
	}
	raw.meta = Meta{SchemaVersion: d.SchemaVersion, Lineage: d.Lineage, Serial: d.Serial, Service: d.Service}
	meta := []kv{
		{keySchemaVersion, formatUint(uint64(d.SchemaVersion))},
		{keyLineage, []byte(d.Lineage)},
		{keySerial, formatUint(d.Serial)},
	}
	if d.Service != "" {
		meta = append(meta, kv{keyService, []byte(d.Service)})
	}
	if d.RunStart != nil {
		raw.meta.RunStart = *d.RunStart
		meta = append(meta, kv{keyRunStart, formatUint(*d.RunStart)})
	}
	if len(d.Spent) > 0 {
		b, err := json.Marshal(d.Spent)
		if err != nil {
			return raw, err
		}
		if _, err := decodeSpent(b); err != nil {
			return raw, fmt.Errorf("its spent: %w", err)
		}
		meta = append(meta, kv{keySpent, b})
	}
	add := func(bucket []byte, key, value []byte) error {
		name := string(bucket)
		for _, x := range raw.data[name] {
			if bytes.Equal(x.k, key) {
				return errors.New("it is listed twice")
			}
		}
		raw.data[name] = append(raw.data[name], kv{key, value})
		return nil
	}
	for _, x := range meta {
		_ = add(bucketMeta, x.k, x.v)
	}
	for i := range d.Resources {
		dr := &d.Resources[i]
		r, err := dr.resource()
		if err == nil {
			key := []byte(r.Addr.String())
			enc := encodeResource(r)
			if _, err = decodeResource(key, enc); err == nil {
				err = add(bucketResources, key, enc)
			}
		}
		if err != nil {
			return raw, fmt.Errorf("resource %d (%s): %w", i, dr.Address, err)
		}
	}
	for i := range d.Intents {
		di := &d.Intents[i]
		in, err := di.intent()
		if err == nil {
			key := []byte(in.Addr.String())
			enc := encodeIntent(in)
			if _, err = decodeIntent(key, enc); err == nil {
				err = add(bucketIntents, key, enc)
			}
		}
		if err != nil {
			return raw, fmt.Errorf("intent %d (%s): %w", i, di.Address, err)
		}
	}
	for i, dp := range d.Protections {
		a, err := docAddr(dp.Address)
		if err == nil {
			err = add(bucketProtections, []byte(a.String()), encodeProtection(&Protection{Addr: a, PreventDestroy: dp.PreventDestroy}))
		}
		if err != nil {
			return raw, fmt.Errorf("protection %d (%s): %w", i, dp.Address, err)
		}
	}
	for i := range d.History {
		dh := &d.History[i]
		e, err := dh.resource()
		if err == nil {
			err = checkHistoryKey(e.Fingerprint, e.GenerationID)
		}
		if err == nil {
			key := historyKey(e.Fingerprint, e.GenerationID)
			enc := encodeResource(e)
			if _, err = decodeEntry(key, enc); err == nil {
				err = add(bucketHistory, key, enc)
			}
		}
		if err != nil {
			return raw, fmt.Errorf("history entry %d (%s): %w", i, dh.Address, err)
		}
	}
	// The buckets keep their keys in byte order; so does the copy.
	for name, l := range raw.data {
		sortKV(l)
		raw.data[name] = l
	}
	return raw, nil
}

func sortKV(l []kv) {
	slices.SortFunc(l, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
}

func docAddr(s string) (addrs.Instance, error) {
	a, ok := canonicalAddr(s)
	if !ok || kindName(a.Resource.Kind) == "" {
		return a, fmt.Errorf("%s is not a resource address as genform writes them (image.NAME, video.NAME[0], image.NAME[\"KEY\"])", strconv.Quote(s))
	}
	return a, nil
}

// docOutputs are outs as the document writes them.
func docOutputs(outs []Output) []DocOutput {
	var d []DocOutput
	for _, o := range outs {
		d = append(d, DocOutput{
			Index: o.Index, ID: o.ID, MediaURL: o.MediaURL, ThumbnailURL: o.ThumbnailURL, Path: o.Path,
			Size: o.Size, ModTime: docTime(o.ModTime), SHA256: o.SHA256, ContentType: o.ContentType, Stored: o.Stored,
		})
	}
	return d
}

// outputs are the records of the document's outputs d.
func outputs(d []DocOutput) ([]Output, error) {
	var outs []Output
	for i, o := range d {
		out := Output{Index: o.Index, ID: o.ID, MediaURL: o.MediaURL, ThumbnailURL: o.ThumbnailURL, Path: o.Path,
			Size: o.Size, SHA256: o.SHA256, ContentType: o.ContentType, Stored: o.Stored}
		var err error
		if out.ModTime, err = parseDocTime(o.ModTime, fmt.Sprintf("output %d: mod_time", i)); err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// docAnswer is a as the document writes it.
func docAnswer(a *Answer) *DocAnswer {
	if a == nil {
		return nil
	}
	return &DocAnswer{Version: a.Version, Usage: RawJSON(a.Usage), Detail: RawJSON(a.Detail), Outputs: docOutputs(a.Outputs)}
}

func (dr *DocResource) resource() (*Resource, error) {
	a, err := docAddr(dr.Address)
	if err != nil {
		return nil, err
	}
	r := &Resource{
		Addr: a, Fingerprint: dr.Fingerprint, Request: json.RawMessage(dr.Request),
		GenerationID: dr.GenerationID, CreationID: dr.CreationID, Status: dr.Status, Error: dr.Error,
		Handle: json.RawMessage(dr.Handle), Version: dr.Version, Usage: json.RawMessage(dr.Usage),
		Detail: json.RawMessage(dr.Detail), Dir: dr.Dir, WatermarkFree: dr.WatermarkFree, Serial: dr.Serial,
	}
	if r.Endpoint, err = recordEndpoint(dr.Endpoint, a); err != nil {
		return nil, err
	}
	if r.CreatedAt, err = parseDocTime(dr.CreatedAt, "created_at"); err != nil {
		return nil, err
	}
	if r.UpdatedAt, err = parseDocTime(dr.UpdatedAt, "updated_at"); err != nil {
		return nil, err
	}
	if r.Outputs, err = outputs(dr.Outputs); err != nil {
		return nil, err
	}
	for _, dep := range dr.Deps {
		da, err := docAddr(dep)
		if err != nil || !da.Key.IsZero() {
			return nil, fmt.Errorf("depends_on: %s is not a resource address (image.NAME or video.NAME)", strconv.Quote(dep))
		}
		r.Deps = append(r.Deps, da.Resource)
	}
	if f := dr.Failure; f != nil {
		r.Failure = &Failure{Fingerprint: f.Fingerprint, Request: json.RawMessage(f.Request), GenerationID: f.GenerationID, Error: f.Error, Refused: f.Refused}
		ep, ok := addrs.ParseEndpoint(f.Endpoint, a.Resource.Kind)
		if !ok || ep.Kind() != a.Resource.Kind {
			return nil, fmt.Errorf("failure: endpoint %q is not one genform knows", f.Endpoint)
		}
		r.Failure.Endpoint = ep
		if r.Failure.At, err = parseDocTime(f.At, "failure: at"); err != nil {
			return nil, err
		}
	}
	if err := checkRecord(r.Addr, r.Endpoint, r.Deps); err != nil {
		return nil, err
	}
	return r, nil
}

func (di *DocIntent) intent() (*Intent, error) {
	a, err := docAddr(di.Address)
	if err != nil {
		return nil, err
	}
	in := &Intent{Addr: a, Fingerprint: di.Fingerprint, Request: json.RawMessage(di.Request), GenerationID: di.GenerationID, Handle: json.RawMessage(di.Handle)}
	if in.Endpoint, err = recordEndpoint(di.Endpoint, a); err != nil {
		return nil, err
	}
	if in.CreatedAt, err = parseDocTime(di.CreatedAt, "created_at"); err != nil {
		return nil, err
	}
	if in.SubmittedAt, err = parseDocTime(di.SubmittedAt, "submitted_at"); err != nil {
		return nil, err
	}
	if da := di.Answer; da != nil {
		in.Answer = &Answer{Version: da.Version, Usage: json.RawMessage(da.Usage), Detail: json.RawMessage(da.Detail)}
		if in.Answer.Outputs, err = outputs(da.Outputs); err != nil {
			return nil, fmt.Errorf("answer: %w", err)
		}
	}
	return in, nil
}
