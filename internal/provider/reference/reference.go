package reference

import (
	"context"
	"fmt"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// Provider is the reference service behind the provider seam.
type Provider struct {
	c  *Client
	id string
}

// New is the reference service c is a client of, known in fingerprints
// as id (its base URL, or the built-in simulator's name).
func New(c *apiclient.Client, id string) *Provider { return &Provider{c: NewClient(c), id: id} }

// Client is the service's own client.
func (p *Provider) Client() *Client { return p.c }

// ID is the service's identity in fingerprints.
func (p *Provider) ID() string { return p.id }

// Submit posts the request's body to its endpoint (Client.Create
// keeps the rule for sending a create again).
func (p *Provider) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	ep, ok := addrs.EndpointOf(r.Target)
	if !ok {
		return provider.Job{}, fmt.Errorf("the reference service has no endpoint %q", r.Target)
	}
	id, err := p.c.Create(ctx, ep, r.Body)
	if err != nil {
		return provider.Job{}, err
	}
	return provider.Job{ID: id, Kind: r.Kind}, nil
}

// Status is the job's status, normalised.
func (p *Provider) Status(ctx context.Context, j provider.Job) (provider.Status, error) {
	st, err := p.c.Status(ctx, j.ID)
	if err != nil {
		return provider.Status{}, err
	}
	return StatusOf(st), nil
}

// StatusOf is the service's status behind the seam.
func StatusOf(st Status) provider.Status {
	s := provider.Status{Raw: st.Raw, Known: st.Known, Progress: st.Progress}
	switch st.State {
	case StateDone:
		s.State = provider.Done
	case StateFailed:
		s.State, s.Reason = provider.Failed, "the service reported the generation failed"
	}
	return s
}

// Result is the creation's detail and its files: one per image, or the
// video.
func (p *Provider) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	det, err := p.c.Detail(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	return ResultOf(j.Kind, det), nil
}

// ResultOf is a creation's detail behind the seam, for a job making kind.
func ResultOf(kind addrs.Kind, det *Creation) *provider.Result {
	res := &provider.Result{CreationID: det.CreationID, Detail: det.Raw, Outputs: Outputs(kind, det), Prompt: det.Prompt}
	res.Kind, _ = addrs.ParseKind(det.OutputType)
	return res
}

// Outputs lists the files a creation offers: one per image, or the video.
func Outputs(kind addrs.Kind, det *Creation) []provider.Output {
	if kind == addrs.Video {
		o := provider.Output{Index: 0, URL: det.VideoURL, ThumbnailURL: det.ThumbnailURL}
		if len(det.Outputs) > 0 {
			o.ID = det.Outputs[0].ID
			if o.URL == "" {
				o.URL = det.Outputs[0].MediaURL
			}
			if det.Outputs[0].ThumbnailURL != "" {
				o.ThumbnailURL = det.Outputs[0].ThumbnailURL
			}
		}
		if o.URL == "" {
			return nil
		}
		return []provider.Output{o}
	}
	outs := make([]provider.Output, 0, len(det.Outputs))
	for i, out := range det.Outputs {
		outs = append(outs, provider.Output{Index: i, ID: out.ID, URL: out.MediaURL, ThumbnailURL: out.ThumbnailURL})
	}
	return outs
}

// WatermarkFreeURL mints the link of a video's watermark-free file.
func (p *Provider) WatermarkFreeURL(ctx context.Context, creationID string) (string, error) {
	w, err := p.c.WatermarkFreeURL(ctx, creationID)
	if err != nil {
		return "", err
	}
	return w.URL, nil
}

// Download streams one output into dir.
func (p *Provider) Download(ctx context.Context, url, dir, base string) (*apiclient.Downloaded, error) {
	return p.c.Download(ctx, url, dir, base)
}

// CheckCredentials asks the service whether it accepts the token.
func (p *Provider) CheckCredentials(ctx context.Context) error { return p.c.CheckCredentials(ctx) }
