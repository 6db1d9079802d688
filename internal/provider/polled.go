package provider

import (
	"context"
	"fmt"
)

// Polled follows the jobs of a provider whose job, read again and
// again, says its status and, once done, holds its result (Replicate's
// prediction, Luma's generation, Runway's task): an adapter's Status is
// its Status, and its Result reads the outputs of the answer Done gives.
type Polled[T any] struct {
	// Get reads job j: its answer decoded, and as received.
	Get func(ctx context.Context, j Job) (*T, []byte, error)
	// StatusOf tells a job's status by its answer.
	StatusOf func(*T) Status
	// Noun names a job in an error ("luma: generation"), and DoneRaw is
	// the status the provider says of a job done ("completed").
	Noun, DoneRaw string
	// Hold keeps the answer a Status found done for the Result that
	// follows (see Held). A provider whose answer hands out links that
	// expire soon leaves it false: every Result reads the job anew, for
	// fresh links.
	Hold bool

	held Held[T]
}

// Status reads job j and tells its status.
func (p *Polled[T]) Status(ctx context.Context, j Job) (Status, error) {
	v, raw, err := p.Get(ctx, j)
	if err != nil {
		return Status{}, err
	}
	st := p.StatusOf(v)
	if p.Hold && st.State == Done {
		p.held.Keep(j.ID, v, raw)
	}
	return st, nil
}

// Done is the answer of job j, decoded and as received, once j is done:
// the one Status held, or j read anew. A job that is not done is an
// error.
func (p *Polled[T]) Done(ctx context.Context, j Job) (*T, []byte, error) {
	v, raw, ok := p.held.Take(j.ID)
	if !ok {
		var err error
		if v, raw, err = p.Get(ctx, j); err != nil {
			return nil, nil, err
		}
	}
	if st := p.StatusOf(v); st.State != Done {
		return nil, nil, fmt.Errorf("%s %s is %s, not %s", p.Noun, j.ID, st.Raw, p.DoneRaw)
	}
	return v, raw, nil
}
