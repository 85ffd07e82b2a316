# pipe - one non-recursive GNU Makefile.
#
#   make            build build/pipe and every plugin under build/plugins
#   make demo       install build deps if missing, build, record, report
#   make test       deps, then the whole suite on the normal build and on
#                   an ASan+UBSan build (build-asan/), and the threaded
#                   tests on a ThreadSanitizer build (build-tsan/): the
#                   three builds in one make, their cases in one run
#   make check      the ASan+UBSan half alone
#   make tsan       the ThreadSanitizer part alone
#   make bench      benchmarks (tests/bench), not part of make test
#   make fuzz       libFuzzer runs of every harness in tests/fuzz
#                   (build-fuzz/, clang; FUZZ_SECONDS each, default 60)
#   make fuzz-fast  the same without ASan (build-fuzz-fast/, UBSan only):
#                   several times the executions a second, for long runs
#   make install PREFIX=/usr/local

BUILD ?= build
PREFIX ?= /usr/local
SAN ?=
CC ?= cc
# the sanitizer builds compile with line tables only (-g1: their reports
# still name file and line), ASan+UBSan at -O1 as ASan's own docs advise
# (what they catch does not need -O2): 40% of their compile time
ifeq ($(SAN),thread)
CFLAGS ?= -O2 -g1
else ifeq ($(SAN),1)
CFLAGS ?= -O1 -g1
endif
CFLAGS ?= -O2 -g
WARN := -std=c11 -Wall -Wextra -Werror -Wpedantic -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
	-Wwrite-strings -Wvla -Wformat=2 -Wundef
# SAN=1: AddressSanitizer and UBSan; SAN=thread: ThreadSanitizer;
# SAN=undefined: UBSan alone (the fast fuzzing build)
ifeq ($(SAN),thread)
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
else ifeq ($(SAN),undefined)
SANFLAGS := -fsanitize=undefined -fno-sanitize-recover=all
else ifneq ($(SAN),)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
endif
# FUZZER=1 (clang): coverage for libFuzzer, and checksums that always
# match, so that mutated files reach the parsers behind them
ifneq ($(FUZZER),)
SANFLAGS += -fsanitize=fuzzer-no-link \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
endif
BASE_CFLAGS := $(WARN) -D_GNU_SOURCE $(SANFLAGS) -MMD -MP
# the folders of build/pipe, each included by the file name of its
# headers (docs/architecture.md: what each may use); plugins see the
# installed header, lib/ and formats/ only
CORE_DIRS := lib record symbolizer core container bus cmd
CORE_CFLAGS := $(BASE_CFLAGS) -Iinclude/pipe $(CORE_DIRS:%=-I%) \
	-include lib/banned.h -pthread
PLUGIN_CFLAGS := $(BASE_CFLAGS) -Iinclude/pipe -Ilib -Iformats \
	-include lib/banned.h -fPIC -fvisibility=hidden

HASH := \#
# a library is there when its header is (Debian's -dev packages ship both);
# only the preprocessor runs, so parallel makes never race on an output
have = $(shell printf '$(HASH)include <$(1)>\n' | \
	$(CC) -E -x c - >/dev/null 2>&1 && echo y)

# ---- core: build/pipe ------------------------------------------------------
# debug files fetched from debuginfod servers, where libdebuginfod is there
# (opened with dlopen when a server is named, not linked: see dbgfetch.c)
ifeq ($(call have,elfutils/debuginfod.h),y)
CORE_CFLAGS += -DHAVE_DEBUGINFOD=1
else
CORE_CFLAGS += -DHAVE_DEBUGINFOD=0
endif
# MiniDebugInfo (.gnu_debugdata) inflated where liblzma is there
ifeq ($(call have,lzma.h),y)
CORE_CFLAGS += -DHAVE_LZMA=1
LZMA_LIBS := -llzma
else
CORE_CFLAGS += -DHAVE_LZMA=0
endif
# lib/: helpers the core shares with plugins, which link their own copy
CORE_SRCS := $(filter-out cmd/pipe.c,$(foreach d,$(CORE_DIRS),$(wildcard $(d)/*.c)))
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/obj/%.o)
# the same in one archive for the unit tests and fuzzing harnesses: each
# links only the objects it uses (and theirs), a smaller, faster link
CORE_LIB := $(BUILD)/obj/core.a
CORE_LIBS := -ldw -lelf $(LZMA_LIBS) -lxxhash -liberty -ldl -lm -pthread

# ---- plugins ------------------------------------------------------------------
# A plugin is one file (sources/src_NAME.c, codecs/codec_NAME.c,
# sinks/sink_NAME.c) or the files of one folder (sources/NAME/ makes
# src_NAME, codecs/NAME/ codec_NAME, sinks/NAME/ sink_NAME).
PLUGIN_FILES := $(wildcard sources/*.c sinks/*.c codecs/*.c)
PLUGIN_FOLDERS := $(sort $(patsubst %/,%,$(dir $(wildcard sources/*/*.c \
	sinks/*/*.c codecs/*/*.c))))
prefix_sources := src_
prefix_sinks := sink_
prefix_codecs := codec_
folder_name = $(prefix_$(patsubst %/,%,$(dir $(1))))$(notdir $(1))
$(foreach f,$(PLUGIN_FILES),$(eval SRCS_$(basename $(notdir $(f))) := $(f)))
$(foreach d,$(PLUGIN_FOLDERS),$(eval SRCS_$(call folder_name,$(d)) := \
	$(wildcard $(d)/*.c)))
PLUGIN_NAMES := $(basename $(notdir $(PLUGIN_FILES))) \
	$(foreach d,$(PLUGIN_FOLDERS),$(call folder_name,$(d)))
LIBS_codec_zlib := -lz
LIBS_codec_lzma := -llzma
LIBS_codec_zstd := -lzstd
LIBS_src_synth := -lelf
NEED_codec_zlib := zlib.h
NEED_codec_lzma := lzma.h
NEED_codec_zstd := zstd.h
# files a plugin shares: format code under formats/, the helpers of lib/
EXTRA_sink_json := lib/jsonw.c lib/sideband.c lib/fdio.c lib/addrcache.c
EXTRA_sink_file := lib/fdio.c
EXTRA_src_file := lib/fdio.c
EXTRA_src_perf := lib/sideband.c lib/fdio.c lib/grow.c
EXTRA_src_perfdata := formats/pdread.c formats/pdmeta.c lib/sideband.c \
	lib/fdio.c lib/grow.c
LIBS_src_perfdata := -lzstd
NEED_src_perfdata := zstd.h
EXTRA_sink_perfdata := formats/pdwrite.c formats/buildid.c lib/fdio.c lib/grow.c \
	lib/sideband.c lib/itab.c lib/strtab.c
LIBS_sink_perfdata := -lzstd
NEED_sink_perfdata := zstd.h
# pprof: the schema in formats/profile.proto, compiled by protoc-c
EXTRA_sink_pprof := formats/pprof.c formats/buildid.c lib/fdio.c lib/itab.c \
	lib/frames.c lib/sideband.c lib/grow.c lib/strtab.c lib/addrcache.c
EXTRA_sink_report := lib/frames.c lib/jsonw.c lib/itab.c lib/grow.c \
	lib/addrcache.c
GEN_sink_pprof := $(BUILD)/obj/gen/profile.pb-c.o
LIBS_sink_pprof := -lprotobuf-c -lz
NEED_sink_pprof := protobuf-c/protobuf-c.h
TOOL_sink_pprof := protoc-c
# a plugin whose library is missing is skipped with a message
tool_ok = $(if $(TOOL_$(1)),$(shell command -v $(TOOL_$(1)) >/dev/null && echo y),y)
plugin_ok = $(and $(if $(NEED_$(1)),$(call have,$(NEED_$(1)),$(LIBS_$(1))),y),$(call tool_ok,$(1)))
PLUGINS := $(foreach n,$(PLUGIN_NAMES),$(if $(call plugin_ok,$(n)),$(BUILD)/plugins/$(n).so))
SKIPPED := $(strip $(foreach n,$(PLUGIN_NAMES),$(if $(call plugin_ok,$(n)),,$(n))))
# a plugin's objects: build/obj/plugins/ mirrors the tree
plugin_objs = $(patsubst %.c,$(BUILD)/obj/plugins/%.o,$(SRCS_$(1)) \
	$(EXTRA_$(1))) $(GEN_$(1))

# ---- tests --------------------------------------------------------------------
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TESTPLUGIN_SRCS := $(wildcard tests/plugins/*.c)
TESTPLUGINS := $(TESTPLUGIN_SRCS:tests/plugins/%.c=$(BUILD)/tests/plugins/%.so)
# the SDK's example sinks, one folder each, built in-tree for the tests
EXAMPLE_SRCS := $(wildcard examples/*/*.c)
EXAMPLE_NAMES := $(notdir $(patsubst %/,%,$(dir $(EXAMPLE_SRCS))))
EXAMPLES := $(foreach s,$(EXAMPLE_SRCS),$(BUILD)/examples/$(basename $(notdir $(s))).so)
# the examples again, built against the kept copy of each released header
# (tests/abi/MAJOR.MINOR/), and a host whose structs grew as a later
# minor's would: plugins of a minor must run on every later host
KEPT_ABIS := $(notdir $(wildcard tests/abi/[0-9]*))
KEPT_SRCS := $(EXAMPLE_SRCS) tests/abi/probe.c
KEPT_PLUGINS := $(foreach a,$(KEPT_ABIS),$(foreach s,$(KEPT_SRCS),$(BUILD)/tests/abi/$(a)/$(basename $(notdir $(s))).so))
GROWN_OBJS := $(CORE_SRCS:%.c=$(BUILD)/grown/obj/%.o) $(BUILD)/grown/obj/cmd/pipe.o
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
# fuzzing harnesses: with driver.c in every build (the smoke run of make
# test), with libFuzzer in a FUZZER=1 build; one per built codec
# (the perf.data reader's needs libzstd, as the perfdata plugins do)
FUZZ_NAMES := $(filter-out codec $(if $(call have,zstd.h),,pdread),$(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_CODECS := $(patsubst $(BUILD)/plugins/codec_%.so,%,$(filter $(BUILD)/plugins/codec_%,$(PLUGINS)))
FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%) \
	$(FUZZ_CODECS:%=$(BUILD)/fuzz/fuzz_codec_%)
FUZZ_CFLAGS = $(CORE_CFLAGS) -Itests/fuzz -Itests/unit \
	-DFUZZ_PLUGIN_DIR='"$(abspath $(BUILD))/plugins"'
ifneq ($(FUZZER),)
# -rdynamic: the codec plugins the harnesses load find libFuzzer's
# coverage symbols (ASan's runtime exports them on its own; UBSan's not)
FUZZ_MAIN := -fsanitize=fuzzer -rdynamic
FUZZ_DRIVER :=
else
# compiled once, linked into every harness
FUZZ_DRIVER := $(BUILD)/obj/tests/fuzz/driver.o
FUZZ_MAIN := $(FUZZ_DRIVER)
endif
FUZZ_SECONDS ?= 60

.PHONY: all deps demo test check tsan bench install clean plugins tests \
	fuzz fuzz-fast fuzz-bins test-build-normal test-build-asan test-build-tsan
all: $(BUILD)/pipe plugins $(BUILD)/plugins.conf
	$(if $(SKIPPED),@echo "note: skipped plugins (library missing): $(SKIPPED)")

plugins: $(PLUGINS)

$(BUILD)/pipe: $(BUILD)/obj/cmd/pipe.o $(CORE_OBJS)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $^ $(LDFLAGS) $(CORE_LIBS)

define core_rule
$(BUILD)/obj/$(1)/%.o: $(1)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $$(CORE_CFLAGS) -c -o $$@ $$<
endef
$(foreach d,$(CORE_DIRS),$(eval $(call core_rule,$(d))))

# every file a plugin links (lib/ again, as plugins compile it)
$(BUILD)/obj/plugins/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PLUGIN_CFLAGS) -I$(BUILD)/gen -c -o $@ $<

# code generated from a schema under formats/
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: formats/%.proto
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(BUILD)/gen --proto_path=formats $<
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PLUGIN_CFLAGS) -I$(BUILD)/gen -c -o $@ $<
$(BUILD)/obj/plugins/formats/pprof.o: $(BUILD)/gen/profile.pb-c.h

$(foreach n,$(PLUGIN_NAMES),$(eval $(BUILD)/plugins/$(n).so: \
	$(call plugin_objs,$(n))))
$(BUILD)/plugins/%.so:
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -shared -o $@ $^ $(LDFLAGS) $(LIBS_$*)

.PRECIOUS: $(BUILD)/obj/plugins/%.o \
	$(BUILD)/obj/gen/%.o $(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h

# the plugins.conf beside the binary: the repository's, paths made local
$(BUILD)/plugins.conf: plugins.conf
	@mkdir -p $(dir $@)
	sed 's|build/plugins/|plugins/|' $< > $@

tests: all $(UNIT_BINS) $(TESTPLUGINS) $(EXAMPLES) $(KEPT_PLUGINS) \
	$(BUILD)/grown/pipe $(BUILD)/grown/plugins.conf $(BUILD)/tests/workloads.stamp \
	$(BUILD)/tests/fixtures.stamp $(FUZZ_BINS) $(BUILD)/tests/malloc_fail.so

$(BUILD)/fuzz/fuzz_codec_%: tests/fuzz/fuzz_codec.c $(FUZZ_DRIVER) \
		$(CORE_LIB) $(BUILD)/plugins/codec_%.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FUZZ_CFLAGS) -DFUZZ_CODEC='"$*"' -o $@ $< \
		$(FUZZ_MAIN) $(CORE_LIB) $(LDFLAGS) $(CORE_LIBS)

PDREAD_OBJS := $(BUILD)/obj/plugins/formats/pdread.o \
	$(BUILD)/obj/plugins/formats/pdmeta.o $(BUILD)/obj/plugins/lib/fdio.o \
	$(BUILD)/obj/plugins/lib/sideband.o $(BUILD)/obj/plugins/lib/grow.o
$(BUILD)/fuzz/fuzz_pdread: tests/fuzz/fuzz_pdread.c $(FUZZ_DRIVER) \
		$(PDREAD_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FUZZ_CFLAGS) -Iformats -o $@ $< $(FUZZ_MAIN) \
		$(PDREAD_OBJS) $(LDFLAGS) -lzstd

$(BUILD)/obj/tests/fuzz/driver.o: tests/fuzz/driver.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DRIVER) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_MAIN) $(CORE_LIB) \
		$(LDFLAGS) $(CORE_LIBS)

$(CORE_LIB): $(CORE_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/tests/test_%: tests/unit/test_%.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_CFLAGS) -Itests/unit -o $@ $^ $(LDFLAGS) $(CORE_LIBS)

# test_codecs compares the zstd plugin's frames with libzstd's own
$(BUILD)/tests/test_codecs: CORE_LIBS += -lzstd

# the container tests, one binary per concern, share tests/unit/ctest.c
$(BUILD)/obj/tests/unit/ctest.o: tests/unit/ctest.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_CFLAGS) -Itests/unit -c -o $@ $<

$(BUILD)/tests/test_container_%: tests/unit/test_container_%.c \
		$(BUILD)/obj/tests/unit/ctest.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_CFLAGS) -Itests/unit -o $@ $^ $(LDFLAGS) $(CORE_LIBS)

# e2e/0016's allocation-failure shim, without the sanitizers: it hands
# every call on to the allocator after it, a sanitizer's included
$(BUILD)/tests/malloc_fail.so: tests/tools/malloc_fail.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -D_GNU_SOURCE -fPIC -shared -o $@ $< -ldl

$(BUILD)/tests/plugins/%.so: tests/plugins/%.c include/pipe/pipe_plugin.h $(wildcard tests/plugins/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PLUGIN_CFLAGS) -shared -o $@ $<

$(BUILD)/examples/%.so: examples/*/%.c include/pipe/pipe_plugin.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PLUGIN_CFLAGS) -shared -o $@ $<

# -I of the kept header only: the examples include "pipe_plugin.h"
define kept_rule
$(BUILD)/tests/abi/$(1)/$(basename $(notdir $(2))).so: $(2) tests/abi/$(1)/pipe_plugin.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $$(BASE_CFLAGS) -Itests/abi/$(1) -fPIC \
		-fvisibility=hidden -shared -o $$@ $$<
endef
$(foreach a,$(KEPT_ABIS),$(foreach s,$(KEPT_SRCS),$(eval $(call kept_rule,$(a),$(s)))))

# only the files that include pipe_plugin.h (their normal object's
# dependency file says so) differ on the grown host: the others are
# the normal objects, not compiled a second time
GROWN_CC = $(CC) $(CFLAGS) $(CORE_CFLAGS) -DPIPE_TEST_ABI_GROW \
	-Wno-missing-field-initializers
$(BUILD)/grown/obj/%.o: %.c $(BUILD)/obj/%.o
	@mkdir -p $(dir $@)
	@if grep -q 'pipe_plugin\.h' $(BUILD)/obj/$*.d; then \
		echo "$(GROWN_CC) -c -o $@ $<"; \
		$(GROWN_CC) -c -o $@ $<; \
	else \
		cp $(BUILD)/obj/$*.o $@; \
	fi

$(BUILD)/grown/pipe: $(GROWN_OBJS)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $^ $(LDFLAGS) $(CORE_LIBS)

# the grown host runs the bundled plugins, built against this header
$(BUILD)/grown/plugins.conf: plugins.conf
	@mkdir -p $(dir $@)
	sed 's|build/plugins/|../plugins/|' $< > $@

# bundled workloads: frame pointers on, no sanitizers (they are profiled)
$(BUILD)/tests/workloads.stamp: $(wildcard tests/workloads/*) 
	@mkdir -p $(BUILD)/tests/workloads
	$(MAKE) -s -C tests/workloads OUT=$(abspath $(BUILD)/tests/workloads)
	@touch $@

# symbolizer fixtures: stripped, PIE, C++, debug files, the known split
$(BUILD)/tests/fixtures.stamp: $(wildcard tests/fixtures/*)
	@mkdir -p $(BUILD)/tests/fixtures
	$(MAKE) -s -C tests/fixtures OUT=$(abspath $(BUILD)/tests/fixtures)
	@touch $@

deps:
	@tests/tools/install-deps.sh

demo: deps
	$(MAKE) -j2 all $(BUILD)/tests/workloads.stamp
	@tests/tools/demo.sh $(BUILD)

# The three builds share make's two job slots (no build's last link
# steps leave a core idle), then one run packs all their cases, longest
# first.  The sub-makes get no -j: they take their slots from this one.
test: deps
	$(MAKE) -j2 test-build-asan test-build-normal test-build-tsan
	@tests/run.sh build build-asan build-tsan:$(TSAN_LIST)

test-build-normal:
	$(MAKE) tests
test-build-asan:
	$(MAKE) BUILD=build-asan SAN=1 tests
test-build-tsan:
	$(MAKE) BUILD=build-tsan SAN=thread all \
		$(TSAN_UNITS:%=build-tsan/tests/%) build-tsan/tests/workloads.stamp

check: deps
	$(MAKE) -j2 BUILD=build-asan SAN=1 tests
	@tests/run.sh build-asan

# the tests that run threads (parallel block decoding, the recorder),
# again under ThreadSanitizer (tests/run.sh sets halt_on_error: a data
# race stops the program and fails the case; the unit tests run only
# their threaded checks there)
TSAN_UNITS := test_container_reader test_container_damage \
	test_container_encoder
TSAN_TESTS := $(TSAN_UNITS:%=unit/%) e2e/0203- e2e/0206- e2e/1000- \
	e2e/1009- e2e/1011-
comma := ,
empty :=
space := $(empty) $(empty)
TSAN_LIST := $(subst $(space),$(comma),$(strip $(TSAN_TESTS)))
tsan: deps
	$(MAKE) -j2 test-build-tsan
	@tests/run.sh build-tsan:$(TSAN_LIST)

fuzz: deps
	$(MAKE) -j2 tests
	$(MAKE) -j2 BUILD=build-fuzz CC=clang SAN=1 FUZZER=1 all fuzz-bins
	@tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# long campaigns: no ASan (an out-of-bounds read that does not crash
# goes unseen), several times the executions; replay what it finds, and
# its corpus, on build-fuzz
fuzz-fast: deps
	$(MAKE) -j2 tests
	$(MAKE) -j2 BUILD=build-fuzz-fast CC=clang SAN=undefined FUZZER=1 all \
		fuzz-bins
	@tests/fuzz/run.sh build-fuzz-fast $(FUZZ_SECONDS)

fuzz-bins: $(FUZZ_BINS)

bench: deps
	$(MAKE) -j2 tests
	@tests/bench/run.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pipe/plugins \
		$(DESTDIR)$(PREFIX)/include/pipe $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(BUILD)/pipe $(DESTDIR)$(PREFIX)/bin/pipe
	install -m 644 $(PLUGINS) $(DESTDIR)$(PREFIX)/lib/pipe/plugins/
	sed 's|build/plugins/|plugins/|' plugins.conf > $(DESTDIR)$(PREFIX)/lib/pipe/plugins.conf
	install -m 644 include/pipe/pipe_plugin.h $(DESTDIR)$(PREFIX)/include/pipe/pipe_plugin.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' pipe-plugin.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/pipe-plugin.pc
	install -d $(DESTDIR)$(PREFIX)/share/doc/pipe
	install -m 644 README.md $(filter-out docs/README.md,$(wildcard docs/*.md)) \
		$(DESTDIR)$(PREFIX)/share/doc/pipe/
	install -d $(DESTDIR)$(PREFIX)/share/pipe/examples
	install -m 644 examples/README.md examples/example.mk $(DESTDIR)$(PREFIX)/share/pipe/examples/
	for d in $(EXAMPLE_NAMES); do \
		install -d $(DESTDIR)$(PREFIX)/share/pipe/examples/$$d && \
		install -m 644 examples/$$d/*.c examples/$$d/Makefile \
			$(DESTDIR)$(PREFIX)/share/pipe/examples/$$d/ || exit 1; \
	done

clean:
	rm -rf build build-asan build-tsan build-fuzz build-fuzz-fast

-include $(shell find $(BUILD)/obj $(BUILD)/grown/obj -name '*.d' 2>/dev/null)
