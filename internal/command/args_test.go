package command

import (
	"bytes"
	"strings"
	"testing"
)

// TestUsageErrorsQuoteNoValue runs every command with a flag after an
// argument (so the flag package takes -var and its value for arguments)
// and with a value every non-string flag refuses, and checks that no
// error quotes the value: a -var value is how a secret reaches genform.
// Each error still names the flag or the argument's position.
func TestUsageErrorsQuoteNoValue(t *testing.T) {
	const secret = "tok-SECRET-7731"
	flags := []string{"parallelism", "max-generations", "lock-timeout", "refresh", "target", "replace",
		"json", "auto-approve", "detailed-exitcode", "migrate-service", "raw", "link", "check", "diff",
		"recursive", "list", "latency", "url-ttl", "rpm", "max-concurrent", "fail-rate", "seed", "v"}
	t.Chdir(t.TempDir()) // no configuration: nothing runs past its flags
	for _, name := range commandNames() {
		cmd := []string{name}
		switch name {
		case "state":
			cmd = []string{"state", "list"}
		case "workspace":
			cmd = []string{"workspace", "new"}
		}
		var runs [][]string
		runs = append(runs,
			append(append([]string(nil), cmd...), "x", "-var", "tok="+secret),
			append(append([]string(nil), cmd...), "x", "y", "-var="+"tok="+secret),
			append(append([]string(nil), cmd...), "-var", "tok="+secret, "x", "-lock-timeout", secret),
		)
		for _, f := range flags {
			runs = append(runs, append(append([]string(nil), cmd...), "-"+f+"="+secret))
		}
		for _, args := range runs {
			var out, errOut bytes.Buffer
			code := Run(args, strings.NewReader(""), &out, &errOut)
			if code != ExitError {
				t.Errorf("genform %s: exit %d, want %d", strings.Join(args, " "), code, ExitError)
			}
			if strings.Contains(out.String()+errOut.String(), "SECRET") {
				t.Errorf("genform %s quotes the value:\n%s", strings.Join(args, " "), errOut.String())
			}
		}
	}
	for _, args := range [][]string{{"state", "-var=tok=" + secret}, {"workspace", "-var=tok=" + secret},
		{"-no-color=" + secret, "plan"}, {"-chdir=/nonexistent/" + secret, "plan"}, {"plan", "-format=" + secret}} {
		var out, errOut bytes.Buffer
		if code := Run(args, strings.NewReader(""), &out, &errOut); code != ExitError || strings.Contains(errOut.String(), "SECRET") {
			t.Errorf("genform %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut.String())
		}
	}
}

// TestUsageErrorsSayWhich: the errors name the flag, or the argument by
// its position, so the user can find what to fix without the value.
func TestUsageErrorsSayWhich(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"plan", "x", "-var", "tok=v"}, "the flag -var (the 2nd argument) comes after the 1st argument, which is not a flag"},
		{[]string{"plan", "-refresh", "false"}, "plan takes no arguments, and the 2nd argument is one too many (a true/false flag takes its value after an equals sign: -refresh=false)"},
		{[]string{"show", "a", "b", "c"}, "show takes at most one argument, a saved plan file or a resource address, and the 2nd and 3rd arguments are too many"},
		{[]string{"apply", "a", "b", "c", "d"}, "the 2nd to 4th arguments are too many"},
		{[]string{"state", "mv", "a", "b", "c"}, "state mv takes two addresses, SRC and DST, and the 3rd argument is one too many"},
		{[]string{"apply", "-parallelism=many"}, "invalid value for -parallelism: it takes a whole number"},
		{[]string{"plan", "-lock-timeout=soon"}, "invalid value for -lock-timeout: it takes a duration such as 30s"},
		{[]string{"plan", "-target=image"}, "invalid value for -target: it takes a resource address"},
		{[]string{"plan", "---var=x"}, "an argument starts with a dash but is not a flag"},
		{[]string{"plan", "-nope=x"}, "flag provided but not defined: -nope"},
		{[]string{"-no-color=maybe", "plan"}, "invalid value for -no-color: it takes true or false"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Run(tt.args, strings.NewReader(""), &out, &errOut); code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tt.want)
			}
		})
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}
