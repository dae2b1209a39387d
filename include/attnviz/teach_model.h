/* Teach mode on a Model (issue 15): a target for one head (or the heads'
 * mean), and gradient descent on what the class chose to train — Wq and Wk
 * of the heads in the loss, the word vectors (one per word, in either
 * sentence: a word's gradient is the sum over its occurrences, and reaches
 * E through X = E + PE unchanged), additive attention's v. The command
 * line and the window both step a Teacher, so their numbers agree. Plain C
 * on the Model: no files, no screen. */
#ifndef ATTNVIZ_TEACH_MODEL_H
#define ATTNVIZ_TEACH_MODEL_H

#include "attnviz/error.h"
#include "attnviz/model.h"
#include "attnviz/teach.h"

typedef struct Teacher {
    int Tq, Tk;              /* the sentence(s) the target was made for */
    float *target;           /* Tq×Tk, prepared (teach_target_prepare) */
    int rows;                /* rows with a target */
    int dropped;             /* target entries dropped on masked keys */
    int head;                /* 0 … h−1, or MODEL_HEAD_AVG */
    int train;               /* TEACH_WQ | TEACH_WK | TEACH_X | TEACH_V */
    TeachOpt opt;
    TeachGrad g;
    long steps;              /* steps taken */
    double *loss;            /* loss[k]: after k steps (loss[0]: before) */
    long n_loss, cap_loss;
    int n_words;             /* the distinct words of both sentences */
    char **words;
    float *vecs;             /* n_words × d: their vectors, being trained */
    float *gvec;             /* n_words × d: their gradients */
    int *qword, *kword;      /* each query / key token's word */
} Teacher;

/* Start teaching m (computed) towards target (Tq×Tk for m's sentences, not
 * yet prepared: teacher_start prepares a copy against m's mask). head:
 * 0 … h−1 or MODEL_HEAD_AVG; train: TEACH_* bits (TEACH_V only with the
 * additive score, Wq and Wk only in learned mode); opt: TeachOptKind;
 * lr > 0. Errors, each with err's message saying what and where:
 * -ATTN_E_SHAPE (the model not computed, a head out of range),
 * -ATTN_E_RANGE (a negative or NaN target value, no row with a target after
 * the mask, lr, what trains), -ATTN_E_NOMEM. On error t is zeroed
 * (teacher_free is safe). t->dropped tells the caller to warn. */
int teacher_start(Teacher *t, const Model *m, const float *target, int head, int train, int opt,
                  float lr, AttnErr *err);
void teacher_free(Teacher *t);

/* One step: the loss and gradients at the model's present weights (loss[steps]
 * when not known yet), then the optimiser's update of the trained arrays,
 * written into m (word vectors as edited vectors); m is recomputed when its
 * inputs changed (the word vectors), else left for the caller's
 * model_compute. -ATTN_E_SHAPE when m's sentences changed since the start. */
int teacher_step(Teacher *t, Model *m);

/* The loss at the model's present weights (recorded as loss[steps] when
 * not known yet): after the last step. */
int teacher_loss_now(Teacher *t, Model *m, double *loss);

/* 1 when the loss has stopped improving: over the last window steps the
 * best loss fell by less than tol (relative), or it is not finite. */
int teacher_plateau(const Teacher *t, long window, double tol);

#endif
