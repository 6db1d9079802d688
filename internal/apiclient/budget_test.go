package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient/apitest"
)

// fakeClock is a clock whose sleeps move time forward at once.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }
func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	f.t = f.t.Add(d)
	return ctx.Err()
}

// maxInWindow is the largest number of times within any half-open window
// [t, t+window) of the sorted times.
func maxInWindow(times []time.Time, window time.Duration) int {
	most, lo := 0, 0
	for hi := range times {
		for !times[hi].Before(times[lo].Add(window)) {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

func TestBudgetNeverExceedsRequestsPerMinute(t *testing.T) {
	for _, perMinute := range []int{1, 7, 90, 450, 600} {
		t.Run(fmt.Sprint(perMinute), func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
			b := newBudget(perMinute, clock.now, clock.sleep)
			start := clock.t
			n := 4*perMinute + 5 // a little over four minutes of demand
			var sent []time.Time
			for range n {
				if err := b.take(context.Background()); err != nil {
					t.Fatal(err)
				}
				sent = append(sent, clock.t)
			}
			if got := maxInWindow(sent, time.Minute); got > perMinute {
				t.Errorf("%d requests within one minute, budget %d", got, perMinute)
			}
			burst := max(1, (perMinute+59)/60)
			for i := range burst {
				if !sent[i].Equal(start) {
					t.Errorf("request %d of the first burst waited %s", i, sent[i].Sub(start))
				}
			}
			if !sent[burst].After(start) {
				t.Errorf("request %d, past the burst of %d, did not wait", burst, burst)
			}
			// The budget is used, not wasted: n requests need about n/perMinute
			// minutes, and the pacing may not make them much slower.
			if took, ideal := sent[n-1].Sub(start), time.Duration(float64(n)/float64(perMinute)*float64(time.Minute)); took > ideal+ideal/20+time.Minute/time.Duration(perMinute) {
				t.Errorf("%d requests took %s, ideal %s", n, took, ideal)
			}
		})
	}
}

// With DownloadsOutsideBudget (a live provider's files come from a CDN,
// outside the limits of its API), downloads never wait for the budget,
// and take nothing from it.
// mediaAndStatusServer serves a PNG at /media/a.png and a pending job's
// status everywhere else.
func mediaAndStatusServer(t *testing.T) *apitest.Server {
	return apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/media/a.png" {
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte(apitest.PNGMagic))
			return
		}
		apitest.WriteJSON(w, 200, `{"status":"success","value":{"status":"pending","progress":0}}`)
	})
}

func TestBudgetIsSharedByEveryRequest(t *testing.T) {
	srv := mediaAndStatusServer(t)
	c, _ := newClient(t, srv.URL, func(cfg *Config) { cfg.RequestsPerMinute = 600 })
	// Time stands still, and a request that must wait for the budget waits
	// until the test ends it: exactly the burst gets through.
	now := time.Now()
	c.now = func() time.Time { return now }
	var waiting atomic.Int32
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waiting.Add(1)
		<-ctx.Done()
		return ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	const calls = 25
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%5 == 0 {
				_, err = c.Download(ctx, srv.URL+"/media/a.png", dir, fmt.Sprint(i))
			} else {
				_, err = c.Do(ctx, Call{Method: http.MethodGet, Path: "/v1/jobs/x/status"})
			}
			errs <- err
		}()
	}
	const burst = 10 // one second's worth of 600 a minute
	timeout := time.After(10 * time.Second)
	for range burst {
		select {
		case err := <-errs:
			if err != nil {
				t.Errorf("a call within the burst failed: %v", err)
			}
		case <-timeout:
			t.Fatalf("the burst did not complete: %d requests sent", srv.Count())
		}
	}
	for waiting.Load() < calls-burst {
		select {
		case <-timeout:
			t.Fatalf("%d calls waiting for the budget, want %d", waiting.Load(), calls-burst)
		case <-time.After(time.Millisecond):
		}
	}
	if n := srv.Count(); n != burst {
		t.Errorf("the server received %d requests at once, budget burst %d", n, burst)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a call waiting for the budget ended with %v, want context.Canceled", err)
		}
	}
	if n := srv.Count(); n != burst {
		t.Errorf("the server received %d requests, want %d", n, burst)
	}
}

func TestDownloadsOutsideBudget(t *testing.T) {
	srv := mediaAndStatusServer(t)
	c, _ := newClient(t, srv.URL, func(cfg *Config) {
		cfg.RequestsPerMinute = 60
		cfg.DownloadsOutsideBudget = true
	})
	now := time.Now()
	c.now = func() time.Time { return now }
	c.sleep = func(ctx context.Context, d time.Duration) error {
		t.Errorf("a request waited %s for the budget", d)
		return errors.New("waited")
	}
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 5 {
		if _, err := c.Download(ctx, srv.URL+"/media/a.png", dir, fmt.Sprint(i)); err != nil {
			t.Fatalf("download %d: %v", i, err)
		}
	}
	// The budget's one second's worth (1 of 60 a minute) is still whole
	// for the API.
	if _, err := c.Do(ctx, Call{Method: http.MethodGet, Path: "/v1/jobs/x/status"}); err != nil {
		t.Fatalf("the API call after the downloads: %v", err)
	}
}
