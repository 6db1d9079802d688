package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/genform/genform/internal/blobstore/s3test"
)

// s3Script is the S3 server of one script and whether the script asked
// for it as its own (s3-start -own), which s3-stop and s3-restart need.
type s3Script struct {
	srv *s3test.Server
	own bool
}

// s3Servers holds the server of each script that started one; each is
// closed, and its files removed, when its script ends.
var s3Servers = struct {
	sync.Mutex
	m map[*testscript.TestScript]*s3Script
}{m: map[*testscript.TestScript]*s3Script{}}

// s3-start starts an S3 server (versitygw, with bucket genform-test) for
// the script and sets the environment a genform process needs to use it
// (s3test.Server.Env), and S3_BUCKET and S3_ROOT, the directory holding
// the bucket's objects as files (key a/b is $S3_ROOT/a/b). Each script
// has a server of its own, as it starts in a fraction of a second and
// the object commands below see only that script's objects; -own says
// the script stops and restarts it (s3-stop, s3-restart). A second
// s3-start keeps the server and sets the environment again.
func cmdS3Start(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: s3-start [-own]"
	if neg || len(args) > 1 || len(args) == 1 && args[0] != "-own" {
		ts.Fatalf(usage)
	}
	s3Servers.Lock()
	sc := s3Servers.m[ts]
	if sc == nil {
		srv, err := s3test.Launch("")
		if err != nil {
			s3Servers.Unlock()
			ts.Fatalf("s3-start: %v", err)
		}
		sc = &s3Script{srv: srv}
		s3Servers.m[ts] = sc
		ts.Defer(func() {
			s3Servers.Lock()
			delete(s3Servers.m, ts)
			s3Servers.Unlock()
			srv.Close()
		})
	}
	sc.own = sc.own || len(args) == 1
	s3Servers.Unlock()
	for _, kv := range sc.srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		ts.Setenv(k, v)
	}
	ts.Setenv("S3_BUCKET", sc.srv.Bucket)
	ts.Setenv("S3_ROOT", filepath.Join(sc.srv.Root, sc.srv.Bucket))
}

// s3Server is the script's server, which cmd acts on; with own, it must
// have been started with s3-start -own.
func s3Server(ts *testscript.TestScript, cmd string, own bool) *s3test.Server {
	s3Servers.Lock()
	defer s3Servers.Unlock()
	sc := s3Servers.m[ts]
	switch {
	case sc == nil:
		ts.Fatalf("%s: no S3 server; start one with s3-start", cmd)
	case own && !sc.own:
		ts.Fatalf("%s: the script's S3 server is not its own; start it with s3-start -own", cmd)
	}
	return sc.srv
}

// s3-stop kills the script's own server (s3-start -own), as a crash
// would: requests to it are refused until s3-restart.
func cmdS3Stop(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: s3-stop")
	}
	s3Server(ts, "s3-stop", true).Stop()
}

// s3-restart starts the script's own server again, on the same port with
// the same objects and credentials, and waits until it answers.
func cmdS3Restart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: s3-restart")
	}
	ts.Check(s3Server(ts, "s3-restart", true).Restart())
}

// s3-ls prints the keys of the bucket's objects, sorted, one a line.
// With !, it checks that the server does not list them (it is stopped),
// and prints the error.
func cmdS3Ls(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 0 {
		ts.Fatalf("usage: s3-ls")
	}
	// Taken first, so that an empty bucket leaves stdout empty rather than
	// as the previous command left it.
	stdout, stderr := ts.Stdout(), ts.Stderr()
	keys, err := s3Server(ts, "s3-ls", false).Keys()
	if neg {
		if err == nil {
			ts.Fatalf("s3-ls: the server listed %d objects", len(keys))
		}
		fmt.Fprintln(stderr, err)
		return
	}
	ts.Check(err)
	for _, k := range keys {
		fmt.Fprintln(stdout, k)
	}
}

// s3-count N checks that the bucket holds N objects (with !, that it
// does not).
func cmdS3Count(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: s3-count N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	keys, err := s3Server(ts, "s3-count", false).Keys()
	ts.Check(err)
	if (len(keys) == want) == neg {
		ts.Fatalf("s3-count: the bucket holds %d objects: %q", len(keys), keys)
	}
}

// s3-corrupt KEY flips every bit of the object's bytes in the file that
// holds them, as a failing disk would: the server still serves the
// object, with its size and metadata, and the wrong bytes.
func cmdS3Corrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: s3-corrupt KEY|@FILE")
	}
	path := s3Server(ts, "s3-corrupt", false).ObjectPath(s3Key(ts, args[0]))
	b, err := os.ReadFile(path)
	ts.Check(err)
	if len(b) == 0 {
		ts.Fatalf("s3-corrupt: object %s is empty", args[0])
	}
	for i := range b {
		b[i] = ^b[i]
	}
	ts.Check(os.WriteFile(path, b, 0o644))
}

// s3-rm KEY removes the object through the server; it fails when there
// is no such object.
func cmdS3Rm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: s3-rm KEY|@FILE")
	}
	srv := s3Server(ts, "s3-rm", false)
	ctx := context.Background()
	args[0] = s3Key(ts, args[0])
	if _, err := srv.Client().StatObject(ctx, srv.Bucket, args[0], minio.StatObjectOptions{}); err != nil {
		ts.Fatalf("s3-rm: %s: %v", args[0], err)
	}
	ts.Check(srv.Client().RemoveObject(ctx, srv.Bucket, args[0], minio.RemoveObjectOptions{}))
}

// s3-put KEY|@FILE SRC puts SRC's bytes in the bucket under the key,
// through the server, as anyone who may write to the bucket could: the
// object named for one file's bytes then holds others, of another size.
func cmdS3Put(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: s3-put KEY|@FILE SRC")
	}
	srv := s3Server(ts, "s3-put", false)
	f, err := os.Open(ts.MkAbs(args[1]))
	ts.Check(err)
	defer f.Close()
	fi, err := f.Stat()
	ts.Check(err)
	_, err = srv.Client().PutObject(context.Background(), srv.Bucket, s3Key(ts, args[0]), f, fi.Size(), minio.PutObjectOptions{})
	ts.Check(err)
}

// s3Key is the object key an s3-corrupt, s3-rm or s3-put argument names: KEY
// itself, or @FILE for the key genform stores FILE's bytes under (with no
// prefix): sha256/<first two hex digits>/<sha256>.
func s3Key(ts *testscript.TestScript, arg string) string {
	file, ok := strings.CutPrefix(arg, "@")
	if !ok {
		return arg
	}
	b, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	return "sha256/" + h[:2] + "/" + h
}
