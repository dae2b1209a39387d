/* Typing: the two sentence bars (UTF-8 editing, paste, an input method's
 * composition; the second bar is the cross-attention's keys, the same code
 * on its own buffer), the file-name prompt for Save as and Open, and the
 * box that takes a weight's exact value. Keys here are text, not shortcuts. */
#include "app_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bar that has the keyboard: its buffer, length, capacity and cursor
 * (the first bar's, or the second's when vs.keys_focus is set). */
typedef struct Field {
    char **buf;
    size_t *len, *cap;
    int *cursor;
    int keys;
} Field;

static Field field_of(AppState *a)
{
    if (a->vs.keys_focus)
        return (Field){&a->keys, &a->keys_len, &a->keys_cap, &a->vs.keys_cursor, 1};
    return (Field){&a->text, &a->text_len, &a->text_cap, &a->vs.cursor, 0};
}

/* The field's text changed: the model follows (live, on every key). */
static void field_sync(AppState *a, const Field *f)
{
    if (f->keys)
        app_sync_keys(a);
    else
        app_sync_text(a);
}

static void text_insert(AppState *a, const char *s)
{
    size_t n = strlen(s);
    Field f = field_of(a);
    if (a->prompt) {
        size_t l = strlen(a->prompt_buf);
        if (l + n < sizeof a->prompt_buf) {
            memmove(a->prompt_buf + a->prompt_cursor + n, a->prompt_buf + a->prompt_cursor,
                    l - (size_t)a->prompt_cursor + 1);
            memcpy(a->prompt_buf + a->prompt_cursor, s, n);
            a->prompt_cursor += (int)n;
        }
        a->dirty = 1;
        return;
    }
    if (*f.len + n > APP_TEXT_MAX) {
        app_status(a, 1, "the sentence is too long (at most %d bytes)", APP_TEXT_MAX);
        return;
    }
    if (app_buf_reserve(f.buf, f.cap, *f.len + n) < 0)
        return;
    char *t = *f.buf;
    if (*f.len == 0)
        t[0] = '\0'; /* a buffer never written */
    size_t c = (size_t)*f.cursor;
    memmove(t + c + n, t + c, *f.len - c + 1);
    memcpy(t + c, s, n);
    *f.len += n;
    *f.cursor += (int)n;
    field_sync(a, &f);
}

static int utf8_prev(const char *s, int pos)
{
    if (pos <= 0)
        return 0;
    pos--;
    while (pos > 0 && ((unsigned char)s[pos] & 0xC0) == 0x80)
        pos--;
    return pos;
}

static int utf8_next(const char *s, int pos, int len)
{
    if (pos >= len)
        return len;
    pos++;
    while (pos < len && ((unsigned char)s[pos] & 0xC0) == 0x80)
        pos++;
    return pos;
}

/* Editing keys of the bar (or the prompt): Backspace, Delete, Left, Right,
 * Home, End, Ctrl+A (all: typing replaces it), Ctrl+V, Ctrl+U. */
static void bar_key(AppState *a, SDL_Keycode k, Uint16 mod)
{
    Field f = field_of(a);
    if (!a->prompt && app_buf_reserve(f.buf, f.cap, *f.len) < 0)
        return; /* the second bar's buffer may not exist yet */
    if (!a->prompt && *f.len == 0)
        (*f.buf)[0] = '\0';
    char *buf = a->prompt ? a->prompt_buf : *f.buf;
    int *cur = a->prompt ? &a->prompt_cursor : f.cursor;
    int len = (int)(a->prompt ? strlen(a->prompt_buf) : *f.len);
    int ctrl = mod & KMOD_CTRL;
    /* Ctrl+A's selection: cleared, or left at an end, by the editing keys
     * only. A key that types (its SDL_TEXTINPUT follows), Shift or Ctrl
     * alone leave it for the text to replace. */
    int edits = k == SDLK_BACKSPACE || k == SDLK_DELETE || k == SDLK_LEFT || k == SDLK_RIGHT ||
                k == SDLK_HOME || k == SDLK_END || (ctrl && (k == SDLK_v || k == SDLK_u));
    if (a->bar_all && edits) {
        a->bar_all = 0;
        a->dirty = 1;
        if (k == SDLK_BACKSPACE || k == SDLK_DELETE || (k == SDLK_v && ctrl)) {
            bar_key(a, SDLK_u, KMOD_CTRL);
            if (k != SDLK_v)
                return;
        } else if (k == SDLK_LEFT || k == SDLK_HOME) {
            *cur = 0;
            return;
        } else if (k == SDLK_RIGHT || k == SDLK_END) {
            *cur = len;
            return;
        }
    }
    switch (k) {
    case SDLK_a:
        if (ctrl && len > 0) {
            a->bar_all = 1;
            *cur = len;
            a->dirty = 1;
        }
        return;
    case SDLK_BACKSPACE:
    case SDLK_DELETE: {
        int from = k == SDLK_BACKSPACE ? utf8_prev(buf, *cur) : *cur;
        int to = k == SDLK_BACKSPACE ? *cur : utf8_next(buf, *cur, len);
        if (from == to)
            return;
        memmove(buf + from, buf + to, (size_t)(len - to) + 1);
        *cur = from;
        if (a->prompt)
            a->dirty = 1;
        else {
            *f.len -= (size_t)(to - from);
            if (*f.len == 0) /* emptied key by key: what comes next is new */
                app_fit_map(a);
            field_sync(a, &f);
        }
        return;
    }
    case SDLK_LEFT: *cur = utf8_prev(buf, *cur); a->dirty = 1; return;
    case SDLK_RIGHT: *cur = utf8_next(buf, *cur, len); a->dirty = 1; return;
    case SDLK_HOME: *cur = 0; a->dirty = 1; return;
    case SDLK_END: *cur = len; a->dirty = 1; return;
    case SDLK_v:
        if (ctrl) {
            char *clip = SDL_GetClipboardText();
            if (clip) {
                for (char *p = clip; *p; p++)
                    if (*p == '\n' || *p == '\r' || *p == '\t')
                        *p = ' ';
                text_insert(a, clip);
                SDL_free(clip);
            }
        }
        return;
    case SDLK_u:
        if (ctrl) {
            buf[0] = '\0';
            *cur = 0;
            if (!a->prompt) { /* a new sentence comes: its map fits again */
                *f.len = 0;
                app_fit_map(a);
                field_sync(a, &f);
            }
            a->dirty = 1;
        }
        return;
    default:
        return;
    }
}

static void finish_prompt(AppState *a)
{
    AppPrompt p = a->prompt;
    a->prompt = PROMPT_NONE;
    a->vs.prompt = NULL;
    a->vs.sentence_focus = 0;
    a->dirty = 1;
    if (p == PROMPT_OPEN) /* after this event's step, by the loop (app_open_later) */
        app_open_later(a, a->prompt_buf);
    else if (p == PROMPT_SAVE && app_save_session(a, a->prompt_buf) == 0)
        snprintf(a->session_path, sizeof a->session_path, "%s", a->prompt_buf);
}

void text_prompt_start(AppState *a, AppPrompt p, const char *label, const char *initial)
{
    a->prompt = p;
    a->vs.prompt = label;
    snprintf(a->prompt_buf, sizeof a->prompt_buf, "%s", initial);
    a->prompt_cursor = (int)strlen(a->prompt_buf);
    a->vs.sentence_focus = 1;
    a->vs.keys_focus = 0; /* the prompt is in the first bar */
    SDL_StartTextInput();
    a->dirty = 1;
}

/* Enter in the value box: a number sets the cell (one undo step); anything
 * else keeps the box open with a message. */
static void commit_typed_value(AppState *a)
{
    char *end;
    double v = strtod(a->edit_buf, &end);
    while (*end == ' ')
        end++;
    if (!a->edit_buf[0] || *end || !isfinite(v) || fabs(v) > 1e4) {
        app_status(a, 1, "'%s' is not a number between -10000 and 10000: value kept", a->edit_buf);
        a->dirty = 1;
        return; /* stay in the box so the user can fix it */
    }
    app_apply(a, &(AppAction){ACT_SET_CELL, -1, -1, (float)v});
    a->editing_value = 0;
    a->vs.edit_text = NULL;
    SDL_StopTextInput();
    app_status(a, 0, "value set to %g", v);
}

/* A key while the value box is open: Esc cancels, Enter sets, Backspace. */
static void value_key(AppState *a, SDL_Keycode k)
{
    if (k == SDLK_ESCAPE) {
        a->editing_value = 0;
        a->vs.edit_text = NULL;
        app_status(a, 0, "edit cancelled");
    } else if (k == SDLK_RETURN || k == SDLK_KP_ENTER) {
        commit_typed_value(a);
    } else if (k == SDLK_BACKSPACE) {
        size_t l = strlen(a->edit_buf);
        if (l)
            a->edit_buf[l - 1] = '\0';
        a->edit_fresh = 0;
    }
    if (!a->editing_value)
        SDL_StopTextInput();
    a->dirty = 1;
}

static void text_key(AppState *a, SDL_Keycode k, Uint16 mod)
{
    if (a->editing_value) {
        value_key(a, k);
        return;
    }
    if (!a->vs.sentence_focus)
        return;
    if (k == SDLK_ESCAPE || k == SDLK_RETURN || k == SDLK_KP_ENTER || k == SDLK_TAB)
        a->bar_all = 0;
    if (k == SDLK_ESCAPE || k == SDLK_RETURN || k == SDLK_KP_ENTER) {
        if (a->prompt && k != SDLK_ESCAPE)
            finish_prompt(a);
        else
            app_apply(a, &(AppAction){ACT_LEAVE_SENTENCE, 0, 0, 0.0f});
        return;
    }
    if ((k == SDLK_UP || k == SDLK_DOWN) && !a->prompt) { /* one line: the query rows move */
        app_apply(a, &(AppAction){ACT_MOVE_QUERY, k == SDLK_UP ? -1 : 1, 0, 0.0f});
        return;
    }
    if (k == SDLK_TAB && !a->prompt) {
        /* the focus cycle: first bar → second bar → the heatmap → the
         * editor; Shift+Tab goes back (from the first bar to the editor) */
        AppAction next = {a->vs.keys_focus ? ACT_LEAVE_SENTENCE : ACT_FOCUS_KEYS, -1, 0, 0.0f};
        if (mod & KMOD_SHIFT)
            next = a->vs.keys_focus ? (AppAction){ACT_FOCUS_SENTENCE, -1, 0, 0.0f}
                                    : (AppAction){ACT_LEAVE_SENTENCE, 0, 0, 0.0f};
        app_apply(a, &next);
        if ((mod & KMOD_SHIFT) && !a->vs.sentence_focus)
            app_apply(a, &(AppAction){ACT_EDIT_FOCUS, 1, 0, 0.0f});
        return;
    }
    bar_key(a, k, mod);
}

static void text_input(AppState *a, const char *s)
{
    if (a->editing_value) {
        if (a->edit_fresh) {
            /* the first key replaces the shown value, as in a spreadsheet */
            a->edit_buf[0] = '\0';
            a->edit_fresh = 0;
        }
        size_t l = strlen(a->edit_buf), n = strlen(s);
        if (l + n < sizeof a->edit_buf)
            memcpy(a->edit_buf + l, s, n + 1);
        a->dirty = 1;
    } else if (a->vs.sentence_focus) {
        a->preedit[0] = '\0'; /* the composition is committed */
        if (a->bar_all) /* typing replaces the selection (Ctrl+A) */
            bar_key(a, SDLK_BACKSPACE, 0);
        text_insert(a, s);
    }
}

void text_event(AppState *a, const SDL_Event *e)
{
    switch (e->type) {
    case SDL_KEYDOWN:
        text_key(a, e->key.keysym.sym, e->key.keysym.mod);
        break;
    case SDL_TEXTINPUT:
        text_input(a, e->text.text);
        break;
    case SDL_TEXTEDITING:
        /* an input method composing (e.g. kana before kanji): shown at the
         * cursor until it sends the text */
        if (a->vs.sentence_focus && !a->editing_value) {
            snprintf(a->preedit, sizeof a->preedit, "%s", e->edit.text);
            a->dirty = 1;
        }
        break;
    default:
        break;
    }
}
