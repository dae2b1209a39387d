#!/usr/bin/env bash
# make bench's C sources (tests/bench/*.c) still compile against the
# program's headers: they are built only by make bench, so a change to a
# struct or a call they use would otherwise go unseen until the next bench.
# Syntax and types only (-fsyntax-only), with the project's flags. Run from
# the repository root.
set -u
CC=${CC:-cc}
PKGS=$(sed -n 's/^PKGS[[:space:]]*:=[[:space:]]*//p' Makefile)
pass=0 failed=0
for f in tests/bench/*.c; do
    [ "$(basename "$f")" = first_frame.c ] && continue # an LD_PRELOAD shim, its own flags
    # shellcheck disable=SC2046,SC2086
    if out=$($CC -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Iinclude \
            $(pkg-config --cflags $PKGS cmocka 2>/dev/null) -fsyntax-only "$f" 2>&1); then
        echo "ok   - $f"; pass=$((pass + 1))
    else
        echo "FAIL - $f:"; echo "$out" | head -n 5; failed=$((failed + 1))
    fi
done
echo "bench sources: $pass passed, $failed failed"
[ "$failed" = 0 ] && [ "$pass" -gt 0 ]
