# The project's checks. `make test` is the README's test command and what CI runs.
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2
VERSITYGW = github.com/versity/versitygw/cmd/versitygw@v1.8.0

.PHONY: test check unit build bench browser postgres s3server oracle ffmpeg

build:
	go build -buildvcs=auto -o genform .

# test: formatting, vet, staticcheck, then the whole suite with the race detector.
test: browser postgres s3server oracle ffmpeg check unit

# browser: the gallery's test opens the page in a real headless Chromium
# (Debian's package); a fresh machine gets it here.
browser:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y --no-install-recommends chromium)

# ffmpeg: a video's thumbnail in gallery -base's comment is its first frame,
# which ffmpeg takes (Debian's package); its tests make videos with it too.
ffmpeg:
	command -v ffmpeg >/dev/null || (apt-get update && apt-get install -y --no-install-recommends ffmpeg)

# postgres: the team-state tests run a real PostgreSQL server (Debian's
# package; statefile/pgstate/pgtest starts it in a temporary directory); a fresh
# machine gets it here.
postgres:
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || (apt-get update && apt-get install -y --no-install-recommends postgresql)

# s3server: the object store's tests run a real S3-compatible server,
# versitygw (internal/blobstore/s3test starts it on a temporary directory);
# a fresh machine gets it here, built by go install into GOPATH/bin.
s3server:
	command -v versitygw >/dev/null || test -x "$$(go env GOPATH)/bin/versitygw" || go install $(VERSITYGW)

# oracle: the providers' official JavaScript clients judge the simulators
# (internal/provider/oracle). They need Node.js and npm (Debian's nodejs
# and npm packages; a fresh machine gets them here), then npm ci installs
# the clients, and the TypeScript compiler, at the versions the oracle's
# package-lock.json pins.
ORACLE = internal/provider/oracle/testdata
oracle:
	(command -v node >/dev/null && command -v npm >/dev/null) || (apt-get update && apt-get install -y --no-install-recommends nodejs npm)
	cd $(ORACLE) && npm ci --no-audit --no-fund --prefer-offline

check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go vet ./...
	go run $(STATICCHECK) ./...

unit:
	go test -race -count=1 -timeout=20m ./...

bench:
	go test -run='^$$' -bench=. -benchmem ./...
