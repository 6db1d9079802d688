package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// BucketName is the bucket every server is started with.
const BucketName = "genform-test"

// Region is the region the server's clients sign their requests for.
const Region = "us-east-1"

// readyTimeout bounds the wait for a started server to answer.
const readyTimeout = 30 * time.Second

// Server is a running versitygw server with one bucket. Its fields and
// Client, Keys, ObjectPath and Env may be used from any goroutine; Stop,
// Restart and Close from one at a time.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:PORT.
	Endpoint string
	// Host is the server's address, 127.0.0.1:PORT.
	Host string
	// AccessKey and SecretKey are the credentials it accepts, random per
	// server.
	AccessKey, SecretKey string
	// Bucket is the bucket made at the start, BucketName.
	Bucket string
	// Root is the server's posix directory: bucket B is Root/B.
	Root string

	bin     string
	ownRoot bool // Root was made by Launch and Close removes it
	client  *minio.Client
	cmd     *exec.Cmd
	out     *bytes.Buffer // the process's output, read once it exited
	exited  chan struct{} // closed when the process ends
}

// Binary is the path of the versitygw executable: $GENFORM_S3_SERVER if
// set, else versitygw in PATH, else the one `go install` puts in GOBIN or
// GOPATH/bin.
func Binary() (string, error) {
	if p := os.Getenv("GENFORM_S3_SERVER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("s3test: GENFORM_S3_SERVER: %w", err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		dirs = append(dirs, filepath.Join(filepath.SplitList(gp)[0], "bin"))
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("s3test: versitygw is not installed (not in GENFORM_S3_SERVER, PATH, or " +
		strings.Join(dirs, ", ") + "): run `make s3server`")
}

// Start starts a server for t in a temporary directory and stops it when
// t ends. It fails t when no server can be started.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Launch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Launch starts a server whose posix root is root, which must exist, or
// a new temporary directory when root is "" (Close removes that one),
// and makes its bucket unless root has it already. It is Start for
// callers without a testing.TB (TestMain, benchmarks, testscript
// commands); they call Close.
func Launch(root string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	s := &Server{Bucket: BucketName, Root: root, bin: bin, AccessKey: randomHex(10), SecretKey: randomHex(20)}
	if root == "" {
		if s.Root, err = os.MkdirTemp("", "s3test-"); err != nil {
			return nil, fmt.Errorf("s3test: %w", err)
		}
		s.ownRoot = true
	}
	// A port found free may be taken by another process before the server
	// binds it: a few are tried.
	for range 3 {
		if err = s.pickPort(); err != nil {
			break
		}
		if err = s.run(); err == nil {
			break
		}
	}
	if err == nil {
		err = s.makeBucket()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// pickPort picks a free loopback port for s and makes its client.
func (s *Server) pickPort() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("s3test: finding a free port: %w", err)
	}
	s.Host = l.Addr().String()
	l.Close()
	s.Endpoint = "http://" + s.Host
	s.client, err = minio.New(s.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Secure:       false,
		Region:       Region,
		BucketLookup: minio.BucketLookupPath,
		// The harness's own requests are not retried: a server that does
		// not answer is waited for by run, or is stopped on purpose.
		MaxRetries: 1,
	})
	if err != nil {
		return fmt.Errorf("s3test: %w", err)
	}
	return nil
}

func (s *Server) makeBucket() error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	ok, err := s.client.BucketExists(ctx, s.Bucket)
	if err == nil && !ok {
		err = s.client.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{Region: Region})
	}
	if err != nil {
		return fmt.Errorf("s3test: making bucket %s: %w", s.Bucket, err)
	}
	return nil
}

// run starts the server process on s's port and root, and waits until
// it answers.
func (s *Server) run() error {
	s.exited = make(chan struct{})
	s.out = new(bytes.Buffer)
	s.cmd = exec.Command(s.bin, "--access", s.AccessKey, "--secret", s.SecretKey, "--port", s.Host, "-q", "posix", s.Root)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	// The server dies with the test binary, even one killed: no server is
	// left behind holding a port.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		close(s.exited)
		return fmt.Errorf("s3test: starting versitygw: %w", err)
	}
	cmd, exited := s.cmd, s.exited
	go func() {
		cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := s.client.ListBuckets(ctx)
		cancel()
		select {
		case <-exited:
			// Another process may have answered on the port ours failed to
			// bind.
			return fmt.Errorf("s3test: versitygw exited: %s", strings.TrimSpace(s.out.String()))
		default:
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("s3test: versitygw did not answer within %v: %w", readyTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server process, as a crash would, and waits for it to
// end. The root stays, for Restart.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// Restart stops the server if it runs and starts it again on the same
// port with the same root and credentials, waiting until it answers.
func (s *Server) Restart() error {
	s.Stop()
	return s.run()
}

// Close stops the server and removes its root if Launch made it.
func (s *Server) Close() {
	s.Stop()
	if s.ownRoot {
		os.RemoveAll(s.Root)
	}
}

// Client is a client of the server, signed with its credentials. It
// does not retry a failed request.
func (s *Server) Client() *minio.Client { return s.client }

// ObjectPath is the file holding the object key of the bucket.
func (s *Server) ObjectPath(key string) string {
	return filepath.Join(s.Root, s.Bucket, filepath.FromSlash(key))
}

// Env is the environment a genform process needs to use the bucket as
// its store.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + Region,
		"GENFORM_STORE_ENDPOINT=" + s.Endpoint,
		"GENFORM_STORE_BUCKET=" + s.Bucket,
	}
}

// Keys lists the keys of all the bucket's objects, sorted.
func (s *Server) Keys() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("s3test: listing bucket %s: %w", s.Bucket, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	slices.Sort(keys)
	return keys, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// AllowPublicRead lets anyone read the bucket's objects without
// credentials (a bucket policy granting s3:GetObject to every
// principal), as a bucket behind a public_url is set up.
func (s *Server) AllowPublicRead() error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::` + s.Bucket + `/*"]}]}`
	if err := s.client.SetBucketPolicy(ctx, s.Bucket, policy); err != nil {
		return fmt.Errorf("s3test: making bucket %s public: %w", s.Bucket, err)
	}
	return nil
}
