# bisectd — one plain Makefile.
#
#   make            build bisectd, bisectctl, bisect-agent into $(BUILD)/
#   make deps       install the Debian packages that are missing (root)
#   make check      deps, build, unit tests (cmocka) and integration tests
#                   (prove), then the same again under ASan+UBSan
#   make demo       deps, build, run a whole bisection on the local lab
#   make SANITIZE=address,undefined   sanitized build (into build-san/)
#   make WERROR=1   warnings are errors (CI)

CC       ?= cc
PKGS     := libcurl sqlite3 libgit2 yaml-0.1 libmicrohttpd jansson gnutls
SANITIZE ?=
WERROR   ?=
PROVE_FLAGS ?= -v --timer

ifeq ($(SANITIZE),)
BUILD    ?= build
else
BUILD    ?= build-san
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wpointer-arith -Wcast-qual -Wsign-compare
ifneq ($(WERROR),)
WARN += -Werror
endif

CFLAGS   ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(CFLAGS) $(WARN) -MMD -MP -D_GNU_SOURCE -iquote bisectd/lib \
             -iquote bisectd/daemon -iquote agents -iquote agents/workloads -iquote agents/boot \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS    += -fsanitize=$(SANITIZE)
endif

# Folders say what a file is:
#   bisectd/lib/        the library both programs and the tests link: pure
#                       code and the borders of libraries, no program state
#   agents/workloads/   the workload kinds, also in the library: pure code
#                       the coordinator checks a definition with at load,
#                       and the agent runs a task with; and the boot
#                       methods' table (agents/boot/methods.c)
#   bisectd/daemon/     bisectd: the HTTP API and the coordinator's rooms
#   bisectd/cli/        bisectctl
#   agents/, agents/boot/  bisect-agent: its loop, checkout, builds, and
#                       the boot methods
WL_SRC  := agents/workloads/workload.c agents/workloads/workload_table.c agents/workloads/command.c \
           agents/workloads/iperf3.c agents/workloads/pktgen.c agents/workloads/netparse.c agents/workloads/trex.c \
           agents/workloads/xdp.c agents/boot/methods.c
LIB_SRC := $(WL_SRC) $(addprefix bisectd/lib/,err.c log.c run.c conf.c conf_read.c conf_boot.c conf_workload.c yamltree.c jsonx.c stats.c \
           store.c store_jobs.c store_tasks.c store_results.c store_agents.c store_tokens.c store_dash.c store_profiles.c schema_sql.c repo.c \
           policy.c bisect.c bisect_model.c bisect_ends.c bisect_slow.c bisect_search.c bisect_confirm.c bisect_budget.c client.c util.c rng.c gitx.c kconfig.c taskwire.c \
           plot.c plot_gp.c store_charts.c csv.c store_export.c token.c perfreport.c)
COORD_SRC := $(addprefix bisectd/daemon/,coord.c coord_event.c coord_mirror.c coord_jobs.c coord_job.c \
           coord_steps.c coord_engine.c coord_split.c coord_claims.c coord_tasks.c coord_intake.c coord_report.c \
           coord_agents.c coord_dash.c coord_charts.c coord_mail.c coord_export.c coord_live.c coord_ecache.c \
           coord_profiles.c coord_levels.c)
# The dashboard: its routes, its event streams, its files (generated from bisectd/web/).
WEB_SRC := $(addprefix bisectd/daemon/,web.c events.c web_assets.c)
D_SRC   := $(addprefix bisectd/daemon/,bisectd.c http.c http_wait.c api.c api_req.c auth.c) $(COORD_SRC) $(WEB_SRC)
CTL_SRC := $(addprefix bisectd/cli/,bisectctl.c bisectctl_out.c bisectctl_api.c bisectctl_report.c bisectctl_jobs.c bisectctl_admin.c)
BOOT_SRC := agents/boot/boot.c agents/boot/none.c agents/boot/qemu.c agents/boot/kexec.c agents/journal.c \
            agents/boot/ssh.c agents/boot/ssh_client.c
# bisect-agent's own rooms (agent.c holds main()); the rest the test helpers link too.
AGENT_MAIN := $(addprefix agents/,agent.c agent_wait.c agent_coord.c agent_build.c agent_run.c)
AG_SRC  := $(AGENT_MAIN) agents/worktree.c agents/initramfs.c agents/qemu.c agents/qemu_guest.c \
           agents/kbuild.c agents/kconfig_apply.c $(BOOT_SRC)
UNIT    := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))

LIB      := $(BUILD)/libbisect.a
PROGS    := $(BUILD)/bisectd $(BUILD)/bisectctl $(BUILD)/bisect-agent $(BUILD)/bisect-trex
UNIT_BIN := $(addprefix $(BUILD)/tests/,$(UNIT))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

all: $(PROGS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Migrations are compiled into the binary so a deployed bisectd never runs
# against SQL files of another version.
bisectd/lib/schema_sql.c: $(sort $(wildcard schema/*.sql)) tests/lib/embed-schema.sh
	sh tests/lib/embed-schema.sh $(sort $(wildcard schema/*.sql)) > $@.tmp && mv $@.tmp $@

# So are the dashboard's files: the page always matches the API it calls.
WEB_FILES := $(sort $(wildcard bisectd/web/*.html bisectd/web/*.css bisectd/web/*.js))
bisectd/daemon/web_assets.c: $(WEB_FILES) tests/lib/embed-web.sh
	sh tests/lib/embed-web.sh $(WEB_FILES) > $@.tmp && mv $@.tmp $@
# The charts' gnuplot templates, compiled in for the same reason.
bisectd/lib/plot_gp.c: $(sort $(wildcard plots/*.gp)) tests/lib/embed-plots.sh
	sh tests/lib/embed-plots.sh $(sort $(wildcard plots/*.gp)) > $@.tmp && mv $@.tmp $@

$(LIB): $(call obj,$(LIB_SRC))
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/bisectd: $(call obj,$(D_SRC)) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/bisectctl: $(call obj,$(CTL_SRC)) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/bisect-agent: $(call obj,$(AG_SRC)) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# The trex workload's client (TRex's JSON-RPC over ZeroMQ), run by the agent.
ZMQ_LIBS := $(shell pkg-config --libs libzmq 2>/dev/null || echo -lzmq)
$(BUILD)/bisect-trex: $(call obj,agents/tools/trex_client.c) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(ZMQ_LIBS)

# A unit test links the library and the module it tests, nothing more:
# the modules outside the library each test needs are named below.
$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(LIBS) -lcmocka

$(BUILD)/tests/test_repo: $(call obj,tests/unit/gitsh.c)
$(BUILD)/tests/test_worktree: $(call obj,tests/unit/gitsh.c agents/worktree.c)
# (the workloads are in the library; the boot table holds qemu's)
$(BUILD)/tests/test_workload: $(call obj,$(BOOT_SRC) agents/qemu.c agents/qemu_guest.c agents/initramfs.c)
$(BUILD)/tests/test_qemu: $(call obj,agents/qemu.c agents/qemu_guest.c)
$(BUILD)/tests/test_journal: $(call obj,agents/journal.c)
$(BUILD)/tests/test_initramfs: $(call obj,agents/initramfs.c)
$(BUILD)/tests/test_kbuild: $(call obj,agents/kbuild.c agents/kconfig_apply.c)
$(BUILD)/tests/test_kconfig: $(call obj,agents/kconfig_apply.c)
# the API's routes and request checks, against a coordinator of stubs
$(BUILD)/tests/test_api: $(call obj,bisectd/daemon/api.c bisectd/daemon/api_req.c bisectd/daemon/http_wait.c \
			    bisectd/daemon/auth.c $(WEB_SRC))
# the HTTP server and its parking lot, on loopback
$(BUILD)/tests/test_http: $(call obj,bisectd/daemon/http.c bisectd/daemon/http_wait.c)
# tokens, roles, bindings and limits, against a real store and stubbed requests
$(BUILD)/tests/test_auth: $(call obj,bisectd/daemon/auth.c)

# the coordinator's kept engines, against a real store
$(BUILD)/tests/test_ecache: $(call obj,bisectd/daemon/coord_ecache.c)
# the coordinator itself, against a real store, mirror and parking lot
$(BUILD)/tests/test_coord: $(call obj,tests/unit/gitsh.c $(COORD_SRC) bisectd/daemon/http_wait.c)

# tests/t0100-qemu-boot.sh drives the qemu boot method through this helper.
QEMU_HELPER := $(BUILD)/tests/qemu-boot
$(QEMU_HELPER): $(BUILD)/obj/tests/lib/qemu-boot.o $(call obj,$(filter-out $(AGENT_MAIN),$(AG_SRC))) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
# tests/t0103-ssh.sh builds its device's initramfs (busybox, dropbear) and runs
# one task's boot through boot ssh with these two.
SSH_HELPER := $(BUILD)/tests/mkinitramfs $(BUILD)/tests/boot-task
$(BUILD)/tests/mkinitramfs: $(BUILD)/obj/tests/lib/mkinitramfs.o $(call obj,agents/initramfs.c) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
$(BUILD)/tests/boot-task: $(BUILD)/obj/tests/lib/boot-task.o $(call obj,$(filter-out $(AGENT_MAIN),$(AG_SRC))) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# tests/t0016-trex.sh: a stand-in TRex server speaking its protocol.
TREX_STANDIN := $(BUILD)/tests/trex-standin
$(TREX_STANDIN): $(BUILD)/obj/tests/lib/trex-standin.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(ZMQ_LIBS)

# --- benchmark ------------------------------------------------------------

BENCH_SRC   := tests/bench/bench_bisect.c tests/bench/sim.c tests/bench/policies.c tests/bench/bound.c tests/bench/trace.c \
               tests/bench/pairs.c
BENCH_FLAGS ?=

$(BUILD)/bench-bisect: $(call obj,$(BENCH_SRC)) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# The simulation benchmark of STATISTICS.md; BENCH_FLAGS=--quick for a smoke run.
bench-bisect: $(BUILD)/bench-bisect
	$(BUILD)/bench-bisect $(BENCH_FLAGS)

# The lab's tools: a seeded load injector (CPU hogs on random cores, on and
# off at random intervals) and the recorder of real noise traces that the
# simulator replays (tests/bench/traces/).
$(BUILD)/loadgen: $(BUILD)/obj/tests/bench/loadgen.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# A kept job's runs through this build's engine (tests/bench/replay_job.c):
# what it concludes every N runs of a real lab's job.
$(BUILD)/replay-job: $(BUILD)/obj/tests/bench/replay_job.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

record-noise: $(BUILD)/loadgen
	BUILD=$(abspath $(BUILD)) sh tests/bench/record-noise.sh $(RECORD_FLAGS)

# Real bisections on the local lab with the load injector on (about 9
# minutes here, 12 with --hogs 2; BENCH_LAB_FLAGS=--help lists its knobs).
# Not part of make check.
BENCH_LAB_FLAGS ?=
bench-lab: deps
	$(MAKE) all $(BUILD)/loadgen
	BUILD=$(abspath $(BUILD)) sh tests/bench/bench-lab.sh $(BENCH_LAB_FLAGS)

# The API under load: N simulated agents (tests/bench/bench_api.c) against
# one bisectd on loopback, and the upload rate as one job grows to 200,000
# samples (a few minutes; BENCH_API_FLAGS=--help lists its knobs). Not part
# of make check.
BENCH_API_FLAGS ?=
$(BUILD)/bench-api: $(BUILD)/obj/tests/bench/bench_api.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

bench-api: $(PROGS) $(BUILD)/bench-api
	BUILD=$(abspath $(BUILD)) sh tests/bench/bench-api.sh $(BENCH_API_FLAGS)

# test_bound checks the benchmark's capacity bound against STATISTICS.md.
$(BUILD)/obj/tests/unit/test_bound.o: ALL_CFLAGS += -iquote tests/bench
$(BUILD)/obj/tests/bench/%.o: ALL_CFLAGS += -iquote tests/bench
$(BUILD)/tests/test_bound: $(call obj,tests/bench/bound.c)
# test_sim checks the simulator's noise models, the trace parser and the oracle policy.
$(BUILD)/obj/tests/unit/test_sim.o: ALL_CFLAGS += -iquote tests/bench
$(BUILD)/tests/test_sim: $(call obj,tests/bench/sim.c tests/bench/trace.c tests/bench/policies.c)

# --- packages -------------------------------------------------------------

DEB_PKGS := build-essential pkg-config git libcurl4-openssl-dev libsqlite3-dev \
            libgit2-dev libyaml-dev libmicrohttpd-dev libjansson-dev libgnutls28-dev \
            libcmocka-dev gnuplot-nox python3 python3-scipy perl curl sqlite3 \
            util-linux procps flex bison bc \
            qemu-system-x86 busybox-static iperf3 cpio iproute2 linux-image-amd64 linux-perf \
            libzmq3-dev kexec-tools e2fsprogs openssh-client dropbear-bin xdp-tools

# The kernel lab's tools (make check-kernel, make demo-kernel): a kernel
# source tree to make a history from, and what building it needs.
# dwarves: pahole, which makes the BTF of a kernel with the xdp fragment.
DEB_KERNEL := linux-source-6.1 xz-utils libelf-dev ccache dwarves

deps-kernel:
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(DEB_PKGS) $(DEB_KERNEL)"

deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "deps: missing:$$missing (run 'make deps' as root)" >&2; exit 1; fi; \
	  echo "deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "deps: all installed"; fi
	@$(MAKE) --no-print-directory deps-browser

# The browser test (tests/t0006-dashboard.sh): Debian's chromium, driven by
# playwright-core from npm, which downloads no browser of its own. Where
# chromium cannot be installed the test skips and says why. nodejs may come
# with its own npm (NodeSource's does): npm is installed only when missing.
BROWSER_DIR := tests/browser
deps-browser:
	@missing=""; command -v chromium > /dev/null || missing="chromium"; \
	command -v node > /dev/null || missing="$$missing nodejs"; \
	command -v npm > /dev/null || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "deps: missing:$$missing (run 'make deps' as root)" >&2; exit 1; fi; \
	  echo "deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing || \
	    echo "deps: could not install$$missing: the browser test will skip" >&2; \
	fi
	@if command -v npm > /dev/null; then $(MAKE) --no-print-directory $(BROWSER_DIR)/node_modules/.installed; fi

$(BROWSER_DIR)/node_modules/.installed: $(BROWSER_DIR)/package.json $(BROWSER_DIR)/package-lock.json
	cd $(BROWSER_DIR) && npm ci --no-audit --no-fund --ignore-scripts
	@touch $@

# --- tests ----------------------------------------------------------------

export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1

unit: $(UNIT_BIN)
	CMOCKA_MESSAGE_OUTPUT=TAP prove $(PROVE_FLAGS) $(UNIT_BIN)

integration: $(PROGS) $(QEMU_HELPER) $(SSH_HELPER) $(BUILD)/bench-api $(TREX_STANDIN)
	BUILD=$(abspath $(BUILD)) prove $(PROVE_FLAGS) tests/t[0-9]*.sh

# Unit and integration tests in one prove run: one summary at the end.
# TESTS picks the integration tests (all by default).
INT_TESTS := $(sort $(wildcard tests/t[0-9]*.sh))
TESTS     ?= $(INT_TESTS)
TEST_BINS := $(UNIT_BIN) $(PROGS) $(QEMU_HELPER) $(SSH_HELPER) $(BUILD)/bench-api $(BUILD)/replay-job $(BUILD)/bench-bisect $(TREX_STANDIN)
test-bins: $(TEST_BINS)
# PROVE_JOBS=N runs N tests at once; PROVE_RULES, prove's --rules (each
# a seq= or par= glob), which of them may run beside which.
PROVE_JOBS ?=
PROVE_RULES ?=
UNITS ?= $(UNIT_BIN)
check-one: $(TEST_BINS)
	CMOCKA_MESSAGE_OUTPUT=TAP BUILD=$(abspath $(BUILD)) prove $(PROVE_FLAGS) $(if $(PROVE_JOBS),-j$(PROVE_JOBS)) \
		$(foreach r,$(PROVE_RULES),'--rules=$(r)') $(UNITS) $(TESTS)

# The long tests, whose time is waiting (leases, retirement, QEMU boots
# under TCG): they run once, in the sanitized pass, where a memory error
# in the daemon or the agent on their paths is also caught. Every other
# test runs in both passes.
LONG_TESTS := tests/t0012-stalls.sh $(wildcard tests/t01[0-9][0-9]-*.sh)

# The test that times the real demo bench, t0001 (the flow of make demo):
# each pass runs it first, alone (17-18 s). Beside the three chains below
# its runs were preempted often enough to need several times as many: 93 s
# in the plain pass and 164 s sanitized, where it took 17 and 25 beside
# one other chain.
SOLO_TESTS := tests/t0001-demo-flow.sh

# The tests whose time is mostly waiting: leases, retirement, slow
# clients, stand-ins' fixed-length runs (tests/lib/standin-bench.sh and
# others), kexec reboots played by a stand-in, an sshd device under QEMU
# (under half their wall time on the CPU, measured alone: t0016 3.7 s of
# 43.6, t0012 25.9 of 128, t0008 7.9 of 10.3). Every pass runs them in
# two chains, one test at a time each, beside a third chain of all the
# others, which holds the tests that time a CPU workload beside t0001
# (perf's in t0017), so that no two of those share the cores. The chains are evened for the sanitized pass, the longer one,
# where t0012 and t0103 run first in theirs (docs/HISTORY.md has the
# figures).
WAIT_A := $(addprefix tests/,t0012-stalls.sh t0003-leases.sh t0004-engine-vs-split.sh t0008-reports.sh \
	t0009-auth.sh t0010-tls.sh t0011-connections.sh t0021-claim-handoff.sh t0027-cancel.sh)
WAIT_B := $(addprefix tests/,t0103-ssh.sh t0006-dashboard.sh t0007-charts.sh t0015-kexec.sh \
	t0016-trex.sh t0022-kexec-profile.sh)
comma := ,
empty :=
space := $(empty) $(empty)
chain = seq={$(subst $(space),$(comma),$(strip $(1)))}
CHAINS := $(call chain,$(WAIT_A)) $(call chain,$(WAIT_B)) seq=**

# The builds use every core. Each pass runs t0001 alone, then its other
# tests in the three chains above, three at once; the sanitized pass takes
# the long tests first in theirs (the tests hold on a busy machine).
NPROC := $(shell nproc 2>/dev/null || echo 2)
check: deps
	$(MAKE) -j$(NPROC) WERROR=1 test-bins
	$(MAKE) WERROR=1 check-one UNITS= TESTS="$(SOLO_TESTS)"
	$(MAKE) WERROR=1 check-one PROVE_JOBS=3 PROVE_RULES="$(CHAINS)" \
		TESTS="$(filter-out $(LONG_TESTS) $(SOLO_TESTS),$(INT_TESTS))"
	$(MAKE) -j$(NPROC) WERROR=1 SANITIZE=address,undefined test-bins
	$(MAKE) WERROR=1 SANITIZE=address,undefined check-one UNITS= TESTS="$(SOLO_TESTS)"
	$(MAKE) WERROR=1 SANITIZE=address,undefined check-one PROVE_JOBS=3 PROVE_RULES="$(CHAINS)" \
		TESTS="$(LONG_TESTS) $(filter-out $(LONG_TESTS) $(SOLO_TESTS),$(INT_TESTS))"

demo: deps
	$(MAKE) all
	BUILD=$(abspath $(BUILD)) sh tests/lib/demo.sh

# The kernel lab (tests/kernel/klab.sh): a real kernel history bisected by
# two agents under QEMU. Long: the first kernel build alone is about 12
# minutes on 2 cores, so it is not part of make check.
demo-kernel: deps-kernel
	$(MAKE) all
	BUILD=$(abspath $(BUILD)) sh tests/kernel/klab.sh

check-kernel: deps-kernel
	$(MAKE) WERROR=1 all
	BUILD=$(abspath $(BUILD)) prove $(PROVE_FLAGS) --exec sh tests/kernel/klab.sh :: --check

# The guest lab (tests/guest/*.sh): boot methods and workloads run for
# real in QEMU guests under TCG (a device under test over ssh, kexec inside
# a guest, xdp-bench and perf in a guest). Minutes each, so not part of
# make check; each test says what it needs and skips without it.
check-guest: deps
	$(MAKE) WERROR=1 all $(QEMU_HELPER) $(SSH_HELPER)
	BUILD=$(abspath $(BUILD)) prove $(PROVE_FLAGS) tests/guest/*.sh

# --- fuzz -----------------------------------------------------------------

# libFuzzer targets (tests/fuzz/, docs/TESTING.md) built by Debian's clang
# with ASan+UBSan into $(FUZZ_BUILD)/, each run for FUZZ_SECONDS from the
# committed seeds (tests/fuzz/corpus/TARGET/, read only) and the inputs kept
# from past findings (tests/fuzz/regress/TARGET/); what a run adds goes to
# $(FUZZ_BUILD)/corpus/TARGET/, a crash to $(FUZZ_BUILD)/crashes/TARGET/.
# The same targets compiled by cc replay both folders in make check
# (tests/unit/test_fuzz_regress.c). FUZZ_TARGETS=fuzz_conf runs one.
FUZZ_ALL     := fuzz_api fuzz_conf fuzz_console fuzz_csv fuzz_iperf3 fuzz_kconfig fuzz_pktgen fuzz_taskwire fuzz_workload \
               fuzz_trex fuzz_perfreport fuzz_journal fuzz_xdp
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_SECONDS ?= 30
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang-14
FUZZ_FLAGS   ?=
DEB_FUZZ     := clang-14 libclang-rt-14-dev

# Each target's entry point: LLVMFuzzerTestOneInput under libFuzzer, else NAME_one.
$(BUILD)/obj/tests/fuzz/%.o: ALL_CFLAGS += -iquote tests/fuzz \
	$(if $(FUZZ_ENGINE),,-DFUZZ_ENTRY=$(basename $(notdir $@))_one)
$(BUILD)/tests/test_fuzz_regress: $(call obj,$(FUZZ_ALL:%=tests/fuzz/%.c) bisectd/daemon/api_req.c agents/qemu_guest.c agents/journal.c)

$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $(filter %.o,$^) $(LIB) $(LIBS)
$(BUILD)/fuzz/fuzz_api: $(call obj,bisectd/daemon/api_req.c)
$(BUILD)/fuzz/fuzz_console: $(call obj,agents/qemu_guest.c)
$(BUILD)/fuzz/fuzz_journal: $(call obj,agents/journal.c)

deps-fuzz:
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(DEB_PKGS) $(DEB_FUZZ)"

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) FUZZ_ENGINE=libfuzzer SANITIZE=address,undefined \
	  CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz/%)

fuzz: deps-fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@failed=""; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/crashes/$$t; \
	  dirs="$(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t"; \
	  [ -d tests/fuzz/regress/$$t ] && dirs="$$dirs tests/fuzz/regress/$$t"; \
	  dict=""; [ -f tests/fuzz/$$t.dict ] && dict="-dict=tests/fuzz/$$t.dict"; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  if ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 $$dict \
	    -artifact_prefix=$(FUZZ_BUILD)/crashes/$$t/ $(FUZZ_FLAGS) $$dirs > $(FUZZ_BUILD)/$$t.log 2>&1; then \
	    grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' $(FUZZ_BUILD)/$$t.log | \
	      sed 's/stat:://; s/  */ /g' | tr '\n' ' '; echo; \
	  else \
	    grep -E -A12 '^==[0-9]+==|^tests/fuzz/|^SUMMARY' $(FUZZ_BUILD)/$$t.log | head -n 40; \
	    echo "fuzz: $$t FAILED: the input is in $(FUZZ_BUILD)/crashes/$$t/, the log $(FUZZ_BUILD)/$$t.log"; \
	    failed="$$failed $$t"; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi; echo "fuzz: no failure"

clean: clean-fuzz
clean-fuzz:
	rm -rf $(FUZZ_BUILD)

# The config loader against its number of keys (docs/TESTING.md).
$(BUILD)/bench-conf: $(BUILD)/obj/tests/bench/bench_conf.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
bench-conf: $(BUILD)/bench-conf
	$(BUILD)/bench-conf $(BENCH_CONF_SIZES)

.PHONY: test-bins deps-fuzz fuzz-build fuzz clean-fuzz bench-conf

clean:
	rm -rf build build-san bisectd/lib/schema_sql.c bisectd/daemon/web_assets.c bisectd/lib/plot_gp.c

.PHONY: all deps deps-browser deps-kernel unit integration check-one check demo demo-kernel check-kernel check-guest clean bench-bisect bench-lab bench-api record-noise
.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
