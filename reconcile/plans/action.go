package plans

import "fmt"

// Action is what a plan does to one resource instance. The views give each
// its symbol and words; String is the stable name scripts see.
type Action uint8

// The actions. Only Create and Replace cost a generation.
const (
	NoOp    Action = iota // the instance is as declared
	Create                // generate an instance not in the state
	Replace               // generate anew an instance the state holds
	Update                // move files or download them again; nothing is generated
	Move                  // a rename: the state and the files follow the new address
	Resume                // poll a job an interrupted apply submitted
	Restore               // take back a generation the history holds; nothing is generated
	Delete                // remove the files and forget the instance
)

var actionNames = [...]string{
	NoOp:    "no-op",
	Create:  "create",
	Replace: "replace",
	Update:  "update",
	Move:    "move",
	Resume:  "resume",
	Restore: "restore",
	Delete:  "delete",
}

// Actions lists every action, in the order above.
var Actions = []Action{NoOp, Create, Replace, Update, Move, Resume, Restore, Delete}

// String is the action's name as the JSON documents spell it: "create",
// "no-op" ...
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// ParseAction reads an action's name.
func ParseAction(s string) (Action, error) {
	for a, n := range actionNames {
		if n == s {
			return Action(a), nil
		}
	}
	return 0, fmt.Errorf("unknown action %q", s)
}

// Generates reports whether the action submits a paid generation.
func (a Action) Generates() bool { return a == Create || a == Replace }
