package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// fakeService answers as a scripted service would. Jobs get the ids
// job-1, job-2 ... in the order they are created. What a job does is its
// fakeJob: the one of scripts whose key its request body contains (a
// prompt, say), or the one addJob gave a job made before the test; a job
// without a script succeeds at its first poll. Media URLs
// name their job: http://fake.test/media/<job>/<index>.<ext>, and
// http://fake.test/nowm/<job>.mp4 for a video's watermark-free file. A
// download writes "content of <url>".
type fakeService struct {
	// createErr is what a create request gets when its script says
	// nothing.
	createErr error
	// scripts are the jobs' scripts by a part of their request body.
	scripts map[string]fakeJob
	// afterCreate runs when a create request is answered, before the
	// answer is returned (it may cancel the apply's context).
	afterCreate func(id string)
	// beforeStatus runs when a status request arrives.
	beforeStatus func(id string)
	// credErr is what checking the token gets.
	credErr error

	mu        sync.Mutex
	creates   int
	jobs      map[string]*fakeRun
	calls     map[string]int
	bodies    []string // create request bodies, in order
	downloads []string // URLs downloaded, in order
}

// fakeJob scripts a job.
type fakeJob struct {
	createErr error
	// statuses are the raw statuses successive polls report; the last one
	// repeats. None: "succeed".
	statuses  []string
	statusErr error
	detailErr error
	// outputs is the number of images the detail lists (videos have one),
	// by default the request's image_number; noOutputs makes it list none.
	outputs   int
	noOutputs bool
	// downloadErr fails every download of the job's files, and wmErr the
	// request for its watermark-free URL.
	downloadErr error
	wmErr       error
	// otherBytes makes downloads of the job's files serve other bytes than
	// before (a service that renders a creation anew).
	otherBytes bool
}

type fakeRun struct {
	fakeJob
	kind  addrs.Kind
	polls int
}

func (f *fakeService) call(ctx context.Context, method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
	return ctx.Err()
}

// count is how many requests of method (CheckCredentials, Create, Status,
// Detail, WatermarkFreeURL, Download) the service answered.
func (f *fakeService) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// addJob makes a job as an earlier apply would have.
func (f *fakeService) addJob(id string, kind addrs.Kind, job fakeJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.jobs == nil {
		f.jobs = map[string]*fakeRun{}
	}
	f.jobs[id] = &fakeRun{fakeJob: job, kind: kind}
}

// rescript changes what job id does from now on.
func (f *fakeService) rescript(id string, fn func(*fakeJob)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.jobs[id].fakeJob)
}

func (f *fakeService) job(id string) (*fakeRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[id]
	if j == nil {
		return nil, &apiclient.Error{HTTPStatus: 404, Message: "no job " + id}
	}
	return j, nil
}

// answer counts a request of method about job id, and returns the job,
// or the error the request gets: the context's, a missing job's, or the
// one errOf says the job's script gives it.
func (f *fakeService) answer(ctx context.Context, method, id string, errOf func(*fakeJob) error) (*fakeRun, error) {
	if err := f.call(ctx, method); err != nil {
		return nil, err
	}
	j, err := f.job(id)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := errOf(&j.fakeJob); err != nil {
		return nil, err
	}
	return j, nil
}

func (f *fakeService) CheckCredentials(ctx context.Context) error {
	if err := f.call(ctx, "CheckCredentials"); err != nil {
		return err
	}
	return f.credErr
}

// Submit makes a job, as the reference service does: as many images as
// the request asks for, unless its script says otherwise.
func (f *fakeService) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	if err := apiclient.PassCreateGate(ctx); err != nil {
		return provider.Job{}, err
	}
	if err := f.call(ctx, "Create"); err != nil {
		return provider.Job{}, err
	}
	body := r.Body
	f.mu.Lock()
	f.creates++
	f.bodies = append(f.bodies, string(body))
	job := fakeJob{createErr: f.createErr}
	for key, s := range f.scripts {
		if strings.Contains(string(body), key) {
			job = s
		}
	}
	id := fmt.Sprintf("job-%d", f.creates)
	f.mu.Unlock()
	if job.createErr != nil {
		return provider.Job{}, job.createErr
	}
	if job.outputs == 0 {
		// As many images as the request asks for, as the service makes.
		var req struct {
			Config struct {
				ImageNumber int `json:"image_number"`
			} `json:"config"`
		}
		json.Unmarshal(body, &req)
		job.outputs = req.Config.ImageNumber
	}
	f.addJob(id, r.Kind, job)
	if f.afterCreate != nil {
		f.afterCreate(id)
	}
	return provider.Job{ID: id, Kind: r.Kind}, nil
}

// Status reports the job's scripted statuses, one a poll, as the
// reference service's statuses normalise.
func (f *fakeService) Status(ctx context.Context, job provider.Job) (provider.Status, error) {
	id := job.ID
	if err := f.call(ctx, "Status"); err != nil {
		return provider.Status{}, err
	}
	if f.beforeStatus != nil {
		f.beforeStatus(id)
	}
	j, err := f.job(id)
	if err != nil {
		return provider.Status{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if j.statusErr != nil {
		return provider.Status{}, j.statusErr
	}
	raw := "succeed"
	if n := len(j.statuses); n > 0 {
		raw = j.statuses[min(j.polls, n-1)]
	}
	j.polls++
	st := provider.Status{Raw: raw, Known: true, Progress: 1}
	switch raw {
	case "succeed":
		st.State = provider.Done
	case "failed":
		st.State, st.Reason = provider.Failed, "the service reported the generation failed"
	case "pending", "processing", "post_processing":
		st.Progress = 0.5
	default:
		st.Known, st.Progress = false, 0.5
	}
	return st, nil
}

// Result lists the job's files: one a requested image, or the video.
func (f *fakeService) Result(ctx context.Context, job provider.Job) (*provider.Result, error) {
	id := job.ID
	j, err := f.answer(ctx, "Detail", id, func(j *fakeJob) error { return j.detailErr })
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	res := &provider.Result{CreationID: id, Detail: []byte(`{"creation_id":"` + id + `"}`)}
	switch {
	case j.noOutputs:
	case j.kind == addrs.Video:
		res.Outputs = []provider.Output{{Index: 0, ID: id + "-0", URL: "http://fake.test/media/" + id + "/0.mp4"}}
	default:
		for i := range max(j.outputs, 1) {
			res.Outputs = append(res.Outputs, provider.Output{Index: i,
				ID: fmt.Sprintf("%s-%d", id, i), URL: fmt.Sprintf("http://fake.test/media/%s/%d.png", id, i)})
		}
	}
	return res, nil
}

// WatermarkFreeURL mints the link of a video's watermark-free file.
func (f *fakeService) WatermarkFreeURL(ctx context.Context, id string) (string, error) {
	if _, err := f.answer(ctx, "WatermarkFreeURL", id, func(j *fakeJob) error { return j.wmErr }); err != nil {
		return "", err
	}
	return "http://fake.test/nowm/" + id + ".mp4", nil
}

func (f *fakeService) Download(ctx context.Context, url, dir, base string) (*apiclient.Downloaded, error) {
	if err := f.call(ctx, "Download"); err != nil {
		return nil, err
	}
	// The job is the URL's last directory, or its file name for a
	// watermark-free URL.
	id := strings.TrimSuffix(filepath.Base(url), ".mp4")
	if strings.Contains(url, "/media/") {
		id = filepath.Base(filepath.Dir(url))
	}
	j, _ := f.job(id)
	f.mu.Lock()
	var err error
	data := []byte("content of " + url)
	if j != nil {
		err = j.downloadErr
		if j.otherBytes {
			data = append(data, " rendered again"...)
		}
	}
	if err == nil {
		f.downloads = append(f.downloads, url)
	}
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ext := filepath.Ext(url)
	if ext == "" {
		ext = ".png"
	}
	// As the real client does: a temporary file renamed into place, so a
	// file replaced is a new inode (the cache may hold the old one).
	path := filepath.Join(dir, base+ext)
	if err := os.WriteFile(path+".part", data, 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(path+".part", path); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &apiclient.Downloaded{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), ContentType: "image/png"}, nil
}

// ID is the service's identity in fingerprints.
func (f *fakeService) ID() string { return "simulator" }

var _ provider.WatermarkFreer = (*fakeService)(nil)

// asProvider is svc behind the provider seam: nil for none.
func asProvider(svc provider.Provider) provider.Provider {
	if f, ok := svc.(*fakeService); ok && f == nil {
		return nil
	}
	return svc
}

// referenceOnly is the engine's providers when svc is the reference
// service and there is no other: none for a nil svc.
func referenceOnly(svc provider.Provider) map[string]provider.Provider {
	return map[string]provider.Provider{addrs.Reference: asProvider(svc)}
}
