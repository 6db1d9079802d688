package reconcile

import "fmt"

// Action is what a plan does to one resource instance. Its value is the
// symbol the human view shows in front of the address.
type Action string

// The actions of SPEC section 3.
const (
	NoOp    Action = " "
	Create  Action = "+"
	Replace Action = "-/+"
	Update  Action = "~"
	Move    Action = ">"
	Resume  Action = "…"
	Delete  Action = "-"
)

var actionNames = map[Action]string{
	NoOp:    "no-op",
	Create:  "create",
	Replace: "replace",
	Update:  "update",
	Move:    "move",
	Resume:  "resume",
	Delete:  "delete",
}

// Symbol is the action's display symbol.
func (a Action) Symbol() string { return string(a) }

// String is the action's name as the JSON formats spell it.
func (a Action) String() string {
	if n, ok := actionNames[a]; ok {
		return n
	}
	return fmt.Sprintf("Action(%q)", string(a))
}

// Generates reports whether the action submits a paid generation.
func (a Action) Generates() bool { return a == Create || a == Replace }

// MarshalText encodes the action by name.
func (a Action) MarshalText() ([]byte, error) {
	n, ok := actionNames[a]
	if !ok {
		return nil, fmt.Errorf("unknown action %q", string(a))
	}
	return []byte(n), nil
}

// UnmarshalText decodes an action name.
func (a *Action) UnmarshalText(b []byte) error {
	for act, n := range actionNames {
		if n == string(b) {
			*a = act
			return nil
		}
	}
	return fmt.Errorf("unknown action %q", string(b))
}
