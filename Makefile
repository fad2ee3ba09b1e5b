# fleettrust — build, test, demo, bench.
# `make demo` and `make test` work on a fresh Debian 12 machine as root:
# `deps` installs what is missing, quietly, and only when missing.

SWIFT      ?= swift
CONFIG     ?= debug
BUILD_DIR  := .build
BIN         = $(BUILD_DIR)/$(CONFIG)/fleettrust
DEB_PACKAGES := libssh-dev libncursesw5-dev libssl-dev openssh-server openssh-client tmux pkg-config python3 python3-cryptography
DEMO_HOSTS ?= 8

export LANG ?= C.UTF-8

.PHONY: all deps version build release test demo bench fuzz clean

all: build

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq >/dev/null && apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi; \
	command -v $(SWIFT) >/dev/null || { echo "swift (6.x) is not on PATH"; exit 1; }

# Bakes `git describe` into the binary (fleettrust --version); rebuilds only when it changed.
version:
	@./scripts/build-version

build: deps version
	$(SWIFT) build -c $(CONFIG)

release: deps version
	$(SWIFT) build -c release

test: deps version
	$(SWIFT) build --build-tests
	@rm -f $(BUILD_DIR)/xunit.xml
	@status=0; \
	$(SWIFT) test --skip-build --parallel --num-workers 2 --disable-swift-testing \
	  --xunit-output $(BUILD_DIR)/xunit.xml || status=$$?; \
	./scripts/test-summary $(BUILD_DIR)/xunit.xml || status=1; \
	exit $$status

demo: deps version
	$(SWIFT) build -c $(CONFIG)
	$(BUILD_DIR)/$(CONFIG)/testfleet demo --hosts $(DEMO_HOSTS) -- $(abspath $(BIN))

bench: deps version
	$(SWIFT) build -c release
	./bench/run

fuzz: deps
	./fuzz/run

clean:
	rm -rf $(BUILD_DIR) .build-*
