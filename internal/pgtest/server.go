package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/forkspace/forkspace/internal/citest"
)

// User is the server's superuser, which tests connect as (trust
// authentication on the unix socket).
const User = "forkspace"

// server is the test binary's PostgreSQL.
type server struct {
	dir    string // temporary directory: data/, the socket, server.log
	bin    string // directory of initdb and postgres
	cred   *syscall.Credential
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd exits
	next   atomic.Int64  // numbers databases
	// durable makes a commit wait for its WAL to reach the kernel
	// (synchronous_commit=on), so it survives the server's crash; fsync
	// stays off (a test never loses the machine's page cache).
	durable bool
}

var (
	shared   *server
	startErr error // why shared is nil
	mainRan  bool
)

// Main runs the tests with a server (Run) and exits with their status. Call
// it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run starts the server, runs the tests, stops the server and returns the
// tests' status: for a TestMain that does more than Main. A server that
// cannot start does not stop the tests: DB reports it in each test that
// needs one.
func Run(m *testing.M) int {
	mainRan = true
	shared, startErr = start(false)
	code := m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop server: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// DB creates an empty database for the test and returns its URL; it is
// dropped when the test ends. Without a server (no PostgreSQL installed)
// the test fails under CI (CI=true) and is skipped elsewhere.
func DB(tb testing.TB) string {
	tb.Helper()
	if !mainRan {
		tb.Fatal("pgtest.DB: the package's TestMain must call pgtest.Main or pgtest.Run")
	}
	if shared == nil {
		msg := fmt.Sprintf("no PostgreSQL server: %v (scripts/test.sh installs the Debian package postgresql)", startErr)
		citest.Missing(tb, "%s", msg)
	}
	name := fmt.Sprintf("t%d", shared.next.Add(1))
	if err := shared.admin(context.Background(), "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		if err := shared.admin(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop database: %v", err)
		}
	})
	return shared.url(name)
}

// Socket returns the directory of the server's unix socket ("" without a
// server).
func Socket() string {
	if shared == nil {
		return ""
	}
	return shared.dir
}

// url is the connection URL of database name.
func (s *server) url(name string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=%s&sslmode=disable", name, s.dir, User)
}

// admin runs one statement on the postgres database.
func (s *server) admin(ctx context.Context, stmt string) error {
	conn, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, stmt)
	return err
}

// start initializes a cluster in a new temporary directory and runs the
// server on it until it accepts connections.
func start(durable bool) (_ *server, err error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, bin: bin, durable: durable}
	defer func() {
		if err != nil {
			if s.cmd != nil {
				s.stop()
			}
			os.RemoveAll(dir)
		}
	}()
	if s.cred, err = serverUser(dir); err != nil {
		return nil, err
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", User, "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	return s, s.run()
}

// run starts the server on its cluster and waits until it accepts
// connections.
func (s *server) run() error {
	logFile, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	s.exited = make(chan struct{})
	sync := "off"
	if s.durable {
		sync = "on"
	}
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"), "-k", s.dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit="+sync,
		"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=64MB")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	exited := s.exited
	go func() { s.cmd.Wait(); close(exited) }()
	ctx := context.Background()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		conn, err := pgx.Connect(ctx, s.url("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("postgres exited: %s", s.log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres never answered: %w\n%s", err, s.log())
		}
	}
}

// Server is a PostgreSQL server of one test's own, for tests that stop
// or restart it (Own); other tests share the binary's (DB).
type Server struct{ s *server }

// Own starts a server for the test alone, stopped when it ends. Unlike
// the shared one it acknowledges a commit only once its WAL is written
// (synchronous_commit=on), so what it acknowledged survives Restart.
// Without PostgreSQL the test fails under CI and is skipped elsewhere.
func Own(tb testing.TB) *Server {
	tb.Helper()
	s, err := start(true)
	if err != nil {
		citest.Missing(tb, "no PostgreSQL server: %v (scripts/test.sh installs the Debian package postgresql)", err)
	}
	tb.Cleanup(func() {
		if err := s.stop(); err != nil {
			tb.Errorf("stop server: %v", err)
		}
	})
	return &Server{s: s}
}

// DB creates an empty database on the server and returns its URL.
func (v *Server) DB(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", v.s.next.Add(1))
	if err := v.s.admin(context.Background(), "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	return v.s.url(name)
}

// Restart kills the server the way a crash does (SIGQUIT: an immediate
// shutdown, so open transactions die with their connections and the
// server recovers from its WAL) and starts it again on the same cluster
// and socket. It returns when the server accepts connections.
func (v *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := v.s.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		tb.Fatalf("stop postgres: %v", err)
	}
	<-v.s.exited
	if err := v.s.run(); err != nil {
		tb.Fatalf("restart postgres: %v", err)
	}
}

// log returns the server's log.
func (s *server) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return string(b)
}

// stop shuts the server down (fast shutdown) and removes its directory.
func (s *server) stop() error {
	err := s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		err = errors.Join(err, s.cmd.Process.Kill())
		<-s.exited
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

// binDir finds the directory of initdb and postgres: $PG_BIN, the newest
// /usr/lib/postgresql/*/bin, then PATH.
func binDir() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("postgres not found in $PG_BIN, /usr/lib/postgresql/*/bin or PATH")
}

// version is the major version in a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// serverUser returns the credentials to run the server with: none (the
// current user) unless running as root, which PostgreSQL refuses; then the
// postgres user, who is given dir.
func serverUser(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, the server needs the postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
