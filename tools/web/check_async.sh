#!/bin/sh
# The one-thread page's ASYNCIFY list (tools/web/web.mk's WEB_ST_ASYNC)
# checked against the objects it is linked from, before the link: binaryen
# instruments the functions by the names the linker gives them, and only
# warns about a name it does not find, so a listed function renamed (or a
# static one whose name another file's has too, which the linker makes
# NAME.1) would leave a yield passing through a function that cannot be
# suspended. Each plain name must be a function the sources define (at the
# start of a line, as they do) and no two objects define (a name two
# objects define is listed as NAME*); each NAME* must match a function of
# the objects. (A function clang or binaryen inlines into its listed
# caller is not an error: it is in no object, or binaryen's warning names
# it.)
#
# usage: check_async.sh LIST SRCDIR OBJECT... (LIST: the names, comma-separated)
list=$1
src=$2
shift 2
NM=${NM:-llvm-nm}
syms=$("$NM" -A --defined-only "$@" 2>/dev/null | awk '$(NF-1) ~ /^[TtWw]$/ { sub(/:[^:]*$/, "", $1); print $1, $NF }') ||
    { echo "check_async.sh: $NM could not read the objects" >&2; exit 1; }
[ -n "$syms" ] || { echo "check_async.sh: no functions in the objects given ($NM)" >&2; exit 1; }
bad=0
for name in $(echo "$list" | tr ',' ' '); do
    case $name in
    *'*'*)
        re="^$(echo "$name" | sed 's/[.]/\\./g; s/[*]/.*/g')\$"
        n=$(echo "$syms" | awk -v re="$re" '$2 ~ re' | wc -l)
        if [ "$n" -eq 0 ]; then
            echo "tools/web/web.mk: ASYNCIFY list: $name matches no function of the one-thread page's objects" >&2
            bad=1
        fi ;;
    *)
        where=$(echo "$syms" | awk -v f="$name" '$2 == f { print $1 }')
        n=$(echo "$where" | grep -c .)
        if ! grep -rqE --include='*.c' "^[A-Za-z_].*[^A-Za-z0-9_]$name\(" "$src"; then
            echo "tools/web/web.mk: ASYNCIFY list: $name is a function of no source under $src" \
                 "(renamed? list the functions between the yield and the page's entry)" >&2
            bad=1
        elif [ "$n" -gt 1 ]; then
            echo "tools/web/web.mk: ASYNCIFY list: $name is defined by $n objects ($(echo $where)):" \
                 "the linker names all but one $name.1, ...: list it as $name*" >&2
            bad=1
        fi ;;
    esac
done
exit $bad
