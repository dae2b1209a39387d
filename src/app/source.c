/* The list of sources (source.h) and what every source's controls strip
 * ends with; nothing here knows one kind from another. */
#include "attnviz/source.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SOURCE_KINDS_MAX 8

/* The kinds that open paths, most particular first; the sentence opens
 * none (it takes text), so it is not in the list. */
static const SourceKind *kinds[SOURCE_KINDS_MAX] = {
    &source_model, /* a model folder */
    &source_file, /* an attention file or its session */
};
static int n_kinds = 2;

const SourceKind *source_for_path(const char *path)
{
    for (int k = 0; k < n_kinds; k++)
        if (kinds[k]->accepts && kinds[k]->accepts(path))
            return kinds[k];
    return NULL;
}

int source_register(const SourceKind *k)
{
    if (n_kinds >= SOURCE_KINDS_MAX)
        return -1;
    for (int i = n_kinds; i > 0; i--) /* before the built-in kinds: tried first */
        kinds[i] = kinds[i - 1];
    kinds[0] = k;
    n_kinds++;
    return 0;
}

int source_cycle(int pos, int n, int dir)
{
    int k = pos < 0 ? n : pos;
    k = ((k + dir) % (n + 1) + n + 1) % (n + 1);
    return k == n ? -1 : k;
}

void source_ctl_add(ViewState *s, AppAction *acts, AppAction act, int on, int off,
                    const char *compact, const char *fmt, ...)
{
    if (s->n_ctl >= VIEW_CTL_MAX)
        return;
    ViewCtl *c = &s->ctl[s->n_ctl];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->label, sizeof c->label, fmt, ap);
    va_end(ap);
    snprintf(c->compact, sizeof c->compact, "%s", compact ? compact : "");
    c->on = (unsigned char)!!on;
    c->off = (unsigned char)!!off;
    if (acts)
        acts[s->n_ctl] = act;
    s->n_ctl++;
}

void source_ctl_common(ViewState *s, AppAction *acts, int compare, int teach)
{
    source_ctl_add(s, acts, (AppAction){ACT_CYCLE_CMAP, 0, 0, 0.0f}, 1, 0, "", "[C] %s",
                   colormap_name(s->cmap));
    source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_ALL_LINES, 0, 0, 0.0f}, s->all_lines, 0, "[A] all",
                   "[A] all queries");
    if (compare)
        source_ctl_add(s, acts, (AppAction){ACT_COMPARE, 0, 0, 0.0f}, s->cmp_ref != NULL, 0, "[V] vs",
                       "[V] compare");
    if (teach)
        source_ctl_add(s, acts, (AppAction){ACT_TEACH, 0, 0, 0.0f}, s->teach, 0, "", "[W] teach");
    source_ctl_add(s, acts, (AppAction){ACT_EXPORT, 0, 0, 0.0f}, 0, 0, "[^E] PNG", "[^E] export PNG");
    source_ctl_add(s, acts, (AppAction){ACT_HELP, 0, 0, 0.0f}, s->help, 0, "", "[?] help");
}

void source_diff_add(SourceDiffs *d, const char *what, const char *ref, const char *cur)
{
    size_t w = strlen(d->what), r = strlen(d->ref), c = strlen(d->cur);
    snprintf(d->what + w, sizeof d->what - w, "%s%s", d->n ? ", " : "", what);
    snprintf(d->ref + r, sizeof d->ref - r, "%s%s", d->n ? ", " : "", ref);
    snprintf(d->cur + c, sizeof d->cur - c, "%s%s", d->n ? ", " : "", cur);
    d->n++;
}

void source_diff_vs(SourceDiffs *d, const char *ref, const char *cur)
{
    char w[200];
    snprintf(w, sizeof w, "%s vs %s", ref, cur);
    source_diff_add(d, w, ref, cur);
}

void source_diff_switch(SourceDiffs *d, const char *name, int ref, int cur)
{
    char w[120], r[60], c[60];
    snprintf(w, sizeof w, "%s %s vs %s", name, ref ? "on" : "off", cur ? "on" : "off");
    snprintf(r, sizeof r, "%s %s", name, ref ? "on" : "off");
    snprintf(c, sizeof c, "%s %s", name, cur ? "on" : "off");
    source_diff_add(d, w, r, c);
}

void source_head_word(int head, char *buf, size_t n)
{
    if (head < 0)
        snprintf(buf, n, "average of heads");
    else
        snprintf(buf, n, "head %d", head + 1);
}

int source_owns(AppActionKind k)
{
    switch (k) {
    case ACT_TOGGLE_SCALE: case ACT_TOGGLE_MASK: case ACT_TOGGLE_POSENC: case ACT_TOGGLE_MODE:
    case ACT_CYCLE_HEAD: case ACT_STEP_HEADS: case ACT_TEMPERATURE: case ACT_CYCLE_SCORE:
    case ACT_CYCLE_MATRIX: case ACT_STEP_REVEAL: case ACT_SENTENCE_STEP: case ACT_EDIT_TARGET:
    case ACT_EDIT_MOVE: case ACT_EDIT_CELL: case ACT_EDIT_FOCUS: case ACT_EDIT_TYPE: case ACT_NUDGE_CELL:
    case ACT_SET_CELL: case ACT_EDITOR_BUTTON: case ACT_DRAG_BEGIN: case ACT_DRAG: case ACT_DRAG_END:
    case ACT_UNDO: case ACT_REDO: case ACT_FOCUS_SENTENCE: case ACT_FOCUS_KEYS: case ACT_TEACH:
    case ACT_CYCLE_LAYER: case ACT_TOGGLE_GRID: case ACT_TOGGLE_ROLLOUT: case ACT_GRID_MOVE:
    case ACT_GRID_OPEN: case ACT_TOGGLE_SPECIAL: case ACT_COMPARE: case ACT_HEAD_SCORE: case ACT_GRID_SORT:
    case ACT_SCORE_VIEW: case ACT_LINES_HEADS: case ACT_HEAD_SWITCH: case ACT_PROBE:
    case ACT_GENERATE: case ACT_GEN_STEP: case ACT_ABLATE: case ACT_LOGIT_LENS: case ACT_ENCDEC_GROUP:
        return 1;
    default:
        return 0;
    }
}
