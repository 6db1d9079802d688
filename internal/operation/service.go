package operation

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/fal"
	"github.com/genform/genform/internal/provider/luma"
	"github.com/genform/genform/internal/provider/openai"
	"github.com/genform/genform/internal/provider/reference"
	"github.com/genform/genform/internal/provider/replicate"
	"github.com/genform/genform/internal/provider/runway"
	"github.com/genform/genform/internal/service"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/statefile"
)

// The state names the service it was made with (statefile.Meta.Service).
// Every fingerprint includes the service, so a state used with another one
// plans to generate everything anew, and apply would overwrite the files
// with what that service makes: a forgotten GENFORM_BASE_URL would move a
// state made on a paid service to the built-in simulator without a word.
// So plan, apply, destroy and import call checkService before they use the
// state. The engine records the service in the same transaction as the
// first submission (or download) of an apply, and import once it has
// adopted a creation: a state names a service once something was made
// there, and an apply that reached nothing leaves it as it was.

// usesReference reports whether a block of the configuration has its
// generations made by the reference service (it names no provider): only
// then is the built-in simulator, which stands in for that service, in
// play.
func (w *Workspace) usesReference() bool {
	return slices.ContainsFunc(w.Config.Resources, func(r *config.Resource) bool { return r.Provider() == "" })
}

// recordedService is the service a state names; "" when there is no
// state, or it names none yet.
func recordedService(snap *statefile.Snapshot) string {
	if snap == nil {
		return ""
	}
	return snap.Meta.Service
}

// checkService is the check plan, apply, destroy and import make before
// they use a state that names the service recorded (see recordedService).
// A state that names the workspace's endpoint, or none yet (a new state,
// or one written by a genform that did not record it), passes. Otherwise,
// with migrate (the command's -migrate-service) it warns and returns the
// service the state moves away from; without, it returns an error naming
// both services and the way to switch on purpose.
func (w *Workspace) checkService(command, recorded string, migrate bool) (from string, err error) {
	ep := w.Endpoint
	if command != "destroy" && ep.Builtin() && w.Config.Settings.Backend != nil && w.usesReference() {
		w.warn(outcome.Warning{Code: outcome.SharedSimulator})
	}
	if recorded == "" || recorded == ep.ID {
		return "", nil
	}
	switched := outcome.Warning{Recorded: recorded, Configured: ep.Reference()}
	to := words.ServiceSentence(ep.ID)
	switch {
	case command == "destroy":
		// destroy deletes the files the state records and forgets them: it
		// sends nothing to any service and compares no fingerprint, so the
		// configured service changes nothing of what it does, and nothing
		// is paid for again. Refusing would only leave a user who can no
		// longer reach the old service unable to clean up. It warns, since
		// the mismatch is usually a mistake the next plan would stop at.
		switched.Code = outcome.SwitchIgnored
		w.warn(switched)
		return "", nil
	case migrate && command == "import":
		switched.Code = outcome.SwitchImported
		w.warn(switched)
		return recorded, nil
	case migrate:
		switched.Code = outcome.SwitchMigrated
		w.warn(switched)
		return recorded, nil
	case command == "import":
		return "", fmt.Errorf("%s; set it back, or pass -migrate-service to import from %s and have the state name it", words.ServiceSwitch(recorded, ep.Reference()), to)
	}
	return "", fmt.Errorf("%s; set it back, or pass -migrate-service to plan and apply to generate everything anew on %s", words.ServiceSwitch(recorded, ep.Reference()), to)
}

// Connect returns a client of the service; for the built-in simulator it
// first starts one on a loopback port, its jobs kept under .genform/ so an
// interrupted apply resumes against it. stop releases what Connect
// started. onRetry, when not nil, hears of every retry
// (service.Config.OnRetry).
func (w *Workspace) Connect(onRetry func(context.Context, service.RetryInfo)) (client *service.Client, stop func(), err error) {
	cfg, ep := w.Config, w.Endpoint
	stop = func() {}
	base := ep.BaseURL
	var httpClient *http.Client
	if ep.Builtin() {
		dataDir := filepath.Join(filepath.Dir(cfg.Settings.StateFile), "simulator")
		inst, err := simulator.Listen("127.0.0.1:0", simulator.Options{
			Latency: time.Second,
			DataDir: dataDir,
			Token:   builtinToken,
		})
		if err != nil {
			return nil, stop, fmt.Errorf("starting the built-in simulator: %w", err)
		}
		base = inst.URL
		stop = func() { inst.Close() }
		// The simulator's media URLs name the loopback port it had when
		// the job was made, and the built-in one gets a new port every
		// run: every connection goes to this run's instance instead.
		addr := strings.TrimPrefix(inst.URL, "http://")
		var d net.Dialer
		httpClient = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			MaxIdleConnsPerHost: 64,
		}}
	}
	client, err = service.New(service.Config{
		BaseURL:           base,
		Token:             ep.Token,
		RequestsPerMinute: cfg.Service.RequestsPerMinute,
		MaxDownloadSize:   cfg.Service.MaxDownloadSize,
		Debug:             w.debugLog(),
		HTTPClient:        httpClient,
		AllowRemoteHTTP:   true, // the base URL was set explicitly by the user
		UserAgent:         w.UserAgent,
		OnRetry:           onRetry,
	})
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	return client, stop, nil
}

// adapters build the live providers' adapters, by name.
var adapters = map[string]func(provider.Config) (provider.Provider, error){
	"fal":       func(c provider.Config) (provider.Provider, error) { return fal.New(c) },
	"openai":    func(c provider.Config) (provider.Provider, error) { return openai.New(c) },
	"replicate": func(c provider.Config) (provider.Provider, error) { return replicate.New(c) },
	"runway":    func(c provider.Config) (provider.Provider, error) { return runway.New(c) },
	"luma":      func(c provider.Config) (provider.Provider, error) { return luma.New(c) },
}

// Provider is the provider named name behind the provider seam: "" is
// the configured reference service, connected as Connect does; any other
// name a live provider, its adapter built from its provider block and
// its key (the block's key, or the environment variable the provider's
// own tools read). A key that is not set is an error naming where to set
// it, before anything is sent.
func (w *Workspace) Provider(name string, onRetry func(context.Context, service.RetryInfo)) (provider.Provider, func(), error) {
	if name == "" {
		client, stop, err := w.Connect(onRetry)
		if err != nil {
			return nil, stop, err
		}
		return reference.New(client, w.Endpoint.ID), stop, nil
	}
	p := w.Config.ProviderOf(name)
	if p.Catalog == nil {
		return nil, func() {}, catalog.Unknown(name)
	}
	s := w.Config.SettingsOf(name)
	key := s.Token
	if key == "" {
		key = w.Getenv(p.Catalog.KeyEnv)
	}
	if key == "" {
		return nil, func() {}, fmt.Errorf("%s needs an API key, and none is set: export %s=... (or set key in the provider %q block, from a variable marked sensitive); nothing was submitted", p.Catalog.Title, p.Catalog.KeyEnv, name)
	}
	newAdapter, ok := adapters[name]
	if !ok {
		return nil, func() {}, fmt.Errorf("genform has no adapter of provider %q", name)
	}
	a, err := newAdapter(provider.Config{
		BaseURL:           s.BaseURL,
		Key:               key,
		RequestsPerMinute: s.RequestsPerMinute,
		MaxDownloadSize:   s.MaxDownloadSize,
		Debug:             w.debugLog(),
		UserAgent:         w.UserAgent,
		OnRetry:           onRetry,
	})
	if err != nil {
		return nil, func() {}, err
	}
	return a, func() {}, nil
}
