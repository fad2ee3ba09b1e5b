# fleettrust — build, test, demo, bench.
# `make demo` and `make test` work on a fresh Debian 12 machine as root:
# `deps` installs what is missing, quietly, and only when missing.

SWIFT      ?= swift
CONFIG     ?= debug
BUILD_DIR  := .build
BIN         = $(BUILD_DIR)/$(CONFIG)/fleettrust
DEB_PACKAGES := libssh-dev libncursesw5-dev libssl-dev openssh-server openssh-client tmux pkg-config python3 python3-cryptography man-db libsqlite3-dev openssl \
                debootstrap dpkg-dev binutils dropbear-bin tinysshd socat prometheus
# The real servers of `make test-integration` (mail, directory, database, a validating DNS resolver), installed only by it.
INTEGRATION_PACKAGES := postfix dovecot-imapd dovecot-pop3d slapd postgresql unbound bind9-utils
# Real-server suites too slow for `make test`: they run in `make test-integration`.
INTEGRATION_TESTS := StartTLSServerTests SSHFPOracleTests LyingResolverTests
DEMO_HOSTS ?= 8

# `make install`: PREFIX and DESTDIR as usual; INSTALL_CONFIG=debug installs the debug build (tests).
PREFIX         ?= /usr/local
INSTALL_CONFIG ?= release
INSTALL_BIN     = $(BUILD_DIR)/$(INSTALL_CONFIG)/fleettrust
GENERATED_MAN   = $(BUILD_DIR)/plugins/GenerateManual/outputs/fleettrust/fleettrust.1
MANUAL          = $(BUILD_DIR)/fleettrust.1
GUIDE          := $(filter-out DESIGN.md,$(notdir $(wildcard docs/*.md)))
COMPLETIONS     = $(BUILD_DIR)/completions
THEMES         := $(notdir $(wildcard themes/*.theme))
# The licence notices of what the binary links come from the checkouts of the build that made it.
NOTICES_FROM    = $(BUILD_DIR)
NOTICES         = $(BUILD_DIR)/copyright
# `make dist`: the Swift runtime linked in (a build directory of its own, beside the dynamic one).
DIST_DIR       ?= dist
DIST_BUILD      = $(BUILD_DIR)/static
DEB_MAINTAINER ?= fleettrust builders <root@localhost>
# Every file install puts under $(DESTDIR)$(PREFIX); uninstall removes exactly these.
INSTALLED       = bin/fleettrust $(addprefix share/fleettrust/themes/,$(THEMES)) share/man/man1/fleettrust.1 \
                  share/bash-completion/completions/fleettrust share/zsh/site-functions/_fleettrust \
                  share/fish/vendor_completions.d/fleettrust.fish $(addprefix share/doc/fleettrust/,$(GUIDE) copyright)

export LANG ?= C.UTF-8

.PHONY: all deps version build release test test-dist test-integration dist demo bench fuzz matrix clean install install-files uninstall

all: build

# Installs the Debian packages named in $(1) that are missing, quietly.
install-missing = missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq >/dev/null && apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi

deps:
	@$(call install-missing,$(DEB_PACKAGES)); \
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
	$(SWIFT) package plugin generate-manual --configuration debug >/dev/null
	./scripts/man-page $(GENERATED_MAN) docs/man/fleettrust-sections.mdoc $(MANUAL)
	@rm -f $(BUILD_DIR)/xunit.xml
	@status=0; \
	$(SWIFT) test --skip-build --parallel --num-workers 2 --disable-swift-testing \
	  $(addprefix --skip ,$(INTEGRATION_TESTS)) --xunit-output $(BUILD_DIR)/xunit.xml || status=$$?; \
	./scripts/test-summary $(BUILD_DIR)/xunit.xml || status=1; \
	exit $$status

# The suites against real mail, directory and database servers; a missing server fails them here.
test-integration: deps version
	@$(call install-missing,$(INTEGRATION_PACKAGES))
	$(SWIFT) build --build-tests
	@rm -f $(BUILD_DIR)/xunit-integration.xml
	@status=0; \
	FLEETTRUST_INTEGRATION=1 $(SWIFT) test --skip-build --parallel --num-workers 2 --disable-swift-testing \
	  --filter '$(subst $() ,|,$(INTEGRATION_TESTS))' --xunit-output $(BUILD_DIR)/xunit-integration.xml || status=$$?; \
	./scripts/test-summary $(BUILD_DIR)/xunit-integration.xml || status=1; \
	exit $$status

# The tarball, the .deb and SHA256SUMS in $(DIST_DIR)/, for machines without Swift (docs/install.md).
dist: deps version
	$(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath --scratch-path $(DIST_BUILD) --product fleettrust
	$(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath --scratch-path $(DIST_BUILD) --product generate-manual
	./scripts/dist $(DIST_BUILD)/release $(DIST_DIR) "$(DEB_MAINTAINER)"

# What `dist` made, proved where there is no toolchain: the tarball's binary with the toolchain
# hidden, the .deb in a fresh Debian 12 root (debootstrap, cached under .build/), the fan-out.
test-dist: dist
	$(SWIFT) build --build-tests
	@rm -f $(BUILD_DIR)/xunit-dist.xml
	@status=0; \
	FLEETTRUST_DIST_DIR=$(abspath $(DIST_DIR)) $(SWIFT) test --skip-build --parallel --num-workers 2 --disable-swift-testing \
	  --filter 'DistributionTests|AnsibleFanOutTests' --xunit-output $(BUILD_DIR)/xunit-dist.xml || status=$$?; \
	./scripts/test-summary $(BUILD_DIR)/xunit-dist.xml || status=1; \
	exit $$status

demo: deps version
	$(SWIFT) build -c $(CONFIG)
	$(BUILD_DIR)/$(CONFIG)/testfleet demo --hosts $(DEMO_HOSTS) -- $(abspath $(BIN))

# The release for jump hosts is measured beside the dynamic build: dist first.
bench: deps version dist
	$(SWIFT) build -c release
	./bench/run

fuzz: deps
	./fuzz/run
	$(MAKE) matrix

# The full server-side differential matrix against the real ssh (6,512 cases, about 5 minutes).
matrix: deps
	$(SWIFT) build --build-tests
	FLEETTRUST_FULL_MATRIX=1 $(SWIFT) test --skip-build --filter ServerDifferentialTests

# The man page comes from the commands' own help (swift-argument-parser's generate-manual plugin,
# which builds the package in INSTALL_CONFIG first); completions from the binary itself.
install: deps version
	$(SWIFT) build -c $(INSTALL_CONFIG)
	$(SWIFT) package plugin generate-manual --configuration $(INSTALL_CONFIG) >/dev/null
	./scripts/man-page $(GENERATED_MAN) docs/man/fleettrust-sections.mdoc $(MANUAL)
	@$(MAKE) --no-print-directory install-files

# Copies what `install` built, building nothing (the tests run it while SwiftPM holds .build).
install-files:
	@mkdir -p $(COMPLETIONS)
	$(INSTALL_BIN) --generate-completion-script bash > $(COMPLETIONS)/fleettrust
	$(INSTALL_BIN) --generate-completion-script zsh > $(COMPLETIONS)/_fleettrust
	$(INSTALL_BIN) --generate-completion-script fish > $(COMPLETIONS)/fleettrust.fish
	install -D -m 755 $(INSTALL_BIN) $(DESTDIR)$(PREFIX)/bin/fleettrust
	install -d $(DESTDIR)$(PREFIX)/share/fleettrust/themes
	install -m 644 $(addprefix themes/,$(THEMES)) $(DESTDIR)$(PREFIX)/share/fleettrust/themes/
	install -D -m 644 $(MANUAL) $(DESTDIR)$(PREFIX)/share/man/man1/fleettrust.1
	install -D -m 644 $(COMPLETIONS)/fleettrust $(DESTDIR)$(PREFIX)/share/bash-completion/completions/fleettrust
	install -D -m 644 $(COMPLETIONS)/_fleettrust $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_fleettrust
	install -D -m 644 $(COMPLETIONS)/fleettrust.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/fleettrust.fish
	install -d $(DESTDIR)$(PREFIX)/share/doc/fleettrust
	install -m 644 $(addprefix docs/,$(GUIDE)) $(DESTDIR)$(PREFIX)/share/doc/fleettrust/
	./scripts/third-party-notices $(NOTICES_FROM) > $(NOTICES)
	install -m 644 $(NOTICES) $(DESTDIR)$(PREFIX)/share/doc/fleettrust/copyright

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	-rmdir $(DESTDIR)$(PREFIX)/share/fleettrust/themes $(DESTDIR)$(PREFIX)/share/fleettrust \
	  $(DESTDIR)$(PREFIX)/share/doc/fleettrust 2>/dev/null

clean:
	rm -rf $(BUILD_DIR) .build-* $(DIST_DIR)
