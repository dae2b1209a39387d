/* Actions: everything a user can do to the application, as small plain-data
 * structs. Keys and the mouse become actions in one place (src/app/input.c);
 * app_apply (app_state.h) carries any of them out; tests apply them directly. */
#ifndef ATTNVIZ_ACTION_H
#define ATTNVIZ_ACTION_H

typedef enum AppActionKind {
    ACT_NONE = 0,
    /* selection */
    ACT_SELECT_QUERY,   /* i: query row */
    ACT_MOVE_QUERY,     /* i: rows to move (clamped); the row is scrolled into view */
    ACT_FOCUS_KEY,      /* i: key column, or -1 none */
    ACT_MOVE_KEY,       /* i: columns to move (clamped) */
    ACT_SELECT_CELL,    /* i, j: query and key (a heatmap click); the editor
                           gives the keyboard back */
    ACT_HOVER,          /* i, j: heatmap cell under the pointer, or -1 */
    ACT_POINTER,        /* i, j: pointer position in pixels (nothing drawn) */
    /* the model's settings */
    ACT_TOGGLE_SCALE,
    ACT_TOGGLE_MASK,
    ACT_TOGGLE_POSENC,
    ACT_TOGGLE_MODE,    /* basic / learned */
    ACT_CYCLE_HEAD,     /* i: +1 next, -1 previous (head 1 .. h, then the average) */
    ACT_STEP_HEADS,     /* i: +1 more, -1 fewer heads (a number dividing d); undoable */
    ACT_TEMPERATURE,    /* i: +1 up (x 1.25), -1 down (/ 1.25) */
    ACT_CYCLE_SCORE,    /* i: +1 / -1 through dot, cosine, additive */
    /* what is shown */
    ACT_CYCLE_MATRIX,   /* i: +1 / -1 through weights, scores, logits */
    ACT_CYCLE_CMAP,
    ACT_CYCLE_CSCALE,   /* weights' colour scale: fixed 0–1 → the map's max →
                           each row's max (ColorScaleMode) */
    ACT_TOGGLE_THEME,
    ACT_TOGGLE_ALL_LINES,
    ACT_LINES_TOP,      /* i: +1 more, -1 fewer of each query's strongest lines
                           (1, 2, 3, 5, 8, 13, 21, then every line) */
    ACT_STEP_REVEAL,    /* i: +1 next step of the step view (wraps), -1 previous */
    ACT_ZOOM,           /* i > 0: zoom the heatmap in, else out */
    ACT_PAN,            /* i rows, j columns to pan the heatmap */
    ACT_SCROLL_LINES,   /* i rows to scroll the line diagram */
    ACT_SENTENCE_STEP,  /* i: +1 next, -1 previous sentence of the file */
    /* the weight editor; edits are undo steps */
    ACT_EDIT_TARGET,    /* i: EditTarget; j: 1 also gives the editor the keyboard */
    ACT_EDIT_MOVE,      /* i rows, j columns: move the cell cursor (clamped) */
    ACT_EDIT_CELL,      /* i, j: the cell cursor goes there, the editor has the keyboard */
    ACT_EDIT_FOCUS,     /* i: 1 the editor has the keyboard, 0 it gives it back */
    ACT_EDIT_TYPE,      /* start typing the cursor cell's exact value */
    ACT_NUDGE_CELL,     /* i, j: the cell (the cursor goes there), or i < 0 the
                           cursor's; value: added */
    ACT_SET_CELL,       /* i, j or i < 0 as above; value: the new value */
    ACT_EDITOR_BUTTON,  /* i: EditButton (identity, zero, random, swap, reset) */
    ACT_DRAG_BEGIN,     /* i: pointer y; scrubbing the cursor's cell starts */
    ACT_DRAG,           /* i: pointer y; value: change per pixel upwards; the
                           whole drag is one undo step */
    ACT_DRAG_END,
    ACT_UNDO,
    ACT_REDO,
    /* files, the sentence bar, the window */
    ACT_EXPORT,         /* i: 0 heatmap, 1 lines, 2 the whole window (PNG) */
    ACT_SAVE,           /* i: 0 save (asks for a name the first time), 1 save as */
    ACT_OPEN_PROMPT,    /* ask for a session or sentences file to open */
    ACT_FOCUS_SENTENCE, /* i: text cursor (byte offset), -1 the end */
    ACT_LEAVE_SENTENCE, /* the bar gives the keyboard back (a prompt is cancelled) */
    ACT_FOCUS_KEYS,     /* i: the second sentence bar's text cursor, -1 the end */
    ACT_COMPARE,        /* pin what is shown as the reference / unpin */
    ACT_UI_SCALE,       /* i: +1 bigger, -1 smaller, 0 back to 100% */
    ACT_WINDOW_SIZE,    /* i, j: the window's new size */
    ACT_REDRAW,         /* the window needs drawing (exposed) */
    ACT_FULLSCREEN,
    ACT_HELP,           /* i: 0 show / hide the help, -1 hide it, 2 next page,
                           -2 previous page */
    /* an attention file (a real model's layers and heads) */
    ACT_CYCLE_LAYER,    /* i: +1 next, -1 previous (layer 1 .. L, then the average) */
    ACT_TOGGLE_GRID,    /* the model view (every layer and head) / the head view */
    ACT_TOGGLE_ROLLOUT, /* attention rollout through the layer on / off */
    ACT_GRID_MOVE,      /* i layers, j heads: move the model view's selection */
    ACT_GRID_OPEN,      /* open the selected map in the head view (i, j: layer,
                           head, or -1 for the selection) */
    ACT_TOGGLE_SPECIAL, /* hide the special tokens ([CLS], <s> …) and renormalise
                           the rows / show them again */
    /* head roles (issue 26), for sources of layers × heads */
    ACT_HEAD_SCORE,     /* i: +1 next, -1 previous score shown (HeadScoreId) */
    ACT_GRID_SORT,      /* the model view by the score, highest first / by layer */
    ACT_SCORE_VIEW,     /* the score overview (L × H heatmap) / the maps */
    ACT_LINES_HEADS,    /* every head of the layer in the line diagram / one */
    ACT_HEAD_SWITCH,    /* i: head 0-based switched on / off in that diagram */
    ACT_PROBE,          /* a model's induction probe, with the next seed */
    /* a language model's generation, ablation and logit lens (issue 37) */
    ACT_GENERATE,       /* i > 0: that many tokens appended to the text, one
                           at a time as the model picks them; 0: stop */
    ACT_GEN_STEP,       /* i: +1 next, -1 previous generated token: its row and
                           the predictions it was chosen from */
    ACT_ABLATE,         /* i: 1 the shown head (layer, head) off / on again;
                           0 every head on */
    ACT_LOGIT_LENS,     /* the logit lens of the selected position shown / the
                           predictions */
    ACT_ENCDEC_GROUP,   /* an encoder-decoder's maps: i +1 the next group, -1 the
                           previous (encoder → decoder → cross-attention) */
    /* teach mode (issue 15, teach_app.h): the weights learn a painted target */
    ACT_TEACH,          /* teach mode on / off (the heatmap paints the target) */
    ACT_TEACH_PAINT,    /* i, j: target cell (i < 0: the query row and focused
                           key); value 1 paints, 0 erases (a pointer drag goes
                           on doing the same until ACT_DRAG_END), -1 flips */
    ACT_TEACH_PRESET,   /* i: TeachPreset, -1 the current map, -2 clear */
    ACT_TEACH_RUN,      /* i: 1 run, 0 pause, -1 flip */
    ACT_TEACH_STEP,     /* one step */
    ACT_TEACH_RESET,    /* the weights from before teaching */
    ACT_TEACH_LR,       /* i: +1 learning rate x 2, -1 / 2 */
    ACT_TEACH_OPT,      /* SGD / Adam */
    ACT_TEACH_TRAIN,    /* what trains: wq,wk → +x → +v (additive) → x */
    ACT_TEACH_PACE,     /* i: +1 faster, -1 slower (steps a second) */
    ACT_SIDE_TAB,       /* the side area's tab when panels share it: i +1 next,
                           -1 previous, 0 the SidePanel j */
    ACT_QUIT,
    ACT_COUNT
} AppActionKind;

/* One action: its kind and up to two integers and a float (see above). */
typedef struct AppAction {
    AppActionKind kind;
    int i, j;
    float value;
} AppAction;

/* "select_query", "toggle_mask", ... (for messages); "?" when out of range. */
const char *app_action_name(AppActionKind kind);

#endif
