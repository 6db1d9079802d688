package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running PostgreSQL server.
type Server struct {
	dir  string
	port int
	bin  string
	cred *syscall.Credential
	cmd  *exec.Cmd
	// exited is closed when the server process ends.
	exited chan struct{}
	// frozen is whether Freeze stopped its processes.
	frozen atomic.Bool
}

var (
	mu      sync.Mutex
	running *Server
	dbSeq   atomic.Int64
)

// M is what runs a test binary's tests: *testing.M.
type M interface{ Run() int }

// Run runs the tests of m and then stops the server, if one was started:
// call it from TestMain, as os.Exit(pgtest.Run(m)).
func Run(m M) int {
	code := m.Run()
	Stop()
	return code
}

// Wrap is m, stopping the server after its tests, for a TestMain that
// hands m to a runner that exits itself (testscript.Main).
func Wrap(m M) M { return wrapped{m} }

type wrapped struct{ m M }

func (w wrapped) Run() int { return Run(w.m) }

// Stop stops the server started for this test binary, if any, and removes
// its files.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if running != nil {
		running.stop()
		running = nil
	}
}

// ConnString returns the connection string of a new, empty database on
// the test binary's server, starting the server at the first call. It
// fails t when no server can be started.
func ConnString(t testing.TB) string {
	t.Helper()
	conn, err := NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// NewDatabase is ConnString for callers that have no testing.TB (the
// commands of a testscript).
func NewDatabase() (string, error) {
	s, err := start()
	if err != nil {
		return "", err
	}
	return s.NewDatabase()
}

// NewServer starts a server of the caller's own, beside the shared one:
// for a test that stops it (Stop) and starts it again (Start) while
// other tests use theirs. Close removes it.
func NewServer() (*Server, error) { return launchFresh() }

// launchFresh starts a server in a new directory, trying a few ports: one
// found free may be taken by another test binary before the server binds
// it.
func launchFresh() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range 3 {
		s, err := launch(bin, cred)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// NewDatabase returns the connection string of a new, empty database on
// s.
func (s *Server) NewDatabase() (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.connString("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connecting to the test server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: creating database %s: %w", name, err)
	}
	return s.connString(name), nil
}

// Stop shuts s down as an administrator would (a fast shutdown: open
// connections are ended, committed data kept), leaving its files for
// Start.
func (s *Server) Stop() { s.shutdown() }

// Start starts s again, on the same port with the same data, after Stop.
func (s *Server) Start() error {
	select {
	case <-s.exited:
	default:
		return errors.New("pgtest: the server runs already")
	}
	return s.run()
}

// Close stops s and removes its files.
func (s *Server) Close() { s.stop() }

// Freeze stops every process of s with SIGSTOP, the postmaster first so
// that it starts no new backend: the server keeps its connections and
// accepts new ones (the kernel does) but answers nothing, as a server
// that hangs, is swapped out, or sits behind a network that swallows
// packets. Thaw lets it go on.
func (s *Server) Freeze() error {
	select {
	case <-s.exited:
		return errors.New("pgtest: the server does not run")
	default:
	}
	s.frozen.Store(true)
	return s.signalAll(syscall.SIGSTOP)
}

// Thaw continues the processes Freeze stopped.
func (s *Server) Thaw() error {
	if !s.frozen.Swap(false) {
		return nil
	}
	return s.signalAll(syscall.SIGCONT)
}

// signalAll sends sig to the postmaster, then to each of its children
// (the backends, one per connection, and the background workers), found
// as the processes whose parent it is.
func (s *Server) signalAll(sig syscall.Signal) error {
	pm := s.cmd.Process.Pid
	if err := syscall.Kill(pm, sig); err != nil {
		return fmt.Errorf("pgtest: signalling the postmaster: %w", err)
	}
	kids, err := children(pm)
	if err != nil {
		return err
	}
	for _, pid := range kids {
		// A backend may have ended meanwhile.
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("pgtest: signalling backend %d: %w", pid, err)
		}
	}
	return nil
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("pgtest: listing processes: %w", err)
	}
	var kids []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it ended
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses,
		// so the fields are counted after its last ')'.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, p)
		}
	}
	return kids, nil
}

// HoldLock takes an ACCESS EXCLUSIVE lock on tables (schema-qualified
// names) of the database conn names, in a transaction of a session of its
// own, as VACUUM FULL, ALTER TABLE or LOCK TABLE would, and holds it until
// release is called (once or more).
func HoldLock(conn string, tables ...string) (release func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("pgtest: connecting: %w", err)
	}
	var names []string
	for _, t := range tables {
		names = append(names, pgx.Identifier(strings.Split(t, ".")).Sanitize())
	}
	if _, err := c.Exec(ctx, "BEGIN; LOCK TABLE "+strings.Join(names, ", ")+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("pgtest: locking %s: %w", strings.Join(tables, ", "), err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c.Exec(ctx, "ROLLBACK")
			c.Close(ctx)
		})
	}, nil
}

// Addr is the server's host:port, starting it at the first call.
func Addr() (string, error) {
	s, err := start()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), nil
}

func (s *Server) connString(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

func start() (*Server, error) {
	mu.Lock()
	defer mu.Unlock()
	if running != nil {
		select {
		case <-running.exited:
			running.stop()
			running = nil
		default:
			return running, nil
		}
	}
	s, err := launchFresh()
	if err != nil {
		return nil, err
	}
	running = s
	return s, nil
}

// binDir finds the newest of Debian's PostgreSQL installations.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("pgtest: PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres): run `make postgres`, or apt-get install postgresql")
}

// credential is who the server runs as: nil for the user running the
// tests, or the postgres system user when that is root, which PostgreSQL
// refuses to run as.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		// Debian's package creates the user; a server installed otherwise
		// may not have.
		out, aerr := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres").CombinedOutput()
		if aerr != nil {
			return nil, fmt.Errorf("pgtest: the tests run as root, PostgreSQL refuses to, and there is no postgres user to run it as; creating one failed: %v: %s", aerr, out)
		}
		if u, err = user.Lookup("postgres"); err != nil {
			return nil, fmt.Errorf("pgtest: looking up the postgres user: %w", err)
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: the postgres user has uid %q, gid %q", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func launch(bin string, cred *syscall.Credential) (*Server, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, bin: bin, cred: cred}
	ok := false
	defer func() {
		if !ok {
			s.stop()
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := s.run(); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// run starts the server process on s's port and data, and waits until it
// accepts connections.
func (s *Server) run() error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logf.Close()
	s.exited = make(chan struct{})
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"), "-p", strconv.Itoa(s.port),
		"-k", s.dir, "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200")
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// The server dies with the test binary, even one killed: no server is
	// left behind holding a port.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		close(s.exited)
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	cmd, exited := s.cmd, s.exited
	go func() {
		cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.connString("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("pgtest: postgres exited: %s", strings.TrimSpace(string(log)))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres did not accept connections within 30s: %w", err)
		}
	}
}

// stop shuts the server down and removes its directory.
func (s *Server) stop() {
	s.shutdown()
	os.RemoveAll(s.dir)
}

// shutdown stops the server process (a fast shutdown: SIGINT), if it
// runs.
func (s *Server) shutdown() {
	if s.cmd == nil || s.cmd.Process == nil || s.exited == nil {
		return
	}
	// A frozen server would not hear the signal.
	_ = s.Thaw()
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
}
