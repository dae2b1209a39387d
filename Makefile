# attnviz — see `make help`.
CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
SAN     ?= 0
TSAN    ?= 0
OPT     ?= -O2

# PCRE2: tokenizer.json's split patterns (Llama 3's, Qwen2's; the tests also
# run GPT-2's pattern by it beside src/core/bpe_split.c's hand-written split)
# (one line: tests/const.sh reads it)
PKGS      := sdl2 SDL2_ttf SDL2_image cglm libcjson fontconfig x11 zlib libzip libutf8proc libpcre2-8
TEST_PKGS := cmocka
# Debian packages that provide the compiler, the libraries and tools above
# and the fonts (a minimal Debian has make and git, no C compiler;
# fonts-noto-cjk draws Chinese, Japanese and Korean text, fonts-symbola
# emoji and symbols, in outline: SDL_ttf draws it at any size).
DEB_BUILD := gcc libc6-dev pkg-config libsdl2-dev libsdl2-ttf-dev libsdl2-image-dev libcglm-dev \
             libcjson-dev libfontconfig-dev libx11-dev zlib1g-dev libzip-dev libutf8proc-dev libpcre2-dev \
             fonts-dejavu-core fonts-noto-cjk fonts-symbola
DEB_TEST  := libcmocka-dev xvfb xdotool imagemagick libxml2-utils python3-numpy valgrind \
             librsvg2-bin
DEB_FUZZ  := clang libclang-rt-14-dev

ifeq ($(SAN)$(TSAN),11)
  $(error SAN=1 and TSAN=1 do not combine: run them one after the other)
endif
CFLAGS_BASE := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $(OPT) \
               -Iinclude -MMD -MP
ifeq ($(SAN),1)
  CFLAGS_BASE += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS     += -fsanitize=address,undefined
  BUILD := build/san
else ifeq ($(TSAN),1)
  CFLAGS_BASE += -fsanitize=thread -fno-omit-frame-pointer
  LDFLAGS     += -fsanitize=thread
  BUILD := build/tsan
else
  BUILD := build/obj
endif
ifeq ($(NATIVE),1)
  CFLAGS_BASE += -O3 -march=native
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# X11 only for its headers (platform_desktop.c finds the calls in SDL's libX11)
PKG_LIBS   = $(shell pkg-config --libs $(filter-out x11,$(PKGS)) 2>/dev/null)
TEST_LIBS = $(shell pkg-config --libs $(TEST_PKGS) 2>/dev/null)
CFLAGS  += $(CFLAGS_BASE)
# link only the libraries the program calls: fewer to load at start-up
LDFLAGS += -Wl,--as-needed
LDLIBS  += -lm -lpthread

# background_single.c (the one-thread web page's) and file_map_web.c (both pages'): tools/web/web.mk
CORE_SRC := $(filter-out src/core/background_single.c src/io/file_map_web.c,$(wildcard src/core/*.c src/io/*.c))
# the browser's platform file is the web build's (make web), not the desktop's
UI_SRC   := $(filter-out src/app/platform_web.c,$(wildcard src/view/*.c src/app/*.c src/app/sources/*.c src/app/lm/*.c))
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
UI_OBJ   := $(UI_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/main.o
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
# the core alone (tests/core_only.c): src/core's objects with libm,
# pthreads, utf8proc (the Unicode categories of GPT-2's pre-tokenizer) and
# PCRE2 (tokenizer.json's split patterns) only, no SDL, cJSON, zlib or src/io; tests/layers.sh runs it
CORE_ONLY_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(filter-out src/core/background_single.c,$(wildcard src/core/*.c)))
CORE_ONLY     := $(BUILD)/tests/core_only

BIN := build/attnviz
ifeq ($(SAN),1)
  BIN := build/attnviz-san
endif
ifeq ($(TSAN),1)
  BIN := build/attnviz-tsan
endif
# the suites that start threads, which TSAN=1 runs: the forward passes'
# second thread (workers.c: attention, GPT-2 and the Llama family), background
# work, the model source's worker in the window (also under the head roles'
# probe, and the test-only architecture's), the maps made on the two threads
# from the UI thread, the PNG encoder's two halves, the attention rollout's
# matmul thread, a model opened on its own thread (model_opening.c)
THREAD_TESTS := $(patsubst %,$(BUILD)/tests/%,test_attn test_gpt2 test_background test_gpt2_app test_png \
                  test_attnfile test_heads_app test_llama test_lm_llama test_arch_plugin test_runtime \
                  test_families test_lens test_ablate test_lm_window test_norms test_encdec \
                  test_encdec_app test_model_opening)

.PHONY: all run test clean install uninstall man help deps test-deps screenshot bench fuzz soak layers

all: $(BIN)

help:
	@echo "make            build $(BIN)"
	@echo "make run        install missing packages, build, open the window"
	@echo "                (APT_DRY=1: print the apt-get line instead of running it)"
	@echo "make test       install missing packages, build and run every test (SAN=1: ASan+UBSan;"
	@echo "                TSAN=1: the suites that start threads under ThreadSanitizer, in build/tsan)"
	@echo "make bench      speed figures against numpy/matplotlib, written into README.md"
	@echo "make screenshot regenerate the README pictures from the real program"
	@echo "make fuzz       run each libFuzzer target FUZZ_SECONDS (default 60)"
	@echo "make soak       N random events through the real event handler (default 20000)"
	@echo "make layers     the core links alone; core/ and io/ use no screen, core/ and view/ no file"
	@echo "make web        the page in build/web (Debian's emscripten; the libraries built from"
	@echo "                Debian's sources into ~/.cache/attnviz-web); serve: python3 -m http.server -d"
	@echo "                build/web (one thread) or python3 build/web/serve.py (with the worker threads)"
	@echo "make test-web   the core's and io's suites as wasm32 under node (test-web-core, test-web-io)"
	@echo "                and the page in headless Chromium against native frames (test-web-page)"
	@echo "make web-bench  the toy model's keystroke, native and wasm"
	@echo "make install    install to PREFIX=$(PREFIX) (DESTDIR honoured): the program, its data,"
	@echo "                a .desktop entry, an icon and the man page (from --help)"
	@echo "make uninstall  remove what make install added"
	@echo "make clean      remove build/"

# --- packages: install what is missing (apt-get; sudo when not root) ------
# APT_DRY=1 prints the apt-get line instead of running it (to check this
# logic without installing: make deps APT_DRY=1 DEB_BUILD="gcc no-such-pkg").
APT_DRY ?= 0
define ensure_debs
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "attnviz: not a Debian system; it needs (Debian names):$(foreach p,$(1), $(p))"; exit 0; fi; \
	missing=""; for p in $(1); do \
	  [ "$$(dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null)" = installed ] || missing="$$missing $$p"; done; \
	[ -n "$$missing" ] || exit 0; \
	if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo "; fi; \
	line="$${SUDO}apt-get update && $${SUDO}apt-get install -y --no-install-recommends$$missing"; \
	if [ "$(APT_DRY)" = 1 ]; then echo "attnviz: would run: $$line"; exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1 || { [ -n "$$SUDO" ] && ! command -v sudo >/dev/null 2>&1; }; then \
	  echo "attnviz: missing packages:$$missing; as root run:"; \
	  echo "  apt-get update && apt-get install -y --no-install-recommends$$missing"; exit 1; fi; \
	echo "attnviz: installing$$missing"; \
	$${SUDO}apt-get update -qq && DEBIAN_FRONTEND=noninteractive $${SUDO}apt-get install -y -qq --no-install-recommends $$missing \
	  || { echo "attnviz: could not install the packages; run:"; echo "  $$line"; exit 1; }
endef

deps:
	$(call ensure_debs,$(DEB_BUILD))

test-deps: deps
	$(call ensure_debs,$(DEB_TEST))

# --- build -------------------------------------------------------------------
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

# the attention kernels, the attention file's maps and rollout, the runtime,
# its operations and kernels, every architecture's layer (src/core/arch_*.c)
# and the heatmap's texel loop: vectorised loops
$(BUILD)/src/core/attn.o $(BUILD)/src/core/attn_kernels.o $(BUILD)/src/core/attnfile.o $(BUILD)/src/core/teach.o \
  $(BUILD)/src/core/runtime.o $(BUILD)/src/core/runtime_maps.o $(BUILD)/src/core/ops.o $(BUILD)/src/core/lm_kernels.o \
  $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/core/arch_*.c)) \
  $(BUILD)/src/view/colormap.o: CFLAGS += -O3

$(BIN): $(CORE_OBJ) $(UI_OBJ) $(MAIN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(PKG_LIBS) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(CORE_OBJ) $(UI_OBJ) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(CORE_OBJ) $(UI_OBJ) -o $@ $(PKG_LIBS) $(TEST_LIBS) $(LDLIBS)

$(CORE_ONLY): tests/core_only.c $(CORE_ONLY_OBJ) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(LDFLAGS) $< $(CORE_ONLY_OBJ) -o $@ $(shell pkg-config --libs libutf8proc libpcre2-8 2>/dev/null) -lm -lpthread

$(BUILD)/tests:
	@mkdir -p $@

layers: $(CORE_ONLY)
	ATTNVIZ_CORE_ONLY=$(CORE_ONLY) bash tests/layers.sh

run: deps
	@$(MAKE) --no-print-directory all
	./$(BIN)

test: test-deps
	@$(MAKE) --no-print-directory test-run

.PHONY: test-run
ifeq ($(TSAN),1)
# any ThreadSanitizer report fails the suite (halt_on_error, and the word
# WARNING in its output in case a report does not halt)
test-run: $(BIN) $(THREAD_TESTS)
	@fail=0; for t in $(THREAD_TESTS); do \
	  echo "== $$t (ThreadSanitizer)"; \
	  TSAN_OPTIONS="halt_on_error=1 exitcode=66 $$TSAN_OPTIONS" ATTNVIZ_TEST_ONE_SET=1 SDL_VIDEODRIVER=dummy \
	    ./$$t > $$t.out 2>&1 || fail=1; \
	  cat $$t.out; ! grep -q "WARNING: ThreadSanitizer" $$t.out || fail=1; done; \
	if [ $$fail = 0 ]; then echo "make test TSAN=1: no ThreadSanitizer report, all suites passed"; \
	else echo "make test TSAN=1: FAILED"; exit 1; fi
else
test-run: $(BIN) $(TEST_BIN) $(CORE_ONLY)
	@fail=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; ATTNVIZ_BIN=$(BIN) ATTNVIZ_SOAK_N=$(SOAK_N) SDL_VIDEODRIVER=dummy ./$$t || fail=1; done; \
	for s in tests/*.sh; do [ -f "$$s" ] || continue; \
	  echo "== $$s"; ATTNVIZ_BIN=$(BIN) ATTNVIZ_CORE_ONLY=$(CORE_ONLY) bash $$s || fail=1; done; \
	if [ $$fail = 0 ]; then echo "make test: all suites passed"; else echo "make test: FAILED"; exit 1; fi
endif

# the man page from the program's own --help (one text for both)
MAN := $(BUILD)/attnviz.1
$(MAN): $(BIN) assets/mkman.sh
	sh assets/mkman.sh $(BIN) > $@.tmp && mv $@.tmp $@

man: $(MAN)

# the models that ship with attnviz: nano-sort (llm-viz's sorter) and
# shakespeare-tiny (trained here by tests/tools/shakespeare_tiny/train.py)
SHIPPED_MODELS := assets/models/nano-sort assets/models/shakespeare-tiny

# what `make install` puts under $(DESTDIR)$(PREFIX), and `make uninstall`
# takes away again: exactly these files, and the share/attnviz folder
SHARE := $(DESTDIR)$(PREFIX)/share
INSTALLED := $(DESTDIR)$(PREFIX)/bin/attnviz $(SHARE)/applications/attnviz.desktop \
             $(SHARE)/icons/hicolor/scalable/apps/attnviz.svg $(SHARE)/man/man1/attnviz.1 \
             $(SHARE)/attnviz/embeddings.txt $(addprefix $(SHARE)/attnviz/,$(wildcard sentences/*.txt)) \
             $(addprefix $(SHARE)/attnviz/,$(patsubst assets/%,%,$(wildcard $(addsuffix /*,$(SHIPPED_MODELS)))))

install: $(BIN) $(MAN)
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/attnviz/sentences $(SHARE)/applications \
	  $(SHARE)/icons/hicolor/scalable/apps $(SHARE)/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/attnviz
	install -m 644 assets/embeddings.txt $(SHARE)/attnviz/
	install -m 644 sentences/*.txt $(SHARE)/attnviz/sentences/
	for m in $(SHIPPED_MODELS); do d=$(SHARE)/attnviz/models/$$(basename $$m); \
	  install -d $$d && install -m 644 $$m/* $$d/ || exit 1; done
	install -m 644 assets/attnviz.desktop $(SHARE)/applications/attnviz.desktop
	install -m 644 assets/attnviz.svg $(SHARE)/icons/hicolor/scalable/apps/attnviz.svg
	install -m 644 $(MAN) $(SHARE)/man/man1/attnviz.1

uninstall:
	rm -f $(INSTALLED)
	rmdir $(addprefix $(SHARE)/attnviz/models/,$(notdir $(SHIPPED_MODELS))) $(SHARE)/attnviz/models $(SHARE)/attnviz/sentences \
	  $(SHARE)/attnviz 2>/dev/null || true

FUZZ_SECONDS ?= 60
N ?= 20000
# events in the soak test during `make test` (CI's SAN=1 run does 20,000)
SOAK_N ?= $(if $(filter 1,$(SAN)),20000,3000)

soak: $(BUILD)/tests/test_soak
	ATTNVIZ_SOAK_N=$(N) SDL_VIDEODRIVER=dummy ./$(BUILD)/tests/test_soak

bench: deps
	@$(MAKE) --no-print-directory all
	bash tests/bench/run.sh

fuzz: deps
	$(call ensure_debs,$(DEB_FUZZ))
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh

screenshot: test-deps
	@$(MAKE) --no-print-directory all
	bash tests/tools/screenshot.sh

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# the browser build: make test-web-core (tools/web/web.mk)
include tools/web/web.mk
