package command

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// checkMaxCost refuses a plan whose estimate is above -max-cost, or that
// cannot be estimated: a limit on money is never checked against a
// guess.
func checkMaxCost(p *plans.Plan, limit string) error {
	if limit == "" {
		return nil
	}
	max, err := config.ParseMoney(limit)
	if err != nil {
		return fmt.Errorf("-max-cost: %v", err)
	}
	e, ok := p.Cost()
	if !ok {
		return fmt.Errorf("-max-cost=%s needs the service's prices to estimate the cost, and the configuration sets none; set prices = { image = ..., video_second = ... } in the service block. Nothing was submitted", limit)
	}
	if !e.Complete() {
		return fmt.Errorf("-max-cost=%s cannot be checked: %s Nothing was submitted", limit, strings.TrimPrefix(views.CostLine(p), "Estimated cost: "))
	}
	if e.Amount > max {
		return fmt.Errorf("this apply would cost an estimated %s %s, more than -max-cost=%s %s allows; nothing was submitted. Narrow it with -target or raise the limit", e.Amount, e.Currency, max, e.Currency)
	}
	return nil
}

// unknownAddrError says an address is not in the state, suggesting a near
// one when there is.
func unknownAddrError(addr addrs.Instance, snap *statefile.Snapshot) error {
	var known []addrs.Instance
	if snap != nil {
		known = addrs.SortedKeys(snap.Resources)
	}
	return unknownAddrIn(addr, known)
}

// unknownAddrIn is unknownAddrError with the known addresses listed.
func unknownAddrIn(addr addrs.Instance, known []addrs.Instance) error {
	msg := fmt.Sprintf("%s is not in the state", addr)
	if s := suggest(addr.String(), addrs.Strings(known)); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return fmt.Errorf("%s; 'genform state list' shows the managed addresses", msg)
}

// damagedJSON names the first record of the state file at path whose
// stored JSON (the request, the creation detail, a failed request) does
// not parse. The state document embeds them as they are, and only a
// damaged file holds such bytes: records carry no checksum, so a record
// a page of the file was overwritten in the middle of can still decode.
func damagedJSON(snap *statefile.Snapshot, path string) error {
	if snap == nil {
		return nil
	}
	for _, addr := range addrs.SortedKeys(snap.Resources) {
		rec := snap.Resources[addr]
		parts := []struct {
			name string
			raw  json.RawMessage
		}{{"request", rec.Request}, {"creation detail", rec.Detail}}
		if rec.Failure != nil {
			parts = append(parts, struct {
				name string
				raw  json.RawMessage
			}{"failed request", rec.Failure.Request})
		}
		for _, p := range parts {
			if len(p.raw) > 0 && !json.Valid(p.raw) {
				return fmt.Errorf("state file %s: resource record %s holds a %s that is not JSON, so the file is damaged; restore it from version control or a backup, or forget the resource with: genform state rm %s", path, addr, p.name, addr.Shell())
			}
		}
	}
	return nil
}
