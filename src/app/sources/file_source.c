#define _DEFAULT_SOURCE
/* The attention-file source (issue 13): a real model's maps read from a
 * file (.npy, .npz, .safetensors, .json), shown as layers × heads
 * (maps_shown.c: the head view, the model view, L/H/O/R/E/G, compare),
 * its sessions and its --print and --export. No weights, no text. */
#include "attnviz/app_state.h"
#include "attnviz/attnio.h"
#include "attnviz/file_source.h"
#include "attnviz/import.h"
#include "attnviz/maps_shown.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "../app_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char NO_MODEL[] =
    "An attention file from a model: no weights to edit and no steps to show here "
    "(the numbers are the file's).";

FileSource *file_source_of(const AppState *a)
{
    return a->kind == &source_file ? a->src : NULL;
}

static MapsShown *file_maps(const AppState *a)
{
    FileSource *fs = a->src;
    return &fs->ms;
}

static void file_close(AppState *a)
{
    FileSource *fs = a->src;
    if (fs)
        maps_shown_free(&fs->ms);
    free(fs);
    a->src = NULL;
}

int file_source_show(AppState *a, Imported *im)
{
    FileSource *fs = calloc(1, sizeof *fs);
    if (!fs || maps_shown_init(&fs->ms, im) < 0) {
        if (!fs) {
            import_close(im);
            free(im);
        }
        free(fs);
        app_status(a, 1, "out of memory");
        return -ATTN_E_NOMEM;
    }
    app_show_source(a, &source_file, fs);
    maps_shown_start(a, im->title);
    return 0;
}

/* The sentence's actions that need a Model: refused, saying why. */
static int model_only(AppActionKind k)
{
    switch (k) {
    case ACT_TOGGLE_SCALE: case ACT_TOGGLE_MASK: case ACT_TOGGLE_POSENC: case ACT_TOGGLE_MODE:
    case ACT_STEP_HEADS: case ACT_TEMPERATURE: case ACT_STEP_REVEAL:
    case ACT_SENTENCE_STEP: case ACT_EDIT_TARGET: case ACT_EDIT_MOVE: case ACT_EDIT_CELL:
    case ACT_EDIT_FOCUS: case ACT_EDIT_TYPE: case ACT_NUDGE_CELL: case ACT_SET_CELL:
    case ACT_EDITOR_BUTTON: case ACT_DRAG_BEGIN: case ACT_DRAG: case ACT_UNDO: case ACT_REDO:
    case ACT_FOCUS_SENTENCE: case ACT_FOCUS_KEYS: case ACT_CYCLE_SCORE: case ACT_DRAG_END:
        return 1;
    default:
        return 0;
    }
}

/* The help's rows: the layers × heads keys, compare, an encoder-decoder's
 * groups. */
static int file_takes(AppActionKind k)
{
    return maps_shown_takes(k) || k == ACT_COMPARE || k == ACT_ENCDEC_GROUP;
}

static const char *const GROUPS[] = {"cross", "encoder", "decoder"}; /* OptGroup's order */

/* Ctrl+X / Ctrl+Shift+X: an encoder-decoder's .npz shows its next /
 * previous group (encoder, decoder, cross), the layer and head kept where
 * the group has them; another file says why not and stays. */
static void group_step(AppState *a, int dir)
{
    static const int order[3] = {GROUP_ENCODER, GROUP_DECODER, GROUP_CROSS};
    FileSource *fs = a->src;
    char path[sizeof fs->ms.imp->f.name]; /* (the Imported it is in is replaced) */
    snprintf(path, sizeof path, "%s", fs->ms.imp->f.name);
    int k = 0;
    while (k < 3 && order[k] != fs->group)
        k++;
    int next = order[((k + (dir < 0 ? -1 : 1)) % 3 + 3) % 3];
    AttnErr err = {0};
    Imported *im = malloc(sizeof *im);
    size_t n = strlen(path);
    if (!im || n < 4 || strcmp(path + n - 4, ".npz") != 0 ||
        import_open_group(im, path, GROUPS[next], NULL, NULL, &err) < 0) {
        free(im);
        app_status(a, 0, "%s is not an encoder-decoder's .npz (encoder, decoder and cross maps, as "
                   "--export-attention writes them): Ctrl+X has no other group here%s%s", path,
                   err.msg[0] ? ": " : "", err.msg);
        return;
    }
    if (import_pick(im, 0, 0, 0, NULL, &err) < 0 || maps_shown_replace(a, im) < 0) {
        app_status(a, 1, "%s", err.msg[0] ? err.msg : "out of memory");
        return;
    }
    fs->group = next;
    fs->group_named = 1;
    app_status(a, 0, "%s: the %s maps, %d\xC3\x97%d (Ctrl+X: the next group)", path, GROUPS[next],
               im->f.Tq, im->f.Tk);
}

static int file_apply(AppState *a, const AppAction *act)
{
    if (act->kind == ACT_ENCDEC_GROUP) {
        group_step(a, act->i);
        return 0;
    }
    if (maps_shown_apply(a, act) == 0)
        return 0;
    if (!model_only(act->kind))
        return -1;
    if (act->kind != ACT_DRAG_END)
        app_status(a, 0, "an attention file has no sentence, weights or settings to change "
                         "(L, H, O, G pick what to show)");
    return 0;
}

static void file_present(AppState *a)
{
    FileSource *fs = a->src;
    static const char *const what[3] = {"from the file: cross-attention", "from the file: the encoder's self-attention",
                                        "from the file: the decoder's self-attention"};
    maps_shown_present(a, NO_MODEL, fs->group_named ? what[fs->group] : "from the file");
    a->vs.bar_label = "File";
    a->vs.sentence = fs->ms.imp->title;
}

static void file_shown_size(const AppState *a, int *Tq, int *Tk)
{
    maps_shown_size(file_maps(a), Tq, Tk);
}

static const char *file_title(const AppState *a)
{
    return file_maps(a)->imp->title;
}

static int file_save(AppState *a, const char *path)
{
    return maps_shown_save(a, file_maps(a)->imp->f.name, NULL, path);
}

/* An attention file in the window; what is shown stays on error. */
static int open_attention(AppState *a, const char *path)
{
    AttnErr err = {0};
    char buf[1200];
    Imported *im = malloc(sizeof *im);
    if (!im || import_open(im, path, NULL, NULL, &err) < 0 || import_pick(im, 0, 0, 0, NULL, &err) < 0) {
        if (im && im->f.n_parts)
            import_close(im);
        free(im);
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "cannot open: %s", buf);
        return -1;
    }
    return file_source_show(a, im) < 0 ? -1 : 0;
}

static int file_accepts(const char *path)
{
    AttnPathKind k = attn_path_kind(path);
    return k == ATTN_PATH_SESSION || k == ATTN_PATH_FILE;
}

static int file_open(AppState *a, const char *path)
{
    return attn_path_kind(path) == ATTN_PATH_SESSION ? maps_session_open(a, path) : open_attention(a, path);
}

/* The command line: the file with --tokens and --key-tokens, the map that
 * --layer, --head, --rollout, --matrix and --drop pick. */
static int file_cli_open(const Options *o, const char *path, void **opened, AttnErr *err)
{
    Imported *im = malloc(sizeof *im);
    *opened = NULL;
    if (!im)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    if (import_open_group(im, path, o->group_set ? GROUPS[o->group] : NULL, o->tokens, o->key_tokens,
                          err) < 0) {
        free(im);
        return -err->code;
    }
    /* the rollout goes through the last layer unless --layer says */
    int layer = o->rollout && !o->layer_set ? -1 : o->layer, rc = 0;
    if (o->matrix_set && o->matrix != 0) { /* --matrix scores: the file's own scores */
        if (o->matrix == 3)
            rc = attn_err_set(err, ATTN_E_RANGE, path, 0,
                              "--matrix norms needs the model's value vectors and output projection "
                              "(alpha * |v W_O|): an attention file has weights (and maybe scores), no values; "
                              "run the model with --model instead");
        else if (o->matrix != 1 || !im->has_scores)
            rc = attn_err_set(err, ATTN_E_RANGE, path, 0, o->matrix != 1
                              ? "an attention file has weights (and maybe scores), no logits"
                              : "no scores beside the attention (scores.npy in an .npz, the tensor "
                                "\"scores\" in a .safetensors)");
        im->matrix = 1;
    }
    if (rc == 0)
        rc = import_pick(im, layer, o->head, o->rollout, o->drop, err);
    if (rc == 0 && im->note[0])
        fprintf(stderr, "attnviz: note: %s: %s\n", im->title, im->note);
    if (rc < 0) {
        import_close(im);
        free(im);
        return rc;
    }
    *opened = im;
    return 0;
}

static int file_cli_write(void *opened, const Options *o, AttnErr *err)
{
    return import_write(opened, o, err);
}

static int file_show(AppState *a, void *opened)
{
    int rc = file_source_show(a, opened);
    if (rc == 0 && a->opt && a->opt->group_set) { /* the group --group opened */
        ((FileSource *)a->src)->group = a->opt->group;
        ((FileSource *)a->src)->group_named = 1;
    }
    return rc;
}

static void file_cli_free(void *opened)
{
    if (opened) {
        import_close(opened);
        free(opened);
    }
}

const SourceKind source_file = {
    .name = "attention file",
    .caps = SOURCE_LAYERS,
    .takes = file_takes,
    .accepts = file_accepts,
    .open = file_open,
    .close = file_close,
    .apply = file_apply,
    .present = file_present,
    .controls = maps_shown_controls,
    .shown_size = file_shown_size,
    .save = file_save,
    .title = file_title,
    .maps = file_maps,
    .snap = maps_shown_snap,
    .snap_free = maps_shown_snap_free,
    .snap_diff = maps_shown_snap_diff,
    .compare_hint = "the layer, head or rollout",
    .cli_open = file_cli_open,
    .cli_write = file_cli_write,
    .show = file_show,
    .cli_free = file_cli_free,
};
