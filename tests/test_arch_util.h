/* What the architectures' bad-folder tests share (test_arch_*.c): a
 * fixture's config and weights copied into a fresh folder, one config.json
 * key changed there, and lm_open's refusal of such a folder; a config.json
 * text read by an architecture's table. Include after
 * cmocka.h and test_gpt2_fs.h. */
#ifndef ATTNVIZ_TEST_ARCH_UTIL_H
#define ATTNVIZ_TEST_ARCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnviz/arch.h"
#include "attnviz/lm.h"
#include "attnviz/model_file.h"

/* A new temporary folder holding family_dir's fixture's config.json and
 * model.safetensors (family_dir ends in '/'); the caller removes it. */
static inline char *fixture_copy(const char *family_dir, const char *fixture)
{
    static const char *const files[] = {"config.json", "model.safetensors"};
    char *dir = fs_tmpdir();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, "%s%s/%s", family_dir, fixture, files[i]);
        fs_copy(a, fs_join(b, dir, files[i]));
    }
    return dir;
}

/* dir's config.json with key set to value (taken), or removed (NULL). */
static inline void set_config(const char *dir, const char *key, cJSON *value)
{
    char p[1024];
    cJSON *cfg = read_json(fs_join(p, dir, "config.json"));
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, key);
    if (value)
        cJSON_AddItemToObject(cfg, key, value);
    char *text = cJSON_Print(cfg);
    fs_write_text(p, text);
    free(text);
    cJSON_Delete(cfg);
}

/* lm_open's code for dir, which must refuse it: nothing left open. */
static inline int open_err(const char *dir, AttnErr *err)
{
    Lm lm;
    memset(err, 0, sizeof *err);
    int rc = lm_open(&lm, dir, err);
    assert_int_not_equal(rc, 0);
    assert_null(lm.arch);
    assert_null(lm.model);
    assert_null(lm.rt);
    return rc;
}

/* A config struct's buffer for architecture d (d->rt->cfg_size bytes). */
static inline void *arch_cfg_new(const ArchDesc *d)
{
    void *cfg = malloc(d->rt->cfg_size);
    assert_non_null(cfg);
    return cfg;
}

/* text read by d's config table into cfg: model_config_parse's code, err
 * cleared first. */
static inline int arch_parse(const ArchDesc *d, void *cfg, const char *text, AttnErr *err)
{
    memset(err, 0, sizeof *err);
    return model_config_parse(d, cfg, text, strlen(text), "config.json", err);
}

/* text read by d (it must be accepted, by the table and by the forward's
 * check): its shape and facts. The shape may point into the config (Phi-3's
 * longrope lists), which is kept until the next call. */
static inline void arch_parse_ok(const ArchDesc *d, const char *text, RtShape *sh, ArchFacts *f)
{
    static void *cfg;
    free(cfg);
    cfg = arch_cfg_new(d);
    AttnErr err;
    if (arch_parse(d, cfg, text, &err) != 0)
        fail_msg("refused: %s (%s) for %s", err.msg, err.file, text);
    d->rt->shape(cfg, sh);
    d->facts(cfg, f);
    if (d->rt->check(cfg, &err) != 0)
        fail_msg("the forward's check refused: %s for %s", err.msg, text);
}

#endif
