/* Every sentences file of a folder in one list (issue 16, item 12: PageUp
 * and PageDown walk all of sentences/): default.txt first, then by name,
 * each sentence with its file's name and line, pairs kept, a broken file
 * left out and named, an empty folder an error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnviz/io.h"

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_folder(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-folder-XXXXXX";
    assert_non_null(mkdtemp(dir));
    put(dir, "b.txt", "# b\nbee one\n\nbee two\n");
    put(dir, "default.txt", "the default\n");
    put(dir, "a.txt", "je suis heureux ||| i am happy\n");
    put(dir, "broken.txt", "fine\nno keys |||   \n");
    put(dir, "notes.md", "not a sentences file\n");
    SentenceList sl;
    AttnErr warn = {0};
    assert_int_equal(sentences_load_folder(&sl, dir, "default.txt", &warn), 0);
    assert_int_equal(sl.n, 4);
    static const char *const text[] = {"the default", "je suis heureux", "bee one", "bee two"};
    static const char *const src[] = {"default.txt", "a.txt", "b.txt", "b.txt"};
    static const long line[] = {1, 1, 2, 4};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(sl.text[i], text[i]);
        assert_string_equal(sl.src[i], src[i]);
        assert_int_equal(sl.line[i], line[i]);
    }
    assert_string_equal(sl.keys[1], "i am happy");
    assert_string_equal(sl.keys[0], "");
    assert_int_not_equal(warn.code, 0); /* broken.txt was left out and named */
    assert_non_null(strstr(warn.file, "broken.txt"));
    assert_int_equal(warn.line, 2);
    sentences_free(&sl);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -f %s/*.txt %s/*.md", dir, dir);
    assert_int_equal(system(cmd), 0);
    AttnErr none = {0};
    assert_int_equal(sentences_load_folder(&sl, dir, "default.txt", &none), -ATTN_E_IO);
    assert_int_equal(sl.n, 0);
    rmdir(dir);
    assert_int_equal(sentences_load_folder(&sl, dir, NULL, &none), -ATTN_E_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
