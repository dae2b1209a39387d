/* What the model source's two files share (model_open.c: opening and the
 * command line; model_source.c: the window): tokens and labels, the
 * Imported of a forward's maps, the command line's entries. */
#ifndef ATTNVIZ_MODEL_INTERNAL_H
#define ATTNVIZ_MODEL_INTERNAL_H

#include "attnviz/bpe.h"
#include "attnviz/model_source.h"
#include "attnviz/import.h"
#include "attnviz/options.h"
#include "attnviz/runtime.h"

#define SPACE_MARK "\xE2\x90\xA3" /* ␣: a token's space, as labels show it */

/* ids = the tokens of text as Hugging Face's encode gives them (the
 * tokenizer's template: Llama's BOS first), the model's bos first when
 * asked and the template has none; an empty text has none. 0, or an error
 * in *err where Hugging Face's tokenizers refuses the text (a Unigram
 * vocabulary without an unknown piece meeting a character it lacks:
 * -ATTN_E_UNSUPPORTED naming it) or -ATTN_E_NOMEM; ids then keeps nothing
 * the caller may show. */
int model_encode(const ModelOpened *g, const char *text, size_t len, BpeIds *ids, AttnErr *err);
/* The characters of text (len bytes) its tokens ids leave out, the
 * model's vocabulary having no token for them: each named once, in the
 * order they come (“X”, “␣”; at most 12, then "and N more") into out
 * (cap bytes); returns how many. */
int model_left_out(const ModelOpened *g, const char *text, size_t len, const BpeIds *ids, char *out, size_t cap);
/* The same as a sentence for the status bar and stderr ("left out of the
 * tokens: “X” (nano-sort's vocabulary has no token for it)"); "" and 0
 * when none is. */
int model_left_out_say(const ModelOpened *g, const char *text, size_t len, const BpeIds *ids, char *msg, size_t cap);
/* Token id's text as stored (space NULL, or "Ġ") or shown (SPACE_MARK);
 * `none` for an id no token has. Malloc'd. */
char *model_token_text(const Bpe *b, int id, const char *space, const char *none);
/* t with its control characters made visible (↵, →, ␍, ‹0xNN›); frees t. */
char *model_visible(char *t);
/* Token id's label as shown: ␣ for its space, control characters visible,
 * "?" for none. Malloc'd. */
char *model_shown_label(const Bpe *b, int id);
/* The tokenizer's mask token ([MASK], else <mask>): its id, -1 when it has
 * neither. */
int model_mask_id(const Bpe *b);
/* The first position of ids[0..n) holding the mask token of a masked-LM
 * model (an encoder: what fills it), -1 when none (or not an encoder). */
int model_mask_pos(const ModelOpened *g, const int *ids, int n);
/* The L × H maps of ids, made when asked from what maps holds (owned from
 * now on), as an Imported named name, labelled by the tokens, causal. NULL
 * on error (err set). */
Imported *model_maps_imported(const Bpe *b, const char *name, RtMaps *maps, const int *ids, int T, int L, int H,
                              AttnErr *err);
/* The same with the keys' own tokens kids[0..Tk) (NULL: ids': a square):
 * an encoder-decoder's cross group, target queries × source keys. */
Imported *model_maps_imported_qk(const Bpe *b, const char *name, RtMaps *maps, const int *ids, int T,
                                 const int *kids, int Tk, int L, int H, AttnErr *err);

/* Every map's thumbnail (the model view's side) and scores (no token
 * dropped), made a layer at a time as a forward finishes it (layers not yet
 * done: 0 and none): what the window takes with the maps instead of making
 * them itself. */
typedef struct ModelSummaries {
    int side, tq, tk, T, H, L;
    float *thumbs;       /* L × H × tq × tk */
    HeadScores *scores;  /* L × H */
    const int *ids;      /* T */
    int norms;           /* 1: of the norms maps (R shows them), 0: of the weights */
} ModelSummaries;
/* For T tokens ids of a model of info's shape: 0 or -ATTN_E_NOMEM (then
 * nothing is made). */
int model_summaries_init(ModelSummaries *m, const LmInfo *info, const int *ids, int T);
/* Layer's maps, just made by lm's forward (a layer hook's), summarised. */
void model_summaries_layer(ModelSummaries *m, const Lm *lm, int layer);
/* Copies of the thumbnails (returned) and scores (*scores); NULL and NULL
 * when memory is short or nothing was made. */
float *model_summaries_copy(const ModelSummaries *m, HeadScores **scores);
void model_summaries_free(ModelSummaries *m);

/* --ablate's heads switched off in g's model (--ablate-mean: their mean),
 * before anything is computed: 0, or exit 1's error naming a layer or head
 * the model does not have. */
int model_apply_ablation(ModelOpened *g, const Options *o, AttnErr *err);
/* g->im's title then names the heads: "name with 1.2, 2.1 ablated". */
void model_title_ablation(ModelOpened *g, const Options *o);
/* g->text = text (len bytes) and g->ids its tokens (model_open.c). */
int model_opened_set_text(ModelOpened *g, const char *text, size_t len, AttnErr *err);
/* g->ids checked for a forward: some tokens (else what the vocabulary
 * lacks of text), at most n_positions, each a row of the embedding. */
int model_check_ids(ModelOpened *g, const char *text, size_t len, AttnErr *err);
/* An encoder-decoder's decoder ids of target (len bytes; NULL: none) into
 * out: the start token, then the target's tokens as its tokenizer encodes
 * them (its template's included) without the last (transformers'
 * shift_tokens_right). 0 or -ATTN_E_NOMEM. */
int model_decoder_ids(const ModelOpened *g, const char *target, size_t len, BpeIds *out, AttnErr *err);
/* An encoder-decoder's command line (model_encdec.c): text the source,
 * target the decoder's text (NULL: its start token alone), the forward,
 * then g->im the maps of group (OptGroup); 0 or an error (a target with
 * no source named so). */
int model_encdec_compute(ModelOpened *g, const char *text, const char *target, int group, AttnErr *err);
void model_encdec_note(const Options *o, int rc);
/* --export-attention of an encoder-decoder: path (.npz) with encoder,
 * decoder, cross, source_tokens and target_tokens. */
int model_encdec_export(const ModelOpened *g, const char *path, AttnErr *err);
int lmsrc_cli_open(const Options *o, const char *path, void **opened, AttnErr *err);
int lmsrc_cli_write(void *opened, const Options *o, AttnErr *err);
void lmsrc_cli_free(void *opened);

#endif
