/* The sentence's command line (source_sentence's cli_open, cli_write,
 * cli_free): the embedding table (-e or the built-in one), the toy Model
 * with the command line's settings, --seed and --weights or a session's,
 * the sentences of -f (or the default folder), the sentence and the second
 * one picked, --teach; then --print and --export of it, or every line of
 * -f (--all-lines) with numbered exports. What is opened also gives the
 * window its default source (source_sentence_parts). */
#include "attnviz/app.h"
#include "attnviz/embed.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/paths.h"
#include "attnviz/session.h"
#include "attnviz/source.h"
#include "attnviz/teach_app.h"
#include "attnviz/teach_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What the command line opened for the sentence. */
typedef struct SentenceCli {
    EmbedTable *table;
    Model m;
    int model_ok;      /* m needs model_destroy */
    SentenceList sl;
    SessionView sv;    /* the view of --session (has_sv) */
    int has_sv;
    Teacher teacher;   /* --teach's, for --print json */
    int query;         /* --query, else the session's */
} SentenceCli;

/* Numbered name for --all-lines: out.png, sentence 3 → out-03.png. */
static void numbered(char *buf, size_t n, const char *path, int k, int total)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        dot = path + strlen(path);
    int digits = total >= 100 ? 3 : 2;
    snprintf(buf, n, "%.*s-%0*d%s", (int)(dot - path), path, digits, k, dot);
}

/* Set m's sentence, refusing what the command line cannot show. */
static int set_sentence(Model *m, const char *text, const char *where, AttnErr *err)
{
    int rc = model_set_text(m, text, strlen(text));
    if (rc < 0)
        return attn_err_set(err, -rc, NULL, 0, "cannot tokenize the sentence");
    if (m->toks.n_total > ATTN_MAX_TOKENS)
        return attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, where, 0,
                            "the sentence has %d tokens; at most %d are allowed",
                            m->toks.n_total, ATTN_MAX_TOKENS);
    if (m->T == 0)
        return attn_err_set(err, ATTN_E_EMPTY, where, 0,
                            "the sentence is empty (no tokens)");
    int words = 0;
    for (int i = 0; i < m->T; i++)
        words += !tok_is_punct(&m->toks, i);
    if (!words)
        return attn_err_set(err, ATTN_E_EMPTY, where, 0,
                            "the sentence has only punctuation, no words");
    if (m->toks.n_replaced)
        fprintf(stderr, "attnviz: warning: %s%sinvalid UTF-8: %d byte(s) shown as U+FFFD\n",
                where ? where : "", where ? ": " : "", m->toks.n_replaced);
    if (model_count_oov(m)) {
        fprintf(stderr, "attnviz: note: not in the embedding table (hashed vectors):");
        for (int i = 0; i < m->T; i++)
            if (m->oov[i])
                fprintf(stderr, " %s", tok_text(&m->toks, i));
        fputc('\n', stderr);
    }
    return 0;
}

/* The second sentence (keys and values): text "" is self-attention. Over
 * ATTN_MAX_TOKENS tokens it is kept, cut, with a note (the first sentence
 * is refused instead: its rows are what the printout is about). */
static int set_keys(Model *m, const char *text, const char *where, AttnErr *err)
{
    int rc = model_set_keys(m, text, strlen(text));
    if (rc < 0)
        return attn_err_set(err, -rc, where, 0, "cannot tokenize the second sentence");
    if (*text && !m->cross)
        return attn_err_set(err, ATTN_E_EMPTY, where, 0,
                            "the second sentence (keys) is empty (no tokens): '%s'", text);
    if (m->ktoks.n_total > ATTN_MAX_TOKENS)
        fprintf(stderr, "attnviz: note: %s: %d tokens, the first %d are used\n",
                where, m->ktoks.n_total, ATTN_MAX_TOKENS);
    if (m->ktoks.n_replaced)
        fprintf(stderr, "attnviz: warning: %s: invalid UTF-8: %d byte(s) shown as U+FFFD\n",
                where, m->ktoks.n_replaced);
    int n_oov = 0;
    for (int j = 0; m->cross && j < m->Tk; j++)
        n_oov += m->koov[j] != 0;
    if (n_oov) {
        fprintf(stderr, "attnviz: note: %s: not in the embedding table (hashed vectors):", where);
        for (int j = 0; j < m->Tk; j++)
            if (m->koov[j])
                fprintf(stderr, " %s", m->klabels[j]);
        fputc('\n', stderr);
    }
    return 0;
}

static int check_selection(const Model *m, const Options *o, AttnErr *err)
{
    if (o->query >= m->T)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "--query %d is out of range: the sentence has %d tokens",
                            o->query + 1, m->T);
    if (o->head >= m->res.h)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "--head %d is out of range: there %s %d head%s", o->head + 1,
                            m->res.h == 1 ? "is" : "are", m->res.h, m->res.h == 1 ? "" : "s");
    return 0;
}

/* --print json's "teach" object as text (the caller frees it), or NULL. */
static char *teach_json(const Teacher *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = t->target ? open_memstream(&buf, &len) : NULL;
    if (!f)
        return NULL;
    int rc = teach_print_json(f, t);
    if (fclose(f) != 0 || rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int headless(Model *m, const Options *o, const Teacher *t, AttnErr *err)
{
    m->keep_window_matrices = o->matrix != MODEL_WEIGHTS; /* logits, heads' mean */
    int rc = model_compute(m);
    if (rc < 0)
        return attn_err_set(err, -rc, NULL, 0, "attention failed");
    if ((rc = check_selection(m, o, err)) < 0)
        return rc;
    model_prepare(m, MODEL_WEIGHTS, o->head); /* the heads' mean, printed as NULL without memory */
    model_prepare(m, (ModelMatrix)o->matrix, o->head); /* --matrix: --print csv and text follow it */
    if (o->print == PRINT_TEXT)
        rc = print_text(stdout, m, (ModelMatrix)o->matrix, o->head);
    else if (o->print == PRINT_CSV)
        rc = print_csv(stdout, m, (ModelMatrix)o->matrix, o->head);
    else if (o->print == PRINT_JSON) {
        char *teach = teach_json(t);
        if (t->target && !teach)
            return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        rc = print_json_member(stdout, m, "teach", teach);
        free(teach);
    }
    if (rc < 0 || fflush(stdout) != 0)
        return attn_err_set(err, ATTN_E_IO, "stdout", 0, "write failed");
    for (int k = 0; k < o->n_exports; k++)
        if ((rc = export_file(m, o, o->exports[k], err)) < 0)
            return rc;
    return 0;
}

/* The embedding table of -e, or the built-in one; warns of duplicates. */
static int load_table(EmbedTable **table, const Options *o, AttnErr *err)
{
    char path[4096];
    AttnErr warn = {0};
    const char *emb = o->embeddings;
    if (!emb) {
        if (paths_find_data("embeddings.txt", path, sizeof path) < 0)
            return attn_err_set(err, ATTN_E_IO, "embeddings.txt", 0,
                                "built-in embedding table not found (set ATTNVIZ_DATADIR or use -e FILE)");
        emb = path;
    }
    int rc = embed_load(table, emb, err, &warn);
    if (rc < 0)
        return rc;
    if ((*table)->n_duplicates) {
        char buf[1200];
        attn_err_format(&warn, buf, sizeof buf);
        fprintf(stderr, "attnviz: warning: %s (%d duplicate%s, the first wins)\n", buf,
                (*table)->n_duplicates, (*table)->n_duplicates == 1 ? "" : "s");
    }
    return 0;
}

/* --session FILE for a lesson not written yet (like an editor's new file):
 * FILE is missing but its folder is there. */
static int new_session(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 || errno != ENOENT)
        return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 1;
    *slash = '\0';
    return stat(dir[0] ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode);
}

/* The model with the command line's settings, then its --seed and
 * --weights; or the session's, with the command line's over them (and its
 * query unless --query). *model_ok: m needs model_destroy. */
static int setup_model(Model *m, int *model_ok, const EmbedTable *table, Options *o,
                       SessionView *sv, AttnErr *err)
{
    if (o->cfg.mode == ATTN_MODE_LEARNED && table->d % o->cfg.heads != 0)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0,
                            "--heads %d does not divide d = %d (the embedding size)",
                            o->cfg.heads, table->d);
    int rc = model_init(m, table, &o->cfg);
    if (rc < 0)
        return attn_err_set(err, -rc, NULL, 0, "cannot set up the model");
    *model_ok = 1;
    session_view_default(sv);
    int fresh = o->session && new_session(o->session);
    /* with a session they apply after it (app_cli_overrides), read once */
    if ((!o->session || fresh) && o->has_seed)
        model_set_seed(m, o->seed);
    if ((!o->session || fresh) && o->weights && (rc = app_load_weights(m, o->weights, err)) < 0)
        return rc;
    if (fresh) {
        fprintf(stderr, "attnviz: note: %s does not exist yet: a new lesson (Ctrl+S writes it)\n",
                o->session);
    } else if (o->session) {
        if ((rc = app_load_session(m, sv, o->session, err)) < 0 ||
            (rc = app_cli_overrides(m, sv, o, err)) < 0)
            return rc;
        if (o->query < 0 && sv->query >= 0 && sv->query < m->T)
            o->query = sv->query;
    }
    return 0;
}

/* The sentences of -f (checking --line), or sentences/default.txt when
 * there is one. */
static int load_sentences(SentenceList *sl, const Options *o, AttnErr *err)
{
    char path[4096];
    if (o->sentence_file) {
        int rc = sentences_load(sl, o->sentence_file, err);
        if (rc < 0)
            return rc;
        if (o->line > sl->n)
            return attn_err_set(err, ATTN_E_RANGE, o->sentence_file, 0,
                                "--line %ld is out of range: the file has %d sentence%s",
                                o->line, sl->n, sl->n == 1 ? "" : "s");
    } else if (paths_find_data("sentences/default.txt", path, sizeof path) == 0) {
        /* every file of sentences/ (default.txt first): PageUp/PageDown walk them all */
        AttnErr warn = {0};
        *strrchr(path, '/') = '\0';
        if (sentences_load_folder(sl, path, "default.txt", &warn) < 0)
            memset(sl, 0, sizeof *sl);
        else if (warn.code) {
            char buf[1200];
            attn_err_format(&warn, buf, sizeof buf);
            fprintf(stderr, "attnviz: note: left out of the sentences: %s\n", buf);
        }
    }
    return 0;
}

/* The second sentence for sentence k of sl: --keys, else the file's pair
 * (where names its line), else none; the session's stays when neither is
 * given (k < 0: no line of the file). */
static int pick_keys(Model *m, const Options *o, const SentenceList *sl, int k,
                     const char *where, AttnErr *err)
{
    int rc = 0;
    if (o->keys)
        rc = set_keys(m, o->keys, "--keys", err);
    else if (k >= 0 && k < sl->n && sl->keys && sl->keys[k][0])
        rc = set_keys(m, sl->keys[k], where, err);
    else if (k >= 0)
        rc = set_keys(m, "", where, err);
    if (rc == 0 && m->cross && m->cfg.causal)
        fprintf(stderr, "attnviz: note: %s: two sentences: the causal mask applies to "
                        "self-attention only, it is off\n", o->keys ? "--keys" : where);
    return rc;
}

/* --all-lines: every sentence of the file, with numbered exports. */
static int export_all_lines(Model *m, const Options *o, const SentenceList *sl, AttnErr *err)
{
    int rc;
    m->keep_window_matrices = o->matrix != MODEL_WEIGHTS;
    for (int k = 0; k < sl->n; k++) {
        char where[1100];
        snprintf(where, sizeof where, "%s:%ld", o->sentence_file, sl->line[k]);
        if ((rc = set_sentence(m, sl->text[k], where, err)) < 0 ||
            (rc = pick_keys(m, o, sl, k, where, err)) < 0)
            return rc;
        if ((rc = model_compute(m)) < 0 || (rc = check_selection(m, o, err)) < 0)
            return rc;
        for (int e = 0; e < o->n_exports; e++) {
            char name[4200];
            numbered(name, sizeof name, o->exports[e], k + 1, sl->n);
            if ((rc = export_file(m, o, name, err)) < 0)
                return rc;
        }
    }
    return 0;
}

/* The sentence to show: -s or the words, the session's, line N (or the
 * first) of -f, the first default sentence, or a built-in one. *where
 * names the file and line of one from -f (wbuf holds it), else NULL. */
static const char *pick_sentence(const Model *m, const Options *o, const SentenceList *sl,
                                 char *wbuf, size_t n, const char **where)
{
    const char *text = o->sentence;
    *where = NULL;
    if (!text && o->session)
        text = m->text;
    if (!text && o->sentence_file) {
        int k = o->line ? (int)o->line - 1 : 0;
        text = sl->text[k];
        snprintf(wbuf, n, "%s:%ld", o->sentence_file, sl->line[k]);
        *where = wbuf;
    }
    if (!text && sl->n > 0)
        text = sl->text[0];
    if (!text)
        text = "the train left the station on time";
    return text;
}

/* The sentence shown (set_sentence's checks for one named on the command
 * line or printed), its second sentence, then --teach. */
static int pick_shown(SentenceCli *s, const Options *o, AttnErr *err)
{
    int headless_mode = o->print != PRINT_NONE || o->n_exports > 0, rc;
    char wbuf[1100];
    const char *where;
    const char *text = pick_sentence(&s->m, o, &s->sl, wbuf, sizeof wbuf, &where);
    if (headless_mode || o->sentence || o->sentence_file) {
        if ((rc = set_sentence(&s->m, text, where, err)) < 0)
            return rc;
    } else {
        model_set_text(&s->m, text, strlen(text));
    }
    /* a line of -f may be a pair; --keys wins over it and over a session's */
    int line_k = o->sentence_file && !o->sentence ? (o->line ? (int)o->line - 1 : 0) : -1;
    if ((rc = pick_keys(&s->m, o, &s->sl, line_k, where, err)) < 0)
        return rc;
    if (o->teach && (rc = teach_run(&s->m, o, &s->teacher, err)) < 0)
        return rc;
    if (o->teach && !headless_mode) /* the window opens on what was learned */
        fprintf(stderr, "attnviz: taught %s: loss %.4g -> %.4g in %ld steps\n", o->teach,
                s->teacher.loss[0], s->teacher.loss[s->teacher.n_loss - 1], s->teacher.steps);
    return 0;
}

void sentence_cli_free(void *opened)
{
    SentenceCli *s = opened;
    if (!s)
        return;
    teacher_free(&s->teacher);
    session_view_free(&s->sv);
    if (s->model_ok)
        model_destroy(&s->m);
    sentences_free(&s->sl);
    embed_destroy(s->table);
    free(s);
}

/* The command line's sentence (path: none, the sentence has no file of its
 * own; -f and --session are options). With another source shown (an
 * attention file, a model) it is only the window's default: set up, empty. */
int sentence_cli_open(const Options *o, const char *path, void **opened, AttnErr *err)
{
    (void)path;
    *opened = NULL;
    SentenceCli *s = calloc(1, sizeof *s);
    if (!s)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    Options lo = *o; /* its query becomes the session's when --query is not given */
    int beside = o->attention || o->model, rc;
    if ((rc = load_table(&s->table, &lo, err)) < 0 ||
        (rc = setup_model(&s->m, &s->model_ok, s->table, &lo, &s->sv, err)) < 0 ||
        (rc = load_sentences(&s->sl, &lo, err)) < 0 ||
        (!beside && !o->all_lines && (rc = pick_shown(s, &lo, err)) < 0)) {
        sentence_cli_free(s);
        return rc;
    }
    if (beside)
        model_set_text(&s->m, "", 0);
    s->has_sv = o->session != NULL;
    s->query = lo.query;
    *opened = s;
    return 0;
}

/* --print and --export of the sentence, or of every line of -f. */
int sentence_cli_write(void *opened, const Options *o, AttnErr *err)
{
    SentenceCli *s = opened;
    Options lo = *o;
    lo.query = s->query;
    if (o->all_lines)
        return export_all_lines(&s->m, &lo, &s->sl, err);
    return headless(&s->m, &lo, &s->teacher, err);
}

void source_sentence_parts(void *opened, Model **m, SentenceList **sl, const SessionView **sv)
{
    SentenceCli *s = opened;
    *m = &s->m;
    *sl = &s->sl;
    *sv = s->has_sv ? &s->sv : NULL;
}
