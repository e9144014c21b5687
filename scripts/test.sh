#!/usr/bin/env bash
# The whole test suite: formatting, go vet, then every package's tests with
# the race detector. This is the single place that installs what the tests
# need: add a `need COMMAND [DEBIAN-PACKAGE]` line below when a test starts
# depending on an external program (PostgreSQL, fuse3, git, chromium...).
set -euo pipefail
cd "$(dirname "$0")/.."

# need COMMAND [PACKAGE]: succeed if COMMAND is on PATH; otherwise install
# PACKAGE (default: COMMAND) with apt-get when running as root, or fail
# with a message saying what to install.
need() {
	local cmd=$1 pkg=${2:-$1}
	command -v "$cmd" >/dev/null 2>&1 && return 0
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing $pkg (for $cmd)" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y --no-install-recommends "$pkg" >&2 ||
			{ apt-get update >&2 && apt-get install -y --no-install-recommends "$pkg" >&2; }
		command -v "$cmd" >/dev/null 2>&1 && return 0
	fi
	echo "test.sh: $cmd is required; install the Debian package $pkg" >&2
	return 1
}

if ! command -v go >/dev/null 2>&1; then
	echo "test.sh: go is required (https://go.dev/dl/; see go.mod for the version)" >&2
	exit 1
fi
need gcc # go test -race needs cgo
# sandbox: bubblewrap confines exec (its tests fail without it).
need bwrap bubblewrap
# sandbox: the escape tests make raw system calls with python3's ctypes.
need python3
# sandbox: exec's network (user-mode networking, rules in the sandbox's
# namespace); the tests build a test host in a network namespace with ip.
need slirp4netns
need nft nftables
need nsenter util-linux
need ip iproute2
# sandbox: a root server runs bubblewrap as a host uid of its own through
# setpriv; TestForkBombRlimit's bounded fork bomb is a perl script.
need setpriv util-linux
need perl perl-base
# meta/pgmeta, internal/pgtest, cmd/forkspace: a throwaway PostgreSQL server
# (initdb and postgres from /usr/lib/postgresql/VERSION/bin, which is not on
# PATH; pg_ctlcluster, from its dependency postgresql-common, stands for it); with CI=true the tests
# fail when it is missing.
need pg_ctlcluster postgresql
# cmd/forkspace: the MCP Inspector (an MCP client from npm) checks the
# server; with CI=true its test fails when npx is missing.
need npx npm
# fusefs, cmd/forkspace: real FUSE mounts (fusermount3; /dev/fuse must
# exist); with CI=true the tests fail when either is missing.
need fusermount3 fuse3
# fusefs: fio --verify and stress-ng's file system stressors run on a mount.
need fio
need stress-ng
# webdavfs: litmus, the WebDAV server test suite, runs against a workspace.
need litmus
# cmd/forkspace: serve --s3 is tested with S3 clients this project did
# not write.
need rclone
need s3cmd
# cmd/forkspace: the dashboard is driven in a real headless Chromium
# (chromedp); with CI=true its test fails when the browser is missing.
need chromium
# clients/python: the SDK is installed with pip into a venv and tested
# with Debian's pytest (Debian's python3, not another one on PATH).
need pytest-3 python3-pytest
if ! /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null && [[ $(id -u) -eq 0 ]]; then
	apt-get install -y --no-install-recommends python3-venv >&2 ||
		{ apt-get update >&2 && apt-get install -y --no-install-recommends python3-venv >&2; }
fi
# clients/typescript: the SDK's tests run with node's test runner (npm ci
# and npm test from TestTypeScriptSDK); with CI=true a missing node or npm
# fails it.
need node nodejs
# mount/gitmount: test repositories are built with git and served by
# git http-backend; fusefs: git clones, commits and gc's on a mount;
# with CI=true the tests fail when git is missing.
need git

# mount/s3mount (write-back), blob/s3blob (blobtest, faults) and the CLI's
# --blob s3:// test run against versitygw, a real S3 gateway that
# checks signatures (internal/s3test). Built once from the Go module proxy
# into a cache directory (about 3 minutes on 2 cores the first time,
# nothing after); with CI=true the tests fail when it is missing.
versitygw_version=v1.8.0 # keep in step with s3test.VersityVersion
cache_bin=${FORKSPACE_TEST_BIN:-${HOME:-/root}/.cache/forkspace-test/bin}
if [[ ! -x $cache_bin/versitygw || $(cat "$cache_bin/versitygw.version" 2>/dev/null) != "$versitygw_version" ]]; then
	echo "test.sh: building versitygw $versitygw_version into $cache_bin" >&2
	mkdir -p "$cache_bin"
	(cd / && GOBIN=$cache_bin GOFLAGS=-mod=mod go install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version")
	echo "$versitygw_version" >"$cache_bin/versitygw.version"
fi
export VERSITYGW=$cache_bin/versitygw

echo "== gofmt"
unformatted=$(gofmt -l .)
if [[ -n $unformatted ]]; then
	echo "these files are not gofmt-formatted (run gofmt -w):" >&2
	echo "$unformatted" >&2
	exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test"
# The slowest package (cmd/forkspace) takes about 9 minutes on 2 idle
# cores; at a load of 10-15 it took more than 25. The timeout catches a
# hung test, not a busy machine.
go test -race -count=1 -timeout 45m ./...
