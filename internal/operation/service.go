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
	"github.com/genform/genform/internal/provider/all"
	"github.com/genform/genform/internal/simulator/simkit"
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

// connectService is the reference service as the workspace's endpoint
// configures it; for the built-in simulator it first starts one on a
// loopback port, its jobs kept under .genform/ so an interrupted apply
// resumes against it. stop releases what it started.
func (w *Workspace) connectService(reg *provider.Registration, onRetry func(context.Context, provider.RetryInfo)) (p provider.Provider, stop func(), err error) {
	cfg, ep := w.Config, w.Endpoint
	stop = func() {}
	base := ep.BaseURL
	var httpClient *http.Client
	if ep.Builtin() {
		h, err := reg.Simulator(simkit.Options{
			Latency: time.Second,
			DataDir: filepath.Join(filepath.Dir(cfg.Settings.StateFile), "simulator"),
			Token:   builtinToken,
		})
		if err != nil {
			return nil, stop, fmt.Errorf("starting the built-in simulator: %w", err)
		}
		inst, err := simkit.Listen("127.0.0.1:0", h)
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
	p, err = reg.New(provider.Config{
		BaseURL:           base,
		Key:               ep.Token,
		RequestsPerMinute: cfg.Service.RequestsPerMinute,
		MaxDownloadSize:   cfg.Service.MaxDownloadSize,
		Debug:             w.debugLog(),
		HTTPClient:        httpClient,
		UserAgent:         w.UserAgent,
		OnRetry:           onRetry,
		ID:                ep.ID,
	})
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	return p, stop, nil
}

// Provider is the provider named name behind the provider seam: the
// reference service is connected as the service block and the
// environment say (see connectService); any other name is a live
// provider, its adapter built from its provider block and its key (the
// block's key, or the environment variable the provider's own tools
// read). A key that is not set is an error naming where to set it,
// before anything is sent.
func (w *Workspace) Provider(name string, onRetry func(context.Context, provider.RetryInfo)) (provider.Provider, func(), error) {
	reg := all.Lookup(name)
	if reg == nil {
		return nil, func() {}, catalog.Unknown(name)
	}
	if reg.Table.Service {
		return w.connectService(reg, onRetry)
	}
	s := w.Config.SettingsOf(name)
	key := s.Token
	if key == "" {
		key = w.Getenv(reg.Table.KeyEnv)
	}
	if key == "" {
		return nil, func() {}, fmt.Errorf("%s needs an API key, and none is set: export %s=... (or set key in the provider %q block, from a variable marked sensitive); nothing was submitted", reg.Table.Title, reg.Table.KeyEnv, name)
	}
	a, err := reg.New(provider.Config{
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
