package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/simulator/simkit"
)

// A job is submitted once, followed through documented statuses to Done,
// and its result lists outputs that download as files of their own; the
// simulator made that one job from one create.
func TestSuccess(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		for _, k := range []struct {
			name    string
			req     func(string) provider.Request
			outputs int
		}{{"image", pc.image, pc.imageCount}, {"video", pc.video, 1}} {
			t.Run(k.name, func(t *testing.T) {
				if k.req == nil {
					t.Skipf("%s makes no %s", pc.name, k.name)
				}
				t.Parallel()
				ctx := context.Background()
				e := start(t, pc, simkit.Options{}, pc.key)
				r := k.req("a lighthouse at dusk")
				j := e.submit(ctx, r)
				seen := e.Follow(j)
				for _, st := range seen {
					if !st.Known || st.Refused || st.Raw == "" {
						t.Errorf("a plain job reported %+v, want a documented status", st)
					}
				}
				if st := last(seen); st.State != provider.Done || st.Reason != "" {
					t.Fatalf("job %s ended %+v, want done", j.ID, st)
				}
				res := e.result(ctx, j)
				if len(res.Outputs) != k.outputs {
					t.Errorf("the result lists %d outputs, want %d: %s", len(res.Outputs), k.outputs, res.Detail)
				}
				if res.Kind != 0 && res.Kind != r.Kind {
					t.Errorf("the result is of %s, the request of %s", res.Kind, r.Kind)
				}
				if res.CreationID == "" || len(res.Detail) == 0 {
					t.Errorf("the result has no creation id or detail: %+v", res)
				}
				e.files(ctx, res)
				// A synchronous API hands out no id: the adapter makes its own.
				if got := e.oneJob(e.jobs()); got.ID != j.ID && !pc.synchronous {
					t.Errorf("the simulator's job is %s, the adapter's %s", got.ID, j.ID)
				}
			})
		}
	})
}

// A job that fails ends Failed, with the provider's reason, and is not
// taken for a refusal. On a synchronous API the failure is the create's
// answer after the work: possibly paid, with the provider's reason, the
// job made once.
func TestFailure(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		ctx := context.Background()
		e := start(t, pc, simkit.Options{}, pc.key)
		if pc.synchronous {
			_, err := e.P.Submit(ctx, pc.image("a cat "+simkit.FailMarker))
			if why := notPossiblyPaid(e.Keep(err)); why != "" {
				t.Fatalf("a create that failed after its work: %v: %s", err, why)
			}
			if !strings.Contains(err.Error(), pc.failReason) {
				t.Errorf("the failure %q does not give the provider's reason (%q)", err, pc.failReason)
			}
			if rep := e.jobs(); rep.Requests != 1 {
				t.Errorf("the create was sent %d times, want once", rep.Requests)
			}
			e.oneJob(e.jobs())
			return
		}
		j := e.submit(ctx, pc.image("a cat "+simkit.FailMarker))
		st := last(e.Follow(j))
		if st.State != provider.Failed || !st.Known || st.Refused {
			t.Fatalf("a failing job ended %+v, want failed, not refused", st)
		}
		if strings.TrimSpace(st.Reason) == "" || !strings.Contains(st.Reason, pc.failReason) {
			t.Errorf("a failing job's reason is %q, want the provider's (%q)", st.Reason, pc.failReason)
		}
		e.oneJob(e.jobs())
	})
}

// What the provider's moderation refuses is never a job left to follow
// nor sent again: a job that ends Refused with the provider's reason, or,
// where the API refuses content at create, a refusal that made nothing.
func TestModerationRefusal(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		ctx := context.Background()
		e := start(t, pc, simkit.Options{}, pc.key)
		r := pc.image(pc.moderationPrompt)
		switch pc.moderation {
		case provider.ModeratedJob:
			j := e.submit(ctx, r)
			st := last(e.Follow(j))
			if st.State != provider.Failed || !st.Refused {
				t.Fatalf("a moderated job ended %+v, want failed and refused", st)
			}
			if !strings.Contains(st.Reason, pc.moderationReason) {
				t.Errorf("a moderated job's reason is %q, want the provider's (%q)", st.Reason, pc.moderationReason)
			}
			e.oneJob(e.jobs())
		case provider.ModeratedCreate:
			t.Logf("%s refuses content at create, never as a job's status: Status.Refused does not apply", pc.name)
			_, err := e.P.Submit(ctx, r)
			if e.Keep(err) == nil || provider.IsPossiblyPaid(err) {
				t.Fatalf("a create its moderation refuses: %v, want a refusal that made nothing", err)
			}
			if !strings.Contains(err.Error(), pc.moderationReason) {
				t.Errorf("the refusal %q does not give the provider's reason (%q)", err, pc.moderationReason)
			}
			if rep := e.jobs(); len(rep.Jobs) != 0 || rep.Requests != 1 {
				t.Errorf("a refused create made %d jobs in %d requests, want none in one", len(rep.Jobs), rep.Requests)
			}
		case provider.ModeratedAnswer:
			j := e.submit(ctx, r)
			st := last(e.Follow(j))
			if st.State != provider.Failed || !st.Refused || !st.Known {
				t.Fatalf("a create refused for its content ended %+v, want failed and refused", st)
			}
			if !strings.Contains(st.Reason, pc.moderationReason) {
				t.Errorf("the refusal's reason is %q, want the provider's (%q)", st.Reason, pc.moderationReason)
			}
			if _, err := e.P.Result(ctx, j); e.Keep(err) == nil {
				t.Error("a refused create has a result")
			}
			if rep := e.jobs(); len(rep.Jobs) != 0 || rep.Requests != 1 {
				t.Errorf("a refused create made %d jobs in %d requests, want none in one", len(rep.Jobs), rep.Requests)
			}
		}
	})
}

// With one request a minute and a clock that refuses every other
// request, a submit makes exactly one job: its create is sent again only
// after a 429, once Retry-After has passed; the job is then followed,
// through more 429s, to its files.
func TestRateLimitStorm(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		ctx := context.Background()
		e := start(t, pc, simkit.Options{RPM: 1, Now: lockedStepClock()}, pc.key)
		// The first request is admitted, so the create is the one refused:
		// the key check, or for a provider without one a read of nothing.
		if pc.noKeyCheck {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/nothing-here", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+pc.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		} else if err := e.Keep(e.P.CheckCredentials(ctx)); err != nil {
			t.Fatalf("checking the key: %v", err)
		}
		began := time.Now()
		j := e.submit(ctx, pc.image("a storm"))
		took := time.Since(began)
		// Read before anything else asks the clock: the report is the
		// submit's alone (and one request of the key's before it).
		rep := e.jobs()
		if rep.Throttled == 0 {
			t.Fatal("no request was refused 429: the storm did not happen")
		}
		if rep.Requests != 1+rep.Throttled+1 {
			t.Errorf("the submit sent %d requests for %d 429s: a create was sent again without one", rep.Requests-1, rep.Throttled)
		}
		if took < 900*time.Millisecond {
			t.Errorf("the create was sent again after %s, before the Retry-After of 1s", took)
		}
		e.oneJob(rep)
		if st := last(e.Follow(j)); st.State != provider.Done {
			t.Fatalf("job %s ended %+v in the storm, want done", j.ID, st)
		}
		e.files(ctx, e.result(ctx, j))
		e.oneJob(e.jobs())
	})
}

// A status the provider does not document is shown as it came, counted
// as running and known to be unknown, and the job is followed on to
// Done.
func TestUnknownStatus(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		if pc.synchronous {
			t.Skipf("%s answers a create with its result: it has no statuses to follow", pc.name)
		}
		ctx := context.Background()
		e := start(t, pc, simkit.Options{Latency: 300 * time.Millisecond}, pc.key)
		j := e.submit(ctx, pc.image("an odd one "+simkit.WeirdMarker))
		seen := e.Follow(j)
		unknown := 0
		for _, st := range seen {
			if st.Known {
				continue
			}
			unknown++
			if st.State != provider.Running || st.Raw != pc.weirdRaw || st.Refused {
				t.Errorf("an undocumented status is %+v, want running and shown as %q", st, pc.weirdRaw)
			}
		}
		if unknown == 0 {
			t.Errorf("no undocumented status among %+v", seen)
		}
		if st := last(seen); st.State != provider.Done || !st.Known {
			t.Fatalf("the job ended %+v, want followed to done", st)
		}
		e.result(ctx, j)
	})
}

// A create whose answer is lost (the job made, the connection then
// closed) is possibly paid and never sent again; a provider that lists
// its jobs finds exactly that job again.
func TestLostCreateAnswer(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		ctx := context.Background()
		e := start(t, pc, simkit.Options{LoseRate: 1}, pc.key)
		r := pc.image("a lost answer")
		since := time.Now()
		_, err := e.P.Submit(ctx, r)
		if why := notPossiblyPaid(e.Keep(err)); why != "" {
			t.Fatalf("a lost create answer: %v: %s", err, why)
		}
		until := time.Now()
		rep := e.jobs()
		made := e.oneJob(rep)
		if rep.Requests != 1 {
			t.Errorf("the create was sent %d times, want once", rep.Requests)
		}
		rec, ok := e.P.(provider.Recoverer)
		if !ok {
			t.Logf("%s lists no jobs (no provider.Recoverer): the create stays possibly paid", pc.name)
			return
		}
		j, found, err := rec.Recover(ctx, r, since, until)
		if e.Keep(err) != nil || !found {
			t.Fatalf("Recover = %+v, %v, %v; want job %s", j, found, err, made.ID)
		}
		if j.ID != made.ID || j.Kind != r.Kind {
			t.Fatalf("Recover found %+v, want job %s of %s", j, made.ID, r.Kind)
		}
		if st := last(e.Follow(j)); st.State != provider.Done {
			t.Errorf("the recovered job ended %+v", st)
		}
	})
}

// A 500 answer to a create is possibly paid (a service can fail after it
// made the job) and the create is sent only once.
func TestServerErrorOnCreate(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		e := start(t, pc, simkit.Options{ErrorRate: 1}, pc.key)
		_, err := e.P.Submit(context.Background(), pc.image("five hundred"))
		if why := notPossiblyPaid(e.Keep(err)); why != "" {
			t.Fatalf("a 500 on create: %v: %s", err, why)
		}
		if rep := e.jobs(); rep.Requests != 1 {
			t.Errorf("the simulator saw %d requests, want the one create", rep.Requests)
		}
	})
}

// A URL that expired before its download fails it with an error, not a
// wrong file, and leaves nothing in the directory; the link's refusal is
// not taken for the key's.
func TestExpiredURL(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		if pc.expiring == nil {
			t.Skipf("%s answers its files inline: no URL expires", pc.name)
		}
		ctx := context.Background()
		const ttl = time.Minute
		e := start(t, pc, simkit.Options{URLTTL: ttl}, pc.key)
		u := pc.expiring(ctx, e)
		e.clock.Advance(2 * ttl)
		dir := t.TempDir()
		d, err := e.P.Download(ctx, u, dir, "late")
		if e.Keep(err) == nil || d != nil {
			t.Fatalf("downloading an expired URL: %+v, %v; want an error", d, err)
		}
		if errors.Is(err, apiclient.ErrUnauthorized) {
			t.Errorf("an expired link reads as a refused key: %v", err)
		}
		entries, rerr := os.ReadDir(dir)
		if rerr != nil {
			t.Fatal(rerr)
		}
		for _, de := range entries {
			t.Errorf("the failed download left %s in the directory", de.Name())
		}
	})
}

// A key the provider refuses fails the credentials check with an error
// matching apiclient.ErrUnauthorized (a provider without a documented
// check sends nothing and passes it), a submit with it is a refusal that
// made nothing, and no error holds the key (the harness checks every
// error kept); the right key passes the check.
func TestKeyRefused(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		ctx := context.Background()
		good := start(t, pc, simkit.Options{}, pc.key)
		if err := good.Keep(good.P.CheckCredentials(ctx)); err != nil {
			t.Errorf("the right key: %v", err)
		}

		bad := start(t, pc, simkit.Options{}, pc.wrongKey)
		err := bad.Keep(bad.P.CheckCredentials(ctx))
		switch {
		case pc.noKeyCheck && err != nil:
			t.Errorf("a provider without a key check: %v, want no request and no error", err)
		case !pc.noKeyCheck && !errors.Is(err, apiclient.ErrUnauthorized):
			t.Errorf("a wrong key: %v, want ErrUnauthorized", err)
		}
		_, serr := bad.P.Submit(ctx, pc.image("with a wrong key"))
		if bad.Keep(serr) == nil || provider.IsPossiblyPaid(serr) || !errors.Is(serr, apiclient.ErrUnauthorized) {
			t.Errorf("a submit with a wrong key: %v, want a refusal of the key that made nothing", serr)
		}
		if n := len(bad.jobs().Jobs); n != 0 {
			t.Errorf("%d jobs made with a wrong key", n)
		}
		for _, e := range []error{err, serr} {
			if e != nil && strings.Contains(e.Error(), pc.key) {
				t.Errorf("an error holds the simulator's key: %v", e)
			}
		}
	})
}

// files checks every output of res: one behind a URL is downloaded as a
// file of its own (see download); one that came inline (Output.Data, no
// URL) holds the bytes of an image that decodes, of the media type the
// adapter names.
func (e *env) files(ctx context.Context, res *provider.Result) {
	e.t.Helper()
	linked := *res
	linked.Outputs = nil
	for _, o := range res.Outputs {
		if o.URL != "" {
			linked.Outputs = append(linked.Outputs, o)
			continue
		}
		if len(o.Data) == 0 {
			e.t.Fatalf("output %d has neither a URL nor data", o.Index)
		}
		_, format, err := image.DecodeConfig(bytes.NewReader(o.Data))
		if err != nil {
			e.t.Fatalf("output %d: its %d bytes are not an image: %v", o.Index, len(o.Data), err)
		}
		if o.MediaType != "image/"+format || http.DetectContentType(o.Data) != o.MediaType {
			e.t.Errorf("output %d is a %s, its media type %q", o.Index, format, o.MediaType)
		}
	}
	if len(linked.Outputs) > 0 {
		e.download(ctx, &linked)
	}
}

// Every create passes the create gate just before it is sent, once, when
// nothing has reached the provider yet: the apply records its intent to
// pay there. A gate that refuses stops the create unsent: the simulator
// makes no job, and the error says nothing was sent.
func TestCreateGate(t *testing.T) {
	forEach(t, func(t *testing.T, pc providerCase) {
		e := start(t, pc, simkit.Options{}, pc.key)
		r := pc.image
		if r == nil {
			r = pc.video
		}
		jobsAtGate, passes := -1, 0
		gate := &apiclient.CreateGate{Send: func() error {
			passes++
			jobsAtGate = len(e.jobs().Jobs)
			return nil
		}}
		ctx := apiclient.WithCreateGate(context.Background(), gate)
		e.submit(ctx, r("a lighthouse through the gate"))
		if passes != 1 || jobsAtGate != 0 {
			t.Errorf("the create passed the gate %d times, with %d jobs made at the time; want once, before any job", passes, jobsAtGate)
		}
		if n := len(e.jobs().Jobs); n != 1 {
			t.Fatalf("%d jobs made, want 1", n)
		}

		refusal := errors.New("the state cannot be written")
		shut := apiclient.WithCreateGate(context.Background(), &apiclient.CreateGate{Send: func() error {
			return fmt.Errorf("%w: %w", apiclient.ErrNotSent, refusal)
		}})
		_, err := e.P.Submit(shut, r("a lighthouse the gate stops"))
		if !errors.Is(err, refusal) || !errors.Is(err, apiclient.ErrNotSent) || provider.IsPossiblyPaid(err) {
			t.Errorf("a create stopped at the gate returned %v, want the gate's error, not sent and not possibly paid", err)
		}
		if n := len(e.jobs().Jobs); n != 1 {
			t.Errorf("%d jobs made after a create stopped at the gate, want still 1", n)
		}
	})
}
