# The browser build (issue 39), included by the Makefile: the same sources
# compiled to wasm32 by Debian's emscripten (bookworm: 3.1.6), against
# libraries built from Debian's source packages by tools/web/libs.sh into
# $(WEB_CACHE) (outside the clone; built when missing). So far the core
# and the file readers: `make test-web-core` runs the core's cmocka suites
# under node, `make test-web-io` those of src/io as well (cJSON, zlib,
# libzip), and `make web` writes the page into build/web (SDL2, SDL2_ttf,
# FreeType; the font and the data preloaded into the page's memory) in two
# builds, threaded (attnviz.js) and one-thread (attnviz-st.js), of which
# shell.html loads the one the browser allows.

WEB_CACHE  ?= $(HOME)/.cache/attnviz-web
WEB_PREFIX := $(WEB_CACHE)/prefix
WEB_OBJ    := build/web-obj
# Debian's emcc finds its node modules only with NODE_PATH set
EMCC       := NODE_PATH=/usr/share/nodejs emcc
# node 18 and later have a fetch() that emscripten 3.1.6's loader takes for
# a browser's, and then fails to fetch the .wasm by its file name
WEB_NODE   := node --no-experimental-fetch
# -pthread everywhere: the core's worker threads, and the libraries were
# built with it (tools/web/libs.sh)
# the libraries' headers as system headers: libzip's zip.h fails clang's
# -Wnullability-completeness
# WebAssembly SIMD (-msimd128: Chrome 91, Firefox 89, Safari 16.4 and
# later): clang vectorises the kernels' loops as it does for SSE2 natively,
# the same floats (no reassociation), the toy keystroke 2.5-3× faster
WEB_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O2 -pthread -msimd128 \
              -Iinclude -isystem $(WEB_PREFIX)/include -DUTF8PROC_STATIC -MMD -MP
# cmocka.h would define uintptr_t itself, as unsigned int (wasm32's is
# unsigned long): stdint.h first, and cmocka told it is defined. Clang (not
# gcc) takes a literal split in two (to end a \x escape) in a test's table
# for a missing comma
WEB_TEST_CFLAGS := $(WEB_CFLAGS) -D_UINTPTR_T_DEFINED -include stdint.h -Wno-string-concatenation
# function names in a crash's stack (-g2); main on a worker (PROXY_TO_PTHREAD) so that joining threads does not block
# node's main thread; the host's files as they are (NODERAWFS), the
# fixtures found from the clone as natively
WEB_TEST_LDFLAGS := -g2 -pthread -sPROXY_TO_PTHREAD -sEXIT_RUNTIME=1 -sALLOW_MEMORY_GROWTH=1 \
                    -Wno-pthreads-mem-growth -sNODERAWFS=1 -sENVIRONMENT=node,worker

# background_single.c is the one-thread page's (below)
WEB_CORE_OBJ := $(patsubst %.c,$(WEB_OBJ)/%.o,$(filter-out src/core/background_single.c,$(wildcard src/core/*.c)))
# a vectorised memcmp before emscripten's byte loop (tools/web/memcmp.c)
WEB_CORE_OBJ += $(WEB_OBJ)/tools/web/memcmp.o
# the suites that need nothing but src/core (and PCRE2, utf8proc): those
# that link against the core alone natively
WEB_CORE_TESTS := attnfile bpe gpt2 llama memcmp probe quant runtime score teach tokenizer
WEB_CORE_TEST_JS := $(WEB_CORE_TESTS:%=$(WEB_OBJ)/tests/test_%.js)
WEB_CORE_LIBS := -L$(WEB_PREFIX)/lib -lcmocka -lutf8proc -lpcre2-8

# file_map_web.c on both pages, not file_map.c: a file is read a slice
# at a time, never mmap'd, as emscripten's mmap copies the whole file in
# one call on the browser's main thread (proxied there from the worker that
# opens a model on the threaded page: 128 MB froze the page for 200 ms)
WEB_IO_OBJ := $(patsubst %.c,$(WEB_OBJ)/%.o,$(filter-out src/io/file_map.c,$(wildcard src/io/*.c)))
# the suites that need src/core and src/io but no screen: those that link
# without src/view and src/app natively. Not test_attn_write: its
# full_file_size_limit sets RLIMIT_FSIZE, which emscripten accepts and
# does not enforce. test_attn's three checks in a child skip (no fork()).
WEB_IO_TESTS := attn attnio attnst bpe_files bpe_hf cross embed folder gguf \
                gguf_olmo2 gguf_qwen3 gguf_vocab gpt2_io heads hf_cache json_sliced llama_io model_io \
                model_stores png step teach_io teach_model
WEB_IO_TEST_JS := $(WEB_IO_TESTS:%=$(WEB_OBJ)/tests/io/test_%.js)
WEB_IO_LIBS := -L$(WEB_PREFIX)/lib -lcmocka -lcjson -lzip -lz -lutf8proc -lpcre2-8

.PHONY: web-libs-core web-libs-io web-libs-ui web test-web-core test-web-io test-web
# kept between runs (make would delete them as intermediates of the tests)
.SECONDARY: $(WEB_CORE_OBJ) $(WEB_IO_OBJ) $(WEB_OBJ)/src/app/lm/lm.o

# what tools/web/libs.sh needs (apt-get source unpacks with dpkg-dev's
# dpkg-source; bzip2 and xz for the tarballs; CMake for PCRE2, libzip and
# SDL2), installed when missing as make deps installs
WEB_DEBS := emscripten cmake dpkg-dev bzip2 xz-utils fonts-dejavu-core fonts-noto-cjk fonts-symbola libcglm-dev

web-libs-core:
	$(call ensure_debs,$(WEB_DEBS))
	@command -v emcc >/dev/null 2>&1 || { echo "make test-web-core: emcc not found;" \
	  "install Debian's emscripten: apt-get install -y emscripten"; exit 1; }
	@ATTNVIZ_WEB_CACHE=$(WEB_CACHE) sh tools/web/libs.sh pcre2 utf8proc cmocka

web-libs-io: web-libs-core
	@ATTNVIZ_WEB_CACHE=$(WEB_CACHE) sh tools/web/libs.sh cjson zlib libzip

web-libs-ui: web-libs-io
	@ATTNVIZ_WEB_CACHE=$(WEB_CACHE) sh tools/web/libs.sh sdl2 freetype sdl2_ttf sdl2_image cglm

$(WEB_OBJ)/tools/web/%.o: tools/web/%.c | web-libs-core
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -c $< -o $@

$(WEB_OBJ)/src/core/%.o: src/core/%.c | web-libs-core
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -c $< -o $@

# pkg-config's -I for cJSON names its folder (model_gguf.c includes cJSON.h)
$(WEB_OBJ)/src/io/%.o: src/io/%.c | web-libs-io
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -isystem $(WEB_PREFIX)/include/cjson -c $< -o $@

$(WEB_OBJ)/tests/%.js: tests/%.c $(WEB_CORE_OBJ) | web-libs-core
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_TEST_CFLAGS) $< $(WEB_CORE_OBJ) $(WEB_CORE_LIBS) $(WEB_TEST_LDFLAGS) -o $@

# the program's list of architectures (lm_arch), which test_gguf_qwen3 and
# test_gguf_olmo2 call: plain C, no SDL, so built here without the page's
# libraries
WEB_LM_OBJ := $(WEB_OBJ)/src/app/lm/lm.o
$(WEB_LM_OBJ): src/app/lm/lm.c | web-libs-io
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -isystem $(WEB_PREFIX)/include/cjson -c $< -o $@

$(WEB_OBJ)/tests/io/%.js: tests/%.c $(WEB_CORE_OBJ) $(WEB_IO_OBJ) $(WEB_LM_OBJ) | web-libs-io
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_TEST_CFLAGS) -isystem $(WEB_PREFIX)/include/cjson $< $(WEB_CORE_OBJ) $(WEB_IO_OBJ) \
	  $(WEB_LM_OBJ) $(WEB_IO_LIBS) $(WEB_TEST_LDFLAGS) -o $@

# every suite run, the failures counted at the end ($(1): the target's
# name, $(2): the suites)
define web_run
	@fail=0; for t in $(2); do echo "== $$t (wasm32, node)"; \
	  $(WEB_NODE) $$t || { echo "$$t: FAILED"; fail=1; }; done; \
	if [ $$fail = 0 ]; then echo "make $(1): all $(words $(2)) suites passed"; \
	else echo "make $(1): FAILED"; exit 1; fi
endef

test-web-core: $(WEB_CORE_TEST_JS)
	$(call web_run,test-web-core,$(WEB_CORE_TEST_JS))

test-web-io: $(WEB_IO_TEST_JS)
	$(call web_run,test-web-io,$(WEB_IO_TEST_JS))

# ---- the page -------------------------------------------------------------

# the window's sources as natively, with platform_web.c for the desktop's
WEB_UI_SRC := src/main.c $(filter-out src/app/platform_desktop.c,$(wildcard src/view/*.c \
              src/app/*.c src/app/sources/*.c src/app/lm/*.c))
WEB_UI_OBJ := $(patsubst %.c,$(WEB_OBJ)/%.o,$(WEB_UI_SRC))
WEB_UI_LIBS := -L$(WEB_PREFIX)/lib -lSDL2_ttf -lfreetype -lSDL2 -lcjson -lzip -lz -lutf8proc -lpcre2-8
# what the page reads: the font (Debian's fonts-dejavu-core), the data a
# make install puts under share/attnviz (paths.c finds it through
# ATTNVIZ_DATADIR, set by tools/web/pre.js)
WEB_FONT := /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
WEB_DATA := --preload-file $(WEB_FONT)@/attnviz/fonts/DejaVuSans.ttf \
            --preload-file assets/embeddings.txt@/attnviz/embeddings.txt \
            --preload-file sentences@/attnviz/sentences \
            $(foreach m,$(SHIPPED_MODELS),--preload-file $(m)@/attnviz/$(patsubst assets/%,%,$(m)))
# threads from a pool made before main (a thread made later starts only
# once main's frame returns to the browser: a join would wait forever);
# memory grows as a model needs it, up to wasm32's 4 GB less a page
WEB_LDFLAGS := -O2 -pthread -sPTHREAD_POOL_SIZE=4 -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=64MB \
               -sMAXIMUM_MEMORY=4GB -Wno-pthreads-mem-growth -sENVIRONMENT=web,worker \
               -sTOTAL_STACK=8MB -sDEFAULT_PTHREAD_STACK_SIZE=2MB --pre-js tools/web/pre.js \
               -sEXPORTED_RUNTIME_METHODS=ccall -lidbfs.js

# clang (not gcc) takes a literal split in two (to end a \x escape) in a
# table of strings for a missing comma, as in the tests
$(WEB_OBJ)/src/%.o: src/%.c | web-libs-ui
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) $(WEB_STD) -Wno-string-concatenation -isystem $(WEB_PREFIX)/include/SDL2 -isystem $(WEB_PREFIX)/include/cjson \
	  -c $< -o $@

# EM_ASM (JavaScript inside C) needs the GNU dialect: the one file that has it
$(WEB_OBJ)/src/app/platform_web.o: WEB_STD := -std=gnu11

# (web.mk itself: its flags)
build/web/attnviz.js: $(WEB_CORE_OBJ) $(WEB_IO_OBJ) $(WEB_UI_OBJ) tools/web/pre.js tools/web/web.mk $(WEB_FONT) \
                      assets/embeddings.txt $(wildcard sentences/*) \
                      $(wildcard $(addsuffix /*,$(SHIPPED_MODELS))) | web-libs-ui
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CORE_OBJ) $(WEB_IO_OBJ) $(WEB_UI_OBJ) $(WEB_UI_LIBS) $(WEB_LDFLAGS) $(WEB_DATA) -o $@

build/web/attnviz.html: tools/web/shell.html
	@mkdir -p $(dir $@)
	cp $< $@

build/web/serve.py: tools/web/serve.py
	@mkdir -p $(dir $@)
	cp $< $@

# the fallback fonts the desktop's fontconfig picks (make deps installs them),
# fetched by the page when a character first needs one (platform_web.c)
WEB_FALLBACKS := build/web/fonts/NotoSansCJK-Regular.ttc build/web/fonts/Symbola_hint.ttf
build/web/fonts/NotoSansCJK-Regular.ttc: /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
build/web/fonts/Symbola_hint.ttf: /usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf
$(WEB_FALLBACKS):
	@mkdir -p $(dir $@)
	cp $< $@

# ---- the one-thread page ----------------------------------------------------

# For a browser without WebAssembly threads (no SharedArrayBuffer: a page
# served without the COOP/COEP headers, as by python3 -m http.server):
# every source and library again without -pthread (an object built with it
# is refused by a program without shared memory), the libraries from
# libs.sh --single into prefix-st. The model's worker is
# background_single.c (a run between frames, yielding at its cancellation
# points through ASYNCIFY), and a file is read into memory by
# file_map_web.c (a slice at a time: a model's open breaks between
# them, bg_breathe); the forward's second thread is never had
# (workers_run2 says so and the caller runs both halves: workers.h).
WEB_ST_PREFIX := $(WEB_CACHE)/prefix-st
WEB_ST_OBJ    := build/web-obj-st
WEB_ST_SRC    := $(filter-out src/core/background.c src/io/file_map.c,$(wildcard src/core/*.c src/io/*.c)) $(WEB_UI_SRC) \
                 tools/web/memcmp.c
WEB_ST_OBJS   := $(patsubst %.c,$(WEB_ST_OBJ)/%.o,$(WEB_ST_SRC))
WEB_ST_CFLAGS := $(subst $(WEB_PREFIX),$(WEB_ST_PREFIX),$(filter-out -pthread,$(WEB_CFLAGS))) \
                 -Wno-string-concatenation -isystem $(WEB_ST_PREFIX)/include/SDL2 \
                 -isystem $(WEB_ST_PREFIX)/include/cjson
WEB_ST_LIBS   := $(subst $(WEB_PREFIX),$(WEB_ST_PREFIX),$(WEB_UI_LIBS))
# ASYNCIFY instruments only the functions between the pump and the yield
# (the model's run down to the runtime's cancellation point, the calls
# through pointers among them): the rest of the program runs as fast and
# as small as without it. A function missing here that a yield passes
# through aborts the page at the next yield ("invalid state": tests/web/
# single_test.mjs fails). Names as the linker gives them: a static
# function whose name another file's has too gets ".1" (runtime.c's
# forward beside attn.c's), hence the wildcards; binaryen warns about a
# name that binaryen's inlining made go away (the caller is listed too).
# (watch_cancel: model_opening.c's, the same code as model_source.c's
# hook_cancel, which binaryen then merges into one function under that name)
WEB_ST_RUN_ASYNC := bg_single_pump,bg_stale,run*,hook_cancel,watch_cancel,lm_forward_target,lm_forward,rt_forward,\
                    rt_forward_plain,rt_forward_encdec,forward*,explore_worker,without_ablation
# and the open of a file dropped or picked (bg_breathe between the slices
# of its read and the layers of a model's first forward):
# platform_web_dropped, which pre.js calls, opens the path through the
# window's loop_open (app_open_path): a model folder or GGUF file, an
# attention file, or a session naming one; the same entry opens what the
# loop was asked to (Ctrl+O's prompt, the start's restore of shown.json:
# app_restore_shown); a model folder's tokenizer, its
# JSON parsed, read and freed a part at a time (bpe_files.c, json_sliced.c:
# a tokenizer.json of 30 MB)
WEB_ST_OPEN_ASYNC := platform_web_dropped,loop_open,app_handle_event,app_open_path,file_open,maps_session_open,\
                     app_restore_shown,\
                     open_attention,import_open,import_open_group,attn_file_open_tensor,\
                     lmsrc_open,model_open_window,model_open_path,lm_open,lm_open_gguf,model_file_open,model_file_open_gguf,\
                     model_file_bind,convert_all,\
                     st_folder_open,open_index,add_shard,io_map_file,io_map_fd,\
                     bpe_load_dir,bpe_load_tokenizer_json,bpe_load_vocab_merges,bpe_parse_tokenizer_json,\
                     bpe_parse_vocab_merges,parse_json,build_tokenizer_json,read_vocab,read_pieces,read_merges_json,\
                     read_added,read_merges_txt,count_items,breathe_after,\
                     json_parse_sliced,sliced_value,sliced_container,sliced_leaf,json_delete_sliced,sliced_delete,\
                     model_compute_text,model_compute_ids,compute_breathe,bg_breathe
WEB_ST_ASYNC  := $(WEB_ST_RUN_ASYNC),$(WEB_ST_OPEN_ASYNC)
WEB_ST_LDFLAGS := -O2 -sASYNCIFY -sASYNCIFY_IMPORTS=bg_single_yield,bg_single_breathe \
                  -sASYNCIFY_ONLY=$(subst $(eval) ,,$(WEB_ST_ASYNC)) \
                  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=64MB -sMAXIMUM_MEMORY=4GB \
                  -sENVIRONMENT=web -sTOTAL_STACK=8MB --pre-js tools/web/pre.js \
                  --js-library tools/web/lib_single.js -sEXPORTED_RUNTIME_METHODS=ccall -lidbfs.js

# after the threaded set: its sources fetched (no two apt-get source at
# once), its CMake checks reused (libs.sh's seed_cmake: the one-thread set
# in about 3 minutes instead of 7)
.PHONY: web-libs-st
web-libs-st: web-libs-ui
	@ATTNVIZ_WEB_CACHE=$(WEB_CACHE) sh tools/web/libs.sh --single pcre2 utf8proc cjson zlib libzip \
	  sdl2 freetype sdl2_ttf cglm

$(WEB_ST_OBJ)/%.o: %.c | web-libs-st
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_ST_CFLAGS) $(WEB_STD) -c $< -o $@

$(WEB_ST_OBJ)/src/app/platform_web.o: WEB_STD := -std=gnu11

# the list checked against the objects first (tools/web/check_async.sh: a
# listed function renamed, or one the linker would rename, fails the build)
build/web/attnviz-st.js: $(WEB_ST_OBJS) tools/web/pre.js tools/web/lib_single.js tools/web/web.mk \
                         tools/web/check_async.sh $(WEB_FONT) assets/embeddings.txt \
                         $(wildcard sentences/*) $(wildcard $(addsuffix /*,$(SHIPPED_MODELS))) | web-libs-st
	@mkdir -p $(dir $@)
	@NM=emnm sh tools/web/check_async.sh '$(subst $(eval) ,,$(WEB_ST_ASYNC))' src $(WEB_ST_OBJS)
	$(EMCC) $(WEB_ST_OBJS) $(WEB_ST_LIBS) $(WEB_ST_LDFLAGS) $(WEB_DATA) -o $@

web: build/web/attnviz.js build/web/attnviz-st.js build/web/attnviz.html build/web/serve.py $(WEB_FALLBACKS)
	@echo "make web: the page is in build/web; python3 -m http.server -d build/web serves its" \
	  "one-thread build, python3 build/web/serve.py (the COOP/COEP headers) its threads;" \
	  "open http://127.0.0.1:8000/attnviz.html"

# ---- the page in a headless Chromium ---------------------------------------

# Debian's chromium (installed when missing, as make deps installs), driven
# by the npm registry's puppeteer-core 23.x (it works with Debian's node),
# installed into build/web-test; the native frame to compare with drawn by
# tests/web/native_frame against the native objects
WEB_TEST_DIR := build/web-test
PUPPETEER := $(WEB_TEST_DIR)/node_modules/puppeteer-core/package.json

.PHONY: web-test-deps test-web-page
# node and npm as emcc needs them already (this machine's are not Debian's
# packages, so they are looked for, not installed)
web-test-deps:
	$(call ensure_debs,chromium)
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || \
	  { echo "make test-web-page: node and npm are needed: apt-get install -y nodejs npm"; exit 1; }

$(PUPPETEER): | web-test-deps
	@mkdir -p $(WEB_TEST_DIR)
	npm install --prefix $(WEB_TEST_DIR) --no-audit --no-fund --no-save puppeteer-core@23

# native_frame, and native_bench for make web-bench
$(WEB_TEST_DIR)/native_%: tests/web/native_%.c $(CORE_OBJ) $(UI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(CORE_OBJ) $(UI_OBJ) -o $@ $(PKG_LIBS) $(LDLIBS)

test-web-page: web $(WEB_TEST_DIR)/native_frame $(PUPPETEER) | web-test-deps
	node tests/web/page_test.mjs $(WEB_TEST_DIR)/out
	node tests/web/page_test.mjs --single $(WEB_TEST_DIR)/out-page-st
	node tests/web/single_test.mjs $(WEB_TEST_DIR)/out-st
	node tests/web/typing_test.mjs $(WEB_TEST_DIR)/out-typing
	node tests/web/typing_test.mjs --single $(WEB_TEST_DIR)/out-typing-st

test-web: test-web-core test-web-io test-web-page

# ---- the toy model's keystroke, native and wasm ----------------------------

.PHONY: web-bench
$(WEB_TEST_DIR)/forward_bench: tests/web/forward_bench.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(CORE_OBJ) -o $@ $(PKG_LIBS) $(LDLIBS)

$(WEB_OBJ)/forward_bench.js: tests/web/forward_bench.c $(WEB_CORE_OBJ) $(WEB_IO_OBJ) | web-libs-io
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -isystem $(WEB_PREFIX)/include/cjson $< $(WEB_CORE_OBJ) $(WEB_IO_OBJ) \
	  $(WEB_IO_LIBS) -O2 $(filter-out -g2,$(WEB_TEST_LDFLAGS)) -o $@

# the one-thread build's: its objects, no threads (the forward's second
# thread not had, as in the one-thread page)
WEB_ST_BENCH_OBJ := $(filter $(WEB_ST_OBJ)/src/core/% $(WEB_ST_OBJ)/src/io/%,$(WEB_ST_OBJS))
$(WEB_ST_OBJ)/forward_bench.js: tests/web/forward_bench.c $(WEB_ST_BENCH_OBJ) | web-libs-st
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_ST_CFLAGS) $< $(WEB_ST_BENCH_OBJ) $(subst $(WEB_PREFIX),$(WEB_ST_PREFIX),$(filter-out -lcmocka,$(WEB_IO_LIBS))) \
	  -O2 -sALLOW_MEMORY_GROWTH=1 -sNODERAWFS=1 -sENVIRONMENT=node -o $@

# the same sentences timed by each, one after the other, then the page's
# first frame on the loopback, threaded (serve.py) and one-thread (python3
# -m http.server), and the window's frame and keys beside native (README's
# figures). make bench's section 15 (tests/bench/run.sh) runs the same
# parts: web-bench-deps builds them, web-bench-round is one round of the
# keystrokes and the window.
WEB_BENCH_DEPS := $(WEB_TEST_DIR)/forward_bench $(WEB_OBJ)/forward_bench.js $(WEB_ST_OBJ)/forward_bench.js web \
                  $(PUPPETEER) $(WEB_TEST_DIR)/native_bench
.PHONY: web-bench-deps web-bench-round
web-bench-deps: $(WEB_BENCH_DEPS)

web-bench-round: $(WEB_BENCH_DEPS)
	@for n in 7 64 256; do \
	  echo "native:         $$($(WEB_TEST_DIR)/forward_bench assets/embeddings.txt $$n)"; \
	  echo "wasm:           $$($(WEB_NODE) $(WEB_OBJ)/forward_bench.js assets/embeddings.txt $$n)"; \
	  echo "wasm, 1 thread: $$($(WEB_NODE) $(WEB_ST_OBJ)/forward_bench.js assets/embeddings.txt $$n)"; done
	node tests/web/page_bench.mjs $(WEB_TEST_DIR)/native_bench $(WEB_TEST_DIR)/bench

web-bench: web-bench-round
	node tests/web/first_frame.mjs 5
	node tests/web/first_frame.mjs 5 --plain
