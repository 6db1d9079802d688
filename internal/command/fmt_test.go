package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFmt(t *testing.T) {
	const ugly = "image \"a\" {\nprompt=\"a\"\n}\n"
	const pretty = "image \"a\" {\n  prompt = \"a\"\n}\n"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		after  string // content of main.gen.hcl afterwards
		nested string // content of sub/b.gen.hcl afterwards
	}{
		{name: "write", code: ExitOK, stdout: "main.gen.hcl\n", after: pretty, nested: ugly},
		{name: "check", args: []string{"-check"}, code: ExitUnformatted, stdout: "main.gen.hcl\n", after: ugly, nested: ugly},
		{name: "recursive", args: []string{"-recursive", "-list=false"}, code: ExitOK, after: pretty, nested: pretty},
		{name: "check recursive", args: []string{"-check", "-recursive"}, code: ExitUnformatted, stdout: "main.gen.hcl\n" + filepath.Join("sub", "b.gen.hcl") + "\n", after: ugly, nested: ugly},
		{name: "diff", args: []string{"-diff", "-list=false"}, code: ExitOK, stdout: "+  prompt = \"a\"", after: pretty, nested: ugly},
		{name: "one file", args: []string{filepath.Join("sub", "b.gen.hcl")}, code: ExitOK, after: ugly, nested: pretty},
		{name: "missing path", args: []string{"nope"}, code: ExitError, after: ugly, nested: ugly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inDir(t, map[string]string{
				"main.gen.hcl":       ugly,
				"sub/b.gen.hcl":      ugly,
				".hidden/c.gen.hcl":  ugly,
				"other.hcl":          ugly,
				"prod.genvars.hcl":   "a = 1\n",
				"broken.txt.gen.bak": "{{{",
			})
			env, stdout, stderr := cmdEnv()
			code := runFmt(env, tt.args)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.stdout)
			}
			for file, want := range map[string]string{"main.gen.hcl": tt.after, "sub/b.gen.hcl": tt.nested, ".hidden/c.gen.hcl": ugly, "other.hcl": ugly} {
				got, _ := os.ReadFile(file)
				if string(got) != want {
					t.Errorf("%s =\n%s\nwant\n%s", file, got, want)
				}
			}
		})
	}
}

func TestFmtKeepsModeAndLeavesNoTemporaries(t *testing.T) {
	dir := inDir(t, map[string]string{"main.gen.hcl": "image \"a\" {\nprompt=\"a\"\n}\n"})
	if err := os.Chmod("main.gen.hcl", 0o600); err != nil {
		t.Fatal(err)
	}
	env, _, stderr := cmdEnv()
	if code := runFmt(env, nil); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fi, err := os.Stat("main.gen.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want just main.gen.hcl", len(entries))
	}
}

func TestFmtSyntaxError(t *testing.T) {
	const broken = "image \"a\" {\n  prompt = = 1\n}\n"
	inDir(t, map[string]string{"main.gen.hcl": broken, "ok.gen.hcl": "image \"b\" {\nprompt=\"b\"\n}\n"})
	env, _, stderr := cmdEnv()
	if code := runFmt(env, nil); code != ExitError {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "on main.gen.hcl line 2") {
		t.Errorf("stderr = %s", stderr)
	}
	if got, _ := os.ReadFile("main.gen.hcl"); string(got) != broken {
		t.Errorf("the broken file was rewritten")
	}
	if got, _ := os.ReadFile("ok.gen.hcl"); !strings.Contains(string(got), "  prompt = \"b\"") {
		t.Errorf("the good file was not formatted")
	}
}

func TestFmtStdin(t *testing.T) {
	inDir(t, nil)
	env, stdout, _ := cmdEnv()
	env.Stdin = strings.NewReader("a=1\n")
	if code := runFmt(env, []string{"-"}); code != ExitOK || stdout.String() != "a = 1\n" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	env, stdout, _ = cmdEnv()
	env.Stdin = strings.NewReader("a=1\n")
	if code := runFmt(env, []string{"-check", "-"}); code != ExitUnformatted || stdout.Len() != 0 {
		t.Errorf("-check: exit %d, stdout %q", code, stdout)
	}
}
