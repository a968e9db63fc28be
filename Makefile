# warden — see README.md.  `make test` installs what is missing, builds and
# runs every test; `make demo` shows the jail at work.
CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
PKGS     = libseccomp libcap json-c libnl-3.0 libnl-route-3.0 nettle libcares
# Only the broker talks to LLMs and the terminal: the supervisor never links these.
BROKER_PKGS = libcurl libedit libwebsockets

# `make test` says first what it takes (README.md): the time, and root for
# the whole run; before it installs or builds anything.
ifneq ($(filter test,$(MAKECMDGOALS)),)
$(info make test: about 15 minutes on 2 cores, plus the packages the first time; $(if \
  $(filter 0,$(shell id -u)),as root: the full run,as $(shell id -un): the stages that need \
  root (cgroups for jails, the session suites under ASan, the Debian package) are reported \
  as skipped; sudo make test runs them))
endif

# clean, install, uninstall and test-fresh never install packages (NO_DEPS,
# below): install builds only what is out of date, and stops naming the
# missing library when one is (pkgconfig below).
NO_APT_GOALS = clean install uninstall test-fresh
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out $(NO_APT_GOALS),$(MAKECMDGOALS)),)
NO_DEPS = 1
endif
endif

WARN    = -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
          -Wmissing-prototypes -Wimplicit-fallthrough -Wno-unused-parameter
HARDEN  = -D_FORTIFY_SOURCE=3 -fstack-protector-strong -fPIE
OPT    ?= -O2 -g
# The libraries' flags are read from pkg-config when a recipe first needs
# them, once per make: after tools/deps.sh (deps-checked, which every
# compilation waits for) has installed the packages, not when make parses
# this file, before it (issue 18: a first `make` on a fresh machine stopped
# at netlink/netlink.h).  A library still missing stops the build here.
# $(call pkgconfig,--cflags|--libs,PACKAGES)
pkgconfig = $(call pkgcheck,$(shell pkg-config $(1) $(2) 2>/dev/null || echo PKG-CONFIG-FAILED),$(2))
pkgcheck = $(if $(filter PKG-CONFIG-FAILED,$(1)),$(error pkg-config does not find \
  $(or $(strip $(shell for p in $(2); do pkg-config --exists $$p 2>/dev/null || echo $$p; done)),$(2)) \
  (or pkg-config itself is missing): run `make deps` as root (tools/deps.sh installs them), \
  or install them yourself; tools/deps.sh lists the Debian packages),$(1))
# $(call once,VAR,VALUE): VAR's value, computed the first time it is used
once = $(eval $(1) := $(2))$($(1))
PKG_CFLAGS = $(call once,PKG_CFLAGS,$(call pkgconfig,--cflags,$(PKGS)))
PKG_LIBS   = $(call once,PKG_LIBS,$(call pkgconfig,--libs,$(PKGS)))
CFLAGS  += -std=gnu11 $(OPT) $(WARN) $(HARDEN) -D_GNU_SOURCE -Iinclude -I$(BUILD) $(PKG_CFLAGS)
LDFLAGS += -pie -Wl,-z,relro,-z,now
LIBS     = $(PKG_LIBS)
# warden itself links these libraries statically: loading seven shared
# objects cost 0.6 ms of every `warden run` (docs/design.md "Start-up").
# STATIC_LIBS=0 links them as shared objects, as debian/rules does so that a
# library's security update reaches warden without a rebuild.
STATIC_LIBS ?= 1
ifeq ($(STATIC_LIBS),1)
WARDEN_LIBS = -Wl,-Bstatic $(PKG_LIBS) -Wl,-Bdynamic -lpthread
else
WARDEN_LIBS = $(LIBS)
endif
BROKER_CFLAGS = $(call once,BROKER_CFLAGS,$(call pkgconfig,--cflags,$(BROKER_PKGS)))
BROKER_LIBS   = $(call once,BROKER_LIBS,$(call pkgconfig,--libs,$(BROKER_PKGS)))
CMOCKA_CFLAGS = $(call once,CMOCKA_CFLAGS,$(call pkgconfig,--cflags,cmocka))
CMOCKA_LIBS   = $(call once,CMOCKA_LIBS,$(call pkgconfig,--libs,cmocka))

LIB_SRC  = $(wildcard common/*.c policy/*.c limits/*.c jail/*.c supervisor/*.c learn/*.c) \
           $(filter-out cli/main.c,$(wildcard cli/*.c))
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/profiles.o $(BUILD)/drivers.o
BROKER_SRC = $(filter-out broker/main.c,$(wildcard broker/*.c broker/*/*.c))
BROKER_OBJ = $(BROKER_SRC:%.c=$(BUILD)/%.o)
EGRESS_SRC = $(filter-out egress/main.c,$(wildcard egress/*.c))
EGRESS_OBJ = $(EGRESS_SRC:%.c=$(BUILD)/%.o)
PROFILES = $(sort $(wildcard policy/profiles/*.json))
DRIVERS  = $(sort $(wildcard drivers/*.py drivers/*.js drivers/*.mjs drivers/*.sh drivers/*.pl drivers/*.rb drivers/*.R))
FUZZ_SRC = $(wildcard tests/fuzz/fuzz_*.c)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_BIN = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/tests/%)
PROBE_SRC = $(wildcard tests/security/probes/*.c)
PROBE_BIN = $(PROBE_SRC:tests/security/probes/%.c=$(BUILD)/probes/%)

all: $(BUILD)/warden $(BUILD)/warden-broker $(BUILD)/warden-egress

$(BUILD)/%.o: %.c $(wildcard include/warden/*.h) | deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# supervisor/*.h are the supervisor's own headers (include/warden/ holds only
# the interfaces between folders); its sources find them by their directory.
$(BUILD)/supervisor/%.o: supervisor/%.c $(wildcard include/warden/*.h supervisor/*.h) | deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<
$(BUILD)/learn/%.o: learn/%.c $(wildcard include/warden/*.h learn/*.h) | deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<
$(BUILD)/cli/%.o: cli/%.c $(wildcard include/warden/*.h cli/*.h) | deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# Built-in profiles are compiled in, so an installed warden needs no data.
$(BUILD)/profiles.c: $(PROFILES) tools/embed-profiles.sh
	@mkdir -p $(BUILD)
	sh tools/embed-profiles.sh $(PROFILES) > $@.tmp && mv $@.tmp $@
$(BUILD)/profiles.o: $(BUILD)/profiles.c | deps-checked
	$(CC) $(CFLAGS) -c -o $@ $<

# The language drivers of persistent sessions are compiled in too: the
# supervisor hands each one to its interpreter on the command line.
$(BUILD)/drivers.c: $(DRIVERS) tools/embed-drivers.sh
	@mkdir -p $(BUILD)
	sh tools/embed-drivers.sh $(DRIVERS) > $@.tmp && mv $@.tmp $@
$(BUILD)/drivers.o: $(BUILD)/drivers.c supervisor/lang.h | deps-checked
	$(CC) $(CFLAGS) -Isupervisor -c -o $@ $<

$(BUILD)/broker/%.o: broker/%.c $(wildcard include/warden/*.h broker/*.h broker/*/*.h) | deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BROKER_CFLAGS) -Ibroker -c -o $@ $<
$(BUILD)/libbroker.a: $(BROKER_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/warden-broker: $(BUILD)/broker/main.o $(BUILD)/libbroker.a $(BUILD)/libwarden.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(BROKER_LIBS)

# The egress proxy (warden-egress): the only code that parses what jailed
# code sends over the network.  The supervisor never links it; egress/ uses
# the event loop (include/warden/loop.h, common/loop.c) and common/.
# EGRESS_SECCOMP_DEFAULT=SCMP_ACT_LOG: a build whose filter logs what it
# would kill (how its allowlist is kept complete: egress/confine.c).
$(BUILD)/egress/%.o: egress/%.c $(wildcard include/warden/*.h egress/*.h) | deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(if $(EGRESS_SECCOMP_DEFAULT),-DEGRESS_SECCOMP_DEFAULT=$(EGRESS_SECCOMP_DEFAULT)) -Iegress -c -o $@ $<
$(BUILD)/libegress.a: $(EGRESS_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/warden-egress: $(BUILD)/egress/main.o $(BUILD)/libegress.a $(BUILD)/libwarden.a
	$(CC) $(LDFLAGS) -o $@ $^ $(WARDEN_LIBS)

$(BUILD)/libwarden.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

# The default syscall filters, compiled by libseccomp at build time instead
# of on every run (include/warden/filter.h).
$(BUILD)/gen-filters: tools/gen-filters.c $(BUILD)/libwarden.a | deps-checked
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libwarden.a $(LIBS)
$(BUILD)/filters.c: $(BUILD)/gen-filters
	$(BUILD)/gen-filters > $@.tmp && mv $@.tmp $@
$(BUILD)/filters.o: $(BUILD)/filters.c | deps-checked
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/warden: $(BUILD)/cli/main.o $(BUILD)/filters.o $(BUILD)/libwarden.a
	$(CC) $(LDFLAGS) -o $@ $^ $(WARDEN_LIBS)

# Unit tests reach the supervisor's, the broker's and the egress's own headers too.
# tests/unit/cmocka_filter.c: CMOCKA_TEST_FILTER=NAME runs one test (make mutants).
$(BUILD)/tests/%: tests/unit/%.c tests/unit/cmocka_filter.c $(wildcard tests/unit/*.h) $(BUILD)/filters.o $(BUILD)/libbroker.a $(BUILD)/libegress.a $(BUILD)/libwarden.a | deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BROKER_CFLAGS) -Ibroker -Isupervisor -Iegress $(CMOCKA_CFLAGS) $(LDFLAGS) -o $@ $< tests/unit/cmocka_filter.c $(BUILD)/filters.o $(BUILD)/libbroker.a $(BUILD)/libegress.a $(BUILD)/libwarden.a $(LIBS) $(BROKER_LIBS) $(CMOCKA_LIBS)

# Each fuzz target without libFuzzer: tests/fuzz/replay.c feeds it its corpus
# and its regression inputs (tests/run.sh); make fuzz builds the fuzzers.
$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/filters.o $(BUILD)/libbroker.a $(BUILD)/libegress.a $(BUILD)/libwarden.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BROKER_CFLAGS) -Ibroker -Isupervisor -Iegress $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/filters.o $(BUILD)/libbroker.a $(BUILD)/libegress.a $(BUILD)/libwarden.a $(LIBS) $(BROKER_LIBS)

# Security probes are static so they need nothing from the jail's /usr.
$(BUILD)/probes/%: tests/security/probes/%.c tests/security/probes/probe.h | deps-checked
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -static -o $@ $<

# The egress proxy's engine alone on a host loopback port, in the test's own
# process (no supervisor; confined like warden-egress with --confine 1), for
# tests/cli/proxy_engine.bats (tests/helpers/proxyd.c).
$(BUILD)/tests/proxyd: tests/helpers/proxyd.c $(BUILD)/libegress.a $(BUILD)/libwarden.a | deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isupervisor -Iegress $(LDFLAGS) -o $@ $< $(BUILD)/libegress.a $(BUILD)/libwarden.a $(LIBS)

probes: $(PROBE_BIN)
unit: $(UNIT_BIN) $(BUILD)/tests/proxyd $(FUZZ_BIN)

# Dependencies: install when root, else print the exact command (tools/deps.sh).
# Everything that compiles or runs waits for deps-checked (order-only).
# NO_DEPS=1: the caller provides the dependencies (debian/rules).
deps-checked: $(if $(NO_DEPS),,$(BUILD)/.deps-ok)
$(BUILD)/.deps-ok: tools/deps.sh
	@sh tools/deps.sh
	@mkdir -p $(BUILD) && touch $@
deps:
	@sh tools/deps.sh

# tests/run.sh also runs the unit suites built with ASan and UBSan, and the
# session suites against warden and warden-broker built the same way.
test: deps-checked $(BUILD)/warden $(BUILD)/warden-broker $(BUILD)/warden-egress unit probes asan-bins
	@sh tests/run.sh

demo: deps-checked $(BUILD)/warden $(BUILD)/warden-broker $(BUILD)/warden-egress probes
	@sh tools/demo.sh

# The two commands above, the first time on a fresh Debian 12 machine: a
# minimal bookworm root (mmdebstrap, cached), a clone of HEAD in a copy of
# it, `make demo` and `make test` there.  Root; long (tools/test-fresh.sh).
test-fresh:
	@sh tools/test-fresh.sh

bench: deps-checked $(BUILD)/warden $(BUILD)/warden-broker $(BUILD)/warden-egress
	@sh bench/run.sh

# One-line mutations of the security guarantees, each of which the test
# SECURITY.md names must then fail (tests/mutants/README).  As root; copies
# the tree with build/ into /tmp.  MUTANTS="G120 #3 REGEX" picks rows, JOBS=N
# runs N at once (both read from the environment: a '#' would end the
# recipe's command line).
export MUTANTS JOBS
mutants: $(BUILD)/warden $(BUILD)/warden-broker $(BUILD)/warden-egress unit probes
	@python3 tests/mutants/run

# Fuzz every decoder of hostile input (libFuzzer, clang): the frame decoder,
# the stdio request parser, ...  FUZZ_SECONDS per target (tools/fuzz.sh).
# make test replays their corpus and regression inputs without libFuzzer.
FUZZ_SECONDS ?= 30
fuzz: deps-checked
	@sh tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_SRC)

SAN_OPT = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer
asan:
	$(MAKE) BUILD=build-asan OPT="$(SAN_OPT)" LDFLAGS="-fsanitize=address,undefined" HARDEN="" test
asan-unit:
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="$(SAN_OPT)" LDFLAGS="-fsanitize=address,undefined" HARDEN="" unit
# The unit suites and, from the same objects, warden, warden-broker,
# warden-egress and tests/proxyd for tests/run.sh's "sessions under ASan" stage.
asan-bins:
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="$(SAN_OPT)" LDFLAGS="-fsanitize=address,undefined" HARDEN="" \
		unit build-asan/warden build-asan/warden-broker build-asan/warden-egress

# FHS layout under PREFIX: bin/warden, libexec/warden/warden-broker and
# warden-egress (found by warden relative to its own path), man pages,
# completions, examples.
# tools/install.sh holds the one list both targets use.
INSTALL_VARS = DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" BUILD="$(BUILD)" \
               $(if $(ZSHCOMPDIR),ZSHCOMPDIR="$(ZSHCOMPDIR)")
install: $(BUILD)/warden $(BUILD)/warden-broker $(BUILD)/warden-egress
	@$(INSTALL_VARS) sh tools/install.sh install
uninstall:
	@$(INSTALL_VARS) sh tools/install.sh uninstall

clean:
	rm -rf build build-asan build-fuzz

.PHONY: all test test-fresh mutants demo bench asan asan-unit asan-bins install uninstall clean deps deps-checked probes unit fuzz
.DELETE_ON_ERROR:
