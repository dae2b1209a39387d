/* GPT-2 on the runtime (runtime.h), Hugging Face's modeling_gpt2 in eval
 * mode, on the plain data of gpt2.h:
 *
 *   x = wte[ids] + wpe[pos]
 *   per block l:  a = ln_1(x);  Q | K | V = a · c_attn + b     (Conv1D: [in, out])
 *                 per head: scores = Q·Kᵀ / √d_head / (l + 1)  (each factor when
 *                 its config flag is on), causal; weights = softmax; z = weights · V
 *                 x = x + z · c_proj + b
 *                 x = x + act(ln_2(x) · c_fc + b) · mlp.c_proj + b
 *   logits = ln_f(x) · lm_headᵀ      (on demand, for one position) */
#include <math.h>
#include <string.h>

#include "attnviz/gpt2.h"
#include "ops.h"

int gpt2_config_check(const void *cfg, AttnErr *err)
{
    const Gpt2Config *c = cfg;
    if (c->n_layer <= 0 || c->n_head <= 0 || c->n_embd <= 0 || c->n_positions <= 0 ||
        c->n_inner <= 0 || c->n_vocab <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "GPT-2 sizes must be positive (n_layer %d, n_head %d, n_embd %d, "
                            "n_positions %d, n_inner %d, n_vocab %d)",
                            c->n_layer, c->n_head, c->n_embd, c->n_positions, c->n_inner,
                            c->n_vocab);
    if (c->n_embd % c->n_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0, "n_head %d does not divide n_embd %d",
                            c->n_head, c->n_embd);
    if ((unsigned)c->act > GPT2_ACT_RELU)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0, "activation %d", (int)c->act);
    if (!(c->ln_eps >= 0.0f) || !isfinite(c->ln_eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "layer_norm_epsilon %g", c->ln_eps);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const Gpt2Config *c = cfg;
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_head,
                   .d_head = c->n_embd / c->n_head, .hidden = c->n_embd,
                   .n_positions = c->n_positions, .n_vocab = c->n_vocab,
                   .n_rows = 1, .row_w = {c->n_inner}};
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const Gpt2Weights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++)
        for (int k = 0; k < C; k++)
            rt->x[(size_t)i * C + k] = w->wte[(size_t)ids[i] * C + k] + w->wpe[(size_t)i * C + k];
}

/* Block l on positions [start, T), in passes as the equations go. */
static void block(Rt *rt, const void *wv, int l, int start, int T)
{
    const Gpt2Config *c = rt->cfg;
    const Gpt2Layer *w = &((const Gpt2Weights *)wv)->layers[l];
    int C = c->n_embd, I = c->n_inner, n = T - start;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *hid = rt_row(rt->rows[0], I, start);
    OpsNorm ln1 = {OPS_NORM_LAYER, w->ln1_w, w->ln1_b, c->ln_eps};
    OpsNorm ln2 = {OPS_NORM_LAYER, w->ln2_w, w->ln2_b, c->ln_eps};
    RtAttn a = {.causal = 1};
    if (c->scale_attn_weights)
        a.div1 = (float)sqrt((double)rt->sh.d_head);
    if (c->scale_by_inverse_layer_idx)
        a.div2 = (float)(l + 1);

    ops_add_norm(x, NULL, xn, &ln1, n, C);
    ops_linear(rt_qkv(rt, l, start), rt->qkv_w, xn, C, w->attn_w, w->attn_b, n, C, 3 * C);
    rt_attend(rt, l, start, T, &a);
    ops_linear(out, C, rt_row(rt->z, C, start), C, w->proj_w, w->proj_b, n, C, C);
    ops_add_norm(x, out, xn, &ln2, n, C);
    /* the activation in c_fc's pieces, on the thread that computed them */
    ops_linear_act(hid, I, xn, C, w->fc_w, w->fc_b, n, C, I, (OpsAct)c->act);
    ops_linear(out, C, hid, I, w->mproj_w, w->mproj_b, n, I, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const Gpt2Weights *w = wv;
    const Gpt2Config *c = rt->cfg;
    OpsNorm lnf = {OPS_NORM_LAYER, w->lnf_w, w->lnf_b, c->ln_eps};
    ops_norm(rt->xf, x, &lnf, 1, c->n_embd);
    ops_dots(out, rt->xf, w->lm_head, c->n_embd, c->n_vocab);
}

const RtArch arch_gpt2 = {
    "GPT-2", sizeof(Gpt2Config), gpt2_config_check,
    shape, embed, block, logits};
