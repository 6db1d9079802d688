package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/apiclient/apitest"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
)

func TestEndpointsSendWhatTheServiceDocuments(t *testing.T) {
	const created = `{"status":"success","value":{"generation_id":"gen-1"}}`
	tests := []struct {
		name     string
		call     func(context.Context, *Client) (string, error)
		wantPath string
		wantBody string
	}{
		{
			name: "create sends the body byte for byte",
			call: func(ctx context.Context, c *Client) (string, error) {
				return c.Create(ctx, addrs.Text2Image, []byte(`{"prompt": "a  lighthouse"}`))
			},
			wantPath: "/v1/jobs/text2image",
			wantBody: `{"prompt": "a  lighthouse"}`,
		},
		{
			name: "text to image",
			call: func(ctx context.Context, c *Client) (string, error) {
				return c.TextToImage(ctx, TextToImageRequest{
					Prompt: "sea & sky <dusk>", NegativePrompt: "blurry", IsPublic: ptr(false),
					Config:   &ImageConfig{ImageNumber: ptr(2)},
					Settings: &ImageSettings{Seed: ptr(int64(0)), AspectRatio: "16:9", Resolution: ptr(1080)},
				})
			},
			wantPath: "/v1/jobs/text2image",
			wantBody: `{"prompt":"sea & sky <dusk>","negative_prompt":"blurry","is_public":false,"config":{"image_number":2},"settings":{"seed":0,"aspect_ratio":"16:9","resolution":1080}}`,
		},
		{
			name: "text to image leaves defaults out",
			call: func(ctx context.Context, c *Client) (string, error) {
				return c.TextToImage(ctx, TextToImageRequest{Prompt: "p"})
			},
			wantPath: "/v1/jobs/text2image",
			wantBody: `{"prompt":"p"}`,
		},
		{
			name: "image to video",
			call: func(ctx context.Context, c *Client) (string, error) {
				return c.ImageToVideo(ctx, ImageToVideoRequest{
					Prompt: "dolly in", Config: &ImageToVideoConfig{SourceImage: "https://cdn.example/a.png"},
					IsPublic: ptr(false), IsEnablePromptEnhancer: ptr(false), GenMode: "enhanced",
					Settings: &VideoSettings{Seed: ptr(int64(7)), Duration: ptr(4.0)},
				})
			},
			wantPath: "/v1/jobs/gen2/image2video",
			wantBody: `{"prompt":"dolly in","config":{"source_image":"https://cdn.example/a.png"},"is_public":false,"is_enable_prompt_enhancer":false,"gen_mode":"enhanced","settings":{"seed":7,"duration":4}}`,
		},
		{
			name: "key frame",
			call: func(ctx context.Context, c *Client) (string, error) {
				return c.KeyFrame(ctx, KeyFrameRequest{
					Config: &KeyFrameConfig{
						SourceImages: []string{"https://cdn.example/a.png", "data:image/png;base64,AAAA"},
						FrameIndices: []int{0, 31}, InputWidth: ptr(1280), InputHeight: ptr(720),
					},
					Prompt: "morph",
				})
			},
			wantPath: "/v1/jobs/gen2/afc",
			wantBody: `{"config":{"source_images":["https://cdn.example/a.png","data:image/png;base64,AAAA"],"frame_indices":[0,31],"input_width":1280,"input_height":720},"prompt":"morph"}`,
		},
		{
			name: "text to video",
			call: func(ctx context.Context, c *Client) (string, error) {
				return c.TextToVideo(ctx, TextToVideoRequest{
					Prompt: "title card", GenMode: "standard",
					Settings: &TextToVideoSettings{AspectRatio: "9:16", Duration: ptr(2.0)},
				})
			},
			wantPath: "/v1/jobs/gen2/text2video",
			wantBody: `{"prompt":"title card","gen_mode":"standard","settings":{"aspect_ratio":"9:16","duration":2}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				apitest.WriteJSON(w, 200, created)
			})
			c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.UserAgent = "genform-test/1" })
			id, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if id != "gen-1" {
				t.Errorf("generation id = %q, want gen-1", id)
			}
			got := srv.Requests()
			want := []apitest.Seen{{
				Method: "POST", Path: tt.wantPath, Auth: "Bearer " + apitest.Token,
				ContentType: "application/json", UserAgent: "genform-test/1", Body: []byte(tt.wantBody),
			}}
			if diff := cmp.Diff(want, got, cmpSeen); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateRefusesWhatItCannotSend(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) { apitest.WriteJSON(w, 500, `{}`) })
	c, _ := newClient(t, srv.URL, nil)
	if _, err := c.Create(context.Background(), addrs.ModelEndpoint("fal", "x", addrs.Image), []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "unknown job endpoint") {
		t.Errorf("unknown endpoint: err = %v", err)
	}
	if _, err := c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("invalid body: err = %v", err)
	}
	if n := srv.Count(); n != 0 {
		t.Errorf("server received %d requests, want 0", n)
	}
}

func TestReadEndpoints(t *testing.T) {
	const detail = `{"creation_id":"c/1","user_id":"u1","username":"ann","avatar":"https://a/x.png","type":"image","input_type":"text","prompt":"p","negative_prompt":"n","create_time":"2024-05-01T10:00:00Z","update_time":"2024-05-01T10:00:05Z","status":"succeed","video_url":"","thumbnail_url":"https://t/1.png","settings":{"fps":24,"width":1280,"height":720},"commits":{"like_count":3,"is_like":true,"collects_count":1,"is_collect":false},"output_type":"image","outputs":[{"id":"o1","media_url":"https://m/1.png","thumbnail_url":"https://t/1.png"}],"extra":{"kept":true}}`
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case r.Method == "GET" && r.URL.EscapedPath() == "/api/v1/jobs/c%2F1/status":
			apitest.WriteJSON(w, 200, `{"status":"success","value":{"status":"processing","progress":0.25}}`)
		case r.Method == "GET" && r.URL.EscapedPath() == "/api/v1/creation/c%2F1":
			apitest.WriteJSON(w, 200, `{"status":"success","value":`+detail+`}`)
		case r.Method == "POST" && r.URL.EscapedPath() == "/api/v1/creation/c%2F1/watermark-free-url":
			apitest.WriteJSON(w, 200, `{"status":"success","value":{"url":"https://m/1-clean.mp4?sig=abc","expire_time":"2024-05-01T11:00:00Z"}}`)
		default:
			apitest.WriteJSON(w, 404, `{"message":"no route"}`)
		}
	})
	// A base URL with a path prefix: every endpoint hangs below it.
	c, _ := newClient(t, srv.URL+"/api/", nil)
	ctx := context.Background()

	st, err := c.Status(ctx, "c/1")
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if want := (Status{Raw: "processing", State: StateRunning, Known: true, Progress: 0.25}); st != want {
		t.Errorf("Status = %+v, want %+v", st, want)
	}

	cr, err := c.Detail(ctx, "c/1")
	if err != nil {
		t.Fatalf("Detail: %v", err)
	}
	want := &Creation{
		CreationID: "c/1", UserID: "u1", Username: "ann", Avatar: "https://a/x.png", Type: "image",
		InputType: "text", Prompt: "p", NegativePrompt: "n", CreateTime: "2024-05-01T10:00:00Z",
		UpdateTime: "2024-05-01T10:00:05Z", Status: "succeed", ThumbnailURL: "https://t/1.png",
		Settings:   CreationSettings{FPS: 24, Width: 1280, Height: 720},
		Commits:    CreationCommits{LikeCount: 3, IsLike: true, CollectsCount: 1},
		OutputType: "image",
		Outputs:    []CreationOutput{{ID: "o1", MediaURL: "https://m/1.png", ThumbnailURL: "https://t/1.png"}},
		Raw:        json.RawMessage(detail),
	}
	if diff := cmp.Diff(want, cr, cmp.Transformer("raw", func(b json.RawMessage) string { return string(b) })); diff != "" {
		t.Errorf("Detail (-want +got):\n%s", diff)
	}

	wf, err := c.WatermarkFreeURL(ctx, "c/1")
	if err != nil {
		t.Fatalf("WatermarkFreeURL: %v", err)
	}
	wantWF := &WatermarkFreeURL{URL: "https://m/1-clean.mp4?sig=abc", ExpireTime: time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)}
	if diff := cmp.Diff(wantWF, wf); diff != "" {
		t.Errorf("WatermarkFreeURL (-want +got):\n%s", diff)
	}

	for _, r := range srv.Requests() {
		if r.Auth != "Bearer "+apitest.Token {
			t.Errorf("%s %s: Authorization = %q", r.Method, r.Path, r.Auth)
		}
		if len(r.Body) != 0 {
			t.Errorf("%s %s: unexpected body %q", r.Method, r.Path, r.Body)
		}
	}
	if n := srv.Count(); n != 3 {
		t.Errorf("server received %d requests, want 3", n)
	}
}

func TestNoTokenNoAuthorizationHeader(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		apitest.WriteJSON(w, 200, `{"status":"success","value":{"status":"pending","progress":0}}`)
	})
	c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.Token = "" })
	if _, err := c.Status(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0]; got.Auth != "" {
		t.Errorf("Authorization = %q, want none", got.Auth)
	}
}

func TestErrorAnswers(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		ambiguous  bool
		body       string
		want       apiclient.Error
		wantString string
	}{
		{
			name: "flat with integer code", status: 400,
			body:       `{"message":"prompt is required","code":40001,"details":["prompt"]}`,
			want:       apiclient.Error{HTTPStatus: 400, Code: "40001", Message: "prompt is required", Details: json.RawMessage(`["prompt"]`)},
			wantString: "POST /v1/jobs/text2image: 400 Bad Request: prompt is required (code 40001)",
		},
		{
			name: "nested with string code", status: 400,
			body:       `{"error":{"message":"may violate usage policy","code":"VB-100017","details":[]}}`,
			want:       apiclient.Error{HTTPStatus: 400, Code: "VB-100017", Message: "may violate usage policy", Details: json.RawMessage(`[]`)},
			wantString: "POST /v1/jobs/text2image: 400 Bad Request: may violate usage policy (code VB-100017)",
		},
		{
			name: "nested with integer code", status: 403,
			body: `{"error":{"message":"permission denied","code":403}}`,
			want: apiclient.Error{HTTPStatus: 403, Code: "403", Message: "permission denied"},
		},
		{
			name: "flat with string code", status: 404,
			body: `{"message":"content not found","code":"H-10002001","details":null}`,
			want: apiclient.Error{HTTPStatus: 404, Code: "H-10002001", Message: "content not found"},
		},
		{
			name: "nested object completed by flat members", status: 404,
			body: `{"error":{"details":[1]},"message":"generation does not exist","code":"H-10002003"}`,
			want: apiclient.Error{HTTPStatus: 404, Code: "H-10002003", Message: "generation does not exist", Details: json.RawMessage(`[1]`)},
		},
		{
			name: "error as a string", status: 400,
			body: `{"error":"bad request"}`,
			want: apiclient.Error{HTTPStatus: 400, Message: "bad request"},
		},
		{
			name: "not JSON", status: 400,
			body:       "<html>\n<body>Bad   Request</body>\n</html>",
			want:       apiclient.Error{HTTPStatus: 400, Message: "<html> <body>Bad Request</body> </html>"},
			wantString: "POST /v1/jobs/text2image: 400 Bad Request: <html> <body>Bad Request</body> </html>",
		},
		{
			name: "empty body", status: 422, ambiguous: true,
			want:       apiclient.Error{HTTPStatus: 422},
			wantString: "POST /v1/jobs/text2image: 422 Unprocessable Entity",
		},
		{
			name: "error envelope on 200", status: 200, ambiguous: true,
			body: `{"status":"error","value":null,"error":{"message":"function unavailable for API users","code":"VB-100020"}}`,
			want: apiclient.Error{HTTPStatus: 200, Code: "VB-100020", Message: "function unavailable for API users"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				apitest.WriteJSON(w, tt.status, tt.body)
			})
			c, _ := newClient(t, srv.URL, nil)
			_, err := c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"p"}`))
			var se *apiclient.Error
			if !errors.As(err, &se) {
				t.Fatalf("error = %v (%T), want *Error", err, err)
			}
			want := tt.want
			want.Op = "POST /v1/jobs/text2image"
			if diff := cmp.Diff(&want, se, cmp.AllowUnexported(apiclient.Error{}), cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".serviceBody"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("Error (-want +got):\n%s", diff)
			}
			if tt.wantString != "" && se.Error() != tt.wantString {
				t.Errorf("Error() = %q, want %q", se.Error(), tt.wantString)
			}
			// An answer the service documents as a refusal is final; any
			// other (a 422, a 2xx carrying an error) may have come after
			// the job was made: it is ambiguous, and not sent again either.
			if errors.Is(err, apiclient.ErrAmbiguousCreate) != tt.ambiguous || apiclient.IsRetryable(err) {
				t.Errorf("ambiguous=%v (want %v) retryable=%v", errors.Is(err, apiclient.ErrAmbiguousCreate), tt.ambiguous, apiclient.IsRetryable(err))
			}
			if n := srv.Count(); n != 1 {
				t.Errorf("server received %d requests, want 1 (a refusal is not retried)", n)
			}
		})
	}
}

func TestUnauthorizedIsFinal(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		apitest.WriteJSON(w, 401, `{"error":{"message":"invalid API key","code":401}}`)
	})
	c, _ := newClient(t, srv.URL, nil)
	_, err := c.Status(context.Background(), "x")
	var se *apiclient.Error
	if !errors.As(err, &se) || se.HTTPStatus != 401 || se.Message != "invalid API key" {
		t.Fatalf("error = %v, want the 401 *Error", err)
	}
	if apiclient.IsRetryable(err) || srv.Count() != 1 {
		t.Errorf("401 retried: retryable=%v requests=%d", apiclient.IsRetryable(err), srv.Count())
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		retryAfter string
		wantAtLeat time.Duration
	}{
		{"seconds", "7", 7 * time.Second},
		{"http date", now.Add(40 * time.Second).Format(http.TimeFormat), 40 * time.Second},
		{"absurd value is capped", "86400", maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					w.Header().Set("Retry-After", tt.retryAfter)
					apitest.WriteJSON(w, 429, `{"error":{"message":"rate limit","code":"VB-100011"}}`)
					return
				}
				apitest.WriteJSON(w, 200, `{"status":"success","value":{"status":"succeed","progress":1}}`)
			})
			c, w := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.Now = func() time.Time { return now } })
			st, err := c.Status(context.Background(), "x")
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if st.State != StateDone {
				t.Errorf("State = %v, want done", st.State)
			}
			got := w.All()
			if len(got) != 1 || got[0] < tt.wantAtLeat {
				t.Errorf("waits = %v, want one wait of at least %s", got, tt.wantAtLeat)
			}
			if got[0] > maxRetryAfter {
				t.Errorf("wait %s exceeds the cap %s", got[0], maxRetryAfter)
			}
			if n := srv.Count(); n != 2 {
				t.Errorf("server received %d requests, want 2", n)
			}
		})
	}
}

func TestReadsRetryServerErrorsThenSucceed(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch n {
		case 0:
			apitest.WriteJSON(w, 500, `{"message":"service error","code":500}`)
		case 1:
			apitest.WriteJSON(w, 502, `<html>bad gateway</html>`)
		case 2:
			apitest.HijackClose(t, w)
		default:
			apitest.WriteJSON(w, 200, `{"status":"success","value":{"status":"failed","progress":0.5}}`)
		}
	})
	c, w := newClient(t, srv.URL, nil)
	st, err := c.Status(context.Background(), "x")
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.State != StateFailed {
		t.Errorf("State = %v, want failed", st.State)
	}
	if n := srv.Count(); n != 4 {
		t.Errorf("server received %d requests, want 4", n)
	}
	// The dropped connection may be retried by net/http itself (a GET is
	// replayable), so at least the two error statuses were waited on.
	if got := w.All(); len(got) < 2 {
		t.Errorf("waits = %v, want a backoff wait per failure", got)
	}
}

func TestRetriesGiveUpAfterMaxRetries(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		apitest.WriteJSON(w, 503, `{"message":"overloaded"}`)
	})
	c, w := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.MaxRetries = 2 })
	_, err := c.Detail(context.Background(), "x")
	var se *apiclient.Error
	if !errors.As(err, &se) || se.HTTPStatus != 503 {
		t.Fatalf("error = %v, want the 503 *Error", err)
	}
	if !strings.Contains(err.Error(), "giving up after 3 attempts") || !apiclient.IsRetryable(err) {
		t.Errorf("error = %v (retryable %v), want a retryable give-up after 3 attempts", err, apiclient.IsRetryable(err))
	}
	if n := srv.Count(); n != 3 {
		t.Errorf("server received %d requests, want 3", n)
	}
	// Backoff grows: each wait longer than the one before, jitter allowing.
	got := w.All()
	if len(got) != 2 || got[0] <= 0 || got[1] <= 0 {
		t.Errorf("waits = %v, want 2 positive waits", got)
	}
}

func TestCreateRetriesOnlyWhenNoJobWasMade(t *testing.T) {
	const ok = `{"status":"success","value":{"generation_id":"gen-9"}}`
	tests := []struct {
		name          string
		answers       []func(t *testing.T, w http.ResponseWriter)
		wantCreates   int
		wantAmbiguous bool
		wantID        string
	}{
		{
			name: "429 is retried",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) {
					w.Header().Set("Retry-After", "1")
					apitest.WriteJSON(w, 429, `{"error":{"message":"max concurrent tasks","code":"VB-100011"}}`)
				},
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 2, wantID: "gen-9",
		},
		{
			// The service may fail after it made, and charged for, the job.
			name: "500 with the service's error body is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) {
					apitest.WriteJSON(w, 500, `{"message":"service error","code":500}`)
				},
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
		{
			name: "503 with the service's error body is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) {
					apitest.WriteJSON(w, 503, `{"error":{"message":"busy","code":"H-10000503"}}`)
				},
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
		{
			name: "503 without a body is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) { w.WriteHeader(503) },
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
		{
			name: "a 200 whose envelope is an error is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) {
					apitest.WriteJSON(w, 200, `{"status":"error","error":{"message":"failed","code":"H-1"}}`)
				},
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
		{
			name: "a 409 is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) {
					apitest.WriteJSON(w, 409, `{"message":"conflict","code":409}`)
				},
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
		{
			name: "connection dropped after the request arrived is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(t *testing.T, w http.ResponseWriter) { apitest.HijackClose(t, w) },
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
		{
			name: "a gateway's bare 504 is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 504, `<html>gateway timeout</html>`) },
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
		{
			name: "a 200 whose body is unreadable is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) {
					apitest.WriteJSON(w, 200, `{"status":"success","value":{"generation_id":`)
				},
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
		{
			name: "a 200 without a generation id is ambiguous",
			answers: []func(*testing.T, http.ResponseWriter){
				func(_ *testing.T, w http.ResponseWriter) {
					apitest.WriteJSON(w, 200, `{"status":"success","value":{}}`)
				},
				func(_ *testing.T, w http.ResponseWriter) { apitest.WriteJSON(w, 200, ok) },
			},
			wantCreates: 1, wantAmbiguous: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				tt.answers[min(n, len(tt.answers)-1)](t, w)
			})
			c, _ := newClient(t, srv.URL, nil)
			id, err := c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"p"}`))
			if got := errors.Is(err, apiclient.ErrAmbiguousCreate); got != tt.wantAmbiguous {
				t.Fatalf("err = %v; ambiguous = %v, want %v", err, got, tt.wantAmbiguous)
			}
			if tt.wantAmbiguous && apiclient.IsRetryable(err) {
				t.Errorf("an ambiguous create must not be retryable: %v", err)
			}
			if id != tt.wantID {
				t.Errorf("id = %q, want %q", id, tt.wantID)
			}
			if n := srv.Count(); n != tt.wantCreates {
				t.Errorf("server received %d creates, want %d", n, tt.wantCreates)
			}
		})
	}
}

func TestCreateTimeoutAfterSendIsAmbiguous(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		<-r.Context().Done() // the service is slow; the client gives up first
	})
	c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.RequestTimeout = 100 * time.Millisecond })
	_, err := c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"p"}`))
	if !errors.Is(err, apiclient.ErrAmbiguousCreate) {
		t.Fatalf("err = %v, want ErrAmbiguousCreate", err)
	}
	if !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Errorf("err = %v, want it to say the answer timed out", err)
	}
	if n := srv.Count(); n != 1 {
		t.Errorf("server received %d creates, want exactly 1", n)
	}
}

func TestMalformedAnswers(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{"truncated JSON", `{"status":"success","value":{"status":"pend`, "not a JSON object"},
		{"not an object", `["succeed"]`, "not a JSON object"},
		{"null", `null`, "null"},
		{"no value", `{"status":"success"}`, `no "value"`},
		{"value not an object", `{"status":"success","value":"succeed"}`, `"value" is a string`},
		{"status of the wrong type", `{"status":"success","value":{"status":3,"progress":0}}`, `"status" is number`},
		{"progress of the wrong type", `{"status":"success","value":{"status":"pending","progress":"10%"}}`, `"progress" is string`},
		{"no status", `{"status":"success","value":{"progress":0.1}}`, `no "status"`},
		{"empty", ``, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) { apitest.WriteJSON(w, 200, tt.body) })
			c, _ := newClient(t, srv.URL, nil)
			_, err := c.Status(context.Background(), "job1")
			if err == nil {
				t.Fatal("Status accepted a malformed answer")
			}
			if !strings.Contains(err.Error(), "GET /v1/jobs/job1/status") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %q, want it to name the endpoint and mention %q", err, tt.wantErr)
			}
			if n := srv.Count(); n != 1 {
				t.Errorf("a malformed answer was retried: %d requests", n)
			}
		})
	}
}

func TestOversizeAnswerIsRefused(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(200)
		fmt.Fprintf(w, `{"status":"success","value":{"status":"pending","progress":0,"pad":"`)
		w.Write(bytes.Repeat([]byte("x"), int(maxAnswerBytes)))
		fmt.Fprint(w, `"}}`)
	})
	c, _ := newClient(t, srv.URL, nil)
	_, err := c.Status(context.Background(), "x")
	if err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Fatalf("err = %v, want a size error", err)
	}
}

func TestStatusValues(t *testing.T) {
	tests := []struct {
		raw       string
		progress  string
		want      Status
		wantState string
	}{
		{"pending", "0", Status{Raw: "pending", State: StateRunning, Known: true}, "running"},
		{"processing", "0.4", Status{Raw: "processing", State: StateRunning, Known: true, Progress: 0.4}, "running"},
		{"post_processing", "1", Status{Raw: "post_processing", State: StateRunning, Known: true, Progress: 1}, "running"},
		{"succeed", "1", Status{Raw: "succeed", State: StateDone, Known: true, Progress: 1}, "done"},
		{"failed", "0.3", Status{Raw: "failed", State: StateFailed, Known: true, Progress: 0.3}, "failed"},
		{"SUCCEED", "1", Status{Raw: "SUCCEED", State: StateDone, Known: true, Progress: 1}, "done"},
		{"queued", "null", Status{Raw: "queued", State: StateRunning, Known: false}, "running"},
		{"", "0", Status{Raw: "", State: StateRunning, Known: false}, "running"},
		// A percentage is read as one; out-of-range values are clamped.
		{"processing", "40", Status{Raw: "processing", State: StateRunning, Known: true, Progress: 0.4}, "running"},
		{"processing", "-2", Status{Raw: "processing", State: StateRunning, Known: true}, "running"},
		{"processing", "250", Status{Raw: "processing", State: StateRunning, Known: true, Progress: 1}, "running"},
	}
	for _, tt := range tests {
		t.Run(tt.raw+"/"+tt.progress, func(t *testing.T) {
			srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				apitest.WriteJSON(w, 200, fmt.Sprintf(`{"status":"success","value":{"status":%q,"progress":%s}}`, tt.raw, tt.progress))
			})
			c, _ := newClient(t, srv.URL, nil)
			got, err := c.Status(context.Background(), "x")
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if got != tt.want {
				t.Errorf("Status = %+v, want %+v", got, tt.want)
			}
			if got.State.String() != tt.wantState {
				t.Errorf("State.String() = %q, want %q", got.State, tt.wantState)
			}
		})
	}
}

func TestCancellationStopsWaits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "300")
		apitest.WriteJSON(w, 429, `{"message":"slow down"}`)
		cancel() // the user presses Ctrl-C while the client waits
	})
	c, err := newRefClient(apiclient.Config{BaseURL: srv.URL}) // real sleeping
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Status(ctx, "x"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Status kept waiting after its context was cancelled")
	}
}

func TestTokenNeverInTraceOrErrors(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		// A careless service that echoes the credentials it was sent.
		msg, _ := json.Marshal("bad credentials: " + r.Header.Get("Authorization"))
		apitest.WriteJSON(w, 401, fmt.Sprintf(`{"error":{"message":%s,"code":401,"details":[%s]}}`, msg, msg))
	})
	var trace bytes.Buffer
	c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.Debug = &trace })
	_, err := c.Create(context.Background(), addrs.Text2Image, []byte(`{"prompt":"p"}`))
	if err == nil {
		t.Fatal("want an error")
	}
	var se *apiclient.Error
	errors.As(err, &se)
	for name, s := range map[string]string{"trace": trace.String(), "error": err.Error(), "details": string(se.Details)} {
		if strings.Contains(s, apitest.Token) {
			t.Errorf("the token appears in the %s: %s", name, s)
		}
	}
	if !strings.Contains(trace.String(), "POST "+srv.URL+"/v1/jobs/text2image attempt=1 authorization=[redacted] -> 401 Unauthorized") {
		t.Errorf("trace lacks the request line:\n%s", trace.String())
	}
	if got := srv.Requests()[0].Auth; got != "Bearer "+apitest.Token {
		t.Errorf("the token was not sent: Authorization = %q", got)
	}
}

func TestTraceShowsRetries(t *testing.T) {
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			apitest.WriteJSON(w, 500, `{"message":"boom"}`)
			return
		}
		apitest.WriteJSON(w, 200, `{"status":"success","value":{"status":"pending","progress":0}}`)
	})
	var trace bytes.Buffer
	c, _ := newClient(t, srv.URL, func(cfg *apiclient.Config) { cfg.Debug = &trace })
	if _, err := c.Status(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(trace.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "-> 500 Internal Server Error") ||
		!strings.Contains(lines[1], "retrying GET /v1/jobs/x/status") ||
		!strings.Contains(lines[2], "attempt=2") || !strings.Contains(lines[2], "-> 200 OK") {
		t.Errorf("trace:\n%s", trace.String())
	}
}

func TestCreateCancelledInFlightIsAmbiguous(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := apitest.NewServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		cancel() // Ctrl-C arrives while the service is working on the request
		<-r.Context().Done()
	})
	c, _ := newClient(t, srv.URL, nil)
	_, err := c.Create(ctx, addrs.Text2Image, []byte(`{"prompt":"p"}`))
	if !errors.Is(err, apiclient.ErrAmbiguousCreate) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want both ErrAmbiguousCreate and context.Canceled", err)
	}
	if n := srv.Count(); n != 1 {
		t.Errorf("server received %d creates, want 1", n)
	}

	// Cancelled before anything was sent: a plain cancellation.
	_, err = c.Create(ctx, addrs.Text2Image, []byte(`{"prompt":"p"}`))
	if errors.Is(err, apiclient.ErrAmbiguousCreate) || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want a plain cancellation", err)
	}
}
