package config

import (
	"encoding/json"

	"github.com/genform/genform/internal/addrs"
)

// Pixels is the size of each image, or video frame, the instance's
// request asks of a live provider's model, as the provider's tables read
// it from the request (schema.Provider.Pixels); ok is false for the
// reference service, a request not wholly known, or a size the tables
// cannot tell. Prices by the megapixel and by the resolution follow it.
func (inst *Instance) Pixels() (width, height int, ok bool) {
	if inst.Endpoint.Provider() == addrs.Reference || inst.Request == nil || inst.data == nil || inst.data.ep == nil {
		return 0, 0, false
	}
	p := inst.data.ep.prov
	if p == nil || p.Pixels == nil {
		return 0, 0, false
	}
	var body map[string]any
	if err := json.Unmarshal(inst.Request, &body); err != nil {
		return 0, 0, false
	}
	return p.Pixels(inst.Endpoint.Target(), inst.Endpoint.Kind(), body)
}
