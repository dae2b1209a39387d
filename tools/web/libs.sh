#!/bin/sh
# The libraries the browser build links, built for wasm32 from Debian's own
# source packages (bookworm), into $ATTNVIZ_WEB_CACHE (default
# ~/.cache/attnviz-web): src/ holds what `apt-get source` unpacked, prefix/
# the headers and static libraries. A library already in prefix/lib is not
# built again; delete the cache to start over. Nothing is downloaded except
# through apt from deb.debian.org.
#
# usage: tools/web/libs.sh [--single] LIB...
#   (LIB: pcre2 utf8proc cmocka cjson zlib libzip sdl2 freetype sdl2_ttf sdl2_image cglm)
#   --single: the one-thread set (no -pthread) into prefix-st/, for the page
#   a browser without WebAssembly threads loads; built in its own folders
#   beside the threaded set's, from the same unpacked sources
set -eu

CACHE=${ATTNVIZ_WEB_CACHE:-$HOME/.cache/attnviz-web}
# Debian's emscripten finds its node modules only with NODE_PATH set
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
# -pthread everywhere: a library linked into a -pthread program must be
# built with it (its atomics and TLS), or wasm-ld refuses the link; and
# the other way round (an object built with -pthread is refused by a
# program without shared memory), hence the second set. V names the
# set's build folders and objects (build-web$V, foo-web$V.o).
if [ "${1:-}" = --single ]; then
    shift
    PREFIX=$CACHE/prefix-st
    WEB_CFLAGS="-O2"
    V=-st
else
    PREFIX=$CACHE/prefix
    WEB_CFLAGS="-O2 -pthread"
    V=
fi

say() { echo "tools/web/libs.sh: $*"; }
die() { echo "tools/web/libs.sh: $*" >&2; exit 1; }

command -v emcc >/dev/null 2>&1 ||
    die "emcc not found: install Debian's emscripten (apt-get install -y emscripten)"

# apt through a private sources list with a deb-src line, its lists kept in
# the cache: the machine's own apt configuration is left as it is
APT_DIR=$CACHE/apt
apt_src() {
    mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
    [ -f "$APT_DIR/sources.list" ] ||
        echo "deb-src http://deb.debian.org/debian bookworm main" > "$APT_DIR/sources.list"
    set -- -o "Dir::Etc::SourceList=$APT_DIR/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
        -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" "$@"
    if ! ls "$APT_DIR/lists/"*Sources* >/dev/null 2>&1; then
        apt-get "$@" update >"$APT_DIR/update.log" 2>&1 ||
            die "apt-get update of the deb-src list failed: see $APT_DIR/update.log"
    fi
}

# unpack Debian's source package $1 at version $3 under $CACHE/src, where
# it unpacks into the folder $2
fetch() {
    dir=$CACHE/src/$2
    [ -d "$dir" ] && return 0
    mkdir -p "$CACHE/src"
    apt_src
    say "apt-get source $1=$3"
    (cd "$CACHE/src" && apt-get -o "Dir::Etc::SourceList=$APT_DIR/sources.list" \
        -o Dir::Etc::SourceParts=/nonexistent -o "Dir::State::Lists=$APT_DIR/lists" \
        -o "Dir::Cache=$APT_DIR/cache" source "$1=$3" >"$1.log" 2>&1) ||
        die "apt-get source $1=$3 failed: see $CACHE/src/$1.log"
    [ -d "$dir" ] || die "apt-get source $1 did not unpack $dir"
}

# The one-thread set's CMake build folder $1 seeded from the threaded
# set's (build-web, when configured): its cache of check results (each
# check compiles a program, and SDL2's run under node: minutes) with the
# folder's path changed, and the compiler's identification. What the
# threads change is passed again on the command line (CMAKE_C_FLAGS,
# SDL_THREADS), which overrides the cache.
seed_cmake() {
    t=${1%$V}
    [ -n "$V" ] && [ -f "$t/CMakeCache.txt" ] && [ ! -f "$1/CMakeCache.txt" ] || return 0
    mkdir -p "$1/CMakeFiles"
    sed "s|$t\([/;: ]\)|$1\1|g; s|$t\$|$1|" "$t/CMakeCache.txt" > "$1/CMakeCache.txt"
    cp -r "$t"/CMakeFiles/[0-9]* "$1/CMakeFiles/" 2>/dev/null || true
}

build_pcre2() {
    fetch pcre2 pcre2-10.42 10.42-1
    b=$CACHE/src/pcre2-10.42/build-web$V
    mkdir -p "$b"
    seed_cmake "$b"
    # 8-bit only, Unicode on, no JIT (it writes machine code: not in wasm)
    (cd "$b" && emcmake cmake .. -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_C_FLAGS="$WEB_CFLAGS" -DBUILD_SHARED_LIBS=OFF -DPCRE2_BUILD_PCRE2_8=ON \
        -DPCRE2_BUILD_PCRE2_16=OFF -DPCRE2_BUILD_PCRE2_32=OFF -DPCRE2_SUPPORT_JIT=OFF \
        -DPCRE2_SUPPORT_UNICODE=ON -DPCRE2_BUILD_PCRE2GREP=OFF -DPCRE2_BUILD_TESTS=OFF \
        >cmake.log 2>&1 && emmake make -j2 install >make.log 2>&1) ||
        die "pcre2 did not build: see $b/cmake.log and $b/make.log"
}

# one C file: no build system needed
build_utf8proc() {
    fetch utf8proc utf8proc-2.8.0 2.8.0-1
    s=$CACHE/src/utf8proc-2.8.0
    mkdir -p "$PREFIX/lib" "$PREFIX/include"
    emcc $WEB_CFLAGS -DUTF8PROC_STATIC -c "$s/utf8proc.c" -o "$s/utf8proc-web$V.o" ||
        die "utf8proc did not build"
    rm -f "$PREFIX/lib/libutf8proc.a"
    emar rcs "$PREFIX/lib/libutf8proc.a" "$s/utf8proc-web$V.o"
    cp "$s/utf8proc.h" "$PREFIX/include/"
}

# one C file too; its config.h written here rather than by CMake, whose
# checks take minutes under emcc. cmocka.h would define uintptr_t itself
# (as unsigned int, where wasm32's is unsigned long): the tests and this
# build pass -D_UINTPTR_T_DEFINED with stdint.h included first.
build_cmocka() {
    fetch cmocka cmocka-1.1.5 1.1.5-2.1
    s=$CACHE/src/cmocka-1.1.5
    mkdir -p "$s/build-web$V" "$PREFIX/lib" "$PREFIX/include"
    for h in ASSERT_H INTTYPES_H MALLOC_H MEMORY_H SETJMP_H SIGNAL_H STDARG_H STDDEF_H \
        STDINT_H STDIO_H STDLIB_H STRINGS_H STRING_H SYS_STAT_H SYS_TYPES_H TIME_H UNISTD_H \
        STRUCT_TIMESPEC CALLOC FPRINTF SNPRINTF VSNPRINTF FREE MALLOC MEMCPY MEMSET PRINTF \
        SETJMP SIGNAL STRCMP STRSIGNAL CLOCK_GETTIME GCC_THREAD_LOCAL_STORAGE CLOCK_REALTIME; do
        echo "#define HAVE_$h 1"
    done > "$s/build-web$V/config.h"
    echo "#define WORDS_SIZEOF_VOID_P 4" >> "$s/build-web$V/config.h"
    emcc $WEB_CFLAGS -DHAVE_CONFIG_H -D_UINTPTR_T_DEFINED -include stdint.h -I"$s/build-web$V" \
        -I"$s/include" -c "$s/src/cmocka.c" -o "$s/build-web$V/cmocka.o" || die "cmocka did not build"
    rm -f "$PREFIX/lib/libcmocka.a"
    emar rcs "$PREFIX/lib/libcmocka.a" "$s/build-web$V/cmocka.o"
    cp "$s/include/cmocka.h" "$PREFIX/include/"
}

# one C file
build_cjson() {
    fetch cjson cjson-1.7.15 1.7.15-1+deb12u4
    s=$CACHE/src/cjson-1.7.15
    mkdir -p "$PREFIX/lib" "$PREFIX/include/cjson"
    emcc $WEB_CFLAGS -c "$s/cJSON.c" -o "$s/cJSON-web$V.o" || die "cjson did not build"
    rm -f "$PREFIX/lib/libcjson.a"
    emar rcs "$PREFIX/lib/libcjson.a" "$s/cJSON-web$V.o"
    cp "$s/cJSON.h" "$PREFIX/include/cjson/"
    cp "$s/cJSON.h" "$PREFIX/include/" # model_gguf.c includes it as pkg-config's -I gives it
}

# through its own configure: its CMake build names the static library
# differently and installs a shared one emcc cannot make. It builds in its
# source folder: the one-thread set in a copy of it
build_zlib() {
    fetch zlib zlib-1.2.13.dfsg 1:1.2.13.dfsg-1
    s=$CACHE/src/zlib-1.2.13.dfsg
    if [ -n "$V" ]; then
        rm -rf "$s$V"
        cp -r "$s" "$s$V"
        s=$s$V
        (cd "$s" && { [ ! -f Makefile ] || make distclean >/dev/null 2>&1 || true; })
    fi
    (cd "$s" && CFLAGS="$WEB_CFLAGS" emconfigure ./configure --static --prefix="$PREFIX" \
        >configure-web.log 2>&1 && emmake make -j2 libz.a >make-web.log 2>&1 &&
        emmake make install >>make-web.log 2>&1) ||
        die "zlib did not build: see $s/configure-web.log and $s/make-web.log"
}

# CMake; its size checks cannot run a program under emcc, so off_t's size
# (8 in emscripten's musl) is given
build_libzip() {
    [ -f "$PREFIX/lib/libz.a" ] || build_zlib
    fetch libzip libzip-1.7.3 1.7.3-1
    b=$CACHE/src/libzip-1.7.3/build-web$V
    mkdir -p "$b"
    seed_cmake "$b"
    (cd "$b" && emcmake cmake .. -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_C_FLAGS="$WEB_CFLAGS" -DBUILD_SHARED_LIBS=OFF -DSIZEOF_OFF_T=8 \
        -DZLIB_INCLUDE_DIR="$PREFIX/include" -DZLIB_LIBRARY="$PREFIX/lib/libz.a" \
        -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_GNUTLS=OFF \
        -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_COMMONCRYPTO=OFF \
        -DENABLE_WINDOWS_CRYPTO=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF \
        -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF >cmake.log 2>&1 &&
        emmake make -j2 install >make.log 2>&1) ||
        die "libzip did not build: see $b/cmake.log and $b/make.log"
}

# CMake with emscripten's backend, threads on (SDL's timers and the
# audio thread want them; the program's workers are pthreads anyway), off
# in the one-thread set. SDL newer than 2.26.x does not build with
# emscripten 3.1.6. Its configure checks run each test program under node:
# about five minutes.
build_sdl2() {
    fetch libsdl2 libsdl2-2.26.5+dfsg 2.26.5+dfsg-1
    b=$CACHE/src/libsdl2-2.26.5+dfsg/build-web$V
    threads=ON
    [ -z "$V" ] || threads=OFF
    mkdir -p "$b"
    seed_cmake "$b"
    (cd "$b" && emcmake cmake .. -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_C_FLAGS="$WEB_CFLAGS" -DSDL_SHARED=OFF -DSDL_STATIC=ON -DSDL_THREADS=$threads \
        -DSDL_PTHREADS=$threads -DSDL_TEST=OFF >cmake.log 2>&1 && emmake make -j2 install >make.log 2>&1) ||
        die "SDL2 did not build: see $b/cmake.log and $b/make.log"
}

# FreeType's own sources compiled one module a file, as its INSTALL.ANY
# describes, with only the modules a TrueType or OpenType font needs
# (the list in ftmodule-web.h, which ftinit.c includes): its CMake checks
# would take minutes under emcc and add nothing. WOFF's and gzip's
# inflating through the zlib built here, as Debian builds it (system zlib)
build_freetype() {
    [ -f "$PREFIX/lib/libz.a" ] || build_zlib
    fetch freetype freetype-2.12.1+dfsg 2.12.1+dfsg-5+deb12u4
    s=$CACHE/src/freetype-2.12.1+dfsg
    b=$s/build-web$V
    mkdir -p "$b" "$PREFIX/lib" "$PREFIX/include"
    cat > "$b/ftmodule-web.h" <<'MODULES'
FT_USE_MODULE( FT_Module_Class, autofit_module_class )
FT_USE_MODULE( FT_Driver_ClassRec, tt_driver_class )
FT_USE_MODULE( FT_Driver_ClassRec, cff_driver_class )
FT_USE_MODULE( FT_Module_Class, psaux_module_class )
FT_USE_MODULE( FT_Module_Class, psnames_module_class )
FT_USE_MODULE( FT_Module_Class, pshinter_module_class )
FT_USE_MODULE( FT_Module_Class, sfnt_module_class )
FT_USE_MODULE( FT_Renderer_Class, ft_smooth_renderer_class )
MODULES
    objs=
    for m in base/ftsystem base/ftinit base/ftdebug base/ftbase base/ftbbox base/ftglyph \
        base/ftbitmap base/ftstroke base/ftsynth base/ftmm base/ftfstype base/ftgasp \
        truetype/truetype cff/cff sfnt/sfnt smooth/smooth autofit/autofit psnames/psnames \
        psaux/psaux pshinter/pshinter gzip/ftgzip; do
        o=$b/$(basename "$m").o
        emcc $WEB_CFLAGS -DFT2_BUILD_LIBRARY '-DFT_CONFIG_MODULES_H="ftmodule-web.h"' \
            -DFT_CONFIG_OPTION_SYSTEM_ZLIB -I"$b" -I"$s/include" -isystem "$PREFIX/include" -c "$s/src/$m.c" -o "$o" 2>>"$b/make.log" ||
            die "freetype did not build ($m.c): see $b/make.log"
        objs="$objs $o"
    done
    rm -f "$PREFIX/lib/libfreetype.a"
    emar rcs "$PREFIX/lib/libfreetype.a" $objs
    rm -rf "$PREFIX/include/freetype2"
    mkdir -p "$PREFIX/include/freetype2"
    cp -r "$s/include/ft2build.h" "$s/include/freetype" "$PREFIX/include/freetype2/"
}

# one C file, without HarfBuzz (as Debian's SDL2_ttf 2.20 builds by default)
build_sdl2_ttf() {
    [ -f "$PREFIX/lib/libSDL2.a" ] || build_sdl2
    [ -f "$PREFIX/lib/libfreetype.a" ] || build_freetype
    fetch libsdl2-ttf libsdl2-ttf-2.20.1+dfsg 2.20.1+dfsg-2
    s=$CACHE/src/libsdl2-ttf-2.20.1+dfsg
    emcc $WEB_CFLAGS -I"$PREFIX/include/SDL2" -I"$PREFIX/include/freetype2" \
        -c "$s/SDL_ttf.c" -o "$s/SDL_ttf-web$V.o" || die "SDL2_ttf did not build"
    rm -f "$PREFIX/lib/libSDL2_ttf.a"
    emar rcs "$PREFIX/lib/libSDL2_ttf.a" "$s/SDL_ttf-web$V.o"
    cp "$s/SDL_ttf.h" "$PREFIX/include/SDL2/"
}

# PNG (and the other formats stb_image reads) through the stb_image.h
# Debian's source package keeps, no libpng: the program writes its PNGs
# itself (src/io/png.c) and reads none through SDL2_image today
build_sdl2_image() {
    [ -f "$PREFIX/lib/libSDL2.a" ] || build_sdl2
    fetch libsdl2-image libsdl2-image-2.6.3+dfsg 2.6.3+dfsg-1
    s=$CACHE/src/libsdl2-image-2.6.3+dfsg
    b=$s/build-web$V
    mkdir -p "$b"
    objs=
    for m in IMG IMG_png IMG_bmp IMG_gif IMG_jpg IMG_tga IMG_pnm IMG_qoi IMG_stb IMG_xcf \
        IMG_xpm IMG_xv IMG_lbm IMG_pcx IMG_svg IMG_avif IMG_jxl IMG_tif IMG_webp; do
        emcc $WEB_CFLAGS -DUSE_STBIMAGE -DLOAD_PNG -DLOAD_JPG -DLOAD_BMP -DLOAD_GIF \
            -I"$PREFIX/include/SDL2" -I"$s" -c "$s/$m.c" -o "$b/$m.o" 2>>"$b/make.log" ||
            die "SDL2_image did not build ($m.c): see $b/make.log"
        objs="$objs $b/$m.o"
    done
    rm -f "$PREFIX/lib/libSDL2_image.a"
    emar rcs "$PREFIX/lib/libSDL2_image.a" $objs
    cp "$s/SDL_image.h" "$PREFIX/include/SDL2/"
}

# headers only (the view's vector types; without -msimd128 its plain C
# paths are compiled), copied from Debian's libcglm-dev, which the native
# build installs: they are the same for every architecture, and the
# archive's mirror here answered 404 for cglm's source package
build_cglm() {
    [ -f /usr/include/cglm/cglm.h ] ||
        die "cglm's headers are missing: apt-get install -y libcglm-dev"
    mkdir -p "$PREFIX/include"
    rm -rf "$PREFIX/include/cglm"
    cp -r /usr/include/cglm "$PREFIX/include/"
}

lib_file() {
    case $1 in
        pcre2) echo lib/libpcre2-8.a ;;
        utf8proc) echo lib/libutf8proc.a ;;
        cmocka) echo lib/libcmocka.a ;;
        cjson) echo lib/libcjson.a ;;
        zlib) echo lib/libz.a ;;
        libzip) echo lib/libzip.a ;;
        sdl2) echo lib/libSDL2.a ;;
        freetype) echo lib/libfreetype.a ;;
        sdl2_ttf) echo lib/libSDL2_ttf.a ;;
        sdl2_image) echo lib/libSDL2_image.a ;;
        cglm) echo include/cglm/cglm.h ;;
        *) die "unknown library $1 (pcre2 utf8proc cmocka cjson zlib libzip sdl2 freetype sdl2_ttf sdl2_image cglm)" ;;
    esac
}

[ $# -gt 0 ] || { echo "usage: tools/web/libs.sh [--single] LIB... (pcre2 utf8proc cmocka cjson zlib libzip" \
    "sdl2 freetype sdl2_ttf sdl2_image cglm)" >&2; exit 2; }
for lib in "$@"; do
    f=$(lib_file "$lib")
    [ -f "$PREFIX/$f" ] && continue
    say "building $lib for wasm32 into $PREFIX"
    "build_$lib"
    [ -f "$PREFIX/$f" ] || die "$lib built but $PREFIX/$f is missing"
done
