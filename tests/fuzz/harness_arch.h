/* Fuzz harness logic for every architecture's config.json reader
 * (model_config_parse with each description of arch_builtin), shared by the
 * libFuzzer target fuzz_arch_config.c and tests/test_fuzz_regress.c: NULL
 * when every invariant held, else what did not. Inputs above the cap are
 * ignored. No architecture is named here: a family added to archs.c is
 * fuzzed by its row. */
#ifndef ATTNVIZ_FUZZ_HARNESS_ARCH_H
#define ATTNVIZ_FUZZ_HARNESS_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/arch.h"
#include "attnviz/model_file.h"
#include "attnviz/runtime.h"

#define FUZZ_ARCH_CONFIG_MAX (1u << 16)

/* For each description: on error err.code is -rc with a message naming
 * the file and the config zeroed; on success the runtime's check agrees
 * and the shape is one a state can be made of (every size at least 1,
 * key-value heads dividing the heads, the rotated dimensions even and
 * within a head, the scratch rows positive), and a state for no tokens is
 * made and freed. */
static inline const char *fuzz_check_arch_config(const uint8_t *data, size_t size)
{
    if (size > FUZZ_ARCH_CONFIG_MAX)
        return NULL;
    for (int k = 0; arch_builtin[k]; k++) {
        const ArchDesc *a = arch_builtin[k];
        size_t n = a->rt->cfg_size;
        unsigned char *cfg = malloc(n), *zero = calloc(1, n);
        char *copy = malloc(size ? size : 1);
        const char *bad = NULL;
        if (!cfg || !zero || !copy) {
            free(cfg), free(zero), free(copy);
            return NULL;
        }
        if (size)
            memcpy(copy, data, size);
        memset(cfg, 0x5a, n);
        AttnErr err;
        memset(&err, 0, sizeof err);
        int rc = model_config_parse(a, cfg, copy, size, "fuzz", &err);
        if (rc == -ATTN_E_NOMEM) {
            /* nothing to check */
        } else if (rc != 0) {
            if (err.code != -rc || err.code <= 0 || err.code >= ATTN_E_COUNT_)
                bad = "err.code is not -rc";
            else if (!memchr(err.msg, '\0', sizeof err.msg) || err.msg[0] == '\0')
                bad = "error without a message";
            else if (strcmp(err.file, "fuzz") != 0)
                bad = "error does not name the file";
            else if (memcmp(cfg, zero, n))
                bad = "the config is not zeroed on error";
        } else if (a->rt->check(cfg, &err) != 0) {
            bad = "the runtime's check refuses what the parser accepted";
        } else {
            RtShape s;
            memset(&s, 0, sizeof s);
            a->rt->shape(cfg, &s);
            int dims = s.rope.kind == ROPE_NONE ? 0 : s.rope.dims ? s.rope.dims : s.d_head;
            if (s.n_layer < 1 || s.n_head < 1 || s.n_kv_head < 1 || s.d_head < 1 || s.hidden < 1 ||
                s.n_positions < 1 || s.n_vocab < 1)
                bad = "a size below 1";
            else if (s.n_head % s.n_kv_head)
                bad = "key-value heads do not divide the heads";
            else if (dims % 2 || dims > s.d_head || dims < 0)
                bad = "rotated dimensions odd, negative or beyond a head";
            else if (s.n_rows < 0 || s.n_rows > 4)
                bad = "scratch rows out of 0 .. 4";
            for (int r = 0; r < s.n_rows && !bad; r++)
                if (s.row_w[r] < 1)
                    bad = "a scratch row of no width";
            Rt *rt = NULL;
            /* sizes from a fuzzed config may ask for more than memory: only
             * small ones are made */
            if (!bad && (double)s.n_layer * s.n_head * s.d_head < 1e6 && s.n_positions < (1 << 20) &&
                rt_create(&rt, a->rt, cfg, &err) == 0)
                rt_destroy(rt);
        }
        free(cfg), free(zero), free(copy);
        if (bad)
            return bad;
    }
    return NULL;
}

#endif
