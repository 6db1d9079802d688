package plans

import (
	"testing"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// The statuses a record's last generation can end with: only a failure
// and a refusal leave it without files.
func TestFailed(t *testing.T) {
	for status, want := range map[string]bool{
		StatusSucceed: false, StatusFailed: true, StatusRefused: true, "processing": false, "": false,
	} {
		if got := Failed(status); got != want {
			t.Errorf("Failed(%q) = %v, want %v", status, got, want)
		}
	}
}

// What the object store holds of a record is read from its outputs'
// Stored flags, and its name is what the plan document spells: every
// name reads back as its state, an unknown one is an error.
func TestStoreState(t *testing.T) {
	out := func(stored bool) statefile.Output { return statefile.Output{SHA256: "ab", Stored: stored} }
	for _, tc := range []struct {
		name string
		outs []statefile.Output
		want StoreState
		word string
	}{
		{"no files recorded", nil, StoreUnknown, ""},
		{"none stored", []statefile.Output{out(false), out(false)}, StoreNone, "none"},
		{"one of two stored", []statefile.Output{out(true), out(false)}, StoreSome, "some"},
		{"every file stored", []statefile.Output{out(true), out(true)}, StoreAll, "all"},
	} {
		got := StoreOf(tc.outs)
		if got != tc.want || got.String() != tc.word {
			t.Errorf("%s: StoreOf = %v (%q), want %v (%q)", tc.name, got, got.String(), tc.want, tc.word)
		}
		back, err := ParseStoreState(tc.word)
		if err != nil || back != tc.want {
			t.Errorf("%s: ParseStoreState(%q) = %v, %v", tc.name, tc.word, back, err)
		}
	}
	if _, err := ParseStoreState("most"); err == nil {
		t.Error(`ParseStoreState("most") is not an error`)
	}
	if s := StoreState(9).String(); s != "" {
		t.Errorf("an out-of-range state is named %q, want none", s)
	}
}

// The no-ops a user must act on are listed in the plan's order: a create
// whose answer was lost (possibly paid) and a request the provider
// refused; a plain no-op and a generating change are not. Change finds a
// change by its address, and nothing for an address the plan lacks.
func TestWaitingChanges(t *testing.T) {
	since := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	lost := &Change{Addr: addrs.MustParseInstance("image.lost"), Action: NoOp, Reason: &Reason{Code: ReasonAnswerLost, Since: since}}
	refused := &Change{Addr: addrs.MustParseInstance("image.refused"), Action: NoOp, Reason: &Reason{Code: ReasonRefused, Error: "moderation"}}
	same := &Change{Addr: addrs.MustParseInstance("image.same"), Action: NoOp}
	made := &Change{Addr: addrs.MustParseInstance("image.made"), Action: Create, Media: 1, Reason: &Reason{Code: ReasonNew}}
	// A replace whose earlier answer was lost generates: it is not waiting.
	replaced := &Change{Addr: addrs.MustParseInstance("image.replaced"), Action: Replace, Media: 1, Reason: &Reason{Code: ReasonAnswerLost}}
	p := &Plan{Changes: []*Change{refused, same, lost, made, replaced}}

	if got := addrsOf(p.Waiting()); got != "image.refused image.lost" {
		t.Errorf("waiting %q, want the refused then the lost one", got)
	}
	if got := addrsOf(p.PossiblyPaid()); got != "image.lost" {
		t.Errorf("possibly paid %q, want image.lost alone", got)
	}
	if !lost.PossiblyPaid() || lost.Refused() || !refused.Refused() || refused.PossiblyPaid() || replaced.PossiblyPaid() {
		t.Error("a change's PossiblyPaid and Refused do not match its reason and action")
	}
	s := p.Summary()
	if s.NoOp != 3 || s.PossiblyPaid != 1 || s.Refused != 1 || s.Generate != 2 {
		t.Errorf("summary %+v, want 3 no-ops of which 1 possibly paid and 1 refused, 2 generations", s)
	}
	if c := p.Change(lost.Addr); c != lost {
		t.Errorf("Change(%s) = %+v", lost.Addr, c)
	}
	if c := p.Change(addrs.MustParseInstance("image.nowhere")); c != nil {
		t.Errorf("Change of an address the plan lacks = %+v, want nil", c)
	}
}

func addrsOf(cs []*Change) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += " "
		}
		s += c.Addr.String()
	}
	return s
}

// An update that fetches nothing is a move when its files only change
// directory, and an upload when it puts files the store lacks (it may
// move files and record a protection too); anything fetched again makes
// it a download. The summary counts each as what it is.
func TestUpdateKinds(t *testing.T) {
	l := func(whats ...LocalWhat) *Reason {
		r := &Reason{Code: ReasonLocal}
		for _, w := range whats {
			r.Local = append(r.Local, LocalChange{What: w})
		}
		return r
	}
	for _, tc := range []struct {
		name           string
		action         Action
		reason         *Reason
		moves, uploads bool
	}{
		{"files change directory", Update, l(DirMoved), true, false},
		{"moved, and the protection recorded", Update, l(DirMoved, ProtectionChanged), true, false},
		{"files the store lacks", Update, l(OutputUnstored, OutputUnstored), false, true},
		{"moved and uploaded", Update, l(DirMoved, OutputUnstored), false, true},
		{"uploaded and the protection recorded", Update, l(ProtectionChanged, OutputUnstored), false, true},
		{"a missing file is downloaded", Update, l(DirMoved, OutputMissing), false, false},
		{"a changed file is downloaded", Update, l(OutputUnstored, OutputModified), false, false},
		{"the other watermark wish is downloaded", Update, l(WatermarkChanged, DirMoved), false, false},
		{"only the protection", Update, l(ProtectionChanged), false, false},
		{"a settled submission", Update, l(IntentSettled), false, false},
		{"no reason", Update, nil, false, false},
		{"not an update", Move, l(DirMoved), false, false},
	} {
		c := &Change{Addr: addrs.MustParseInstance("image.a"), Action: tc.action, Reason: tc.reason}
		if got := c.MovesOnly(); got != tc.moves {
			t.Errorf("%s: MovesOnly = %v, want %v", tc.name, got, tc.moves)
		}
		if got := c.UploadsOnly(); got != tc.uploads {
			t.Errorf("%s: UploadsOnly = %v, want %v", tc.name, got, tc.uploads)
		}
		if tc.action != Update {
			continue
		}
		want := Summary{Redownload: 1}
		switch {
		case tc.moves:
			want = Summary{Move: 1}
		case tc.uploads:
			want = Summary{Upload: 1}
		}
		if got := (&Plan{Changes: []*Change{c}}).Summary(); got != want {
			t.Errorf("%s: summary %+v, want %+v", tc.name, got, want)
		}
	}
}

// A reason says whether the change leaves behind a submission the
// service may have charged for, and which job apply follows and keeps
// for it.
func TestReasonMayHaveBeenPaid(t *testing.T) {
	settled := func(id string) *Reason {
		return &Reason{Code: ReasonLocal, Local: []LocalChange{{What: DirMoved}, {What: IntentSettled, GenerationID: id}}}
	}
	for _, tc := range []struct {
		name   string
		reason *Reason
		paid   bool
		kept   string
	}{
		{"a lost answer", &Reason{Code: ReasonAnswerLost}, true, ""},
		{"an abandoned job", &Reason{Code: ReasonAbandoned, GenerationID: "job-3"}, true, "job-3"},
		{"a removed instance's lost answer", &Reason{Code: ReasonRemovedIntent}, true, ""},
		{"a removed instance's job", &Reason{Code: ReasonRemovedIntent, GenerationID: "job-4"}, true, "job-4"},
		{"a destroyed instance's job", &Reason{Code: ReasonDestroyIntent, GenerationID: "job-5"}, true, "job-5"},
		{"removed with an interrupted replacement", &Reason{Code: ReasonRemoved, GenerationID: "job-6"}, true, "job-6"},
		{"removed, nothing interrupted", &Reason{Code: ReasonRemoved}, false, ""},
		{"destroyed with an interrupted replacement", &Reason{Code: ReasonDestroy, GenerationID: "job-7"}, true, "job-7"},
		{"destroyed, nothing interrupted", &Reason{Code: ReasonDestroy}, false, ""},
		{"a settled job", settled("job-8"), true, "job-8"},
		{"a settled lost answer", settled(""), true, ""},
		{"files moved", &Reason{Code: ReasonLocal, Local: []LocalChange{{What: DirMoved}}}, false, ""},
		{"a resume", &Reason{Code: ReasonInterrupted, GenerationID: "job-9"}, false, ""},
		{"a new instance", &Reason{Code: ReasonNew}, false, ""},
	} {
		if got := tc.reason.MayHaveBeenPaid(); got != tc.paid {
			t.Errorf("%s: MayHaveBeenPaid = %v, want %v", tc.name, got, tc.paid)
		}
		if got := tc.reason.KeptJob(); got != tc.kept {
			t.Errorf("%s: KeptJob = %q, want %q", tc.name, got, tc.kept)
		}
	}
	var none *Reason
	if got := none.KeptJob(); got != "" {
		t.Errorf("a no-op's KeptJob = %q, want none", got)
	}
}

// A live provider's change carries its model, with its prices; the
// reference service's carries none and names no provider.
func TestModelOf(t *testing.T) {
	if m := ModelOf(addrs.Text2Image, &config.Prices{Currency: "USD"}); m != nil {
		t.Errorf("the reference service's endpoint has model %+v, want none", m)
	}
	price := config.Money(30_000)
	prices := &config.Prices{Currency: "EUR", Image: &price}
	ep := addrs.ModelEndpoint("fal", "fal-ai/flux/schnell", addrs.Image)
	m := ModelOf(ep, prices)
	if m == nil || m.Endpoint != ep || m.Prices != prices {
		t.Fatalf("ModelOf(%s) = %+v", ep, m)
	}
	if got := (&Change{Model: m}).Provider(); got != "fal" {
		t.Errorf("a fal model's change names provider %q", got)
	}
	if got := (&Change{}).Provider(); got != "" {
		t.Errorf("a reference service change names provider %q, want none", got)
	}
}

// What one generation yields and how long it runs, as the plan counts and
// prices it: the default count of a bare block, the duration or the
// endpoint's default, and the most the service allows when the value is
// known only after apply (an upper bound).
func TestMediaAndSeconds(t *testing.T) {
	insts := instances(t, `
image "hero" {
  prompt = "a lighthouse"
}
image "two" {
  prompt       = "a pier"
  image_number = 2
}
image "later" {
  prompt       = "a gull"
  image_number = length(image.hero.outputs)
}
video "clip" {
  prompt = "waves"
}
video "long" {
  prompt   = "waves"
  duration = 8
}
video "later" {
  prompt   = "waves"
  duration = length(image.hero.outputs) * 2
}
video "runway" {
  provider = runway
  model        = "gen4.5"
  prompt       = "waves"
  aspect_ratio = "16:9"
}
video "runway_later" {
  provider = runway
  model        = "gen4.5"
  prompt       = "waves"
  aspect_ratio = "16:9"
  duration     = length(image.hero.outputs)
}
video "unlisted" {
  provider = fal
  model    = "fal-ai/some-video-model"
  prompt   = "waves"
}
`)
	for addr, want := range map[string]struct {
		media   int
		def     bool
		seconds int
		atMost  bool
	}{
		"image.hero":  {4, true, 0, false},
		"image.two":   {2, false, 0, false},
		"image.later": {4, false, 0, true}, // the most the endpoint makes
		"video.clip":  {1, false, 4, false},
		"video.long":  {1, false, 8, false},
		"video.later": {1, false, 8, true}, // the longest it allows
		// A live model's default and longest, from its table.
		"video.runway":       {1, false, 5, false},
		"video.runway_later": {1, false, 10, true},
		// A model the tables do not list has no default to count.
		"video.unlisted": {1, false, 0, false},
	} {
		inst := insts[addr]
		if inst == nil {
			t.Errorf("%s is not declared", addr)
			continue
		}
		if n, def := MediaCount(inst), MediaDefault(inst); n != want.media || def != want.def {
			t.Errorf("%s: %d files (default %v), want %d (%v)", addr, n, def, want.media, want.def)
		}
		if s := VideoSeconds(inst); s != want.seconds {
			t.Errorf("%s: %d seconds, want %d", addr, s, want.seconds)
		}
		if got := AtMost(inst); got != want.atMost {
			t.Errorf("%s: AtMost = %v, want %v", addr, got, want.atMost)
		}
	}
}

// A change costs what its kind is priced at, times what it makes; one
// that generates nothing costs nothing; a kind without a price is not
// priced (never taken as free).
func TestChangeCost(t *testing.T) {
	img, sec := config.Money(20_000), config.Money(50_000)
	full := &config.Prices{Currency: "USD", Image: &img, VideoSecond: &sec}
	imagesOnly := &config.Prices{Currency: "USD", Image: &img}
	secondsOnly := &config.Prices{Currency: "USD", VideoSecond: &sec}
	image := &Change{Addr: addrs.MustParseInstance("image.a"), Action: Create, Media: 3}
	video := &Change{Addr: addrs.MustParseInstance("video.v"), Action: Replace, Media: 2, Seconds: 4}
	update := &Change{Addr: addrs.MustParseInstance("image.b"), Action: Update, Media: 3}
	for _, tc := range []struct {
		name   string
		c      *Change
		prices *config.Prices
		amount config.Money
		ok     bool
	}{
		{"three images", image, full, img.Times(3), true},
		{"two 4-second videos", video, full, sec.Times(8), true},
		{"images unpriced", image, secondsOnly, 0, false},
		{"seconds unpriced", video, imagesOnly, 0, false},
		{"an update is free", update, full, 0, true},
		{"no prices at all", image, nil, 0, false},
		{"an update without prices", update, nil, 0, false},
	} {
		amount, ok := tc.c.Cost(tc.prices)
		if amount != tc.amount || ok != tc.ok {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, amount, ok, tc.amount, tc.ok)
		}
	}
}

// A plan's estimate is made in one currency: the service's, else the
// first model's that is priced. What has no price in it (a kind without a
// price, a model priced in another currency, which is never converted)
// is counted but left out of the amount, and the estimate is then
// incomplete; a plan with no price at all has no estimate.
func TestPlanEstimate(t *testing.T) {
	usd, eur := config.Money(10_000), config.Money(40_000)
	fal := ModelOf(addrs.ModelEndpoint("fal", "fal-ai/flux/schnell", addrs.Image), &config.Prices{Currency: "USD", Image: &usd})
	euro := ModelOf(addrs.ModelEndpoint("replicate", "stability-ai/sdxl", addrs.Image), &config.Prices{Currency: "EUR", Image: &eur})
	unpriced := ModelOf(addrs.ModelEndpoint("runway", "gen4.5", addrs.Video), nil)
	c := func(addr string, act Action, m *Model, media, seconds int) *Change {
		return &Change{Addr: addrs.MustParseInstance(addr), Action: act, Model: m, Media: media, Seconds: seconds}
	}

	t.Run("priced by a model alone", func(t *testing.T) {
		p := &Plan{Changes: []*Change{
			c("image.fal", Create, fal, 2, 0), c("image.euro", Create, euro, 1, 0), c("image.kept", NoOp, fal, 2, 0),
		}}
		// The first priced change sets the currency, USD: the EUR
		// model's image is counted, not priced.
		e, ok := p.Cost()
		if !ok || e.Currency != "USD" || e.Amount != usd.Times(2) || e.Images != 3 || e.UnpricedImages != 1 || e.Complete() {
			t.Errorf("estimate %+v, %v; want 2 images at USD 0.01, the EUR one counted unpriced", e, ok)
		}
		if amount, ok := p.CostOf(p.Change(addrs.MustParseInstance("image.euro"))); ok || amount != 0 {
			t.Errorf("a EUR price in a USD estimate costs %v, %v; want it unpriced", amount, ok)
		}
		if amount, ok := p.CostOf(p.Change(addrs.MustParseInstance("image.kept"))); !ok || amount != 0 {
			t.Errorf("a no-op costs %v, %v; want 0, priced", amount, ok)
		}
		if got := p.PricesOf(p.Changes[0]); got != fal.Prices {
			t.Errorf("a model's change is priced at %+v, want its model's", got)
		}
	})

	t.Run("the service's prices, a video model unpriced", func(t *testing.T) {
		p := &Plan{Prices: &config.Prices{Currency: "USD", Image: &usd}, Changes: []*Change{
			c("image.a", Create, nil, 4, 0), c("video.v", Create, unpriced, 1, 5), c("video.w", Create, nil, 1, 4),
		}}
		e, ok := p.Cost()
		if !ok || e.Amount != usd.Times(4) || e.Images != 4 || e.VideoSeconds != 9 || e.UnpricedSeconds != 9 || e.Complete() {
			t.Errorf("estimate %+v, %v; want 4 priced images and 9 unpriced seconds", e, ok)
		}
		if got := p.PricesOf(p.Changes[0]); got != p.Prices {
			t.Errorf("a reference service change is priced at %+v, want the plan's", got)
		}
		if _, ok := p.CostOf(p.Changes[1]); ok {
			t.Error("a model with no prices is priced")
		}
	})

	t.Run("everything priced", func(t *testing.T) {
		p := &Plan{Changes: []*Change{c("image.fal", Create, fal, 2, 0), c("image.moved", Move, nil, 2, 0)}}
		e, ok := p.Cost()
		if !ok || !e.Complete() || e.Amount != usd.Times(2) {
			t.Errorf("estimate %+v, %v; want complete at 0.02", e, ok)
		}
	})

	t.Run("no price anywhere", func(t *testing.T) {
		p := &Plan{Changes: []*Change{c("image.a", Create, nil, 4, 0), c("video.v", Create, unpriced, 1, 5)}}
		if p.Priced() {
			t.Error("a plan without prices says it is priced")
		}
		if e, ok := p.Cost(); ok || e != (Estimate{}) {
			t.Errorf("estimate %+v, %v; want none", e, ok)
		}
	})
}
